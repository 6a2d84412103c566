# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import (
    change_verdict,
    evaluate,
    membership_confirmed,
    nothing_answered,
    summary,
)

from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, member, snapshot


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


# (id, external members, the gate's problems, degraded)
EXTERNAL = [
    ("every member answering is healthy", [member("ext-1"), member("ext-2"), member("ext-3")], [], []),
    ("a minority down keeps the quorum: reported, not blocking",
     [member("ext-1", responsive=False), member("ext-2"), member("ext-3")], [], ["member ext-1 did not answer: no answer within 2.0s"]),
    ("a majority down is no quorum", [member("ext-1", responsive=False), member("ext-2", responsive=False), member("ext-3")],
     ["the external etcd cluster has no quorum: 1 of its 3 voting members answered without an error, 2 are needed"],
     ["member ext-1 did not answer: no answer within 2.0s", "member ext-2 did not answer: no answer within 2.0s"]),
    ("members answering with an error count against the quorum",
     [with_field(member("ext-1"), error="etcdserver: no leader"), with_field(member("ext-2"), error="etcdserver: no leader"), member("ext-3")],
     ["the external etcd cluster has no quorum: 1 of its 3 voting members answered without an error, 2 are needed"],
     ["member ext-1 answered with an error: etcdserver: no leader", "member ext-2 answered with an error: etcdserver: no leader"]),
    ("a learner is no voter", [member("ext-1"), member("ext-2", learner=True)], [], []),
    ("an alarm blocks: the API server cannot write", [member("ext-1", alarms=["NOSPACE"]), member("ext-2"), member("ext-3")],
     ["member ext-1 has alarms: NOSPACE"], []),
    ("no endpoint answering says what each met", [member("ext-1", responsive=False), member("ext-2", responsive=False)],
     ["no etcd endpoint answered (ext-1: no answer within 2.0s; ext-2: no answer within 2.0s)"], []),
    ("no endpoint at all", [], ["no etcd endpoint answered"], []),
]


@pytest.mark.parametrize("members,problems,degraded", [case[1:] for case in EXTERNAL], ids=[case[0] for case in EXTERNAL])
def test_external_etcd_is_judged_by_its_quorum_and_alarms_not_per_machine(members, problems, degraded):
    result = health(three(), members, external=True)
    assert (result["ok"], result["problems"], result["degraded"]) == (not problems, problems, degraded)
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


def labelled(*names, **overrides):
    """Like members_of, with readable ids: the member of cp-1 is id-cp-1."""
    return [
        member(n, member_id="id-" + n, leader=(i == 0), **overrides.get(n.replace("-", "_"), {})) for i, n in enumerate(names)
    ]


SILENT = {"responsive": False, "error": None}  # no answer and no error recorded either
CLUSTER_IDS = {"cp-1": "c1", "cp-2": "c1", "cp-3": "c2"}

# (id, machines, members, machine name, the exact reason)
REASONS = [
    ("a deleting machine says so", three(**{"cp-2": {"deleting": True}}), labelled("cp-1", "cp-2", "cp-3"), "cp-2", "machine is deleting"),
    (
        "with nobody answering the member list is unknown",
        three(),
        [member("cp-1", responsive=False)],
        "cp-2",
        "no etcd member answered, the member list is unknown",
    ),
    ("a missing member names the node", three(), labelled("cp-1", "cp-3"), "cp-2", "missing member: no etcd member is named cp-2"),
    (
        "a member that does not answer gives the error met",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_3={"responsive": False}),
        "cp-3",
        "member cp-3 did not answer: no answer within 2.0s",
    ),
    (
        "a member that does not answer with no error recorded says no answer",
        three(),
        [with_field(m, **SILENT) if m["name"] == "cp-3" else m for m in labelled("cp-1", "cp-2", "cp-3")],
        "cp-3",
        "member cp-3 did not answer: no answer",
    ),
    (
        "a member that answered with an error gives the error",
        three(),
        [with_field(m, error="etcdserver: no leader") if m["name"] == "cp-2" else m for m in labelled("cp-1", "cp-2", "cp-3")],
        "cp-2",
        "member cp-2 answered with an error: etcdserver: no leader",
    ),
    (
        "a learner is not promoted yet",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_2={"learner": True, "seen": []}),
        "cp-2",
        "member cp-2 is a learner, not promoted yet",
    ),
    (
        "a member list differing from the first one seen shows both lists",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_3={"seen": ["id-cp-3", "id-x"]}),
        "cp-3",
        "member cp-3 reports members [id-cp-3, id-x], but cp-1 reports [id-cp-1, id-cp-2, id-cp-3]",
    ),
    (
        "a member missing from its own list gives its id",
        [machine("cp-1")],
        labelled("cp-1", cp_1={"seen": ["id-x"]}),
        "cp-1",
        "member cp-1 does not list itself (id-cp-1) among its members",
    ),
    (
        "alarms are listed",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_2={"alarms": ["NOSPACE", "CORRUPT"]}),
        "cp-2",
        "member cp-2 has alarms: NOSPACE, CORRUPT",
    ),
    (
        "another cluster id names both clusters",
        three(),
        [with_field(m, cluster_id=CLUSTER_IDS[m["name"]]) for m in labelled("cp-1", "cp-2", "cp-3")],
        "cp-3",
        "member cp-3 belongs to cluster c2, but cp-1 belongs to cluster c1",
    ),
]


