# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The etcd quorum projection: a membership change is allowed only when a healthy majority survives it."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import Member, project, quorum


def members(healthy, unhealthy=0, learners=0):
    """A member list: `healthy` healthy voters m0.., then `unhealthy` unhealthy voters, then learners."""
    out = [Member(id="m%d" % i, name="m%d" % i) for i in range(healthy)]
    out += [Member(id="u%d" % i, name="u%d" % i, healthy=False) for i in range(unhealthy)]
    out += [Member(id="l%d" % i, name="l%d" % i, learner=True) for i in range(learners)]
    return out


@pytest.mark.parametrize("voters,needed", [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)])
def test_quorum_is_a_strict_majority(voters, needed):
    assert quorum(voters) == needed


# kcp-rules.md RM7: N members incl. the one removed -> how many *other* failures removal tolerates.
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
