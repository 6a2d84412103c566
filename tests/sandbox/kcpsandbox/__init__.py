# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox harness (test and demo infrastructure): hosts as network namespaces with real sshd, a real
HAProxy load balancer, a machine provider and faults on demand. It runs as root on the machine, the
"controller side"; tests/sandbox/DESIGN.md is its contract with the emulated node software in kcpsim/."""
