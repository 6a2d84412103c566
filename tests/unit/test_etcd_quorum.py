# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The etcd quorum projection: a membership change is allowed only when a healthy majority survives it."""

import dataclasses

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import Member, project, project_join, quorum


def members(healthy, unhealthy=0, learners=0):
    """A member list: `healthy` healthy voters m0.., then `unhealthy` unhealthy voters, then learners."""
    out = [Member(id="m%d" % i, name="m%d" % i) for i in range(healthy)]
    out += [Member(id="u%d" % i, name="u%d" % i, healthy=False) for i in range(unhealthy)]
    out += [Member(id="l%d" % i, name="l%d" % i, learner=True) for i in range(learners)]
    return out


@pytest.mark.parametrize("voters,needed", [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)])
def test_quorum_is_a_strict_majority(voters, needed):
    assert quorum(voters) == needed


# docs/rules.md RM7: N members incl. the one removed -> how many *other* failures removal tolerates.
@pytest.mark.parametrize(
    "n,tolerated",
    [(1, None), (2, 0), (3, 0), (4, 1), (5, 1), (6, 2), (7, 2)],
    ids=str,
)
def test_removing_one_member_tolerates_the_kcp_table_of_other_failures(n, tolerated):
    if tolerated is None:
        verdict = project(members(1), remove=["m0"])
        assert not verdict.ok and "no voting member would remain" in verdict.reasons
        return
    # removing healthy m0: `tolerated` other members may be down, one more is too many
    ok = project(members(n - tolerated, unhealthy=tolerated), remove=["m0"])
    assert ok.ok, ok.reasons
    too_many = project(members(n - tolerated - 1, unhealthy=tolerated + 1), remove=["m0"])
    assert not too_many.ok


