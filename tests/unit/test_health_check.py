# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The machine health check as a spec: docs/rules.md MHC1-MHC9 mapped to the snapshot (docs/health-check.md)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.health_check import (
    budget,
    evaluate,
    evaluate_workers,
    span,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.unhealthy_limit import max_unhealthy_value
from ansible_collections.kubeadm.control_plane.tests.unit.builders import health_check, machine, member, seconds_ago, snapshot, spec, worker

READY_UNKNOWN_5M = {"type": "Ready", "status": "Unknown", "timeout": 300.0}
READY_FALSE_5M = {"type": "Ready", "status": "False", "timeout": 300.0}
DISK_PRESSURE_1M = {"type": "DiskPressure", "status": "True", "timeout": 60.0}


def with_conditions(m, *conditions):
    """`m` with its node's conditions replaced by (type, status, seconds since the last transition or None)."""
    m["node"]["conditions"] = [
        {"type": kind, "status": status, "last_transition": None if age is None else seconds_ago(age)}
        for kind, status, age in conditions
    ]
    return m


def only_target(rules, m):
    return evaluate(rules, snapshot([m]))["targets"][0]


def fleet(total, unhealthy=0, pending=0):
    """`total` machines: the first `unhealthy` failed, the next `pending` still waiting for their Node."""
    machines = []
    for i in range(total):
        if i < unhealthy:
            machines.append(machine("cp-%d" % i, failure="provider lost the instance"))
        elif i < unhealthy + pending:
            machines.append(machine("cp-%d" % i, has_node=False, created=1))
        else:
            machines.append(machine("cp-%d" % i))
    return snapshot(machines)


# MHC2: each unhealthy criterion, first match wins.
@pytest.mark.parametrize(
    "m,rules,reason",
    [
        (machine("cp-1", remediation_requested=True), health_check(), "remediation was requested"),
        (machine("cp-1", failure="kubeadm join failed: timeout"), health_check(), "failed: kubeadm join failed"),
        (dict(machine("cp-1"), node=None), health_check(), "Node no longer exists"),
        (machine("cp-1", has_node=False, created=11), health_check(), "no Node within node_startup_timeout 10m"),
        (with_conditions(machine("cp-1"), ("Ready", "Unknown", 301)), health_check(), "Ready has been Unknown"),
        (with_conditions(machine("cp-1"), ("Ready", "False", 3600)), health_check(), "Ready has been False"),
        (
            with_conditions(machine("cp-1"), ("Ready", "True", 3600), ("DiskPressure", "True", 61)),
            health_check(unhealthy_conditions=[READY_FALSE_5M, DISK_PRESSURE_1M]),
            "DiskPressure has been True",
        ),
        (
            machine("cp-1", remediation_requested=True, failure="boom", has_node=False, created=60),
            health_check(),
            "remediation was requested",
        ),
        (machine("cp-1", failure="boom", has_node=False, created=60), health_check(), "failed: boom"),
    ],
    ids=[
        "a machine whose remediation was requested is unhealthy",
        "a machine with a recorded failure is unhealthy",
        "a provisioned machine whose node is gone is unhealthy",
        "a machine without a node past the node startup timeout is unhealthy",
        "a node Ready Unknown for longer than its timeout is unhealthy",
        "a node Ready False for longer than its timeout is unhealthy",
        "any configured condition can make a node unhealthy",
        "a remediation request is reported before any other problem",
        "a recorded failure is reported before a late node",
    ],
)
def test_each_unhealthy_criterion(m, rules, reason):
    result = evaluate(rules, snapshot([m]))
    target = result["targets"][0]
    assert (target["state"], target["next_check_seconds"]) == ("unhealthy", None)
    assert reason in target["reason"]
    assert result["unhealthy"] == ["cp-1"] and result["healthy"] == 0


# MHC2.8 + MHC4: unhealthy only when strictly older than the timeout; pending until then, next check + 1 s.
@pytest.mark.parametrize(
    "age,state,next_check",
    [(0, "pending", 301.0), (299, "pending", 2.0), (300, "pending", 1.0), (301, "unhealthy", None), (86400, "unhealthy", None)],
    ids=[
        "a condition that just changed is pending for the whole timeout plus a second",
        "a condition a second short of its timeout is pending",
        "a condition exactly at its timeout is still pending, not unhealthy",
        "a condition a second past its timeout is unhealthy",
        "a condition a day old is unhealthy",
    ],
)
def test_condition_timeout_boundary(age, state, next_check):
    target = only_target(health_check(), with_conditions(machine("cp-1"), ("Ready", "False", age)))
    assert (target["state"], target["next_check_seconds"]) == (state, next_check)


