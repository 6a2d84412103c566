# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A worker's rolling replacement as the flows plan it (module_utils/worker_rollout.py, planner.plan, plan_projection,
flow_step): which worker and why, the two steps in the group's order, a removal within its max_unavailable, a
replacement a stopped run left half done finished first, and the hosts each step acts on."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.filter.flow_step import flow_step
from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_projection import project
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_rollout import JOIN, REMOVE, decide, in_progress, reasons, record_to_write
from ansible_collections.kubeadm.control_plane.tests.unit.builders import VERSION, control_plane, snapshot, spec, upgrade, worker

MACHINES = control_plane(3, "h")


def rolling(max_surge=1, max_unavailable=0, **groups):
    """The spec at VERSION, upgrade.strategy rolling, with the workers' rollout settings and each group's own."""
    return spec(workers={"health_check": None, "drain_timeout": 300.0, "max_surge": max_surge, "max_unavailable": max_unavailable,
                         "groups": {name: dict({"health_check": None, "drain_timeout": None, "max_surge": None, "max_unavailable": None},
                                               **settings) for name, settings in groups.items()}})


def record(worker_name, replacement, surge=True, group="md-0", uid=None):
    return {"worker": worker_name, "uid": uid or "uid-" + worker_name, "group": group, "replacement": replacement, "surge": surge,
            "timestamp": "2026-11-28T11:00:00Z"}


def planned(the_spec, workers, rollout_record=None):
    return plan(the_spec, snapshot(MACHINES, workers=workers, worker_rollout_in_progress=rollout_record), desired_hashes={"init": "h", "join": "h"})


def test_a_worker_is_replaced_when_marked_or_with_the_rolling_strategy_behind_the_spec_s_version():
    assert reasons(worker("w-1", replace_requested=True), rolling()) == ["its Node carries the replace-machine annotation"]
    assert reasons(worker("w-1", group="md-0", version="v1.35.2"), rolling()) == [
        "its kubelet runs v1.35.2, the spec says %s (upgrade.strategy rolling)" % VERSION]
    # a worker joined outside the collection (no group label) only when its user asks
    assert reasons(worker("w-1", version="v1.35.2"), rolling()) == []
    # the in-place strategy upgrades it where it stands instead
    assert reasons(worker("w-1", version="v1.35.2"), spec(upgrade=upgrade("in_place"))) == []
    assert reasons(worker("w-1"), rolling()) == []


def test_with_max_surge_1_the_replacement_joins_on_a_free_host_first_the_unavailable_worker_first_then_the_oldest():
    workers = [worker("w-1", group="md-0", replace_requested=True, created=2000), worker("w-2", group="md-0", replace_requested=True),
               worker("w-3", group="md-0", replace_requested=True, ready=False), worker("g-1", group="gpu", replace_requested=True, created=3000)]
    decision = decide(rolling(), workers, None)
    # gpu before md-0 (by name), its one worker
    assert (decision.step, decision.worker, decision.group, decision.replacement, decision.surge, decision.blocker) == (JOIN, "g-1", "gpu", None, True, None)
    decision = decide(rolling(), workers[:3], None)
    assert (decision.step, decision.worker) == (JOIN, "w-3")
    assert decision.reason == ("replace worker w-3 of worker group md-0 (its Node carries the replace-machine annotation; 3 of its workers "
                               "to replace): a new worker joins on a free host of the group first (max_surge 1)")
    assert decide(rolling(), workers[:2], None).worker == "w-1"  # the oldest


def test_the_unnamed_group_goes_last():
    decision = decide(rolling(), [worker("a", replace_requested=True), worker("z", group="zz", replace_requested=True)], None)
    assert (decision.worker, decision.group) == ("z", "zz")


def test_a_marked_worker_without_a_group_waits_with_max_surge_1_saying_how_to_rebuild_it_where_it_stands():
    result = planned(rolling(), [worker("a", replace_requested=True)])
    assert (result["action"], result["step"], result["workers"], [b["rule"] for b in result["blocked_by"]]) == (
        "wait", "join_worker", ["a"], ["worker_without_group"]), result
    assert "set workers.max_surge to 0 (and workers.max_unavailable to 1) to rebuild it where it stands" in result["blocked_by"][0]["message"]
    result = planned(rolling(max_surge=0, max_unavailable=1), [worker("a", replace_requested=True)])
    assert (result["action"], result["step"], result["workers"]) == ("roll_workers", "remove_worker", ["a"]), result


def test_after_the_join_the_replaced_worker_is_removed_and_the_record_says_so():
    workers = [worker("w-1", group="md-0"), worker("w-2", group="md-0"), worker("w-9", group="md-0", uid="uid-new")]
    decision = decide(rolling(), workers, record("w-1", "w-9"))
    assert (decision.step, decision.worker, decision.uid, decision.replacement, decision.timestamp, decision.blocker) == (
        REMOVE, "w-1", "uid-w-1", "w-9", "2026-11-28T11:00:00Z", None)
    assert decision.reason == ("the replacement of worker w-1 of worker group md-0 by w-9 begun at 2026-11-28T11:00:00Z: drain it, "
                               "kubeadm reset, delete its Node")


