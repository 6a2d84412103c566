# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who takes etcd leadership: one rule, for machines (planner, remediation) and for bare members (etcd_member)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_leadership import among_machines, among_members
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import Member

from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, member


def machines(n=4, **overrides):
    """cp-1..cp-n, cp-1 oldest; `overrides` maps cp_2 to machine() arguments."""
    return [machine("cp-%d" % i, created=1000 - i, **overrides.get("cp_%d" % i, {})) for i in range(1, n + 1)]


def voters(n=4, **overrides):
    """Members of cp-1..cp-n, healthy voters unless `overrides` (cp_2={"healthy": False}) say otherwise."""
    return [Member(id="%x" % i, name="cp-%d" % i, **overrides.get("cp_%d" % i, {})) for i in range(1, n + 1)]


MACHINES = [
    ("the newest machine leads", dict(), dict(), dict(), "cp-4"),
    ("never the machine that leaves", dict(), dict(), dict(leaving="cp-4"), "cp-3"),
    ("never a deleting machine", dict(cp_4={"deleting": True}), dict(), dict(), "cp-3"),
    ("never a machine flagged for remediation", dict(), dict(), dict(flagged={"cp-4"}), "cp-3"),
    ("never a learner", dict(), dict(cp_4={"learner": True}), dict(), "cp-3"),
    ("never a machine whose member is unhealthy", dict(), dict(cp_4={"healthy": False}), dict(), "cp-3"),
    ("never a machine without a member", dict(cp_4={"has_node": False}), dict(), dict(), "cp-3"),
    ("nobody when no machine can lead", dict(), dict(), dict(leaving="cp-2", flagged={"cp-1", "cp-3", "cp-4"}), None),
]


@pytest.mark.parametrize("machine_overrides,member_overrides,kwargs,expected", [c[1:] for c in MACHINES], ids=[c[0] for c in MACHINES])
def test_leadership_among_machines(machine_overrides, member_overrides, kwargs, expected):
    assert among_machines(machines(**machine_overrides), voters(**member_overrides), **kwargs) == expected


def test_machines_of_equal_age_go_by_the_largest_name():
    same_age = [machine("cp-b", created=10), machine("cp-a", created=10)]
    assert among_machines(same_age, [Member(id="1", name="cp-a"), Member(id="2", name="cp-b")]) == "cp-b"


def raw(name, raft_index=100, **fields):
    m = member(name, **fields)
    m["raft_index"] = raft_index
    return m


MEMBERS = [
    ("the member furthest ahead in the raft log leads", [raw("cp-1", 90), raw("cp-2", 120), raw("cp-3", 110)], "cp-2"),
    ("never the member that leaves", [raw("cp-1", 200), raw("cp-2", 120), raw("cp-3", 110)], "cp-2"),
    ("never a learner", [raw("cp-1"), raw("cp-2", 300, learner=True), raw("cp-3", 110)], "cp-3"),
    ("never a member that does not answer", [raw("cp-1"), raw("cp-2", 300, responsive=False), raw("cp-3", 110)], "cp-3"),
    ("equal logs go by the largest name", [raw("cp-1"), raw("cp-2"), raw("cp-3")], "cp-3"),
    ("nobody when no other member can lead", [raw("cp-1"), raw("cp-2", responsive=False)], None),
]


@pytest.mark.parametrize("members,expected", [c[1:] for c in MEMBERS], ids=[c[0] for c in MEMBERS])
def test_leadership_among_members(members, expected):
    by_id = {m["id"]: m["name"] for m in members}
    assert by_id.get(among_members(members, leaving_id=members[0]["id"])) == expected


def test_a_member_that_answered_with_an_error_cannot_lead():
    members = [raw("cp-1"), raw("cp-2", 300), raw("cp-3")]
    members[1]["error"] = "etcdserver: request timed out"
    assert among_members(members, leaving_id=members[0]["id"]) == members[2]["id"]


def test_a_member_that_reported_no_raft_index_is_behind_any_that_applied_an_entry():
    members = [raw("cp-1"), raw("cp-2", 1), raw("cp-3", None)]
    assert among_members(members, leaving_id=members[0]["id"]) == members[1]["id"]