@pytest.mark.parametrize(
    "conditions,rules,state,next_check",
    [
        ((("Ready", "True", 3600),), health_check(), "healthy", None),
        ((("Ready", "Unknown", 3600),), health_check(unhealthy_conditions=[READY_FALSE_5M]), "healthy", None),
        ((), health_check(), "healthy", None),
        (
            (("Ready", "Unknown", 60), ("DiskPressure", "True", 120)),
            health_check(unhealthy_conditions=[READY_UNKNOWN_5M, DISK_PRESSURE_1M]),
            "unhealthy",
            None,
        ),
        (
            (("Ready", "Unknown", 60), ("DiskPressure", "True", 30)),
            health_check(unhealthy_conditions=[READY_UNKNOWN_5M, DISK_PRESSURE_1M]),
            "pending",
            31.0,
        ),
        ((("Ready", "False", 3600), ("Ready", "True", 3600)), health_check(), "unhealthy", None),
        ((("Ready", "False", None),), health_check(), "unhealthy", None),
        ((("Ready", "False", 3600),), health_check(unhealthy_conditions=[]), "healthy", None),
    ],
    ids=[
        "a node Ready True has no problem",
        "a status the rules do not list has no problem",
        "a node without the configured condition has no problem",
        "one timed-out condition is enough even when another is pending",
        "several pending conditions check again at the soonest",
        "only the first condition of a type is read",
        "a matching condition with no last transition time has timed out",
        "no condition to check: a Node long not Ready has no problem (MHC without unhealthyNodeConditions, v1.8+)",
    ],
)
def test_conditions_are_ored_and_must_match_exactly(conditions, rules, state, next_check):
    target = only_target(rules, with_conditions(machine("cp-1"), *conditions))
    assert (target["state"], target["next_check_seconds"]) == (state, next_check)


# MHC2.7: the node startup timeout, measured from the machine's creation; 0 disables it.
@pytest.mark.parametrize(
    "age,timeout,state,next_check",
    [
        (599, 600.0, "pending", 2.0),
        (600, 600.0, "pending", 1.0),
        (601, 600.0, "unhealthy", None),
        (86400, 0.0, "not_evaluated", None),
        (0, 0.0, "not_evaluated", None),
    ],
    ids=[
        "a machine a second short of the node startup timeout is pending",
        "a machine exactly at the node startup timeout is still pending",
        "a machine a second past the node startup timeout is unhealthy",
        "a day-old machine without a node is not evaluated when the timeout is 0",
        "a new machine without a node is not evaluated when the timeout is 0",
    ],
)
def test_node_startup_timeout(age, timeout, state, next_check):
    m = machine("cp-1", has_node=False)
    m["created"] = seconds_ago(age)
    result = evaluate(health_check(node_startup_timeout=timeout), snapshot([m]))
    target = result["targets"][0]
    assert (target["state"], target["next_check_seconds"]) == (state, next_check)
    assert result["healthy"] == 0 and result["unhealthy_count"] == 1


# MHC3 + MHC4: pending machines are not healthy; the next check is the soonest pending one.
@pytest.mark.parametrize(
    "machines,pending,next_check",
    [
        ([machine("cp-1"), machine("cp-2")], [], None),
        (
            [with_conditions(machine("cp-1"), ("Ready", "Unknown", 240)), machine("cp-2", has_node=False, created=5)],
            ["cp-1", "cp-2"],
            61.0,
        ),
        (
            [machine("cp-1", has_node=False, created=9), with_conditions(machine("cp-2"), ("Ready", "False", 10))],
            ["cp-1", "cp-2"],
            61.0,
        ),
        ([machine("cp-1", failure="gone"), machine("cp-2")], [], None),
    ],
    ids=[
        "nothing pending means no next check",
        "a pending condition due sooner sets the next check",
        "a pending node startup due sooner sets the next check",
        "an unhealthy machine needs no next check",
    ],
)
def test_pending_targets_and_next_check(machines, pending, next_check):
    result = evaluate(health_check(), snapshot(machines))
    assert result["pending"] == pending
    assert result["next_check_seconds"] == next_check
    assert result["healthy"] == len(machines) - len(pending) - len(result["unhealthy"])