@pytest.mark.parametrize("machines,members,name,reason", [c[1:] for c in REASONS], ids=[c[0] for c in REASONS])
def test_the_reason_a_machine_member_is_not_healthy(machines, members, name, reason):
    assert health(machines, members)["members_by_machine"][name]["reason"] == reason


def test_a_machine_member_found_healthy_has_status_true_and_no_reason():
    assert health(three(), labelled("cp-1", "cp-2", "cp-3"))["members_by_machine"] == {
        n: {"status": "true", "reason": ""} for n in ("cp-1", "cp-2", "cp-3")
    }


# (id, machines, members, the exact problems, in order)
PROBLEMS = [
    (
        "a missing member is counted",
        three(),
        labelled("cp-1", "cp-2"),
        ["etcd has 2 members but there are 3 control plane machines"],
    ),
    (
        "a stray is named with its id",
        three(),
        labelled("cp-1", "cp-2", "cp-3", "old-cp"),
        ["etcd has 4 members but there are 3 control plane machines", "member old-cp (id-old-cp) belongs to no machine"],
    ),
    (
        "a learner, a silent member and an erring member are each named",
        three() + [machine("cp-4")],
        [
            m if m["name"] == "cp-1" else with_field(
                m, **{"cp-2": {"learner": True, "member_ids_seen": []}, "cp-3": SILENT, "cp-4": {"error": "raft: stopped"}}[m["name"]])
            for m in labelled("cp-1", "cp-2", "cp-3", "cp-4")
        ],
        [
            "member cp-2 is a learner, not promoted yet",
            "member cp-3 did not answer: no answer",
            "member cp-4 answered with an error: raft: stopped",
        ],
    ),
    (
        "a member that does not answer is named with the error met",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_2={"responsive": False}),
        ["member cp-2 did not answer: no answer within 2.0s"],
    ),
    (
        "members disagreeing on the member list show what each sees",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_2={"seen": ["id-cp-2", "id-x"]}),
        [
            "members disagree on the member list: cp-1 sees [id-cp-1, id-cp-2, id-cp-3]; cp-2 sees [id-cp-2, id-x]; "
            "cp-3 sees [id-cp-1, id-cp-2, id-cp-3]"
        ],
    ),
    (
        "members of two clusters show the cluster of each",
        three(),
        [with_field(m, cluster_id=CLUSTER_IDS[m["name"]]) for m in labelled("cp-1", "cp-2", "cp-3")],
        ["members belong to different clusters: cp-1 in c1; cp-2 in c1; cp-3 in c2"],
    ),
    (
        "alarms are listed per member",
        three(),
        labelled("cp-1", "cp-2", "cp-3", cp_3={"alarms": ["NOSPACE", "CORRUPT"]}),
        ["member cp-3 has alarms: NOSPACE, CORRUPT"],
    ),
    (
        "with nobody answering only that is said, with what each endpoint met",
        three(),
        labelled("cp-1", "cp-2", cp_2={"responsive": False}, cp_1={"responsive": False}),
        ["no etcd endpoint answered (cp-1: no answer within 2.0s; cp-2: no answer within 2.0s)"],
    ),
]


@pytest.mark.parametrize("machines,members,problems", [c[1:] for c in PROBLEMS], ids=[c[0] for c in PROBLEMS])
def test_the_exact_preflight_problems(machines, members, problems):
    assert health(machines, members)["problems"] == problems


def test_a_member_without_a_name_is_named_by_its_id_then_its_client_urls():
    members = [
        member("cp-1", responsive=False),
        with_field(member("x", member_id="id-x", responsive=False), name="", error=None),
        with_field(member("y", responsive=False), name="", id="", client_urls=["https://a:2379", "https://b:2379"], error="refused"),
        with_field(member("z", responsive=False), name="", id="", client_urls=[]),
    ]
    assert nothing_answered(members) == (
        "no etcd endpoint answered (cp-1: no answer within 2.0s; id-x: no answer; https://a:2379, https://b:2379: refused; "
        "?: no answer within 2.0s)"
    )


