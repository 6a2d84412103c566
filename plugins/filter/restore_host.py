# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host a restore brings the cluster back on (module_utils/etcd_restore.restore_host), and the hosts that hold
the cluster's control plane. The documentation is in restore_host.yml and restore_control_plane_hosts.yml, next to
this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_restore import backup_name, control_plane_hosts
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_restore import restore_host as choose


def _hosts(names, host_vars, machine_info):
    hosts = []
    for name in names:
        info = host_vars[name].get(machine_info) or {}
        answered = bool(info) and not info.get("unreachable") and not info.get("failed")
        hosts.append({"name": name, "answered": answered, "admin_kubeconfig": info.get("admin_kubeconfig"),
                      "etcd_client_credentials": info.get("etcd_client_credentials"), "restore": info.get("restore")})
    return hosts


def restore_host(names, host_vars, machine_info, backup, chosen=None):
    """The host's name; the reason as the error when no host is fit."""
    try:
        return choose(_hosts(names, host_vars, machine_info), backup_name(backup or ""), chosen or None)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


def restore_control_plane_hosts(names, host_vars, machine_info):
    """The names of the hosts that answered and hold a control plane of the cluster."""
    return control_plane_hosts(_hosts(names, host_vars, machine_info))


class FilterModule(object):
    """restore_host, restore_control_plane_hosts."""

    def filters(self):
        return {"restore_host": restore_host, "restore_control_plane_hosts": restore_control_plane_hosts}
