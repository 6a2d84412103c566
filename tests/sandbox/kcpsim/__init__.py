# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcpsim: the sandbox's emulated node software (kubeadm, kubelet, control plane components).

Test and demo infrastructure only. It runs inside sandbox hosts under Debian's ``/usr/bin/python3`` and may
use only the standard library, python3-cryptography (38.0.4) and python3-yaml. ../DESIGN.md is the contract.
"""
