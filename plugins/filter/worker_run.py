# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the worker playbooks decide before they touch a worker (module_utils/worker_run.py): whether they may go
ahead, the group each worker joins and the version it joins at. The documentation is in worker_run_refusal.yml,
worker_groups.yml and worker_join_version.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_run import worker_groups, worker_join_version, worker_run_refusal


def run_refusal(kubectl_host, group, conditions=None):
    """The reason, or the empty string when the run may go ahead."""
    return worker_run_refusal(kubectl_host, group, conditions) or ""


class FilterModule(object):
    """worker_run_refusal, worker_groups, worker_join_version."""

    def filters(self):
        return {"worker_run_refusal": run_refusal, "worker_groups": worker_groups, "worker_join_version": worker_join_version}
