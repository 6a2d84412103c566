# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""External remediation: the user's own remediation tasks before a deletion (RX1-RX5), on top of the remediation
rules' decision, and when a request is cleared (RX6)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health, external_remediation
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import all_conditions, quorum_members
from ansible_collections.kubeadm.control_plane.plugins.module_utils.remediation import LIFTED_BY_TIME, decide, held_back
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

from ansible_collections.kubeadm.control_plane.tests.unit.builders import NOW, machine, member, seconds_ago, snapshot, spec

STRATEGY = spec()["remediation"]
EXTERNAL = {"attempts": 3, "timeout": 600.0, "escalate": False}


def cluster(n, **overrides):
    """cp-1..cp-n, cp-1 oldest; `overrides` maps cp_2 to machine() keyword arguments."""
    return [machine("cp-%d" % i, created=1000 - i, **overrides.get("cp_%d" % i, {})) for i in range(1, n + 1)]


def down(*names, total=3):
    """Members of cp-1..cp-total where `names` do not answer."""
    return [member("cp-%d" % i, leader=(i == 1), responsive=("cp-%d" % i) not in names) for i in range(1, total + 1)]


def decide_for(machines, flagged, members=None, initialized=True, strategy=None):
    """The remediation rules' decision (RM1-RM8) with stacked etcd, `flagged` allowed by the budget."""
    snap = snapshot(machines, members=members, initialized=initialized)
    health = etcd_health.evaluate(snap["etcd"], machines)
    voters = quorum_members(snap["etcd"]["members"], machines, health["members_by_machine"])
    verdict = {"unhealthy": list(flagged), "remediation_allowed": True, "reason": "budget"}
    conditions = all_conditions(machines, True, health["members_by_machine"])
    return decide(machines, verdict, voters, strategy or STRATEGY, parse_time(NOW), initialized, True, None, (), conditions)


def decide_external(machines, flagged, settings=None, **kwargs):
    """The remediation decision for `machines` once external remediation `settings` (default EXTERNAL) have had their say."""
    return external_remediation.decide(decide_for(machines, flagged, **kwargs), machines, settings or EXTERNAL, parse_time(NOW))


# (id, cp-2's machine() arguments, settings overrides, expected (status, rule, attempt, timeout_seconds))
EXTERNAL_CASES = [
    ("a machine without attempts gets the first one", {}, {}, ("remediate_external", None, 1, 600.0)),
    ("attempts below the limit go on with the next one", {"external_attempts": 1, "external_last": seconds_ago(601)}, {},
     ("remediate_external", None, 2, 600.0)),
    ("the last attempt still within its timeout holds the next one back",
     {"external_attempts": 1, "external_last": seconds_ago(599)}, {}, ("skip", "external_remediation_in_progress", None, None)),
    ("an attempt exactly as old as its timeout lets the next one go", {"external_attempts": 1, "external_last": seconds_ago(600)},
     {}, ("remediate_external", None, 2, 600.0)),
    ("an attempt count without a time holds nothing back", {"external_attempts": 2}, {}, ("remediate_external", None, 3, 600.0)),
    ("attempts used up without escalate wait for a person", {"external_attempts": 3, "external_last": seconds_ago(700)}, {},
     ("skip", "external_remediation_exhausted", None, None)),
    ("attempts used up with escalate delete and recreate", {"external_attempts": 3, "external_last": seconds_ago(700)},
     {"escalate": True}, ("remediate", None, None, None)),
    ("more attempts than a lowered limit count as used up", {"external_attempts": 5}, {"attempts": 2},
     ("skip", "external_remediation_exhausted", None, None)),
    ("the last attempt's timeout holds an escalation back too", {"external_attempts": 3, "external_last": seconds_ago(60)},
     {"escalate": True}, ("skip", "external_remediation_in_progress", None, None)),
    ("a machine without a Node has nowhere to count attempts: without escalate it waits for a person", {"has_node": False}, {},
     ("skip", "external_remediation_no_node", None, None)),
    ("a machine without a Node is deleted and recreated with escalate", {"has_node": False}, {"escalate": True},
     ("remediate", None, None, None)),
]


@pytest.mark.parametrize("overrides,settings,expected", [c[1:] for c in EXTERNAL_CASES], ids=[c[0] for c in EXTERNAL_CASES])
def test_external_remediation(overrides, settings, expected):
    decision = decide_external(cluster(3, cp_2=overrides), ["cp-2"], dict(EXTERNAL, **settings))
    assert (decision.status, decision.rule, decision.attempt, decision.timeout_seconds) == expected, decision.reason
    assert decision.machine == "cp-2"


def test_an_external_attempt_names_its_number_and_keeps_the_quorum_projection_and_leader_candidate():
    decision = decide_external(cluster(3, cp_1={"external_attempts": 1}), ["cp-1"])
    assert decision.reason == "cp-1 is unhealthy: external remediation, attempt 2 of 3"
    assert decision.leader_candidate == "cp-3" and decision.quorum.ok and decision.quorum.voters_after == 2


