# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-machine component conditions and the etcd member view the quorum projection counts."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import (
    all_conditions,
    failing,
    machine_conditions,
    oldest_first,
    quorum_members,
)

from builders import machine, member, snapshot

STACKED = ["api_server", "controller_manager", "scheduler", "etcd_pod", "etcd_member"]
MEMBER_TRUE = {"status": "true", "reason": ""}


def node_gone(name):
    m = machine(name)
    m["node"] = None
    return m


def stale_node(name):
    m = machine(name, components={"api_server": "unhealthy"})
    m["node"]["conditions"][0]["status"] = "Unknown"
    return m


@pytest.mark.parametrize(
    "m,managed,member_entry,expected",
    [
        (machine("cp-1"), True, MEMBER_TRUE, dict.fromkeys(STACKED, "true")),
        (machine("cp-1"), False, None, dict.fromkeys(STACKED[:3], "true")),
        (
            machine("cp-1", components={"api_server": "unhealthy", "scheduler": "missing", "etcd": "unknown"}),
            True,
            MEMBER_TRUE,
            {"api_server": "false", "controller_manager": "true", "scheduler": "false", "etcd_pod": "unknown", "etcd_member": "true"},
        ),
        (machine("cp-1", has_node=False), True, None, dict.fromkeys(STACKED, "unknown")),
        (node_gone("cp-1"), True, None, dict.fromkeys(STACKED, "false")),
        (
            stale_node("cp-1"),
            True,
            {"status": "false", "reason": "member cp-1 has alarms: NOSPACE"},
            dict(dict.fromkeys(STACKED[:4], "unknown"), etcd_member="false"),
        ),
        (machine("cp-1"), True, None, dict(dict.fromkeys(STACKED[:4], "true"), etcd_member="unknown")),
    ],
    ids=[
        "a healthy machine with stacked etcd has five true conditions",
        "with external etcd only the three pod conditions exist",
        "unhealthy and missing pods are false and an unknown pod is unknown",
        "a machine with no node yet has every condition unknown",
        "a machine whose node is gone has every condition false",
        "a stale node makes the pods unknown but keeps the etcd member verdict",
        "an etcd member nobody evaluated is unknown",
    ],
)
def test_machine_conditions(m, managed, member_entry, expected):
    conditions = machine_conditions(m, managed, member_entry)
    assert {c: e["status"] for c, e in conditions.items()} == expected


def test_failing_lists_only_the_statuses_asked_for():
    conditions = machine_conditions(machine("cp-1", components={"api_server": "unhealthy", "etcd": "unknown"}), True, MEMBER_TRUE)
    assert failing(conditions) == ["api_server", "etcd_pod"]
    assert failing(conditions, statuses=("false",)) == ["api_server"]


def test_conditions_take_the_etcd_member_verdict_of_etcd_health():
    machines = [machine("cp-1"), machine("cp-2")]
    snap = snapshot(machines, members=[member("cp-1", leader=True), member("cp-2", alarms=["NOSPACE"])])
    health = etcd_health.evaluate(snap["etcd"], machines)
    conditions = all_conditions(machines, True, health["members_by_machine"])
    assert conditions["cp-1"]["etcd_member"]["status"] == "true"
    assert conditions["cp-2"]["etcd_member"]["status"] == "false"
    assert "NOSPACE" in conditions["cp-2"]["etcd_member"]["reason"]


@pytest.mark.parametrize(
    "members,expected",
    [
        ([member("cp-1"), member("cp-2")], {"cp-1": True, "cp-2": True}),
        ([member("cp-1"), member("cp-2", alarms=["NOSPACE"])], {"cp-1": True, "cp-2": False}),
        ([member("cp-1"), member("cp-2"), member("cp-9")], {"cp-1": True, "cp-2": True, "cp-9": False}),
        ([member("cp-1"), member("cp-2"), dict(member("x", learner=True), name="")], {"cp-1": True, "cp-2": True, "": False}),
    ],
    ids=[
        "members of healthy machines are healthy",
        "a member whose machine's member condition is false is unhealthy",
        "a stray member with no machine is unhealthy",
        "a member still joining with an empty name is unhealthy",
    ],
)
def test_quorum_members_count_only_members_of_machines_whose_member_is_true(members, expected):
    machines = [machine("cp-1"), machine("cp-2")]
    snap = snapshot(machines, members=members)
    health = etcd_health.evaluate(snap["etcd"], machines)
    out = quorum_members(snap["etcd"]["members"], machines, health["members_by_machine"])
    assert {m.name: m.healthy for m in out} == expected


def test_a_learner_stays_a_learner_for_the_projection():
    machines = [machine("cp-1"), machine("cp-2")]
    snap = snapshot(machines, members=[member("cp-1"), member("cp-2", learner=True)])
    health = etcd_health.evaluate(snap["etcd"], machines)
    out = quorum_members(snap["etcd"]["members"], machines, health["members_by_machine"])
    assert [m.learner for m in out] == [False, True]


def test_oldest_first_orders_by_creation_then_name():
    machines = [machine("cp-3", created=10), machine("cp-2", created=20), machine("cp-1", created=10)]
    assert [m["name"] for m in oldest_first(machines)] == ["cp-2", "cp-1", "cp-3"]
