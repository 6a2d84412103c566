# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane host's admin kubeconfig, copied into a file on the controller that only this user can read (mode
0600) and that lives only while the block runs: the action plugins of the modules that reach the Kubernetes API
(kcp_observe, kcp_lock, pods_ready, cluster_object) reach the cluster with it, and the credentials never stay on the
controller. ``ApiAction`` is the controller side those modules share."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files, kube_api
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_file

# kcp_observe and kcp_lock catch it by this name
Unreadable = host_file.Unreadable


@contextlib.contextmanager
def private_copy(action, path, task_vars):
    """Yield the path of a private copy of ``path`` on the task's host, read by ``action`` (an ActionBase) as
    host_file.copy_into reads it."""
    handle, copy = credential_files.private_file(suffix=".conf")  # mode 0600
    os.close(handle)
    try:
        host_file.copy_into(action, path, copy, task_vars)
        yield copy
    finally:
        os.unlink(copy)


class ApiAction(ActionBase):
    """The controller side of a module that reads the Kubernetes API. With ``admin_kubeconfig_on_host`` the host's
    admin kubeconfig is read over the task's connection into a private copy (above) and the API is read from the
    controller; without it, the module (``MODULE``) runs where the task runs. A subclass names its module, its
    ``ARGUMENT_SPEC`` and ``IMPORT_ERROR``, the exceptions that make a failed result (``FAILURES``, their ``fields``
    joining the result), and gives ``answer`` (and ``argument_problems``)."""

    TRANSFERS_FILES = False
    MODULE = ARGUMENT_SPEC = IMPORT_ERROR = None
    FAILURES = ()

    def argument_problems(self, params):
        """The problems of the validated arguments (``kubeconfig`` set to the path on the host), each naming the field."""
        return []

    def answer(self, params, check_mode, task_vars):
        """The result for ``params``, ``kubeconfig`` naming the private copy."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super(ApiAction, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        on_host = args.pop("admin_kubeconfig_on_host", None)
        if not on_host:
            result.update(self._execute_module(module_name=self.MODULE, module_args=args, task_vars=task_vars))
            return result
        if args.get("kubeconfig"):
            return dict(result, failed=True, msg="admin_kubeconfig_on_host: the kubeconfig is read on the host, kubeconfig may not be given too")
        validated = ArgumentSpecValidator(self.ARGUMENT_SPEC).validate(args)
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        params = validated.validated_parameters
        problems = self.argument_problems(dict(params, kubeconfig=on_host))
        if problems:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(problems))
        if self.IMPORT_ERROR:
            return dict(result, failed=True, msg="the kubernetes Python package is needed on the controller", exception=self.IMPORT_ERROR)
        try:
            with private_copy(self, on_host, task_vars) as path:
                result.update(self.answer(dict(params, kubeconfig=path), bool(self._play_context.check_mode), task_vars))
        except (Unreadable, kube_api.ClusterUnreadable) as exc:
            return dict(result, failed=True, msg=str(exc))
        except self.FAILURES as exc:
            return dict(result, failed=True, msg=str(exc), **getattr(exc, "fields", {}))
        return result