@pytest.mark.parametrize(
    "case,kwargs,ok",
    [
        ("adding a voter to a healthy 3-member cluster is safe", dict(m=members(3), add_voters=1), True),
        ("adding a voter to 3 members with one down is refused", dict(m=members(2, 1), add_voters=1), False),
        ("adding a learner with one member down is safe", dict(m=members(2, 1), add_learners=1), True),
        ("a second learner is refused", dict(m=members(3, learners=1), add_learners=1), False),
        ("removing a learner never costs quorum", dict(m=members(2, 1, learners=1), remove=["l0"]), True),
        ("promoting a healthy learner is safe", dict(m=members(3, learners=1), promote=["l0"]), True),
        ("promoting a voter is refused", dict(m=members(3), promote=["m0"]), False),
        ("no change is refused when quorum is already lost", dict(m=members(1, 2), remove=["u0"]), False),
        ("removing an unknown member is refused", dict(m=members(3), remove=["nope"]), False),
        ("removing a healthy member of 5 with one other down is safe", dict(m=members(4, 1), remove=["m0"]), True),
        ("removing by name works like removing by id", dict(m=members(3), remove=["m1"]), True),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_membership_changes(case, kwargs, ok):
    m = kwargs.pop("m")
    verdict = project(m, **kwargs)
    assert verdict.ok is ok, verdict.reasons
    assert bool(verdict.reasons) is not ok


def test_verdict_explains_its_arithmetic():
    v = project(members(2, 1), remove=["m0"]).as_dict()
    assert v == {
        "ok": False,
        "voters_before": 3,
        "healthy_before": 2,
        "voters_after": 2,
        "healthy_after": 1,
        "quorum_after": 2,
        "failures_tolerated_after": -1,
        "reasons": ["after the change 1 of 2 voting members would be healthy, 2 are needed for quorum"],
    }


def test_a_learner_is_not_a_voter_one_healthy_and_one_dead_voter_with_a_learner_have_no_quorum():
    verdict = project(members(1, unhealthy=1, learners=1), remove=["l0"])
    assert (verdict.ok, verdict.voters_before, verdict.healthy_before) == (False, 2, 1)
    assert verdict.reasons[0] == "etcd has no quorum now: 1 of 2 voting members healthy, 2 needed"


@pytest.mark.parametrize(
    "healthy_learner,ok,healthy_after",
    [(True, True, 2), (False, False, 1)],
    ids=["a promoted learner that is healthy counts as a healthy voter", "a promoted learner that is not healthy counts as a voter only"],
)
def test_how_a_promoted_learner_counts(healthy_learner, ok, healthy_after):
    m = members(1) + [Member(id="l0", name="l0", learner=True, healthy=healthy_learner)]
    verdict = project(m, promote=["l0"])
    assert (verdict.ok, verdict.voters_after, verdict.healthy_after, verdict.quorum_after) == (ok, 2, healthy_after, 2)


@pytest.mark.parametrize(
    "m,reason",
    [(members(3), "etcd admits one learner at a time and 2 would exist"),
     (members(3, learners=1), "etcd admits one learner at a time and 3 would exist")],
    ids=["two learners at once are refused", "two learners on top of one are refused"],
)
def test_adding_two_learners_at_once_is_refused(m, reason):
    verdict = project(m, add_learners=2)
    assert not verdict.ok and verdict.reasons == (reason,)


JOINS = [
    ("a single member takes a second voter the learner way", members(1), (True, 1, 2, 2, 2)),
    ("two healthy members take a third", members(2), (True, 2, 3, 3, 2)),
    ("three members with one down still take a learner that will vote", members(2, 1), (True, 3, 4, 3, 3)),
    ("a join waits while another learner has not been promoted", members(1, learners=1), (False, 1, 2, 2, 2)),
    ("no join without quorum now", members(1, 1), (False, 2, 3, 2, 2)),
]


@pytest.mark.parametrize("m,expected", [c[1:] for c in JOINS], ids=[c[0] for c in JOINS])
def test_a_kubeadm_join_is_projected_as_a_learner_promoted_once_caught_up(m, expected):
    verdict = project_join(m)
    assert (verdict.ok, verdict.voters_before, verdict.voters_after, verdict.healthy_after, verdict.quorum_after) == expected
    assert bool(verdict.reasons) is not verdict.ok


def test_a_join_refusal_names_each_reason_once():
    verdict = project_join(members(0, 1, learners=1))
    assert verdict.reasons.count("etcd has no quorum now: 0 of 1 voting members healthy, 1 needed") == 1
    assert "etcd admits one learner at a time and 2 would exist" in verdict.reasons


def test_a_projection_of_no_change_keeps_the_arithmetic_as_it_is():
    verdict = project(members(3))
    assert (verdict.ok, verdict.voters_after, verdict.healthy_after) == (True, 3, 3)


def test_a_member_is_found_by_its_id_even_when_its_name_differs():
    m = [Member(id="8e9e05c52164694d", name="cp-1"), Member(id="91bc3c398fb3c146", name="cp-2"), Member(id="fd422379fda50e48", name="cp-3")]
    verdict = project(m, remove=["8e9e05c52164694d"])
    assert (verdict.ok, verdict.voters_after) == (True, 2)


def test_removing_the_learner_makes_room_for_a_new_one():
    assert project(members(3, learners=1), remove=["l0"], add_learners=1).ok


def test_a_refused_promotion_names_a_nameless_member_by_its_id():
    verdict = project([Member(id="abc", name="")] + members(2), promote=["abc"])
    assert verdict.reasons == ("member abc is not a learner, there is nothing to promote",)


def test_a_projection_that_adds_nothing_keeps_the_quorum_it_has():
    verdict = project(members(3))
    assert verdict.ok and verdict.voters_after == 3 and verdict.healthy_after == 3


def test_removing_a_member_that_is_not_there_names_it():
    verdict = project(members(3), remove=["nope"])
    assert verdict.reasons == ("member nope is not in the member list",)


@pytest.mark.parametrize(
    "change",
    [dict(), dict(remove=["m0"]), dict(add_voters=1)],
    ids=["no change", "removing a voter", "adding a voter"],
)
def test_a_learner_waiting_for_promotion_blocks_only_another_learner(change):
    verdict = project(members(3, learners=1), **change)
    assert verdict.ok, verdict.reasons


@pytest.mark.parametrize(
    "value,field_name",
    [(Member(id="m0"), "healthy"), (project(members(3)), "ok")],
    ids=["a member is a value that cannot be changed", "a verdict is a value that cannot be changed"],
)
def test_members_and_verdicts_are_frozen(value, field_name):
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field_name, False)
