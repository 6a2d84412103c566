# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which hosts each play of a flow's pass runs on: the passes a run does not need match no host, so a run takes as
many steps as the plan needs, up to kcp_max_steps, at no cost for the passes it leaves."""

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.filter.flow_pass_hosts import flow_pass_hosts
from ansible_collections.kubeadm.control_plane.plugins.module_utils.flow_passes import STEPS_CEILING

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CANDIDATES = {"all": ["cp-1", "cp-2"], "control_plane_candidates": ["cp-1", "cp-2"]}


def observe(groups, flow_pass=1, max_steps=None):
    return flow_pass_hosts(groups, "observe", flow_pass, "control_plane_candidates", max_steps)


@pytest.mark.parametrize(
    "groups,flow_pass,max_steps,hosts",
    [
        (CANDIDATES, 1, None, "control_plane_candidates"),
        (dict(CANDIDATES, kcp_retired=["cp-2"]), 2, None, "control_plane_candidates:!kcp_retired"),
        (dict(CANDIDATES, kcp_done=["cp-1"]), 2, None, "all:!all"),
        (dict(CANDIDATES, kcp_failed=["cp-1"]), 2, None, "all:!all"),
        (CANDIDATES, STEPS_CEILING, None, "control_plane_candidates"),
        (CANDIDATES, 3, 3, "control_plane_candidates"),
        (CANDIDATES, 4, 3, "all:!all"),
        (CANDIDATES, 4, "3", "all:!all"),
    ],
    ids=["the first pass", "hosts given back are left out", "the run is done", "a pass failed", "the last pass a run has",
         "the last pass the operator allows", "a pass beyond the operator's limit", "the limit given on the command line"],
)
def test_the_observe_play_runs_on_the_candidates_until_the_run_is_done_failed_or_out_of_steps(groups, flow_pass, max_steps, hosts):
    assert observe(groups, flow_pass, max_steps) == hosts


def test_the_act_play_runs_on_the_step_host_and_localhost_only_in_the_pass_that_picked_it():
    picked = dict(CANDIDATES, kcp_step=["cp-2"], kcp_step_pass_2=["cp-2"])
    assert flow_pass_hosts(picked, "act", 2) == "kcp_step:localhost"
    assert flow_pass_hosts(picked, "act", 3) == "all:!all"  # the next pass picked nothing (yet)
    assert flow_pass_hosts(dict(picked, kcp_failed=["cp-2"]), "act", 2) == "all:!all"


def test_the_filter_refuses_what_is_not_the_runs_groups_or_a_play_of_a_pass():
    with pytest.raises(AnsibleFilterError, match="the run's groups"):
        flow_pass_hosts(["cp-1"], "observe", 1)
    with pytest.raises(AnsibleFilterError, match="observe or act"):
        flow_pass_hosts(CANDIDATES, "finish", 1)


def test_the_flow_imports_one_pass_for_each_step_a_run_may_take():
    with open(os.path.join(ROOT, "playbooks", "flow.yml")) as playbook:
        plays = yaml.safe_load(playbook)
    passes = [play["vars"]["flow_pass"] for play in plays if play.get("ansible.builtin.import_playbook") == "kubeadm.control_plane.flow_pass"]
    assert passes == list(range(1, STEPS_CEILING + 1))
