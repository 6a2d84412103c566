# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remediation: which flagged machine (RM4), every precondition in order (RM5), retry limits (RM6), quorum (RM7)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import all_conditions, quorum_members
from ansible_collections.kubeadm.control_plane.plugins.module_utils.remediation import (
    decide,
    held_back,
    in_progress as waiting_remediation,
    retry_verdict,
    select_machine,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

from ansible_collections.kubeadm.control_plane.tests.unit.builders import NOW, machine, member, seconds_ago, snapshot, spec

STRATEGY = spec()["remediation"]


def decide_for(machines, flagged, members=None, initialized=True, managed=True, in_progress=None, strategy=None, allowed=True,
               upgrading=()):
    snap = snapshot(machines, members=members, external=not managed, initialized=initialized)
    health = etcd_health.evaluate(snap["etcd"], machines)
    voters = quorum_members(snap["etcd"]["members"], machines, health["members_by_machine"])
    verdict = {"unhealthy": list(flagged), "remediation_allowed": allowed, "reason": "budget"}
    waiting = waiting_remediation(in_progress, machines)
    conditions = all_conditions(machines, managed, health["members_by_machine"])
    return decide(machines, verdict, voters, strategy or STRATEGY, parse_time(NOW), initialized, managed, waiting, upgrading, conditions)


def cluster(n, **overrides):
    """cp-1..cp-n, cp-1 oldest; `overrides` maps cp_2 to machine() keyword arguments."""
    return [machine("cp-%d" % i, created=1000 - i, **overrides.get("cp_%d" % i, {})) for i in range(1, n + 1)]


def down(*names, total=3):
    """Members of cp-1..cp-total where `names` do not answer."""
    return [member("cp-%d" % i, leader=(i == 1), responsive=("cp-%d" % i) not in names) for i in range(1, total + 1)]


@pytest.mark.parametrize(
    "machines,expected",
    [
        ([machine("cp-1", created=300), machine("cp-2", created=100, has_node=False), machine("cp-3", created=200)], "cp-2"),
        ([machine("cp-1", created=100), machine("cp-2", created=300), machine("cp-3", created=200)], "cp-2"),
        ([machine("cp-2", created=300), machine("cp-1", created=300)], "cp-1"),
    ],
    ids=[
        "a flagged machine without a node goes before older ones",
        "otherwise the oldest flagged machine goes",
        "equal ages go by name",
    ],
)
def test_selection(machines, expected):
    assert select_machine(machines)["name"] == expected


def most_broken(machines, members=None):
    snap = snapshot(machines, members=members)
    verdicts = etcd_health.evaluate(snap["etcd"], machines)["members_by_machine"]
    return select_machine(machines, all_conditions(machines, True, verdicts))["name"]


# RM4 as Cluster API v1.10+ picks (controlplane/kubeadm/.../remediation.go, pickMachineToBeRemediated): the most
# broken machine first, each sign before the next, then the oldest, then the name.
@pytest.mark.parametrize(
    "machines,members,expected",
    [
        ([machine("cp-1", created=300, has_node=False), machine("cp-2", created=100, remediation_requested=True)], None, "cp-2"),
        ([machine("cp-1", created=300, components={"etcd": "unhealthy"}), machine("cp-2", created=100, has_node=False)], None, "cp-2"),
        ([machine("cp-1", created=300, components={"etcd": "unhealthy"}), machine("cp-2", created=100)],
         [member("cp-1", leader=True), member("cp-2", responsive=False)], "cp-2"),
        ([machine("cp-1", created=300, components={"api_server": "unhealthy"}), machine("cp-2", created=100, components={"etcd": "unhealthy"})],
         None, "cp-2"),
        ([machine("cp-1", created=300, components={"controller_manager": "unhealthy"}),
          machine("cp-2", created=100, components={"api_server": "provisioning"})], None, "cp-2"),
        ([machine("cp-1", created=300, components={"scheduler": "unhealthy"}),
          machine("cp-2", created=100, components={"controller_manager": "unknown"})], None, "cp-2"),
        ([machine("cp-1", created=300, components={"scheduler": "unhealthy"}), machine("cp-2", created=100)], None, "cp-1"),
        ([machine("cp-1", created=100, components={"scheduler": "unhealthy"}),
          machine("cp-2", created=300, components={"scheduler": "unhealthy"})], None, "cp-2"),
    ],
    ids=[
        "the remediate-machine annotation before a machine without a Node",
        "no Node before an etcd pod down",
        "an etcd member down before an etcd pod down",
        "the etcd pod before the API server",
        "the API server before the controller manager",
        "the controller manager before the scheduler",
        "any sign before age",
        "equally broken: the oldest",
    ],
)
def test_the_most_broken_flagged_machine_is_remediated_first(machines, members, expected):
    assert most_broken(machines, members) == expected


# (machines, flagged, decide_for keyword arguments, expected status, expected rule, expected machine)
PRECONDITIONS = [
    ("nothing flagged means nothing to do", cluster(3), [], {}, "none", None, None),
    (
        "unhealthy machines the budget does not allow are held back",
        cluster(3),
        ["cp-2"],
        {"allowed": False},
        "skip",
        "remediation_not_allowed",
        None,
    ),
    ("a selected machine already deleting is left alone", cluster(3, cp_2={"deleting": True}), ["cp-2"], {}, "skip", "already_deleting", "cp-2"),
    (
        "a remediation whose replacement is not created yet holds back the next",
        cluster(3),
        ["cp-2"],
        {"in_progress": {"machine": "cp-9", "timestamp": NOW, "retry_count": 0}},
        "skip",
        "remediation_in_progress",
        "cp-2",
    ),
    (
        "a remediation whose machine is being deleted still holds back the next",
        cluster(3, cp_3={"deleting": True}),
        ["cp-2"],
        {"in_progress": {"machine": "cp-3", "timestamp": NOW, "retry_count": 0}},
        "skip",
        "remediation_in_progress",
        "cp-2",
    ),
    (
        "a record whose machine still runs is stale: the delete never began, and the machine is decided afresh",
        cluster(3),
        ["cp-2"],
        {"in_progress": {"machine": "cp-2", "timestamp": NOW, "retry_count": 1}},
        "remediate",
        None,
        "cp-2",
    ),
    (
        "a record whose machine is provisioning again (the replacement took its host name) still holds back the next",
        cluster(3, cp_3={"has_node": False}),
        ["cp-1"],
        {"in_progress": {"machine": "cp-3", "timestamp": NOW, "retry_count": 0}},
        "skip",
        "remediation_in_progress",
        "cp-1",
    ),
    (
        "a remediation in progress is checked before the retry limits",
        cluster(3, cp_2={"retries": 5, "last_remediation": seconds_ago(10)}),
        ["cp-2"],
        {"in_progress": {"machine": "cp-9", "timestamp": NOW, "retry_count": 0}, "strategy": dict(STRATEGY, max_retry=1)},
        "skip",
        "remediation_in_progress",
        "cp-2",
    ),
    (
        "the retry limits are checked before the machine count",
        cluster(1, cp_1={"retries": 3, "last_remediation": seconds_ago(60)}),
        ["cp-1"],
        {"strategy": dict(STRATEGY, max_retry=3)},
        "skip",
        "max_retries",
        "cp-1",
    ),
    ("the only machine of an initialized control plane is not remediated", cluster(1), ["cp-1"], {}, "skip", "too_few_machines", "cp-1"),
    (
        "before init the failed first machine is deleted directly",
        cluster(1, cp_1={"has_node": False}),
        ["cp-1"],
        {"initialized": False},
        "remediate",
        None,
        "cp-1",
    ),
    (
        "before init provisioning and deleting machines do not hold remediation back",
        cluster(3, cp_2={"has_node": False}, cp_3={"deleting": True}),
        ["cp-1"],
        {"initialized": False},
        "remediate",
        None,
        "cp-1",
    ),
    (
        "a healthy machine still provisioning holds remediation back",
        cluster(3, cp_3={"has_node": False}),
        ["cp-1"],
        {},
        "skip",
        "machine_provisioning",
        "cp-1",
    ),
    (
        "the flagged machine's own missing node does not hold it back",
        cluster(3, cp_3={"has_node": False}),
        ["cp-3"],
        {},
        "remediate",
        None,
        "cp-3",
    ),
    (
        "another machine being deleted holds remediation back",
        cluster(3, cp_3={"deleting": True}),
        ["cp-1"],
        {},
        "skip",
        "machine_deleting",
        "cp-1",
    ),
    (
        "three members with another one down would lose quorum",
        cluster(3),
        ["cp-1"],
        {"members": down("cp-2")},
        "skip",
        "etcd_quorum",
        "cp-1",
    ),
    (
        "three members where only the flagged one is down keep quorum",
        cluster(3),
        ["cp-1"],
        {"members": down("cp-1")},
        "remediate",
        None,
        "cp-1",
    ),
    (
        "five members with one other down keep quorum",
        cluster(5),
        ["cp-1"],
        {"members": down("cp-2", total=5)},
        "remediate",
        None,
        "cp-1",
    ),
    (
        "five members with two others down would lose quorum",
        cluster(5),
        ["cp-1"],
        {"members": down("cp-2", "cp-3", total=5)},
        "skip",
        "etcd_quorum",
        "cp-1",
    ),
    (
        "a stray member counts as unhealthy",
        cluster(2),
        ["cp-1"],
        {"members": down(total=2) + [member("cp-9")]},
        "skip",
        "etcd_quorum",
        "cp-1",
    ),
    (
        "without the stray the same two machines keep quorum",
        cluster(2),
        ["cp-1"],
        {"members": down(total=2)},
        "remediate",
        None,
        "cp-1",
    ),
    (
        "with external etcd quorum is not the control plane's concern",
        cluster(3),
        ["cp-1"],
        {"managed": False, "members": [member("ext-1")]},
        "remediate",
        None,
        "cp-1",
    ),
    (
        "with every machine flagged no machine can take etcd leadership",
        cluster(3),
        ["cp-1", "cp-2", "cp-3"],
        {},
        "fail",
        "no_leader_candidate",
        "cp-1",
    ),
]


@pytest.mark.parametrize("machines,flagged,kwargs,status,rule,target", [c[1:] for c in PRECONDITIONS], ids=[c[0] for c in PRECONDITIONS])
def test_preconditions(machines, flagged, kwargs, status, rule, target):
    decision = decide_for(machines, flagged, **kwargs)
    assert (decision.status, decision.rule, decision.machine) == (status, rule, target), decision.reason
    assert decision.reason


def test_the_leader_candidate_is_the_newest_machine_not_flagged():
    decision = decide_for(cluster(5), ["cp-1", "cp-5"], members=down(total=5))
    assert (decision.status, decision.leader_candidate) == ("remediate", "cp-4")
    assert decision.quorum.ok and decision.quorum.voters_after == 4


def test_a_quorum_refusal_carries_the_projection():
    decision = decide_for(cluster(3), ["cp-1"], members=down("cp-3"))
    assert decision.quorum.healthy_after == 1 and decision.quorum.quorum_after == 2
    assert "lose etcd quorum" in decision.reason


H = 3600
# (machine's remediation record: retries, seconds ago or None; strategy overrides; allowed, retry count, rule)
RETRIES = [
    ("a machine without a record starts at retry 0", (0, None), {}, (True, 0, None)),
    ("a record exactly min_healthy_period old starts a new sequence", (4, H), {"max_retry": 1}, (True, 0, None)),
    ("a record older than min_healthy_period starts a new sequence", (4, H + 1), {"max_retry": 1}, (True, 0, None)),
    ("a record just within min_healthy_period continues the sequence", (1, H - 1), {}, (True, 2, None)),
    ("a min_healthy_period of 0 always starts a new sequence", (4, 0), {"min_healthy_period": 0, "max_retry": 1}, (True, 0, None)),
    ("within retry_period remediation waits", (0, 599), {"retry_period": 600}, (False, 0, "retry_period")),
    ("exactly at retry_period remediation may go", (0, 600), {"retry_period": 600}, (True, 1, None)),
    ("after retry_period remediation may go", (0, 601), {"retry_period": 600}, (True, 1, None)),
    ("below max_retry the count goes up", (1, 60), {"max_retry": 2}, (True, 2, None)),
    ("at max_retry remediation stops", (2, 60), {"max_retry": 2}, (False, 2, "max_retries")),
    ("above max_retry remediation stops", (3, 60), {"max_retry": 2}, (False, 3, "max_retries")),
    ("max_retry 0 allows no retry at all", (0, 60), {"max_retry": 0}, (False, 0, "max_retries")),
    ("without max_retry retries are unlimited", (10, 60), {}, (True, 11, None)),
    ("retry_period is checked before max_retry", (5, 60), {"retry_period": 600, "max_retry": 1}, (False, 5, "retry_period")),
]


@pytest.mark.parametrize("record,overrides,expected", [c[1:] for c in RETRIES], ids=[c[0] for c in RETRIES])
def test_retry_limits(record, overrides, expected):
    retries, ago = record
    m = machine("cp-1", retries=retries, last_remediation=None if ago is None else seconds_ago(ago))
    verdict = retry_verdict(m, dict(STRATEGY, **overrides), parse_time(NOW))
    assert (verdict.allowed, verdict.retry_count, verdict.rule) == expected, verdict.reason


def test_a_machine_half_way_through_its_in_place_upgrade_is_not_remediated_unless_asked_for_by_hand():
    # RM12: its upgrade is finished first (IP5); remediation waits, and says so
    decision = decide_for(cluster(3), ["cp-2"], members=down("cp-2"), upgrading=["cp-2"])
    assert (decision.status, decision.machine, decision.rule) == ("skip", "cp-2", "upgrade_in_progress")
    assert decision.reason == "cp-2 is unhealthy: its in-place upgrade is under way, and is finished rather than undone by a replacement (RM12)"
    assert held_back(decision) == "remediation waits: " + decision.reason
    # another flagged machine is still remediated (the upgrading one's member counts as it answers)
    decision = decide_for(cluster(5), ["cp-2", "cp-3"], members=down("cp-3", total=5), upgrading=["cp-2"])
    assert (decision.status, decision.machine) == ("remediate", "cp-3")
    # the remediate-machine annotation, an operator's own request, wins over the upgrade
    decision = decide_for(cluster(3, cp_2={"remediation_requested": True}), ["cp-2"], members=down("cp-2"), upgrading=["cp-2"])
    assert (decision.status, decision.machine) == ("remediate", "cp-2")


def test_a_flagged_machine_whose_member_is_already_gone_is_remediated_without_removing_a_member():
    decision = decide_for(cluster(3), ["cp-1"], members=[member("cp-2"), member("cp-3", leader=True)])
    assert (decision.status, decision.machine, decision.leader_candidate) == ("remediate", "cp-1", "cp-3")
    assert (decision.quorum.voters_before, decision.quorum.voters_after, decision.quorum.healthy_after) == (2, 2, 2)


def test_remediation_removes_the_member_of_the_flagged_machine_and_no_other():
    decision = decide_for(cluster(4), ["cp-2"], members=down("cp-2", total=4))
    assert decision.status == "remediate", decision.reason
    assert (decision.quorum.voters_after, decision.quorum.healthy_after) == (3, 3)


def test_remediation_hands_leadership_only_to_a_machine_that_can_lead():
    decision = decide_for(cluster(4), ["cp-1"], members=down(total=3) + [member("cp-4", responsive=False)])
    assert (decision.status, decision.leader_candidate) == ("remediate", "cp-3"), decision.reason


def test_remediation_waits_while_a_learner_joins():
    # Cluster API v1.13+ (canSafelyRemediateMachine: a learner in the target makes it unsafe); time lifts it
    decision = decide_for(cluster(4), ["cp-1"], members=down(total=3) + [member("cp-4", learner=True)])
    assert (decision.status, decision.rule) == ("skip", "etcd_learner"), decision.reason
    assert held_back(decision).startswith("remediation waits: etcd member cp-4 is a learner, still joining")


def test_remediation_waits_while_no_other_machine_has_every_component_healthy():
    # Cluster API v1.13+ (canSafelyRemediateMachine): removing it would leave no control plane machine that works,
    # however etcd's quorum stands
    machines = cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}, cp_3={"components": {"controller_manager": "provisioning"}})
    decision = decide_for(machines, ["cp-1"])
    assert (decision.status, decision.rule) == ("skip", "no_healthy_machine"), decision.reason
    assert held_back(decision).startswith("manual intervention needed (no_healthy_machine): no control plane machine but cp-1")
    decision = decide_for(cluster(3, cp_3={"components": {"controller_manager": "provisioning"}}), ["cp-1"])
    assert (decision.status, decision.machine) == ("remediate", "cp-1"), decision.reason
    # external etcd too: the API server, controller manager and scheduler of another machine
    decision = decide_for(machines, ["cp-1"], managed=False)
    assert decision.rule == "no_healthy_machine"


