# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of a module that works on the controller and changes nothing: the pure ones (kcp_validate,
kcp_plan, kcp_status, machine_health_check), which compute their answer from their arguments alone, and
node_bundle_info, which reads the bundle on the controller. The answer is computed in the controller's own process
with the module's argument spec and the module's ``answer`` function (which the module itself runs through
plugins/module_utils/controller_answer.py), instead of building, starting and reading a module on localhost for it
(about 0.4 s a task, several tasks a pass). Arguments and answer pass through JSON with the encoder ansible sends a
module's arguments with, so both ways give the same values (a YAML timestamp in the inventory arrives as its ISO 8601
string, as a module receives it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.json import Direction, get_module_encoder
from ansible.plugins.action import ActionBase


class ControllerModuleAction(ActionBase):
    """Subclasses set ``argument_spec`` and ``answer`` (params -> the module's result, ``failed`` and ``msg`` on bad
    input) from their module."""

    TRANSFERS_FILES = False
    _requires_connection = False
    argument_spec = None
    answer = None

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerModuleAction, self).run(tmp, task_vars)
        del tmp
        # a module's arguments and results travel with the "legacy" serialization profile unless it names another
        sent = json.loads(json.dumps(self._task.args, cls=get_module_encoder("legacy", Direction.CONTROLLER_TO_MODULE)))
        validated = ArgumentSpecValidator(self.argument_spec).validate(sent)
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        answer = type(self).answer(validated.validated_parameters)
        result.update(json.loads(json.dumps(answer, cls=get_module_encoder("legacy", Direction.MODULE_TO_CONTROLLER))))
        return result