def test_nothing_answered_with_no_endpoint_tried_says_only_that():
    assert nothing_answered([]) == "no etcd endpoint answered"


# (id, members, membership confirmed)
CONFIRMED = [
    ("a healthy voter with its member list confirms it", [member("a")], True),
    ("a learner alone does not confirm it", [member("a", learner=True)], False),
    ("a voter that answered with an error does not confirm it", [with_field(member("a"), error="etcdserver: no leader")], False),
    ("a voter that reported no member list does not confirm it", [member("a", seen=[])], False),
    ("a voter that did not answer does not confirm it", [member("a", responsive=False, seen=["x"])], False),
    ("one healthy voter among silent ones confirms it", [member("a", responsive=False), member("b")], True),
    ("no member confirms nothing", [], False),
]


@pytest.mark.parametrize("members,confirmed", [c[1:] for c in CONFIRMED], ids=[c[0] for c in CONFIRMED])
def test_membership_is_confirmed_only_by_a_healthy_voter_that_reported_its_list(members, confirmed):
    assert membership_confirmed(etcd(*members)) is confirmed


def test_no_etcd_section_confirms_nothing():
    assert membership_confirmed(None) is False


def test_change_verdict_gives_the_arithmetic_of_a_removal():
    section = etcd(member("a"), member("b"), member("c"))
    assert change_verdict(section, remove=[mid("a")]) == {
        "ok": True,
        "voters_before": 3,
        "healthy_before": 3,
        "voters_after": 2,
        "healthy_after": 2,
        "quorum_after": 2,
        "failures_tolerated_after": 0,
        "reasons": [],
    }


def test_a_waiting_learner_does_not_block_removing_a_voter():
    section = etcd(member("a"), member("b"), member("c"), member("d", learner=True))
    verdict = change_verdict(section, remove=[mid("a")])
    assert (verdict["ok"], verdict["reasons"]) == (True, [])


ALARMED = [("a", {"alarms": ["NOSPACE"]}), ("b", {"alarms": ["CORRUPT", "NOSPACE"]}), ("c", DOWN), ("d", {})]
ALARM_REASON = "etcd has active alarms (CORRUPT, NOSPACE): clear them before changing the membership"

# (id, members as (name, overrides), change keyword arguments with names for ids, the exact reasons)
CHANGE_REASONS = [
    ("removing a silent member is how one recovers from an alarm, so it is allowed", ALARMED, dict(remove=["c"]), []),
    ("removing a member that answers is refused while an alarm is active", ALARMED, dict(remove=["a"]), [ALARM_REASON]),
    (
        "removing a silent member together with another change is refused while an alarm is active",
        ALARMED,
        dict(remove=["c"], add_learners=1),
        [ALARM_REASON],
    ),
    (
        "removing a silent member and handing over leadership is refused while an alarm is active",
        ALARMED,
        dict(remove=["c"], lead_to="b"),
        [ALARM_REASON],
    ),
    (
        "promoting a learner that does not answer says to start it",
        [("a", {}), ("b", {}), ("c", {}), ("d", dict(LEARNER, responsive=False))],
        dict(promote=["d"]),
        ["learner d does not answer: start it before promoting it"],
    ),
    (
        "promoting a voter names it",
        [("a", {}), ("b", {}), ("c", {})],
        dict(promote=["b"]),
        ["member b is not a learner, there is nothing to promote"],
    ),
    (
        "leadership to a member that is not there names the id asked for",
        [("a", {}), ("b", {}), ("c", {})],
        dict(lead_to="gone"),
        ["member %s is not in the member list" % mid("gone")],
    ),
    (
        "leadership to a learner says who can lead",
        [("a", {}), ("b", {}), ("c", {}), ("d", LEARNER)],
        dict(lead_to="d"),
        ["member d cannot lead: only a healthy voting member can"],
    ),
]


@pytest.mark.parametrize("members,change,reasons", [c[1:] for c in CHANGE_REASONS], ids=[c[0] for c in CHANGE_REASONS])
def test_the_exact_reasons_of_a_change_verdict(members, change, reasons):
    section = etcd(*[with_field(member(n), **overrides) for n, overrides in members])
    change = {k: ([mid(x) for x in v] if isinstance(v, list) else mid(v) if k == "lead_to" else v) for k, v in change.items()}
    verdict = change_verdict(section, **change)
    assert (verdict["ok"], verdict["reasons"]) == (not reasons, reasons)


