# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kube-controller-manager and kube-scheduler emulations (``controller_manager.py``, ``scheduler.py``):
leader election over a Lease, an HTTPS /healthz, and the controllers a kubeadm control plane relies on."""