@pytest.mark.parametrize(
    "record,overrides,rule,seconds",
    [((0, 100), {"retry_period": 600}, "retry_period", 500.0), ((2, 600), {"max_retry": 2}, "max_retries", 3000.0)],
    ids=["a retry period skip ends with the retry period", "a max_retry skip ends when min_healthy_period starts a new sequence"],
)
def test_a_retry_limit_says_when_it_ends(record, overrides, rule, seconds):
    retries, ago = record
    decision = decide_for([machine("cp-1", created=999, retries=retries, last_remediation=seconds_ago(ago)), *cluster(3)[1:]],
                          ["cp-1"], strategy=dict(STRATEGY, **overrides))
    assert (decision.status, decision.rule, decision.retry_after_seconds) == ("skip", rule, seconds)


@pytest.mark.parametrize(
    "ago,expected",
    [(3600, (True, 0)), (3599, (True, 2))],
    ids=["without min_healthy_period a record an hour old starts a new sequence",
         "without min_healthy_period a record just under an hour old continues the sequence"],
)
def test_min_healthy_period_defaults_to_one_hour(ago, expected):
    m = machine("cp-1", retries=1, last_remediation=seconds_ago(ago))
    verdict = retry_verdict(m, {"max_retry": None, "retry_period": None, "min_healthy_period": None}, parse_time(NOW))
    assert (verdict.allowed, verdict.retry_count) == expected


