# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The step of a flow's pass and the hosts it acts on (flow_step), the words that name it (flow_step_title), and the
record of a worker's replacement the step writes first (worker_rollout_record). The documentation is in
flow_step.yml, flow_step_title.yml and worker_rollout_record.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.flow_step import pass_step, title
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_rollout import record_to_write


def flow_step(plan, snapshot, unfinished, running, free_domains, free_workers=None):
    """pass_step over the plan (the input), the pass's snapshot, the unfinished machine ('' for none), the machines
    that run the control plane and answered, the free hosts with their failure domains, and the free worker hosts with
    their worker groups."""
    if not isinstance(plan, dict) or "action" not in plan:
        raise AnsibleFilterError("flow_step: the input must be a plan (kcp_plan's result)")
    if not isinstance(free_domains, dict):
        raise AnsibleFilterError("flow_step: free_domains must map each free host to its failure domain")
    if not isinstance(free_workers or {}, dict):
        raise AnsibleFilterError("flow_step: free_workers must map each free worker host to its worker group")
    return pass_step(plan, unfinished or "", list(running or []), free_domains, snapshot, free_workers or {})


def flow_step_title(plan, unfinished, emptied=False):
    """title over the plan (the input), the unfinished machine ('' for none) and whether no machine is left."""
    if not isinstance(plan, dict) or "action" not in plan:
        raise AnsibleFilterError("flow_step_title: the input must be a plan (kcp_plan's result)")
    return title(plan, unfinished or "", bool(emptied))


def worker_rollout_record(rollout, step, host, now):
    """record_to_write over the plan's worker_rollout (the input), the step, its host and the time now."""
    if not isinstance(rollout, dict) or "worker" not in rollout:
        raise AnsibleFilterError("worker_rollout_record: the input must be a plan's worker_rollout")
    return record_to_write(rollout, step, host, now)


class FilterModule(object):
    """flow_step, flow_step_title, worker_rollout_record."""

    def filters(self):
        return {"flow_step": flow_step, "flow_step_title": flow_step_title, "worker_rollout_record": worker_rollout_record}
