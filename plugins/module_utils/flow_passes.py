# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which hosts each play of a flow's pass runs on (playbooks/flow_pass.yml, docs/flows.md "One pass"). Ansible cannot
loop over plays, so playbooks/flow.yml imports the pass STEPS_CEILING times; the passes a run does not need match no
host and cost nothing. Pure: it reads the run's groups as the play's host pattern sees them."""

from __future__ import annotations

# The most steps one run may take (kcp_max_steps): the passes playbooks/flow.yml imports. A rollout of 14 machines
# (29 steps) fits in one run; a run that stops with steps left is continued by the next.
STEPS_CEILING = 30
# The pattern of a play that is to run on no host: ansible-playbook skips it ("no hosts matched").
NO_HOST = "all:!all"


def observe_hosts(groups, flow_pass, group, max_steps):
    """The host pattern of pass ``flow_pass``'s observe play: the candidates of ``group`` that were not given back,
    or none once the run is done (kcp_done), failed (kcp_failed) or has taken ``max_steps`` passes."""
    if "kcp_done" in groups or "kcp_failed" in groups or int(flow_pass) > int(max_steps):
        return NO_HOST
    return group + (":!kcp_retired" if "kcp_retired" in groups else "")


def act_hosts(groups, flow_pass):
    """The host pattern of pass ``flow_pass``'s act play: the step's host and localhost when this pass picked one
    (kcp_step_pass_<n>, roles/flow/tasks/pick.yml) and the run has not failed; no host otherwise. localhost stays in
    the play so that a step host that stops answering is not the play's only host (roles/flow/tasks/lost.yml)."""
    if "kcp_step_pass_%s" % flow_pass in groups and "kcp_failed" not in groups:
        return "kcp_step:localhost"
    return NO_HOST
