# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pods_ready's controller side. With ``admin_kubeconfig_on_host`` the host's admin kubeconfig is read over the
task's connection into a private file on the controller that lives only while this task runs, and the pods are read
from here: one process polls the API, instead of a command on the host every second. Without it, the module runs
where the task runs. The documentation is in plugins/modules/pods_ready.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api
from ansible_collections.kubeadm.control_plane.plugins.module_utils.pods_ready_answer import ARGUMENT_SPEC, IMPORT_ERROR, NotReady, argument_problems, wait
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_kubeconfig


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        on_host = args.pop("admin_kubeconfig_on_host", None)
        if not on_host:
            result.update(self._execute_module(module_name="kubeadm.control_plane.pods_ready", module_args=args, task_vars=task_vars))
            return result
        if args.get("kubeconfig"):
            return dict(result, failed=True, msg="admin_kubeconfig_on_host: the kubeconfig is read on the host, kubeconfig may not be given too")
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        params = validated.validated_parameters
        problems = argument_problems(dict(params, kubeconfig=on_host))
        if problems:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(problems))
        if IMPORT_ERROR:
            return dict(result, failed=True, msg="the kubernetes Python package is needed on the controller", exception=IMPORT_ERROR)
        try:
            with host_kubeconfig.private_copy(self, on_host, task_vars) as path:
                result.update(wait(dict(params, kubeconfig=path), bool(self._play_context.check_mode)))
        except (host_kubeconfig.Unreadable, kube_api.ClusterUnreadable) as exc:
            return dict(result, failed=True, msg=str(exc))
        except NotReady as exc:
            return dict(result, failed=True, msg=str(exc), **exc.fields)
        return result
