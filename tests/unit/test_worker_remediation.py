# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workers' health checks as the remediate and reconcile flows plan them (module_utils/worker_remediation.py,
planner.plan with remediate_workers, plan_projection): one worker a step within its group's budget, a group held
back by its budget named with the rule while others go on, a remediation a stopped run left half done finished
first, and the control plane first."""

import json

from ansible_collections.kubeadm.control_plane.plugins.filter.flow_step import worker_rollout_record
from ansible_collections.kubeadm.control_plane.plugins.module_utils import observation
from ansible_collections.kubeadm.control_plane.plugins.module_utils.health_check import evaluate_workers
from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_projection import project
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_remediation import decide, drain_timeout, in_progress
from ansible_collections.kubeadm.control_plane.tests.unit.builders import NOW, control_plane, health_check, snapshot, spec, worker

MACHINES = control_plane(3, "h")


def workers_spec(default=None, drain=300.0, **groups):
    return spec(workers={"health_check": default, "drain_timeout": drain,
                         "groups": {name: dict({"health_check": None, "drain_timeout": None}, **settings) for name, settings in groups.items()}})


def silent(name, group="md-0"):
    """A worker whose kubelet stopped 10 minutes ago: Ready Unknown past the 5m timeout."""
    return worker(name, group=group, node_ready="Unknown", changed=10)


def planned(the_spec, workers, record=None):
    snap = snapshot(MACHINES, workers=workers, worker_remediation_in_progress=record)
    return plan(the_spec, snap, desired_hashes={"init": "h", "join": "h"}, remediate_workers=True)


def test_an_unhealthy_worker_is_rebuilt_where_it_stands_one_a_step_with_its_group_s_drain_timeout():
    the_spec = workers_spec(health_check(max_unhealthy=1), **{"md-0": {"drain_timeout": 120.0}})
    result = planned(the_spec, [worker("md-0-a", group="md-0"), silent("md-0-b"), worker("md-0-c", group="md-0")])
    assert (result["action"], result["workers"], result["worker_group"], result["timeout_seconds"]) == (
        "remediate_worker", ["md-0-b"], "md-0", 120.0), result
    assert result["reason"].startswith("worker md-0-b of worker group md-0 is unhealthy (node condition Ready has been Unknown since ")
    assert result["reason"].endswith("drain it, kubeadm reset, delete its Node and join it again")


def test_a_group_beyond_its_budget_is_held_back_naming_the_rule_while_another_group_goes_on():
    the_spec = workers_spec(health_check(max_unhealthy=1))
    workers = [silent("md-0-a"), silent("md-0-b"), worker("md-0-c", group="md-0"), silent("gpu-a", group="gpu"), worker("gpu-b", group="gpu")]
    result = planned(the_spec, workers)
    assert (result["action"], result["workers"]) == ("remediate_worker", ["gpu-a"]), result
    # gpu healed: only md-0 is left, and it waits with the rule
    result = planned(the_spec, workers[:3] + [worker("gpu-a", group="gpu"), worker("gpu-b", group="gpu")])
    assert result["action"] == "wait", result
    assert [(b["rule"], b["machines"]) for b in result["blocked_by"]] == [("worker_remediation_not_allowed", ["md-0-a", "md-0-b"])]
    assert result["blocked_by"][0]["message"] == (
        "worker group md-0: Remediation is blocked: 2 of 3 machines not healthy, more than the 1 that max_unhealthy 1 allows.")


def test_a_remediation_stopped_after_the_node_was_deleted_is_finished_first_and_a_stale_record_is_ignored():
    the_spec = workers_spec(health_check())
    record = {"worker": "md-0-b", "group": "md-0", "timestamp": "2026-11-22T09:55:00Z"}
    result = planned(the_spec, [worker("md-0-a", group="md-0"), silent("gpu-a", group="gpu")], record)
    assert (result["action"], result["workers"], result["worker_group"]) == ("remediate_worker", ["md-0-b"], "md-0"), result
    assert "was stopped after its Node was deleted: join it again" in result["reason"]
    # its Node is back (joined, the record not cleared yet): nothing owed
    assert in_progress(record, [worker("md-0-b", group="md-0")]) is None
    result = planned(the_spec, [worker("md-0-a", group="md-0"), worker("md-0-b", group="md-0")], record)
    assert result["action"] == "none", result


def test_workers_are_left_alone_by_the_flows_that_do_not_remediate_them_and_without_a_health_check():
    the_spec = workers_spec(health_check())
    snap = snapshot(MACHINES, workers=[silent("md-0-a")])
    assert plan(the_spec, snap, desired_hashes={"init": "h", "join": "h"})["action"] == "none"
    assert planned(workers_spec(), [silent("md-0-a")])["action"] == "none"


def test_the_control_plane_comes_first():
    the_spec = workers_spec(health_check())
    snap = snapshot(control_plane(2, "h"), workers=[silent("md-0-a")])
    assert plan(the_spec, snap, desired_hashes={"init": "h", "join": "h"}, remediate_workers=True)["action"] == "scale_up"


def test_the_projection_rebuilds_each_unhealthy_worker_then_is_done():
    the_spec = workers_spec(health_check())
    # machines built from this very spec: the projection plans with the spec's own hashes
    machines = control_plane(3, spec_hashes(the_spec)["join"], cp_1={"bootstrap": "join"})
    snap = snapshot(machines, workers=[silent("md-0-a"), silent("md-0-b"), worker("md-0-c", group="md-0")])
    steps = project(the_spec, snap, remediate_workers=True)
    assert [(s["action"], s["workers"]) for s in steps] == [
        ("remediate_worker", ["md-0-a"]), ("remediate_worker", ["md-0-b"]), ("none", [])], steps


def test_the_drain_timeout_is_the_group_s_own_else_the_workers():
    the_spec = workers_spec(drain=600.0, **{"md-0": {"drain_timeout": 60.0}})
    assert (drain_timeout(the_spec, "md-0"), drain_timeout(the_spec, "gpu"), drain_timeout(the_spec, None)) == (60.0, 600.0, 600.0)


def test_the_decision_alone_names_nothing_when_every_worker_is_healthy():
    the_spec = workers_spec(health_check())
    snap = snapshot(MACHINES, workers=[worker("md-0-a", group="md-0")])
    decision = decide(the_spec, evaluate_workers(the_spec, snap), None, snap["workers"], parse_time(snap["now"]))
    assert (decision.action, decision.worker, decision.held, decision.waiting) == (None, None, [], [])


def external(attempts=2, timeout=600.0, escalate=False):
    return {"attempts": attempts, "timeout": timeout, "escalate": escalate}


def with_external(settings, **groups):
    """The workers' health check on every group, md-0 handing its unhealthy workers to the user's tasks first."""
    the_spec = workers_spec(health_check(), **groups)
    the_spec["workers"]["groups"].setdefault("md-0", {"health_check": None, "drain_timeout": None})["external_remediation"] = settings
    return the_spec


def test_with_external_remediation_an_unhealthy_worker_goes_to_the_user_s_tasks_first_one_attempt_a_step():
    result = planned(with_external(external()), [silent("md-0-a"), worker("md-0-b", group="md-0")])
    assert (result["action"], result["machine"], result["workers"], result["worker_group"], result["attempt"], result["timeout_seconds"]) == (
        "remediate_external", "md-0-a", ["md-0-a"], "md-0", 1, 600.0), result
    assert result["reason"] == "md-0-a is unhealthy: external remediation, attempt 1 of 2"
    # a group without it is rebuilt as before
    result = planned(with_external(external()), [silent("gpu-a", group="gpu")])
    assert (result["action"], result["workers"]) == ("remediate_worker", ["gpu-a"]), result


def test_a_worker_whose_attempt_still_runs_is_passed_over_for_another_and_alone_is_a_wait_until_its_timeout():
    trying = silent("md-0-a")
    trying["external_remediation"] = {"attempts": 1, "last": "2026-11-22T09:58:00Z"}
    the_spec = with_external(external())
    result = planned(the_spec, [trying, silent("gpu-a", group="gpu")])
    assert (result["action"], result["workers"]) == ("remediate_worker", ["gpu-a"]), result
    result = planned(the_spec, [trying])
    assert result["action"] == "wait", result
    assert [(b["rule"], b["machines"]) for b in result["blocked_by"]] == [("external_remediation_in_progress", ["md-0-a"])]
    assert result["retry_after_seconds"] == 480.0, result


def test_spent_attempts_escalate_to_a_rebuild_or_wait_for_a_person():
    spent = silent("md-0-a")
    spent["external_remediation"] = {"attempts": 2, "last": "2026-11-22T09:00:00Z"}
    result = planned(with_external(external(escalate=True)), [spent])
    assert (result["action"], result["workers"]) == ("remediate_worker", ["md-0-a"]), result
    assert result["reason"].startswith("md-0-a is still unhealthy after 2 external remediation attempts: escalate to delete and recreate")
    result = planned(with_external(external()), [spent])
    assert (result["action"], [b["rule"] for b in result["blocked_by"]]) == ("wait", ["external_remediation_exhausted"]), result


def test_a_worker_healthy_again_has_its_request_cleared():
    healed = worker("md-0-a", group="md-0")
    healed["external_remediation"] = {"attempts": 1, "last": "2026-11-22T09:50:00Z"}
    result = planned(with_external(external()), [healed, worker("md-0-b", group="md-0")])
    assert (result["action"], result["machine"], result["workers"], result["reason"]) == (
        "clear_external_remediation", "md-0-a", ["md-0-a"], "worker md-0-a is healthy again after 1 external remediation attempt: clear its request")
    steps = project(with_external(external()), snapshot(control_plane(3, spec_hashes(with_external(external()))["join"], cp_1={"bootstrap": "join"}),
                                                        workers=[silent("md-0-a")]), remediate_workers=True)
    assert [(s["action"], s["workers"]) for s in steps] == [
        ("remediate_external", ["md-0-a"]), ("clear_external_remediation", ["md-0-a"]), ("none", [])], steps


def provided(the_spec, workers, rollout_record=None):
    snap = snapshot(MACHINES, workers=workers, worker_rollout_in_progress=rollout_record)
    return plan(the_spec, snap, desired_hashes={"init": "h", "join": "h"}, remediate_workers=True, provider_makes_hosts=True)


def test_with_a_provider_that_makes_hosts_a_worker_is_replaced_by_a_new_host_removed_first_whatever_max_unavailable():
    the_spec = workers_spec(health_check())
    result = provided(the_spec, [silent("md-0-a"), worker("md-0-b", group="md-0")])
    assert (result["action"], result["step"], result["workers"]) == ("remediate_worker", "remove_worker", ["md-0-a"]), result
    assert result["worker_rollout"] == {"worker": "md-0-a", "uid": "uid-md-0-a", "group": "md-0", "replacement": None, "surge": False,
                                        "timestamp": None, "remediation": True}
    assert result["reason"].endswith("give its host back to the machine provider, then a new host of the group joins")
    # removed: a new host of the group joins, the health check's budget, not max_unavailable, having allowed it
    begun = dict(result["worker_rollout"], timestamp="2026-11-22T09:59:00Z")
    result = provided(the_spec, [worker("md-0-b", group="md-0")], begun)
    assert (result["action"], result["step"], result["workers"]) == ("remediate_worker", "join_worker", ["md-0-a"]), result
    assert result["reason"] == ("the remediation of worker md-0-a of worker group md-0 by a new host begun at 2026-11-22T09:59:00Z: "
                                "join a new host of the group")
    # the removal a stopped run left undone is taken again, never held by max_unavailable 0
    result = provided(the_spec, [silent("md-0-a"), worker("md-0-b", group="md-0")], begun)
    assert (result["action"], result["step"], result["blocked_by"]) == ("remediate_worker", "remove_worker", []), result


def test_a_replacement_under_way_is_finished_before_a_remediation_by_a_new_host_begins():
    the_spec = workers_spec(health_check())
    under_way = {"worker": "md-0-c", "uid": "uid-md-0-c", "group": "md-0", "replacement": "md-0-x", "surge": True,
                 "timestamp": "2026-11-22T09:59:00Z"}
    result = provided(the_spec, [silent("md-0-a"), worker("md-0-b", group="md-0"), worker("md-0-c", group="md-0")], under_way)
    assert (result["action"], result["step"], result["workers"]) == ("roll_workers", "join_worker", ["md-0-c"]), result


def test_the_projection_with_a_provider_removes_then_joins_a_new_host():
    the_spec = workers_spec(health_check())
    machines = control_plane(3, spec_hashes(the_spec)["join"], cp_1={"bootstrap": "join"})
    steps = project(the_spec, snapshot(machines, workers=[silent("md-0-a")]), remediate_workers=True, provider_makes_hosts=True)
    assert [(s["action"], s["step"], s["workers"]) for s in steps] == [
        ("remediate_worker", "remove_worker", ["md-0-a"]), ("remediate_worker", "join_worker", ["md-0-a"]), ("none", None, [])], steps


def test_the_record_a_replacing_remediation_writes_is_read_back_and_planned_from():
    """The seam: the plan's worker_rollout, as the flow writes it (worker_rollout_record) before the removal, read from
    the state ConfigMap by the observation, validated as a snapshot, and planned from: the join of a new host."""
    the_spec = workers_spec(health_check())
    removal = provided(the_spec, [silent("md-0-a"), worker("md-0-b", group="md-0")])
    written = worker_rollout_record(removal["worker_rollout"], removal["step"], "md-0-a", "2026-11-22T09:59:00Z")
    read = observation.assemble(NOW, [], [], kubeadm_config={}, state_config_map={"worker-rollout": json.dumps(written)})
    assert normalize_snapshot(read)[1] == []
    result = provided(the_spec, [worker("md-0-b", group="md-0")], read["worker_rollout_in_progress"])
    assert (result["action"], result["step"], result["worker_rollout"]["replacement"]) == ("remediate_worker", "join_worker", None), result
    # the join writes the host it takes, and once it joined the record is spent
    joined = worker_rollout_record(result["worker_rollout"], result["step"], "md-0-x", "2026-11-22T10:00:00Z")
    assert (joined["replacement"], joined["timestamp"]) == ("md-0-x", "2026-11-22T09:59:00Z")
    done = provided(the_spec, [worker("md-0-b", group="md-0"), worker("md-0-x", group="md-0")], joined)
    assert done["action"] == "none", done


def test_a_worker_without_a_group_is_rebuilt_on_its_own_host_even_with_a_provider_that_makes_hosts():
    the_spec = workers_spec(health_check())
    result = provided(the_spec, [silent("w-1", group=None), worker("w-2")])
    assert (result["action"], result["step"], result["workers"], result["worker_rollout"]) == ("remediate_worker", None, ["w-1"], None), result
    assert result["reason"].endswith("drain it, kubeadm reset, delete its Node and join it again")
