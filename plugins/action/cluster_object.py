# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_object's controller side (host_kubeconfig.ApiAction): with ``admin_kubeconfig_on_host`` the object is read
and written from the controller. The documentation is in plugins/modules/cluster_object.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_object_answer
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils.host_kubeconfig import ApiAction


class ActionModule(ApiAction):
    MODULE = "kubeadm.control_plane.cluster_object"
    ARGUMENT_SPEC = cluster_object_answer.ARGUMENT_SPEC
    IMPORT_ERROR = cluster_object_answer.IMPORT_ERROR
    FAILURES = (cluster_object_answer.Refused,)

    def argument_problems(self, params):
        return cluster_object_answer.argument_problems(params)

    def answer(self, params, check_mode, task_vars):
        return cluster_object_answer.apply(params, check_mode, bool(self._task.diff if self._task.diff is not None else self._play_context.diff))