# MHC3: a machine being deleted never counts as healthy, though a problem is still reported as such.
@pytest.mark.parametrize(
    "m,state",
    [
        (machine("cp-1", deleting=True), "not_evaluated"),
        (with_conditions(machine("cp-1", deleting=True), ("Ready", "False", 3600)), "unhealthy"),
        (with_conditions(machine("cp-1", deleting=True), ("Ready", "False", 10)), "pending"),
    ],
    ids=[
        "a deleting machine with a healthy node is not healthy",
        "a deleting machine past a condition timeout is unhealthy",
        "a deleting machine within a condition timeout is pending",
    ],
)
def test_deleting_machines_are_not_healthy(m, state):
    result = evaluate(health_check(), snapshot([m, machine("cp-2"), machine("cp-3")]))
    assert result["targets"][0]["state"] == state
    assert (result["expected"], result["healthy"], result["unhealthy_count"]) == (3, 2, 1)


@pytest.mark.parametrize(
    "max_unhealthy,total,unhealthy,allowed,remaining",
    [
        ("40%", 3, 1, True, 0),
        ("40%", 3, 2, False, 0),
        ("33%", 3, 1, False, 0),
        ("33%", 3, 0, True, 0),
        ("100%", 5, 5, True, 0),
        ("100%", 5, 2, True, 3),
        (2, 5, 1, True, 1),
        (2, 5, 2, True, 0),
        (2, 5, 3, False, 0),
        (5, 3, 1, True, 4),
    ],
    ids=[
        "one unhealthy of 3 fits in 40 percent with no room left",
        "two unhealthy of 3 exceed 40 percent",
        "one unhealthy of 3 exceeds 33 percent",
        "none unhealthy of 3 fits in 33 percent",
        "all 5 unhealthy fit in 100 percent",
        "two unhealthy of 5 leave 3 remediations under 100 percent",
        "one unhealthy under an int 2 leaves 1 remediation",
        "two unhealthy under an int 2 are allowed with 0 left",
        "three unhealthy under an int 2 are blocked",
        "an unclamped int 5 over 3 machines leaves 4 remediations",
    ],
)
def test_max_unhealthy_budget(max_unhealthy, total, unhealthy, allowed, remaining):
    result = evaluate(health_check(max_unhealthy=max_unhealthy), fleet(total, unhealthy))
    assert result["remediation_allowed"] is allowed
    assert result["remediations_allowed"] == remaining
    assert result["unhealthy_count"] == unhealthy
    assert result["max_allowed"] == max_unhealthy_value(max_unhealthy, total)
    assert ("allowed" if allowed else "blocked") in result["reason"]
    assert "%d of %d machines" % (unhealthy, total) in result["reason"]


# MHC6: unhealthy_range wins over max_unhealthy.
@pytest.mark.parametrize(
    "unhealthy_range,max_unhealthy,unhealthy,allowed,remaining",
    [
        ("[1-2]", "100%", 0, False, 0),
        ("[1-2]", "100%", 1, True, 1),
        ("[1-2]", "100%", 2, True, 0),
        ("[1-2]", "100%", 3, False, 0),
        ("[0-0]", "100%", 1, False, 0),
        ("[0-0]", "100%", 0, True, 0),
        ("[1-3]", 0, 1, True, 2),
        ("[0-5]", "0%", 2, True, 3),
    ],
    ids=[
        "no unhealthy machine under a minimum of 1 is not allowed",
        "one unhealthy machine inside [1-2] leaves 1 remediation",
        "two unhealthy machines at the top of [1-2] leave 0",
        "three unhealthy machines above [1-2] are blocked",
        "the range blocks what a generous max_unhealthy would allow",
        "a range of [0-0] allows nothing more when nothing is unhealthy",
        "the range allows what max_unhealthy 0 would block",
        "the range allows what max_unhealthy 0 percent would block",
    ],
)
def test_unhealthy_range(unhealthy_range, max_unhealthy, unhealthy, allowed, remaining):
    rules = health_check(unhealthy_range=unhealthy_range, max_unhealthy=max_unhealthy)
    result = evaluate(rules, fleet(5, unhealthy))
    assert (result["remediation_allowed"], result["remediations_allowed"]) == (allowed, remaining)
    assert result["max_allowed"] == unhealthy_range
    assert unhealthy_range in result["reason"]


