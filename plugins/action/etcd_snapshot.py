# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd_snapshot's controller side: the module saves the snapshot where the task runs; with ``controller_dir`` the
file is then copied over the task's connection to the controller, into the directory of the cluster's identity,
checked against the module's SHA-256, written whole or not at all (mode 0600, in a directory of mode 0700), and the
controller's older copies rotated as the module rotates the host's, the run's first snapshot spared. One task, one
module run and one transfer. The documentation is in plugins/modules/etcd_snapshot.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import controller_run, etcd_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_snapshot import SUFFIX
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_file


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        controller_dir = args.pop("controller_dir", None)
        saved = self._execute_module(module_name="kubeadm.control_plane.etcd_snapshot", module_args=args, task_vars=task_vars)
        result.update(saved)
        if saved.get("failed") or controller_dir is None:
            return result
        if not saved.get("cluster_id"):
            return dict(result, failed=True, msg="the snapshot %s was saved, and is not copied to the controller: the etcd CA "
                        "certificate that names the cluster could not be read" % saved["path"])
        directory = os.path.join(os.path.abspath(os.path.expanduser(str(controller_dir))), saved["cluster_id"])
        controller_dest = os.path.join(directory, os.path.basename(saved["path"]))
        result["controller_path"] = controller_dest
        if self._play_context.check_mode:
            result["controller_removed"] = []
            return result
        try:
            os.makedirs(os.path.dirname(directory), mode=0o700, exist_ok=True)
            os.makedirs(directory, mode=0o700, exist_ok=True)
            os.chmod(directory, 0o700)
            host_file.copy_checked(self, saved["path"], saved["sha256"], controller_dest, task_vars)
        except (OSError, ValueError) as exc:
            return dict(result, failed=True, msg="the snapshot %s was saved, and copying it to the controller as %s failed: %s"
                        % (saved["path"], controller_dest, exc))
        keep = int(args.get("keep") or 0)
        try:
            first = etcd_snapshot.first_of_run(directory, controller_run.run_identity(), os.path.basename(controller_dest))
            result["controller_removed"] = etcd_snapshot.rotate(directory, SUFFIX, keep, spare=(first,)) if keep else []
        except OSError as exc:
            return dict(result, failed=True, msg="the snapshot was copied to the controller as %s, and rotating the copies failed: %s"
                        % (controller_dest, exc))
        return result
