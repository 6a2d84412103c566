# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""machine_info's controller side: the one shell command that reads the host (module_utils/machine_info_read.py)
runs over the task's connection, and the answer is made here from what it printed. No module is built, sent or
started on the host: each candidate host is read every pass, and a Python module cost a host a Python start and the
run a module build. The documentation is in plugins/modules/machine_info.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils.machine_info_read import answer, read_command

ARGUMENT_SPEC = dict(kubernetes_dir=dict(type="str", default="/etc/kubernetes"), kubelet_dir=dict(type="str", default="/var/lib/kubelet"))


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(dict(self._task.args))
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        params = validated.validated_parameters
        # a host that does not answer raises AnsibleConnectionFailure here: the task is unreachable, as a module's is
        done = self._low_level_execute_command(read_command(params["kubernetes_dir"], params["kubelet_dir"]), sudoable=True)
        if done["rc"] != 0:
            return dict(result, failed=True, msg="reading the host's kubeadm files failed (exit %d): %s" % (done["rc"], done["stderr"].strip()))
        result.update(answer(done["stdout"]))
        return result