# MHC5: the budget counts every machine that is not healthy, pending ones included.
@pytest.mark.parametrize(
    "unhealthy,pending,max_unhealthy,allowed,remaining",
    [(1, 1, 1, False, 0), (1, 1, 2, True, 0), (0, 3, "40%", False, 0), (1, 0, "40%", True, 1)],
    ids=[
        "a pending machine uses the budget so one unhealthy plus one pending exceed 1",
        "one unhealthy plus one pending fit exactly in 2",
        "three pending of 5 exceed 40 percent though none is unhealthy yet",
        "one unhealthy of 5 leaves 1 of 40 percent",
    ],
)
def test_pending_machines_consume_the_budget(unhealthy, pending, max_unhealthy, allowed, remaining):
    result = evaluate(health_check(max_unhealthy=max_unhealthy), fleet(5, unhealthy, pending))
    assert result["unhealthy_count"] == unhealthy + pending
    assert result["expected"] - result["healthy"] == result["unhealthy_count"]
    assert (result["remediation_allowed"], result["remediations_allowed"]) == (allowed, remaining)


# MHC6/MHC7: a malformed limit blocks remediation (the normalizer refuses these before they get here).
@pytest.mark.parametrize(
    "rules,words",
    [
        (health_check(max_unhealthy="10"), "max_unhealthy must be an integer >= 0 or a percentage"),
        (health_check(max_unhealthy=None), "max_unhealthy must be an integer >= 0 or a percentage"),
        (health_check(max_unhealthy=True), "max_unhealthy must be an integer >= 0 or a percentage"),
        (health_check(max_unhealthy=-1), "max_unhealthy must be an integer >= 0 or a percentage"),
        (health_check(unhealthy_range="[3-1]"), "unhealthy_range must be \"[a-b]\" with a <= b"),
        (health_check(unhealthy_range="1-3"), "unhealthy_range must be \"[a-b]\" with whole numbers"),
    ],
    ids=[
        "a percentage without its sign blocks remediation",
        "an unset max_unhealthy blocks remediation",
        "a boolean max_unhealthy blocks remediation",
        "a negative max_unhealthy blocks remediation",
        "a range whose maximum is below its minimum blocks remediation",
        "a range without brackets blocks remediation",
    ],
)
def test_malformed_limits_block_remediation(rules, words):
    result = evaluate(rules, fleet(3, 1))
    assert (result["remediation_allowed"], result["remediations_allowed"]) == (False, 0)
    assert words in result["reason"] and result["reason"].startswith("Remediation is blocked")


@pytest.mark.parametrize(
    "rules,budget_fields",
    [
        (health_check(), {"unhealthy_count": 0, "max_allowed": 0, "remediation_allowed": True, "remediations_allowed": 0}),
        (
            health_check(unhealthy_range="[1-2]"),
            {"unhealthy_count": 0, "max_allowed": "[1-2]", "remediation_allowed": False, "remediations_allowed": 0},
        ),
    ],
    ids=["no machine at all fits in 100 percent of nothing", "no machine at all is below a minimum of 1"],
)
def test_an_empty_control_plane(rules, budget_fields):
    result = evaluate(rules, snapshot([]))
    assert (result["targets"], result["expected"], result["healthy"], result["next_check_seconds"]) == ([], 0, 0, None)
    assert {k: result[k] for k in budget_fields} == budget_fields


def test_the_result_has_exactly_the_documented_keys():
    result = evaluate(health_check(), fleet(3, 1, 1))
    assert set(result) == {
        "targets",
        "unhealthy",
        "pending",
        "expected",
        "healthy",
        "unhealthy_count",
        "max_allowed",
        "remediation_allowed",
        "remediations_allowed",
        "reason",
        "next_check_seconds",
    }
    assert [set(t) for t in result["targets"]] == [{"machine", "state", "reason", "next_check_seconds"}] * 3
    assert [t["state"] for t in result["targets"]] == ["unhealthy", "pending", "healthy"]


def test_the_budget_alone_matches_evaluate():
    result = evaluate(health_check(max_unhealthy="40%"), fleet(5, 1, 1))
    alone = budget(health_check(max_unhealthy="40%"), expected=5, healthy=3)
    assert alone == {k: result[k] for k in alone}