def test_an_escalation_says_how_many_attempts_came_before_it():
    decision = decide_external(cluster(3, cp_2={"external_attempts": 3}), ["cp-2"], dict(EXTERNAL, escalate=True))
    assert decision.reason.startswith("cp-2 is still unhealthy after 3 external remediation attempts: escalate to delete and recreate")
    assert decision.leader_candidate == "cp-3" and decision.retry_count == 0


def test_used_up_attempts_are_a_matter_for_a_person():
    decision = decide_external(cluster(3, cp_2={"external_attempts": 3}), ["cp-2"])
    assert held_back(decision) == (
        "manual intervention needed (external_remediation_exhausted): cp-2 is still unhealthy after 3 external remediation "
        "attempts (3 allowed), and escalate is off"
    )


def test_an_attempt_still_running_is_lifted_by_time_and_says_when():
    decision = decide_external(cluster(3, cp_2={"external_attempts": 1, "external_last": seconds_ago(100)}), ["cp-2"])
    assert decision.retry_after_seconds == 500.0
    assert external_remediation.IN_PROGRESS in LIFTED_BY_TIME
    assert held_back(decision).startswith("remediation waits: cp-2: external remediation attempt 1 of 3 began at ")


@pytest.mark.parametrize(
    "machines,flagged,kwargs,rule",
    [
        (cluster(3), ["cp-1"], {"members": down("cp-2")}, "etcd_quorum"),
        (cluster(3, cp_3={"deleting": True}), ["cp-1"], {}, "machine_deleting"),
        (cluster(1), ["cp-1"], {}, "too_few_machines"),
        (cluster(3, cp_2={"retries": 1, "last_remediation": seconds_ago(60)}), ["cp-2"],
         {"strategy": dict(STRATEGY, retry_period=600.0)}, "retry_period"),
    ],
    ids=[
        "a power cycle would take a second etcd member down: quorum holds it back",
        "another machine being deleted holds it back",
        "the only machine is not power cycled either",
        "the retry period of a replacement holds it back",
    ],
)
def test_what_holds_a_deletion_back_holds_an_external_attempt_back(machines, flagged, kwargs, rule):
    decision = decide_external(machines, flagged, **kwargs)
    assert (decision.status, decision.rule, decision.attempt) == ("skip", rule, None)


def test_without_external_remediation_the_decision_is_left_as_it_is():
    decision = decide_for(cluster(3), ["cp-2"])
    assert external_remediation.decide(decision, cluster(3), None, parse_time(NOW)) is decision


def test_before_init_a_first_machine_without_a_node_escalates_or_waits():
    machines = cluster(1, cp_1={"has_node": False})
    waits = decide_external(machines, ["cp-1"], initialized=False)
    escalates = decide_external(machines, ["cp-1"], dict(EXTERNAL, escalate=True), initialized=False)
    assert (waits.status, waits.rule, escalates.status) == ("skip", "external_remediation_no_node", "remediate")


# (id, cp-2's machine() arguments, health verdict, expected machines to clear)
CLEARED = [
    ("a healthy machine with attempts has its request cleared", {"external_attempts": 2}, {}, ["cp-2"]),
    ("a machine still unhealthy keeps its attempts", {"external_attempts": 2}, {"unhealthy": ["cp-2"]}, []),
    ("a machine unhealthy beyond the budget keeps its attempts too", {"external_attempts": 2},
     {"unhealthy": ["cp-2"], "remediation_allowed": False}, []),
    ("a machine whose condition is pending keeps its attempts", {"external_attempts": 2}, {"pending": ["cp-2"]}, []),
    ("a healthy machine without attempts has nothing to clear", {}, {}, []),
    ("a machine being deleted is not cleared", {"external_attempts": 1, "deleting": True}, {}, []),
    ("a machine without a Node has no request to clear", {"external_attempts": 1, "has_node": False}, {}, []),
]


@pytest.mark.parametrize("overrides,verdict,expected", [c[1:] for c in CLEARED], ids=[c[0] for c in CLEARED])
def test_which_requests_are_cleared(overrides, verdict, expected):
    health = dict({"unhealthy": [], "pending": [], "remediation_allowed": True}, **verdict)
    cleared = external_remediation.requests_to_clear(cluster(3, cp_2=overrides), health)
    assert [m["name"] for m in cleared] == expected


def test_requests_are_cleared_oldest_first():
    machines = cluster(3, cp_1={"external_attempts": 1}, cp_3={"external_attempts": 1})
    assert [m["name"] for m in external_remediation.requests_to_clear(machines, {"unhealthy": []})] == ["cp-1", "cp-3"]


def test_a_machine_without_a_node_says_why_its_attempts_cannot_be_counted():
    machines = cluster(3, cp_2={"has_node": False})
    waits = decide_external(machines, ["cp-2"])
    escalates = decide_external(machines, ["cp-2"], dict(EXTERNAL, escalate=True))
    assert held_back(waits) == (
        "manual intervention needed (external_remediation_no_node): cp-2 has no Node to count external remediation attempts on, "
        "and escalate is off"
    )
    assert escalates.reason == (
        "cp-2 has no Node to count external remediation attempts on: escalate to delete and recreate (%s)" % decide_for(machines, ["cp-2"]).reason
    )
