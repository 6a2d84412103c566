# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane candidates as the flows hand them on, from the inventory (module_utils/run_inventory.py). The
documentation is in candidate_hosts.yml and etcd_client_urls.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.run_inventory import candidate_hosts, etcd_client_urls


class FilterModule(object):
    """candidate_hosts, etcd_client_urls."""

    def filters(self):
        return {"candidate_hosts": candidate_hosts, "etcd_client_urls": etcd_client_urls}
