# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which inventory hosts a pass's step acts on (flow_step): the plan the planner really returns is fed through."""

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.filter.flow_step import flow_step, flow_step_title
from ansible_collections.kubeadm.control_plane.plugins.module_utils import plan_projection, planner, worker_rollout
from ansible_collections.kubeadm.control_plane.plugins.module_utils import snapshot as snapshot_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_answer import plan_from_raw
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash

from ansible_collections.kubeadm.control_plane.tests.unit.builders import FAILURE_DOMAINS, control_plane, snapshot

RAW_SPEC = {"cluster_name": "demo", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "10.0.0.100"}}
CURRENT = spec_hash(normalize_spec(RAW_SPEC)[0], "join")
FDS = FAILURE_DOMAINS


def machines(n, **overrides):
    return control_plane(n, CURRENT, **overrides)


def planned(observed, projection=False, **spec):
    result, errors = plan_from_raw(dict(RAW_SPEC, **spec), observed, projection=projection)
    assert errors == []
    return result


def running(observed):
    return [m["name"] for m in observed["machines"] if m["node"] and not m["deleting"]]


def test_a_new_machine_goes_on_the_first_free_host_of_the_planned_failure_domain():
    observed = snapshot(machines(2), failure_domains=FDS)
    plan = planned(observed)
    assert plan["action"] == "scale_up" and plan["failure_domain"] == "fd-c"
    free = {"cp-4": "fd-a", "cp-5": "fd-c", "cp-6": "fd-c"}
    step = flow_step(plan, observed, "", running(observed), free)
    assert step == dict(action="scale_up", hosts=["cp-5"], via="cp-1", bootstrap="join", remediation=None, provider=step["provider"],
                        ahead=[], hosts_title="cp-5", workers_reached=[])
    assert step["provider"]["what"] == "a host in failure domain fd-c"


def test_no_free_host_in_the_failure_domain_gives_no_host():
    observed = snapshot(machines(2), failure_domains=FDS)
    assert flow_step(planned(observed), observed, "", running(observed), {"cp-4": "fd-a"})["hosts"] == []


def test_the_first_machine_is_an_init_on_any_free_host_when_no_failure_domain_is_named():
    observed = snapshot([], initialized=False, failure_domains=[])
    plan = planned(observed)
    assert plan["action"] == "scale_up" and plan["init"] and not plan["failure_domain"]
    step = flow_step(plan, observed, "", [], {"cp-1": None, "cp-2": None})
    assert step == dict(action="scale_up", hosts=["cp-1"], via="", bootstrap="init", remediation=None, provider=step["provider"],
                        ahead=[], hosts_title="cp-1", workers_reached=[])


def test_a_rollout_step_is_the_scale_down_it_takes_on_the_plans_machine():
    observed = snapshot(machines(4, cp_1={"version": "v1.35.8"}), failure_domains=FDS)
    plan = planned(observed)
    assert (plan["action"], plan["step"], plan["machine"]) == ("rollout", "scale_down", "cp-1")
    step = flow_step(plan, observed, "", running(observed), {})
    assert (step["action"], step["hosts"], step["via"]) == ("scale_down", ["cp-1"], "cp-2")


def test_a_machine_started_and_not_finished_is_finished_first_as_it_was_bootstrapped():
    observed = snapshot(machines(3, cp_3={"has_node": False, "bootstrap": "join"}), failure_domains=FDS,
                        remediation_in_progress={"machine": "cp-9", "timestamp": "2026-11-20T09:00:00Z", "retry_count": 0})
    step = flow_step(planned(observed), observed, "cp-3", running(observed), {"cp-4": "fd-c"})
    assert step == dict(action="scale_up", hosts=["cp-3"], via="cp-1", bootstrap="join",
                        remediation=observed["remediation_in_progress"], provider=step["provider"], ahead=[],
                        hosts_title="cp-3", workers_reached=[])


def test_a_create_installs_ahead_on_the_hosts_its_next_steps_make_machines_on():
    observed = snapshot([], initialized=False, failure_domains=FDS)
    free = {"cp-1": "fd-a", "cp-2": "fd-a", "cp-3": "fd-b", "cp-4": "fd-c", "cp-5": "fd-c"}
    step = flow_step(planned(observed, projection=True), observed, "", [], free)
    assert (step["hosts"], step["bootstrap"], step["ahead"]) == (["cp-1"], "init", ["cp-3", "cp-4"])
    assert step["hosts_title"] == "cp-1 (and cp-3, cp-4 ahead)"


