# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_lock's controller side. With ``admin_kubeconfig_on_host`` the task runs on a control plane host: its admin
kubeconfig is read over the task's connection into a private file on the controller that lives only while the lock
is taken or released here; a lock taken, renewed or held is then kept alive while the run acts
(lock_keeper). Without it, the module runs where the task runs. The documentation is in
plugins/modules/kcp_lock.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import lock_lease
from ansible_collections.kubeadm.control_plane.plugins.module_utils.lock_answer import ARGUMENT_SPEC, lock
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_kubeconfig, lock_keeper


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        on_host = args.pop("admin_kubeconfig_on_host", None)
        if not on_host:
            result.update(self._execute_module(module_name="kubeadm.control_plane.kcp_lock", module_args=args, task_vars=task_vars))
            return result
        if args.get("kubeconfig"):
            return dict(result, failed=True, msg="admin_kubeconfig_on_host: the kubeconfig is read on the host, kubeconfig may not be given too")
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        if lock_lease.IMPORT_ERROR:
            return dict(result, failed=True, msg="the kubernetes Python package is needed on the controller", exception=lock_lease.IMPORT_ERROR)
        params = validated.validated_parameters
        try:
            with host_kubeconfig.private_copy(self, on_host, task_vars) as path:
                done = lock(dict(params, kubeconfig=path), bool(self._play_context.check_mode))
                kept = lock_keeper.keep_alive(done, path, params["holder"], params["duration"], params["timeout"],
                                              bool(self._play_context.check_mode))
        except (host_kubeconfig.Unreadable, ValueError) as exc:
            return dict(result, failed=True, msg=str(exc))
        except lock_lease.LockFailed as exc:
            return dict(result, failed=True, msg=str(exc), **exc.fields)
        for warning in (done.pop("warning"), kept):
            if warning:
                result.setdefault("warnings", []).append(warning)
        result.update(done)
        return result
