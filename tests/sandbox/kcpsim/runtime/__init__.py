# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container runtime stand-in: image resolution through the release mirror, static pod processes,
and the containerd / CNI plugin executables that only report their versions (see ../../DESIGN.md)."""