def report(name, answered=True, **fields):
    """An etcd_client.endpoint_report of the member `name` (None: an endpoint that is not a member)."""
    out = {"url": "https://%s:2379" % name, "given": True, "answered": answered, "member": name, "error": None if answered else "refused",
           "seconds": 0.01, "raft_applied_index": None, "db_size_in_use": None, "storage_version": None, "cluster_version": None}
    out.update(fields)
    return out


def test_summary_tells_an_operator_leader_quorum_learners_alarms_versions_and_each_member():
    members = [
        with_field(member("cp-2", alarms=["NOSPACE"]), version="3.6.8"),
        with_field(member("cp-1", leader=True, alarms=["CORRUPT", "NOSPACE"]), db_size=20480, version="3.6.8"),
        with_field(member("cp-3"), responsive=False, error=None),
        with_field(member("cp-4"), error="etcdserver: no leader"),
        with_field(member("x", member_id="id-joining", learner=True), name=""),
    ]
    endpoints = [
        report(None, cluster_version="3.4.0", storage_version="3.4.0"),
        report("cp-3", answered=False, seconds=2.0, cluster_version="3.4.0"),
        report("cp-1", seconds=0.011, raft_applied_index=1234, db_size_in_use=16384, cluster_version="3.6.0", storage_version="3.6.0"),
        report("cp-1", seconds=0.5, raft_applied_index=1, cluster_version="3.5.0"),
        report("id-joining", seconds=0.02, raft_applied_index=1200),
    ]
    no_report = {"answer_seconds": None, "raft_applied_index": None, "db_size_in_use": None}

    def entry(name, mid_, healthy, reason, leader=False, learner=False, db_size=None, version=None, **reported):
        return dict(no_report, name=name, id=mid_, healthy=healthy, reason=reason, leader=leader, learner=learner, db_size=db_size,
                    version=version, **reported)

    assert summary(etcd(*members), endpoints) == {
        "answered": True,
        "membership_confirmed": True,
        "leader": "cp-1",
        "quorum": False,
        "voters": 4,
        "healthy_voters": 2,
        "quorum_size": 3,
        "failures_tolerated": 0,
        "learners": ["id-joining"],
        "alarms": ["CORRUPT", "NOSPACE"],
        "cluster_version": "3.6.0",
        "storage_version": "3.6.0",
        "members": [
            entry("cp-2", mid("cp-2"), True, None, version="3.6.8"),
            entry("cp-1", mid("cp-1"), True, None, leader=True, db_size=20480, version="3.6.8",
                  answer_seconds=0.011, raft_applied_index=1234, db_size_in_use=16384),
            entry("cp-3", mid("cp-3"), False, "no answer"),
            entry("cp-4", mid("cp-4"), False, "etcdserver: no leader"),
            entry("", "id-joining", True, None, learner=True, answer_seconds=0.02, raft_applied_index=1200),
        ],
    }


# (id, members, (quorum, voters, healthy voters, quorum size, failures tolerated))
QUORUM = [
    ("three healthy voters tolerate one failure", [member("a"), member("b"), member("c")], (True, 3, 3, 2, 1)),
    ("two healthy voters of three still have quorum", [member("a"), member("b"), member("c", responsive=False)], (True, 3, 2, 2, 0)),
    ("one healthy voter of three has lost quorum", [member("a"), member("b", responsive=False), member("c", responsive=False)],
     (False, 3, 1, 2, 0)),
    ("a learner is no voter", [member("a"), member("b"), member("c", learner=True)], (True, 2, 2, 2, 0)),
    ("with no voter answering nothing is concluded", [member("a", responsive=False), member("b", learner=True)], (None,) * 5),
    ("with no member nothing is concluded", [], (None,) * 5),
]


@pytest.mark.parametrize("members,expected", [c[1:] for c in QUORUM], ids=[c[0] for c in QUORUM])
def test_summary_quorum_counts_only_voters_and_only_when_one_answered(members, expected):
    result = summary(etcd(*members))
    keys = ("quorum", "voters", "healthy_voters", "quorum_size", "failures_tolerated")
    assert tuple(result[k] for k in keys) == expected


def test_summary_names_no_leader_when_the_leader_does_not_answer():
    result = summary(etcd(member("a", leader=True, responsive=False), member("b"), member("c")))
    assert result["leader"] is None


def test_summary_of_no_etcd_section_says_nothing_answered():
    result = summary(None)
    assert (result["answered"], result["membership_confirmed"], result["quorum"], result["members"]) == (False, False, None, [])
    assert (result["cluster_version"], result["storage_version"], result["learners"], result["alarms"]) == (None, None, [], [])
