# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pods_ready's controller side (host_kubeconfig.ApiAction): with ``admin_kubeconfig_on_host`` one process on the
controller polls the API, instead of a command on the host every second. The documentation is in
plugins/modules/pods_ready.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils import pods_ready_answer
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils.host_kubeconfig import ApiAction


class ActionModule(ApiAction):
    MODULE = "kubeadm.control_plane.pods_ready"
    ARGUMENT_SPEC = pods_ready_answer.ARGUMENT_SPEC
    IMPORT_ERROR = pods_ready_answer.IMPORT_ERROR
    FAILURES = (pods_ready_answer.NotReady,)

    def argument_problems(self, params):
        return pods_ready_answer.argument_problems(params)

    def answer(self, params, check_mode, task_vars):
        return pods_ready_answer.wait(params, check_mode)
