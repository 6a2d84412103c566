# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller side of node_software_install: read the host (one round trip), copy only the files it lacks,
install them (a second round trip). The module's documentation is in plugins/modules/node_software_install.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import tarfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_bundle

MODULE = "kubeadm.control_plane.node_software_install"


def archive_listing(path):
    """What an archive extracts, for the host to compare with what it has: name, type, and for files size and
    modification time."""
    listing = []
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            kind = "dir" if member.isdir() else "file" if member.isfile() else "link"
            entry = {"name": member.name.rstrip("/"), "type": kind}
            if kind == "file":
                entry.update(size=member.size, mtime=int(member.mtime))
            listing.append(entry)
    return listing


class ActionModule(ActionBase):
    # The temporary directory is made only when a file is to be copied: a host that is up to date costs one round trip.
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("artifacts", "version", "replace", "record_path", "only"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        artifacts = self._task.args.get("artifacts")
        if not isinstance(artifacts, dict):
            raise AnsibleActionFail("artifacts: required, the artifacts node_bundle_info returned")
        try:
            roles = node_bundle.selected(self._task.args.get("only"))
        except (TypeError, ValueError) as exc:
            raise AnsibleActionFail("only: %s" % exc)
        absent = [role for role in roles if not isinstance(artifacts.get(role), dict) or "src" not in artifacts[role]]
        if absent:
            raise AnsibleActionFail("artifacts: %s missing (node_bundle_info returns them all, each with its src)" % ", ".join(absent))
        remote = {}
        # only what this run installs is read, listed and sent to the host
        for role in roles:
            remote[role] = {"dest": artifacts[role]["dest"], "sha256": artifacts[role]["sha256"]}
            if role in node_bundle.ARCHIVES:
                try:
                    remote[role]["members"] = archive_listing(artifacts[role]["src"])
                except (OSError, tarfile.TarError) as exc:
                    raise AnsibleActionFail("%s: %s cannot be read: %s" % (role, artifacts[role]["src"], exc))
        module_args = dict((key, value) for key, value in self._task.args.items() if key != "artifacts")
        module_args["artifacts"] = remote

        found = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        if found.get("failed") or self._task.check_mode or not found.get("pending"):
            found.pop("pending", None)
            result.update(found)
            return result

        try:
            tmpdir = self._make_tmp_path()
            staged = {}
            for role in found["transfer"]:
                staged[role] = self._connection._shell.join_path(tmpdir, role)
                self._transfer_file(artifacts[role]["src"], staged[role])
            self._fixup_perms2([tmpdir] + list(staged.values()))
            module_args["staged"] = staged
            result.update(self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars))
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