def test_a_join_a_stopped_run_left_undone_is_taken_again_on_the_recorded_host():
    workers = [worker("w-1", group="md-0"), worker("w-2", group="md-0")]
    decision = decide(rolling(), workers, record("w-1", "w-9"))
    assert (decision.step, decision.worker, decision.replacement) == (JOIN, "w-1", "w-9")


def test_a_replacement_done_is_spent_and_a_node_of_the_same_name_later_is_not_the_one_recorded():
    workers = [worker("w-2", group="md-0"), worker("w-9", group="md-0", uid="uid-new")]
    assert in_progress(record("w-1", "w-9"), workers) is None
    assert decide(rolling(), workers, record("w-1", "w-9")) == decide(rolling(), workers, None)
    # w-1's host joined again since (another uid): the old record does not make the new Node go
    workers.append(worker("w-1", group="md-0", uid="uid-later"))
    assert in_progress(record("w-1", "w-9"), workers) is None
    assert decide(rolling(), workers, record("w-1", "w-9")).step is None


def test_with_max_surge_0_the_worker_goes_first_and_its_own_host_joins_again():
    the_spec = rolling(max_surge=0, max_unavailable=1)
    workers = [worker("w-1", group="md-0", replace_requested=True), worker("w-2", group="md-0")]
    decision = decide(the_spec, workers, None)
    assert (decision.step, decision.worker, decision.replacement, decision.surge, decision.timestamp, decision.blocker) == (
        REMOVE, "w-1", "w-1", False, None, None)
    # removed: its host is owed its join
    decision = decide(the_spec, workers[1:], record("w-1", "w-1", surge=False))
    assert (decision.step, decision.replacement) == (JOIN, "w-1")
    # joined again (a new uid): done
    assert decide(the_spec, workers[1:] + [worker("w-1", group="md-0", uid="uid-again")], record("w-1", "w-1", surge=False)).step is None


def test_with_a_provider_that_makes_hosts_max_surge_0_joins_a_new_host_never_the_old_one():
    the_spec = rolling(max_surge=0, max_unavailable=1)
    workers = [worker("w-1", group="md-0", replace_requested=True), worker("w-2", group="md-0")]
    decision = decide(the_spec, workers, None, provider_makes_hosts=True)
    assert (decision.step, decision.worker, decision.replacement, decision.surge) == (REMOVE, "w-1", None, False)
    assert decision.reason.endswith("give its host back to the machine provider, then a new host of the group joins (max_surge 0)")
    decision = decide(the_spec, workers[1:], record("w-1", None, surge=False), provider_makes_hosts=True)
    assert (decision.step, decision.replacement) == (JOIN, None)
    # the old host, left without a Node by a stopped run, is no free host for its own replacement
    snap = snapshot(MACHINES, workers=workers[1:])
    join = planned(the_spec, workers[1:], record("w-1", None, surge=False))
    assert flow_step(join, snap, "", [m["name"] for m in MACHINES], {}, {"w-1": "md-0", "w-7": "md-0"})["hosts"] == ["w-7"]
    assert flow_step(join, snap, "", [m["name"] for m in MACHINES], {}, {"w-1": "md-0"})["hosts"] == []
    # and with max_surge 1 the reason says where the new worker comes from
    assert decide(rolling(), workers, None, provider_makes_hosts=True).reason.endswith(
        "a new worker joins on a free host of the group, or a new one from the machine provider, first (max_surge 1)")


def test_the_record_is_written_when_the_replacement_begins_and_when_its_join_takes_a_host_not_recorded():
    now = "2026-11-28T12:00:00Z"
    fresh = dict(record("w-1", None), timestamp=None)
    assert record_to_write(fresh, JOIN, "w-9", now) == dict(fresh, replacement="w-9", timestamp=now)
    assert record_to_write(dict(fresh, surge=False), REMOVE, "w-1", now) == dict(fresh, surge=False, timestamp=now)
    assert record_to_write(record("w-1", None, surge=False), JOIN, "w-9", now) == dict(record("w-1", None, surge=False), replacement="w-9")
    assert record_to_write(record("w-1", "w-9"), JOIN, "w-9", now) is None
    assert record_to_write(record("w-1", "w-9"), REMOVE, "w-1", now) is None


@pytest.mark.parametrize("max_unavailable, down, blocked", [
    (0, [], False),
    (0, ["w-2"], True),
    (1, ["w-2"], False),
    (1, ["w-2", "w-3"], True),
], ids=["all up", "one down, none may be", "one down, one may be", "two down, one may be"])
def test_a_removal_keeps_the_group_s_available_workers_within_max_unavailable(max_unavailable, down, blocked):
    workers = [worker(name, group="md-0", ready=name not in down) for name in ("w-1", "w-2", "w-3")] + [
        worker("w-9", group="md-0", uid="uid-new")]
    decision = decide(rolling(max_unavailable=max_unavailable), workers, record("w-1", "w-9"))
    assert decision.step == REMOVE
    assert (decision.blocker is not None) is blocked
    if blocked:
        assert decision.blocker["rule"] == "workers_unavailable" and decision.blocker["machines"] == down
        assert decision.blocker["message"].startswith("WR4: worker group md-0 keeps at least %d of its 3 workers available (max_unavailable %d)"
                                                      % (3 - max_unavailable, max_unavailable))