def test_without_retry_period_a_remediation_may_follow_at_once():
    m = machine("cp-1", retries=1, last_remediation=NOW)
    verdict = retry_verdict(m, {"max_retry": None, "retry_period": None, "min_healthy_period": 3600.0}, parse_time(NOW))
    assert (verdict.allowed, verdict.retry_count) == (True, 2)


@pytest.mark.parametrize("flagged,allowed", [([], True), (["cp-1"], False)],
                         ids=["nothing flagged records no retry", "a remediation not allowed records no retry"])
def test_a_decision_without_a_remediation_carries_retry_count_0(flagged, allowed):
    decision = decide_for(cluster(3), flagged, allowed=allowed)
    assert decision.status in ("none", "skip") and decision.retry_count == 0


def test_what_time_lifts_waits_and_what_it_does_not_needs_a_person():
    assert held_back(decide_for(cluster(3), ["cp-2"], in_progress={"machine": "cp-9", "timestamp": NOW, "retry_count": 0})) == (
        "remediation waits: the replacement of cp-9, remediated earlier, is not created yet")
    decision = decide_for(cluster(3), ["cp-2"], members=down("cp-2", "cp-3"))
    assert held_back(decision) == "manual intervention needed (etcd_quorum): %s" % decision.reason


def test_a_failing_scheduler_is_a_sign_that_goes_before_age():
    machines = [machine("cp-1", created=300), machine("cp-2", created=100, components={"scheduler": "unhealthy"})]
    assert most_broken(machines) == "cp-2"


