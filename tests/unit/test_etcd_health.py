# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import change_verdict, evaluate

from builders import machine, member, snapshot


def health(machines, members=None, external=False):
    snap = snapshot(machines, members=members, external=external)
    return evaluate(snap["etcd"], snap["machines"])


def three(**overrides):
    """cp-1..cp-3; `overrides` maps a machine name to builder keyword arguments."""
    return [machine(n, created=100 - i, **overrides.get(n, {})) for i, n in enumerate(("cp-1", "cp-2", "cp-3"))]


def members_of(*names, **overrides):
    """Members named `names`, cp-1 leading; `overrides` maps a name to member() keyword arguments."""
    return [member(n, leader=(i == 0), **overrides.get(n.replace("-", "_"), {})) for i, n in enumerate(names)]


def with_field(m, **fields):
    m.update(fields)
    return m


OTHER_LIST = ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"]


# (id, machines, members, machine name, expected status, a word the reason must contain)
PER_MACHINE = [
    ("a healthy member is true", three(), None, "cp-2", "true", ""),
    (
        "a deleting machine is false even when its member is down",
        three(**{"cp-2": {"deleting": True}}),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"responsive": False}),
        "cp-2",
        "false",
        "deleting",
    ),
    (
        "a machine whose node has no member is false with missing member",
        three(),
        members_of("cp-1", "cp-3"),
        "cp-2",
        "false",
        "missing member",
    ),
    (
        "a missing member overrides unknown only when some member answered",
        three(),
        [with_field(member("cp-1", responsive=False))],
        "cp-2",
        "unknown",
        "no etcd member answered",
    ),
    (
        "a member that does not answer is unknown",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_3={"responsive": False}),
        "cp-3",
        "unknown",
        "did not answer",
    ),
    (
        "a member whose status call failed is false",
        three(),
        [member("cp-1"), with_field(member("cp-2"), error="etcdserver: no leader"), member("cp-3")],
        "cp-2",
        "false",
        "no leader",
    ),
    (
        "a learner is false until it is promoted",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"learner": True, "seen": []}),
        "cp-2",
        "false",
        "learner, not promoted yet",
    ),
    (
        "a learner does not set the reference list",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_1={"learner": True, "seen": []}),
        "cp-2",
        "true",
        "",
    ),
    (
        "a member reporting another member list than the first one seen is false",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_3={"seen": OTHER_LIST}),
        "cp-3",
        "false",
        "reports members",
    ),
    (
        "the first member seen sets the reference list, so it stays true",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_3={"seen": OTHER_LIST}),
        "cp-1",
        "true",
        "",
    ),
    (
        "a member that does not answer does not set the reference list",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_1={"responsive": False}, cp_2={"seen": OTHER_LIST}),
        "cp-3",
        "false",
        "reports members",
    ),
    (
        "a deleting machine's member does not set the reference list",
        three(**{"cp-1": {"deleting": True}}),
        members_of("cp-1", "cp-2", "cp-3", cp_1={"seen": OTHER_LIST}),
        "cp-2",
        "true",
        "",
    ),
    (
        "a member absent from its own member list is false",
        [machine("cp-1")],
        [member("cp-1", seen=["aaaaaaaaaaaaaaaa"])],
        "cp-1",
        "false",
        "does not list itself",
    ),
    (
        "a member with an alarm is false",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"alarms": ["NOSPACE"]}),
        "cp-2",
        "false",
        "NOSPACE",
    ),
    (
        "a member of another cluster id is false",
        three(),
        [with_field(member(n), cluster_id="c1" if n != "cp-3" else "c2") for n in ("cp-1", "cp-2", "cp-3")],
        "cp-3",
        "false",
        "cluster c2",
    ),
    (
        "the member list check wins over the alarm check",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"alarms": ["NOSPACE"], "seen": OTHER_LIST}),
        "cp-2",
        "false",
        "reports members",
    ),
]


