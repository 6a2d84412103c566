# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a module the controller answers in its own process (kcp_validate, kcp_plan, kcp_status, machine_health_check,
node_bundle_info) answers. Its ``answer(params)``, in module_utils beside its ARGUMENT_SPEC (validate_answer.py,
plan_answer.py, status_answer.py, health_check_answer.py, node_bundle_answer.py), gives the result, with ``failed``
and ``msg`` on bad input; run as a module, ``run_module`` reports it, and its action plugin
(plugins/plugin_utils/controller_module.py) computes the same answer on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import describe


def invalid_input(errors):
    """The answer to arguments that break a rule: every error, each with its field's path."""
    return dict(failed=True, msg="invalid input: %s" % describe(errors), errors=errors)


def run_module(argument_spec, answer):
    """The module's main: validate the arguments against ``argument_spec``, then report ``answer(params)``."""
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    done = answer(module.params)
    if done.pop("failed", False):
        module.fail_json(**done)
    module.exit_json(**done)
