# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module side of the modules that read or write the Kubernetes API (cluster_object, kcp_lock, pods_ready): the
module runs where the task runs, with ``kubeconfig``. Their action plugins (plugin_utils/host_kubeconfig.ApiAction)
answer on the controller for ``admin_kubeconfig_on_host``, with the same checks in the same order."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api


def run_api_module(argument_spec, answer, import_error=None, failures=(), argument_problems=None):
    """A module's main(): ``answer(params, check_mode, diff)`` gives the result for the validated arguments; the
    problems ``argument_problems(params)`` finds, a missing kubernetes package, and an exception of ``failures`` (or
    kube_api.ClusterUnreadable) fail it, an exception's ``fields`` joining the result; a result's ``warning`` is said
    as a warning."""
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, mutually_exclusive=[("kubeconfig", "admin_kubeconfig_on_host")])
    params = module.params
    if params["admin_kubeconfig_on_host"]:
        module.fail_json(msg="admin_kubeconfig_on_host is read by the action plugin on the controller")
    problems = argument_problems(params) if argument_problems else []
    if problems:
        module.fail_json(msg="invalid arguments: " + "; ".join(problems))
    if import_error:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=import_error)
    try:
        result = answer(params, module.check_mode, module._diff)
    except tuple(failures) + (kube_api.ClusterUnreadable,) as exc:
        module.fail_json(msg=str(exc), **getattr(exc, "fields", {}))
    warning = result.pop("warning", None)
    if warning:
        module.warn(warning)
    module.exit_json(**result)
