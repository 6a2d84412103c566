# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kube-apiserver emulation: the REST subset the collection and the other emulators use, every object kept
in the real etcd cluster (``python -m kcpsim.apiserver`` / the ``kube-apiserver`` bundle executable)."""