# (machines, flagged, decide_for keyword arguments, the decision's reason, what held_back tells the operator or None)
REASONS = [
    ("nothing flagged says so", cluster(3), [], {}, "no machine is flagged for remediation", None),
    (
        "a budget refusal names every unhealthy machine and the health check's reason",
        cluster(3),
        ["cp-3", "cp-2"],
        {"allowed": False},
        "cp-2, cp-3 unhealthy: budget",
        "manual intervention needed (remediation_not_allowed): cp-2, cp-3 unhealthy: budget",
    ),
    (
        "several machines held back by their in-place upgrade are named together",
        cluster(3),
        ["cp-2", "cp-3"],
        {"upgrading": ["cp-3", "cp-2"]},
        "cp-2, cp-3 are unhealthy: their in-place upgrades are under way, and are finished rather than undone by replacements (RM12)",
        "remediation waits: cp-2, cp-3 are unhealthy: their in-place upgrades are under way, and are finished rather than undone by replacements (RM12)",
    ),
    (
        "a machine already deleting waits for its deletion",
        cluster(3, cp_2={"deleting": True}),
        ["cp-2"],
        {},
        "cp-2 is already being deleted",
        "remediation waits: cp-2 is already being deleted",
    ),
    (
        "a retry period names the machine, the last remediation and when it may retry",
        cluster(3, cp_2={"retries": 1, "last_remediation": seconds_ago(60)}),
        ["cp-2"],
        {"strategy": dict(STRATEGY, retry_period=600)},
        "cp-2: the last remediation (2026-11-22T09:59:00Z) is within retry_period; retry after 2026-11-22T10:09:00Z",
        "remediation waits: cp-2: the last remediation (2026-11-22T09:59:00Z) is within retry_period; retry after 2026-11-22T10:09:00Z",
    ),
    (
        "max_retry needs a person and says when a new sequence may start",
        cluster(3, cp_2={"retries": 3, "last_remediation": seconds_ago(60)}),
        ["cp-2"],
        {"strategy": dict(STRATEGY, max_retry=3)},
        "cp-2: already remediated 3 times, max_retry is 3; a new sequence may start at 2026-11-22T10:59:00Z",
        "manual intervention needed (max_retries): cp-2: already remediated 3 times, max_retry is 3; a new sequence may start at 2026-11-22T10:59:00Z",
    ),
    (
        "before init the machine is deleted directly",
        cluster(1, cp_1={"has_node": False}),
        ["cp-1"],
        {"initialized": False},
        "the control plane is not initialized: cp-1 is deleted directly",
        None,
    ),
    (
        "the only machine needs a person",
        cluster(1),
        ["cp-1"],
        {},
        "cp-1 is the only control plane machine",
        "manual intervention needed (too_few_machines): cp-1 is the only control plane machine",
    ),
    (
        "one machine provisioning is waited for",
        cluster(3, cp_3={"has_node": False}),
        ["cp-1"],
        {},
        "cp-3 is still provisioning",
        "remediation waits: cp-3 is still provisioning",
    ),
    (
        "several machines provisioning are waited for",
        cluster(4, cp_3={"has_node": False}, cp_4={"has_node": False}),
        ["cp-1"],
        {},
        "cp-3, cp-4 are still provisioning",
        "remediation waits: cp-3, cp-4 are still provisioning",
    ),
    (
        "one machine being deleted is waited for",
        cluster(3, cp_3={"deleting": True}),
        ["cp-1"],
        {},
        "cp-3 is being deleted",
        "remediation waits: cp-3 is being deleted",
    ),
    (
        "several machines being deleted are waited for",
        cluster(4, cp_3={"deleting": True}, cp_4={"deleting": True}),
        ["cp-1"],
        {},
        "cp-3, cp-4 are being deleted",
        "remediation waits: cp-3, cp-4 are being deleted",
    ),
    (
        "several learners are named together",
        cluster(5),
        ["cp-1"],
        {"members": down(total=3) + [member("cp-5", learner=True), member("cp-4", learner=True)]},
        "etcd members cp-4, cp-5 are learners, still joining: no member is removed until they are promoted or gone",
        "remediation waits: etcd members cp-4, cp-5 are learners, still joining: no member is removed until they are promoted or gone",
    ),
    (
        "a quorum refusal needs a person and gives the projection's reasons",
        cluster(5),
        ["cp-1"],
        {"members": down("cp-2", "cp-3", total=5)},
        "removing cp-1 would lose etcd quorum: after the change 2 of 4 voting members would be healthy, 3 are needed for quorum",
        "manual intervention needed (etcd_quorum): removing cp-1 would lose etcd quorum: "
        "after the change 2 of 4 voting members would be healthy, 3 are needed for quorum",
    ),
    (
        "a quorum lost already and lost after the change gives both reasons",
        cluster(5),
        ["cp-1"],
        {"members": down("cp-2", "cp-3", "cp-4", total=5)},
        "removing cp-1 would lose etcd quorum: etcd has no quorum now: 2 of 5 voting members healthy, 3 needed; "
        "after the change 1 of 4 voting members would be healthy, 3 are needed for quorum",
        "manual intervention needed (etcd_quorum): removing cp-1 would lose etcd quorum: etcd has no quorum now: "
        "2 of 5 voting members healthy, 3 needed; after the change 1 of 4 voting members would be healthy, 3 are needed for quorum",
    ),
    (
        "no leader candidate needs a person",
        cluster(3),
        ["cp-1", "cp-2", "cp-3"],
        {},
        "no machine can take over etcd leadership from cp-1: none other is unflagged with a healthy voting member",
        "manual intervention needed (no_leader_candidate): "
        "no machine can take over etcd leadership from cp-1: none other is unflagged with a healthy voting member",
    ),
    (
        "with external etcd the machine may simply be replaced",
        cluster(3),
        ["cp-1"],
        {"managed": False, "members": [member("ext-1")]},
        "cp-1 is unhealthy and may be replaced",
        None,
    ),
    (
        "with managed etcd the machine is replaced as etcd keeps quorum",
        cluster(3),
        ["cp-1"],
        {"members": down("cp-1")},
        "cp-1 is unhealthy and etcd keeps quorum without it",
        None,
    ),
]