@pytest.mark.parametrize(
    "machines,members,name,status,reason_has",
    [case[1:] for case in PER_MACHINE],
    ids=[case[0] for case in PER_MACHINE],
)
def test_member_health_per_machine(machines, members, name, status, reason_has):
    result = health(machines, members)
    entry = result["members_by_machine"][name]
    assert entry["status"] == status, entry
    assert reason_has in entry["reason"]
    assert (entry["reason"] == "") is (status == "true")


def test_machines_without_a_node_get_no_entry():
    machines = three(**{"cp-3": {"has_node": False}})
    result = health(machines, members_of("cp-1", "cp-2"))
    assert sorted(result["members_by_machine"]) == ["cp-1", "cp-2"]


# (id, machines, members, problems expected: words each problem must contain, in order)
PREFLIGHT = [
    ("a healthy stacked cluster passes", three(), None, []),
    ("no machines and no members pass", [], [], []),
    (
        "fewer members than machines fails",
        three(),
        members_of("cp-1", "cp-2"),
        ["2 members but there are 3"],
    ),
    (
        "a member named after no machine is a stray and fails",
        three(),
        members_of("cp-1", "cp-2", "cp-3", "old-cp"),
        ["4 members but there are 3", "old-cp"],
    ),
    (
        "a member that does not answer fails",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"responsive": False}),
        ["cp-2 did not answer"],
    ),
    (
        "members reporting different member lists fail",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"seen": OTHER_LIST}),
        ["disagree on the member list"],
    ),
    (
        "an alarm fails",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_3={"alarms": ["NOSPACE", "CORRUPT"]}),
        ["cp-3 has alarms: NOSPACE, CORRUPT"],
    ),
    (
        "members of two cluster ids fail",
        three(),
        [with_field(member(n), cluster_id="c2" if n == "cp-3" else "c1") for n in ("cp-1", "cp-2", "cp-3")],
        ["different clusters"],
    ),
    (
        "members that all report one cluster id pass",
        three(),
        [with_field(member(n), cluster_id="c1") for n in ("cp-1", "cp-2", "cp-3")],
        [],
    ),
    (
        "a status error fails",
        three(),
        [member("cp-1"), member("cp-2"), with_field(member("cp-3"), error="raft: stopped")],
        ["cp-3 answered with an error: raft: stopped"],
    ),
    (
        "a learner waiting for promotion fails",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_3={"learner": True, "seen": []}),
        ["cp-3 is a learner, not promoted yet"],
    ),
    (
        "two members down report both",
        three(),
        members_of("cp-1", "cp-2", "cp-3", cp_2={"responsive": False}, cp_3={"responsive": False}),
        ["cp-2 did not answer", "cp-3 did not answer"],
    ),
]


@pytest.mark.parametrize(
    "machines,members,expected", [case[1:] for case in PREFLIGHT], ids=[case[0] for case in PREFLIGHT]
)
def test_stacked_preflight(machines, members, expected):
    result = health(machines, members)
    assert result["ok"] is (not expected)
    assert len(result["problems"]) == len(expected), result["problems"]
    for problem, words in zip(result["problems"], expected):
        assert words in problem


def test_strays_are_members_named_after_no_machine_but_not_unnamed_joiners():
    joining = with_field(member("x"), name="", responsive=False)
    result = health(three(), members_of("cp-1", "cp-2", "cp-3", "old-cp") + [joining])
    assert [s["name"] for s in result["strays"]] == ["old-cp"]
    assert result["strays"][0]["id"] == member("old-cp")["id"]


def test_a_deleting_machine_still_owns_its_member():
    result = health(three(**{"cp-2": {"deleting": True}}))
    assert result["strays"] == []
    assert result["ok"]


