# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_status computed in the controller's process (plugins/plugin_utils/controller_module.py). The documentation is in
plugins/modules/kcp_status.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.status_answer import ARGUMENT_SPEC, answer
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils.controller_module import ControllerModuleAction


class ActionModule(ControllerModuleAction):
    argument_spec = ARGUMENT_SPEC
    answer = staticmethod(answer)
