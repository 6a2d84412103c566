# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``python -m kcpsandbox`` = the ``sandbox`` command."""

import sys

from kcpsandbox.cli import main

sys.exit(main())
