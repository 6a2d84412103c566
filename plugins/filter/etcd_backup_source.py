# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a backup is taken (module_utils/etcd_backup.backup_source). The documentation is in
etcd_backup_source.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_backup import NoBackupSource, backup_source


def etcd_backup_source(snapshot, external_asked=False):
    """``{machine, endpoints, files, external}``; the reason as the error when no backup may be taken now."""
    try:
        return backup_source(snapshot or {}, bool(external_asked))
    except NoBackupSource as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """etcd_backup_source."""

    def filters(self):
        return {"etcd_backup_source": etcd_backup_source}