@pytest.mark.parametrize("machines,flagged,kwargs,reason,operator", [c[1:] for c in REASONS], ids=[c[0] for c in REASONS])
def test_each_decision_tells_the_operator_why(machines, flagged, kwargs, reason, operator):
    decision = decide_for(machines, flagged, **kwargs)
    assert decision.reason == reason
    if operator is not None:
        assert held_back(decision) == operator


def test_an_external_remediation_attempt_in_progress_waits_for_its_timeout():
    decision = decide_for(cluster(3), ["cp-2"])._replace(status="skip", rule="external_remediation_in_progress", reason="cp-2 may come back")
    assert held_back(decision) == "remediation waits: cp-2 may come back"


# (machine's remediation record: retries, seconds ago or None; strategy overrides; the verdict's reason)
RETRY_REASONS = [
    ("a machine without a record says none is recorded", (0, None), {}, "no earlier remediation is recorded"),
    (
        "an expired record starts a new sequence and says when it was",
        (4, H),
        {"max_retry": 1},
        "the last remediation (2026-11-22T09:00:00Z) is older than min_healthy_period: a new sequence",
    ),
    (
        "a retry names its number in the sequence",
        (1, 60),
        {"max_retry": 2},
        "retry 2 of the sequence that started before 2026-11-22T09:59:00Z",
    ),
    (
        "the first retry of a sequence is retry one",
        (0, 600),
        {"retry_period": 600},
        "retry 1 of the sequence that started before 2026-11-22T09:50:00Z",
    ),
]


@pytest.mark.parametrize("record,overrides,reason", [c[1:] for c in RETRY_REASONS], ids=[c[0] for c in RETRY_REASONS])
def test_the_retry_verdict_says_why(record, overrides, reason):
    retries, ago = record
    m = machine("cp-1", retries=retries, last_remediation=None if ago is None else seconds_ago(ago))
    assert retry_verdict(m, dict(STRATEGY, **overrides), parse_time(NOW)).reason == reason