@pytest.mark.parametrize(
    "members,ok",
    [
        ([member("ext-1", responsive=False), member("ext-2")], True),
        ([member("ext-1", responsive=False), member("ext-2", responsive=False)], False),
        ([], False),
    ],
    ids=[
        "external etcd is ok when one endpoint answers",
        "external etcd fails when no endpoint answers",
        "external etcd with no endpoint at all fails",
    ],
)
def test_external_etcd_is_judged_by_connectivity_only(members, ok):
    result = health(three(), members, external=True)
    assert result["ok"] is ok
    assert bool(result["problems"]) is not ok
    assert result["members_by_machine"] == {} and result["strays"] == []


def test_evaluate_does_not_change_its_input():
    snap = snapshot(three(), members_of("cp-1", "cp-2", "cp-3", "old-cp"))
    before = repr(snap)
    evaluate(snap["etcd"], snap["machines"])["strays"][0]["name"] = "changed"
    assert repr(snap) == before


def etcd(*members):
    return snapshot([], members=list(members))["etcd"]


def mid(name):
    return member(name)["id"]


DOWN = {"responsive": False}
LEARNER = {"learner": True}

# (id, members as (name, overrides), change keyword arguments, ok, a word the reasons must contain)
CHANGES = [
    ("removing a healthy member of three healthy ones is allowed", [("a", {}), ("b", {}), ("c", {})], dict(remove=["a"]), True, ""),
    (
        "removing a healthy member while another is down is refused",
        [("a", {}), ("b", {}), ("c", DOWN)],
        dict(remove=["a"]),
        False,
        "would be healthy",
    ),
    ("removing the member that is down is allowed", [("a", {}), ("b", {}), ("c", DOWN)], dict(remove=["c"]), True, ""),
    (
        "with two of three down every change is refused",
        [("a", {}), ("b", DOWN), ("c", DOWN)],
        dict(remove=["b"]),
        False,
        "no quorum now",
    ),
    (
        "a member that answers with an error counts as unhealthy",
        [("a", {}), ("b", {"error": "etcdserver: no leader"}), ("c", DOWN)],
        dict(remove=["c"]),
        False,
        "no quorum now",
    ),
    (
        "an active alarm blocks any change",
        [("a", {"alarms": ["NOSPACE"]}), ("b", {}), ("c", {})],
        dict(add_learners=1),
        False,
        "NOSPACE",
    ),
    ("adding a learner to a healthy cluster is allowed", [("a", {}), ("b", {}), ("c", {})], dict(add_learners=1), True, ""),
    (
        "adding a second learner is refused",
        [("a", {}), ("b", {}), ("c", {}), ("d", LEARNER)],
        dict(add_learners=1),
        False,
        "one learner at a time",
    ),
    (
        "promoting a learner that does not answer is refused",
        [("a", {}), ("b", {}), ("c", {}), ("d", dict(LEARNER, responsive=False))],
        dict(promote=["d"]),
        False,
        "start it before promoting",
    ),
    (
        "promoting a learner that answers is allowed",
        [("a", {}), ("b", {}), ("c", {}), ("d", LEARNER)],
        dict(promote=["d"]),
        True,
        "",
    ),
    ("leadership may go to a healthy voter", [("a", {}), ("b", {}), ("c", {})], dict(lead_to="b"), True, ""),
    (
        "leadership may not go to a learner",
        [("a", {}), ("b", {}), ("c", {}), ("d", LEARNER)],
        dict(lead_to="d"),
        False,
        "cannot lead",
    ),
    ("leadership may not go to a member that is down", [("a", {}), ("b", {}), ("c", DOWN)], dict(lead_to="c"), False, "cannot lead"),
]


@pytest.mark.parametrize("members,change,ok,reason_has", [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_change_verdict(members, change, ok, reason_has):
    section = etcd(*[with_field(member(n), **overrides) for n, overrides in members])
    change = {k: ([mid(x) for x in v] if isinstance(v, list) else mid(v) if k == "lead_to" else v) for k, v in change.items()}
    verdict = change_verdict(section, **change)
    assert verdict["ok"] is ok, verdict["reasons"]
    assert bool(verdict["reasons"]) is not ok
    assert reason_has in " ".join(verdict["reasons"])
