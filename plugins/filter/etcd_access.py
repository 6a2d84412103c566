# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the flows reach the cluster's etcd, whether it is external, and how many control plane pods a machine runs,
from the spec (module_utils/etcd_access.py, module_utils/spec.py). The documentation is in etcd_access.yml,
etcd_is_external.yml and control_plane_pod_count.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_access import control_plane_pod_count, etcd_access
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import etcd_is_external


class FilterModule(object):
    """etcd_access, etcd_is_external, control_plane_pod_count."""

    def filters(self):
        return {"etcd_access": etcd_access, "etcd_is_external": etcd_is_external, "control_plane_pod_count": control_plane_pod_count}
