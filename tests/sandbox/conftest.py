"""Makes the sandbox packages (kcpsandbox, kcpsim) importable by the sandbox's own tests."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