def test_the_hosts_ahead_are_those_the_next_passes_pick():
    """The seam: each later pass, planned from what the step before it made, picks the host the first pass installed
    ahead, in the same order."""
    spec = normalize_spec(dict(RAW_SPEC, replicas=5))[0]
    observed = snapshot(machines(3), failure_domains=FDS)
    free = {"cp-4": "fd-a", "cp-5": "fd-a", "cp-6": "fd-b", "cp-7": "fd-c"}
    first = flow_step(planned(observed, projection=True, replicas=5), observed, "", running(observed), free)
    assert first["ahead"] == ["cp-6"]
    current, picked = observed, []
    for _step in range(2):
        plan = planned(current, replicas=5)
        host = flow_step(plan, current, "", running(current), free)["hosts"][0]
        picked.append(host)
        free.pop(host)
        current = plan_projection.after_step(spec, snapshot_module.normalize_snapshot(current)[0], plan, host)
    assert picked == first["hosts"] + first["ahead"]


@pytest.mark.parametrize("observed, free, why", [
    (snapshot(machines(3, cp_1={"version": "v1.35.8"}), failure_domains=FDS), {"cp-4": "fd-a", "cp-5": "fd-b"},
     "a rollout's new machine is followed by a removal"),
    (snapshot(machines(2), failure_domains=FDS), {"cp-4": "fd-c"}, "the last machine the spec wants"),
    (snapshot([], initialized=False, failure_domains=FDS), {"cp-1": "fd-a", "cp-2": "fd-a"},
     "no free host where the next machine goes: none after it either"),
])
def test_no_host_is_installed_ahead_past_the_steps_that_make_machines_one_after_another(observed, free, why):
    step = flow_step(planned(observed, projection=True), observed, "", running(observed), free)
    assert step["hosts"] and step["ahead"] == [] and step["hosts_title"] == ", ".join(step["hosts"]), why


def test_no_host_is_installed_ahead_for_a_machine_to_finish_or_without_the_projection():
    observed = snapshot(machines(2, cp_2={"has_node": False, "bootstrap": "join"}), failure_domains=FDS)
    free = {"cp-3": "fd-c", "cp-4": "fd-a"}
    assert flow_step(planned(observed, projection=True), observed, "cp-2", running(observed), free)["ahead"] == []
    empty = snapshot([], initialized=False, failure_domains=FDS)
    assert flow_step(planned(empty), empty, "", [], {"cp-1": "fd-a", "cp-3": "fd-b"})["ahead"] == []


@pytest.mark.parametrize("action", ["update_kubeadm_config", "remove_etcd_member"])
def test_a_cluster_step_goes_through_the_first_machine_that_runs_the_control_plane(action):
    plan = dict(action=action, step=None, machine=None, workers=[], failure_domain=None, init=False, remediation_for=None)
    step = flow_step(plan, snapshot(machines(3)), "", ["cp-2", "cp-3"], {})
    assert (step["action"], step["hosts"], step["via"]) == (action, ["cp-2"], "cp-3")


def test_workers_to_upgrade_are_the_plans_workers():
    plan = dict(action="upgrade_workers", step=None, machine=None, workers=["w-1", "w-2"], failure_domain=None,
                init=False, remediation_for=None)
    step = flow_step(plan, snapshot(machines(3)), "", ["cp-1", "cp-2", "cp-3"], {})
    assert (step["hosts"], step["via"], step["workers_reached"]) == (["w-1", "w-2"], "cp-1", ["w-1", "w-2"])


@pytest.mark.parametrize("step, record, free, reached", [
    # max_surge 1: the new worker joins first, the replaced one is removed next, over SSH
    ("join_worker", {"worker": "w-1", "replacement": None, "surge": True}, {"w-2": "md-0"}, ["w-1", "w-2"]),
    ("remove_worker", {"worker": "w-1", "replacement": "w-2", "surge": True}, {}, ["w-1"]),
    # removed first (a remediation by a new host, WR6): the join reaches the new host only; the replaced worker's host
    # goes back to the provider by name, and may be gone from the inventory (a run stopped after the provider's delete)
    ("remove_worker", {"worker": "w-1", "replacement": None, "surge": False, "remediation": True}, {}, ["w-1"]),
    ("join_worker", {"worker": "w-1", "replacement": None, "surge": False, "remediation": True}, {"w-2": "md-0"}, ["w-2"]),
    # max_surge 0 on a static pool: the replaced worker's own host joins again
    ("join_worker", {"worker": "w-1", "replacement": "w-1", "surge": False}, {}, ["w-1"]),
])
def test_the_workers_a_replacement_reaches_are_those_it_acts_on_or_removes_next(step, record, free, reached):
    plan = dict(action="remediate_worker", step=step, machine=None, workers=["w-1"], worker_group="md-0", failure_domain=None,
                init=False, remediation_for=None, worker_rollout=record)
    assert flow_step(plan, snapshot(machines(3)), "", ["cp-1"], {}, free)["workers_reached"] == reached