@pytest.mark.parametrize(
    "seconds,text",
    [(0, "0s"), (1, "1s"), (90, "1m30s"), (300, "5m"), (5400, "1h30m"), (3601, "1h1s"), (0.4, "0s")],
    ids=["zero", "one second", "a minute and a half", "five minutes", "an hour and a half", "an hour and a second", "under half a second"],
)
def test_spans_read_like_go_durations(seconds, text):
    assert span(seconds) == text


def test_timestamps_with_offsets_are_compared_as_instants():
    m = machine("cp-1")
    m["node"]["conditions"] = [{"type": "Ready", "status": "False", "last_transition": "2026-11-22T10:55:00+01:00"}]
    target = only_target(health_check(), m)
    assert (target["state"], target["next_check_seconds"]) == ("pending", 1.0)


def test_two_pending_conditions_check_again_at_the_soonest_expiry_not_the_shortest_timeout():
    rules = health_check(unhealthy_conditions=[
        {"type": "Ready", "status": "False", "timeout": 300.0},
        {"type": "DiskPressure", "status": "True", "timeout": 120.0},
    ])
    target = with_conditions(machine("cp-1"), ("Ready", "False", 240), ("DiskPressure", "True", 0))
    result = evaluate(rules, snapshot([target]))
    assert result["pending"] == ["cp-1"]
    assert result["next_check_seconds"] == 61.0
    assert "Ready is False" in result["targets"][0]["reason"]


def started(age):
    """A machine without a Node yet, created `age` seconds before now."""
    m = machine("cp-1", has_node=False)
    m["created"] = seconds_ago(age)
    return m


# MHC2/MHC3: each verdict says in full why, with the times and durations people read.
@pytest.mark.parametrize(
    "m,rules,state,reason",
    [
        (machine("cp-1", remediation_requested=True), health_check(), "unhealthy", "remediation was requested (remediation.requested)"),
        (machine("cp-1", failure="kubeadm join failed: timeout"), health_check(), "unhealthy",
         "the machine failed: kubeadm join failed: timeout"),
        (dict(machine("cp-1"), node=None), health_check(), "unhealthy", "the machine had a Node, and that Node no longer exists"),
        (started(86400), health_check(node_startup_timeout=0.0), "not_evaluated",
         "no Node yet, and node_startup_timeout 0 disables the startup check"),
        (started(601), health_check(node_startup_timeout=600.0), "unhealthy",
         "no Node within node_startup_timeout 10m of its creation at 2026-11-22T09:49:59Z"),
        (started(599), health_check(node_startup_timeout=600.0), "pending",
         "no Node yet; unhealthy if none appears within 10m of creation (check again in 2s)"),
        (with_conditions(machine("cp-1"), ("Ready", "False", 301)), health_check(unhealthy_conditions=[READY_FALSE_5M]), "unhealthy",
         "node condition Ready has been False since 2026-11-22T09:54:59Z, longer than 5m"),
        (with_conditions(machine("cp-1"), ("Ready", "False", None)), health_check(unhealthy_conditions=[READY_FALSE_5M]), "unhealthy",
         "node condition Ready has been False since an unknown time, longer than 5m"),
        (with_conditions(machine("cp-1"), ("Ready", "False", 299)), health_check(unhealthy_conditions=[READY_FALSE_5M]), "pending",
         "node condition Ready is False; unhealthy if it stays so for 5m (check again in 2s)"),
        (machine("cp-1", deleting=True), health_check(), "not_evaluated", "being deleted, so it does not count as healthy"),
        (machine("cp-1"), health_check(), "healthy", "has a Node and no unhealthy condition"),
    ],
    ids=[
        "a requested remediation names the field that requested it",
        "a failed machine quotes its failure",
        "a machine whose Node is gone says the Node no longer exists",
        "a machine without a Node under a startup timeout of 0 says the check is disabled",
        "a machine past its node startup timeout says when it was created",
        "a machine within its node startup timeout says when to check again",
        "a timed-out condition says since when and for longer than what",
        "a timed-out condition without a transition time says since an unknown time",
        "a pending condition says how long it may last and when to check again",
        "a deleting machine with no problem says why it is not healthy",
        "a healthy machine says it has a Node and no unhealthy condition",
    ],
)
def test_each_verdict_says_why_in_full(m, rules, state, reason):
    target = only_target(rules, m)
    assert (target["state"], target["reason"]) == (state, reason)


