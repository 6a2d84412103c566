# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Entry point of the kubelet bundle: ``main(argv=None) -> exit status``."""

import sys

from kcpsim.kubelet.kubelet import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
