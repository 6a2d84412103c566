# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_lock's controller side (host_kubeconfig.ApiAction): with ``admin_kubeconfig_on_host`` the lock is taken or
released from the controller, and a lock taken, renewed or held is then kept alive while the run acts
(lock_keeper). The documentation is in plugins/modules/kcp_lock.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils import lock_answer, lock_lease
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import lock_keeper
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils.host_kubeconfig import ApiAction


class ActionModule(ApiAction):
    MODULE = "kubeadm.control_plane.kcp_lock"
    ARGUMENT_SPEC = lock_answer.ARGUMENT_SPEC
    IMPORT_ERROR = lock_lease.IMPORT_ERROR
    FAILURES = (lock_lease.LockFailed, ValueError)

    def answer(self, params, check_mode, task_vars):
        done = lock_answer.lock(params, check_mode)
        kept = lock_keeper.keep_alive(done, params["kubeconfig"], params["holder"], params["duration"], params["timeout"], check_mode)
        warnings = [warning for warning in (done.pop("warning"), kept) if warning]
        return dict(done, warnings=warnings) if warnings else done