def test_a_group_s_own_settings_replace_the_workers():
    the_spec = rolling(**{"gpu": {"max_surge": 0, "max_unavailable": 1}})
    gpu = decide(the_spec, [worker("g-1", group="gpu", replace_requested=True), worker("g-2", group="gpu")], None)
    md = decide(the_spec, [worker("w-1", group="md-0", replace_requested=True)], None)
    assert (gpu.step, gpu.surge, md.step, md.surge) == (REMOVE, False, JOIN, True)


def test_the_spec_refuses_a_group_that_could_never_replace_a_worker():
    raw = {"cluster_name": "a", "replicas": 1, "version": VERSION, "endpoint": {"host": "10.0.0.1", "port": 6443},
           "workers": {"groups": {"gpu": {"max_surge": 0}}}}
    assert normalize_spec(raw)[1] == [{"path": "workers.groups.gpu.max_unavailable", "value": 0, "rule": (
        "must be at least 1 with max_surge 0: a worker replaced where it stands is unavailable while it is rebuilt")}]


def test_the_plan_waits_with_the_rule_and_behind_preflight():
    workers = [worker("w-1", group="md-0"), worker("w-2", group="md-0", ready=False), worker("w-9", group="md-0", uid="uid-new")]
    result = planned(rolling(), workers, record("w-1", "w-9"))
    assert (result["action"], result["step"], [b["rule"] for b in result["blocked_by"]]) == ("wait", "remove_worker", ["workers_unavailable"])
    sick = control_plane(3, "h", cp_2={"components": {"scheduler": "unhealthy"}})
    result = plan(rolling(), snapshot(sick, workers=[worker("w-1", group="md-0", replace_requested=True)]), desired_hashes={"init": "h", "join": "h"})
    assert (result["action"], [b["rule"] for b in result["blocked_by"]]) == ("wait", ["components_not_healthy"])


def test_the_projection_replaces_each_worker_join_then_removal_then_is_done():
    the_spec = rolling()
    machines = control_plane(3, spec_hashes(the_spec)["join"], cp_1={"bootstrap": "join"})
    snap = snapshot(machines, workers=[worker("w-1", group="md-0", replace_requested=True), worker("w-2", group="md-0", replace_requested=True)])
    steps = project(the_spec, snap)
    assert [(s["action"], s["step"], s["workers"]) for s in steps] == [
        ("roll_workers", "join_worker", ["w-1"]), ("roll_workers", "remove_worker", ["w-1"]),
        ("roll_workers", "join_worker", ["w-2"]), ("roll_workers", "remove_worker", ["w-2"]), ("none", None, [])], steps


def test_the_projection_with_max_surge_0_rebuilds_each_where_it_stands():
    the_spec = rolling(max_surge=0, max_unavailable=1)
    machines = control_plane(3, spec_hashes(the_spec)["join"], cp_1={"bootstrap": "join"})
    snap = snapshot(machines, workers=[worker("w-1", group="md-0", version="v1.35.2"), worker("adopted", version="v1.35.2")])
    steps = project(the_spec, snap)
    assert [(s["action"], s["step"], s["workers"]) for s in steps] == [
        ("roll_workers", "remove_worker", ["w-1"]), ("roll_workers", "join_worker", ["w-1"]), ("none", None, [])], steps


def test_the_join_acts_on_the_recorded_host_else_the_first_free_host_of_the_group_and_the_removal_on_the_worker():
    workers = [worker("w-1", group="md-0", replace_requested=True)]
    snap = snapshot(MACHINES, workers=workers)
    running = [m["name"] for m in MACHINES]
    join = planned(rolling(), workers)
    free = {"g-9": "gpu", "w-8": "md-0", "w-9": "md-0"}
    assert flow_step(join, snap, "", running, {}, free)["hosts"] == ["w-8"]
    assert flow_step(join, snap, "", running, {}, {"g-9": "gpu"})["hosts"] == []
    resumed = planned(rolling(), workers, record("w-1", "w-9"))
    assert flow_step(resumed, snap, "", running, {}, free)["hosts"] == ["w-9"]
    removal = planned(rolling(), workers + [worker("w-9", group="md-0", uid="uid-new")], record("w-1", "w-9"))
    step = flow_step(removal, snap, "", running, {}, free)
    assert (step["action"], step["hosts"], step["via"]) == ("remove_worker", ["w-1"], "cp-1")


def test_with_a_provider_that_makes_hosts_a_worker_without_a_group_rejoins_its_own_host_with_max_surge_0():
    decision = decide(rolling(max_surge=0, max_unavailable=1), [worker("a", replace_requested=True)], None, provider_makes_hosts=True)
    assert (decision.step, decision.replacement) == (REMOVE, "a")
