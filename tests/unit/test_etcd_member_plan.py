# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd_member's plan for removing a leader: the plan's leader_candidate, else the one leadership rule."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_membership import plan

from ansible_collections.kubeadm.control_plane.tests.unit.builders import member


def cluster():
    """cp-1 leads; cp-2 is ahead in the raft log, cp-3 behind."""
    members = [member("cp-1", leader=True), member("cp-2"), member("cp-3")]
    for m, index in zip(members, (100, 120, 90)):
        m["raft_index"] = index
    return members


def remove(members, candidate=None):
    return plan(members, "cp-1", None, "absent", True, False, candidate)[0]


def test_removing_the_leader_hands_leadership_to_the_plans_candidate_first():
    members = cluster()
    steps = remove(members, "cp-3")
    assert [(s.action, s.member_id) for s in steps] == [("move_leader", members[2]["id"]), ("remove", members[0]["id"])]
    assert steps[0].change == dict(remove=[members[0]["id"]], lead_to=members[2]["id"])


def test_without_a_candidate_the_leadership_rule_picks_the_heir():
    members = cluster()
    assert remove(members)[0].member_id == members[1]["id"]


def test_without_a_candidate_a_learner_never_inherits_the_leadership():
    members = cluster()
    members[1]["learner"] = True
    assert remove(members)[0].member_id == members[2]["id"]


@pytest.mark.parametrize(
    "candidate,message",
    [("cp-1", "leader_candidate: cp-1 is the member being removed"), ("cp-9", "leader_candidate: no member is named cp-9")],
    ids=["the leaving member cannot be its own heir", "an unknown candidate is refused before anything changes"],
)
def test_a_candidate_that_cannot_be_the_heir_is_refused(candidate, message):
    with pytest.raises(ValueError, match=message):
        remove(cluster(), candidate)


def test_a_member_that_does_not_lead_is_removed_without_a_hand_over():
    members = cluster()
    steps = plan(members, "cp-2", None, "absent", True, False, "cp-3")[0]
    assert [s.action for s in steps] == ["remove"]


def test_a_member_never_started_is_found_by_its_peer_urls_among_others_without_a_name():
    # what the plan gives for a member never started (EH11): an empty name and its peer URLs
    members = cluster() + [dict(member("x", learner=True), name=""), dict(member("y", learner=True), name="")]
    steps = plan(members, "", ["https://y:2380"], "absent", True, False)[0]
    assert [(s.action, s.member_id) for s in steps] == [("remove", members[4]["id"])]
    assert plan(members, "", ["https://z:2380"], "absent", True, False)[0] == []