def test_the_next_check_is_rounded_to_the_millisecond():
    m = with_conditions(machine("cp-1"), ("Ready", "False", 299))
    result = evaluate(health_check(unhealthy_conditions=[READY_FALSE_5M]), snapshot([m], now="2026-11-22T10:00:00.000400Z"))
    assert result["targets"][0]["next_check_seconds"] == 2.0
    assert result["next_check_seconds"] == 2.0


# MHC6-MHC8: the budget's reason, in full, for each way it can go.
@pytest.mark.parametrize(
    "rules,total,unhealthy,reason",
    [
        (health_check(max_unhealthy="40%"), 3, 1, "Remediation is allowed: 1 of 3 machines not healthy, and max_unhealthy 40% allows 1."),
        (health_check(max_unhealthy="40%"), 3, 2,
         "Remediation is blocked: 2 of 3 machines not healthy, more than the 1 that max_unhealthy 40% allows."),
        (health_check(max_unhealthy=2), 5, 2, "Remediation is allowed: 2 of 5 machines not healthy, and max_unhealthy 2 allows 2."),
        (health_check(unhealthy_range="[1-2]"), 5, 1, "Remediation is allowed: 1 of 5 machines not healthy, within unhealthy_range [1-2]."),
        (health_check(unhealthy_range="[1-2]"), 5, 3, "Remediation is blocked: 3 of 5 machines not healthy, outside unhealthy_range [1-2]."),
        (health_check(unhealthy_range="[1-2]"), 5, 0, "Remediation is blocked: 0 of 5 machines not healthy, outside unhealthy_range [1-2]."),
    ],
    ids=[
        "a budget that fits a percentage says what it allows",
        "a budget over a percentage says how many it allows",
        "a budget exactly at an int max_unhealthy is allowed",
        "a count inside the range is allowed",
        "a count above the range is blocked",
        "a count below the range is blocked",
    ],
)
def test_the_budget_says_why_in_full(rules, total, unhealthy, reason):
    assert evaluate(rules, fleet(total, unhealthy))["reason"] == reason


# Machine conditions (Cluster API v1.12's unhealthyMachineConditions): judged before the Node's, timed from when the
# cluster records the condition took its status (the pod's Ready transition), never from an unknown time.
# a member that does not answer is Unknown (KCP's EtcdMemberInspectionFailed)
ETCD_MEMBER_UNKNOWN_5M = {"type": "EtcdMemberHealthy", "status": "Unknown", "timeout": 300.0}
SCHEDULER_FALSE_1M = {"type": "SchedulerPodHealthy", "status": "False", "timeout": 60.0}


def etcd_down(name, age, responsive=False, pod="unhealthy"):
    """A snapshot of three machines whose first, ``name``, has its etcd pod ``pod`` since ``age`` seconds ago (None:
    not known) and its member answering or not."""
    down = machine(name, components={"etcd": pod})
    down["components_since"] = {"etcd": None if age is None else seconds_ago(age)}
    machines = [down, machine("cp-2"), machine("cp-3")]
    members = [member(m["name"], leader=(m["name"] == "cp-2"), responsive=(m["name"] != name or responsive)) for m in machines]
    return snapshot(machines, members=members)


@pytest.mark.parametrize(
    "snap,rules,state,reason",
    [
        (etcd_down("cp-1", 301), health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M]), "unhealthy",
         "machine condition EtcdMemberHealthy has been Unknown since"),
        (etcd_down("cp-1", 120), health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M]), "pending",
         "machine condition EtcdMemberHealthy is Unknown"),
        (etcd_down("cp-1", None), health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M]), "healthy",
         "has a Node and no unhealthy condition"),
        (etcd_down("cp-1", 3600, responsive=True, pod="healthy"), health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M]),
         "healthy", "has a Node and no unhealthy condition"),
        (etcd_down("cp-1", 3600), health_check(), "healthy", "has a Node and no unhealthy condition"),
        (snapshot([dict(machine("cp-1", components={"scheduler": "unhealthy"}), components_since={"scheduler": seconds_ago(61)})]),
         health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M, SCHEDULER_FALSE_1M]), "unhealthy",
         "machine condition SchedulerPodHealthy has been False since"),
        (snapshot([with_conditions(dict(machine("cp-1", components={"scheduler": "unhealthy"}),
                                        components_since={"scheduler": seconds_ago(30)}), ("Ready", "False", 3600))]),
         health_check(unhealthy_machine_conditions=[SCHEDULER_FALSE_1M]), "pending", "machine condition SchedulerPodHealthy is False"),
    ],
    ids=[
        "a member down with its pod for longer than the timeout is unhealthy",
        "a member down for less is pending",
        "a member down since a time not known is not judged by it",
        "a member false with its pod ready (an alarm) has no known start and is not judged by it",
        "without machine condition rules the etcd member is not checked",
        "any listed machine condition will do",
        "machine conditions are judged before the Node's",
    ],
)
def test_machine_conditions_are_checked_from_the_time_the_cluster_records(snap, rules, state, reason):
    target = evaluate(rules, snap)["targets"][0]
    assert (target["state"], target["machine"]) == (state, "cp-1"), target
    assert reason in target["reason"]


