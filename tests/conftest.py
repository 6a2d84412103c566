"""Makes this checkout importable as ansible_collections.kubeadm.control_plane (the link `make setup` creates)."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, ".collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