@pytest.mark.parametrize("plan, unfinished, emptied, title", [
    ({"action": "rollout", "step": "scale_up", "machine": None}, "", False, "rollout scale_up"),
    ({"action": "upgrade_in_place", "machine": "cp-1"}, "", False, "upgrade_in_place cp-1"),
    ({"action": "roll_workers", "step": "join_worker", "workers": ["w-1"]}, "", False, "roll_workers join_worker w-1"),
    ({"action": "remediate_worker", "step": "remove_worker", "workers": ["w-1"]}, "", False, "remediate_worker remove_worker w-1"),
    ({"action": "remediate_worker", "step": None, "workers": ["w-1"]}, "", False, "remediate_worker w-1"),
    ({"action": "upgrade_workers", "workers": ["w-1", "w-2"]}, "", False, "upgrade_workers w-1,w-2"),
    ({"action": "remediate_external", "machine": "w-1", "workers": ["w-1"]}, "", False, "remediate_external w-1"),
    ({"action": "remediate_external", "machine": "cp-2", "workers": []}, "", False, "remediate_external"),
    ({"action": "wait", "step": "join_worker", "workers": ["w-1"]}, "", False, "wait"),
    ({"action": "scale_up"}, "cp-4", False, "finish cp-4"),
    ({"action": "scale_down", "machine": "cp-1"}, "", True, "none"),
], ids=lambda value: value if isinstance(value, str) and " " in value else None)
def test_a_pass_s_step_is_named_by_its_action_step_and_what_it_acts_on(plan, unfinished, emptied, title):
    assert flow_step_title(plan, unfinished, emptied) == title


def test_input_that_is_not_a_plan_is_refused():
    with pytest.raises(AnsibleFilterError, match="must be a plan"):
        flow_step({}, {}, "", [], {})
    with pytest.raises(AnsibleFilterError, match="free_domains"):
        flow_step({"action": "none"}, {}, "", [], [])


def test_every_step_a_pass_can_take_has_the_tasks_that_take_it():
    """The act play includes act/<file> by the step's action (roles/flow/tasks/act.yml): each action the planner can
    hand a host (a rollout hands its scale up or down, a workers' rollout its join or removal: step_action) names a
    file that is there, and nothing else."""
    tasks = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "flow", "tasks")
    with open(os.path.join(tasks, "act.yml"), encoding="utf-8") as handle:
        (act,) = yaml.safe_load(handle)
    files = act["block"][0]["vars"]["flow_act_files"]
    assert set(files) == set(planner.ACTIONS) - {planner.NONE, planner.WAIT, planner.ROLLOUT, planner.ROLL_WORKERS} | {
        worker_rollout.JOIN, worker_rollout.REMOVE}
    assert all(os.path.isfile(os.path.join(tasks, "act", name)) for name in files.values()), files


def test_the_machine_provider_is_asked_for_a_worker_of_the_group_for_a_worker_s_join_else_a_host_in_the_failure_domain():
    snap = snapshot(machines(3))
    join = dict(action="roll_workers", step="join_worker", machine=None, workers=["w-1"], worker_group="md-0", failure_domain=None,
                init=False, remediation_for=None, worker_rollout={"worker": "w-1", "replacement": None})
    assert flow_step(join, snap, "", ["cp-1"], {}, {})["provider"] == {
        "failure_domain": "", "worker_group": "md-0", "key": "worker_group", "value": "md-0", "what": "a worker host of group md-0"}
    scale_up = dict(action="scale_up", step=None, machine=None, workers=[], failure_domain="fd-2", init=False, remediation_for=None)
    assert flow_step(scale_up, snap, "", ["cp-1"], {}, {})["provider"] == {
        "failure_domain": "fd-2", "worker_group": "", "key": "failure_domain", "value": "fd-2", "what": "a host in failure domain fd-2"}