def test_a_machine_condition_verdict_says_why_in_full():
    target = evaluate(health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M]), etcd_down("cp-1", 301))["targets"][0]
    assert target["reason"] == ("machine condition EtcdMemberHealthy has been Unknown since %s, longer than 5m (%s)"
                                % (seconds_ago(301), "member cp-1 did not answer: no answer within 2.0s"))


def test_external_etcd_has_no_member_condition_to_match():
    down = dict(machine("cp-1", components={"etcd": "missing"}), components_since={})
    etcd_pod_false = dict(ETCD_MEMBER_UNKNOWN_5M, type="EtcdPodHealthy", status="False")
    rules = health_check(unhealthy_machine_conditions=[ETCD_MEMBER_UNKNOWN_5M, etcd_pod_false])
    assert evaluate(rules, snapshot([down], external=True))["targets"][0]["state"] == "healthy"


# --- workers: one health check a worker group (docs/health-check.md "Workers") -----------------------------------


def workers_spec(default=None, **groups):
    """A spec whose workers' health check is `default` (None: not checked) and each group's own in `groups`."""
    return spec(workers={"health_check": default, "groups": {name: {"health_check": rules} for name, rules in groups.items()}})


def by_group(checked):
    return {entry["group"]: entry for entry in checked}


def test_each_worker_group_is_judged_with_its_own_health_check_and_its_own_budget():
    lost = worker("md-0-b", group="md-0", node_ready="Unknown", changed=10)
    workers = [worker("md-0-a", group="md-0"), lost, worker("gpu-a", group="gpu", node_ready="Unknown", changed=10),
               worker("loose", node_ready="False", changed=10)]
    checked = evaluate_workers(workers_spec(health_check(max_unhealthy=1), gpu=health_check(max_unhealthy=0)),
                               snapshot([], workers=workers))
    assert [entry["group"] for entry in checked] == ["gpu", "md-0", None]
    groups = by_group(checked)
    assert (groups["md-0"]["unhealthy"], groups["md-0"]["remediation_allowed"], groups["md-0"]["expected"]) == (["md-0-b"], True, 2)
    assert groups["md-0"]["targets"][1]["reason"].startswith("node condition Ready has been Unknown since ")
    # the gpu group's own budget refuses what the default would allow
    assert (groups["gpu"]["unhealthy"], groups["gpu"]["remediation_allowed"]) == (["gpu-a"], False)
    assert groups["gpu"]["reason"] == "Remediation is blocked: 1 of 1 machines not healthy, more than the 0 that max_unhealthy 0 allows."
    # the workers without a group take the default
    assert groups[None]["unhealthy"] == ["loose"]


def test_a_worker_group_without_a_health_check_is_not_judged():
    workers = [worker("md-0-a", group="md-0", node_ready="Unknown", changed=10), worker("gpu-a", group="gpu", node_ready="Unknown", changed=10)]
    assert evaluate_workers(workers_spec(), snapshot([], workers=workers)) == []
    assert [entry["group"] for entry in evaluate_workers(workers_spec(gpu=health_check()), snapshot([], workers=workers))] == ["gpu"]


def test_a_worker_is_judged_as_a_machine_the_annotation_first_then_its_node_s_conditions():
    rules = health_check()
    checked = evaluate_workers(workers_spec(rules), snapshot([], workers=[
        worker("asked", remediation_requested=True), worker("young", node_ready="Unknown", changed=2), worker("fine")]))[0]
    states = {t["machine"]: (t["state"], t["reason"]) for t in checked["targets"]}
    assert states["asked"] == ("unhealthy", "remediation was requested (remediation.requested)")
    assert states["young"][0] == "pending" and checked["next_check_seconds"] == pytest.approx(181, abs=1)
    assert states["fine"] == ("healthy", "has a Node and no unhealthy condition")
