# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workers' health checks as the remediate and reconcile flows plan them (module_utils/worker_remediation.py,
planner.plan with remediate_workers, plan_projection): one worker a step within its group's budget, a group held
back by its budget named with the rule while others go on, a remediation a stopped run left half done finished
first, and the control plane first."""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.health_check import evaluate_workers
from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_projection import project
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_remediation import decide, drain_timeout, in_progress
from ansible_collections.kubeadm.control_plane.tests.unit.builders import control_plane, health_check, snapshot, spec, worker

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
    assert decide(evaluate_workers(the_spec, snap), None, snap["workers"]) == (None, None, None, [])
