# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who may take, keep and release the cluster lock."""

from datetime import datetime, timezone

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock

NOW = datetime(2026, 11, 26, 12, 0, 0, tzinfo=timezone.utc)


def lease(holder, renewed="2026-11-26T11:55:00Z", duration=900, action="scale", acquired="2026-11-26T11:50:00.123456Z"):
    return {"metadata": {"annotations": {cluster_lock.ACTION_ANNOTATION: action}},
            "spec": {"holderIdentity": holder, "renewTime": renewed, "acquireTime": acquired,
                     "leaseDurationSeconds": duration}}


@pytest.mark.parametrize(
    "current,decision,words",
    [
        (None, cluster_lock.TAKE, "free"),
        (lease(""), cluster_lock.TAKE, "free"),
        (lease("me"), cluster_lock.RENEW, "this run holds"),
        (lease("me", renewed="2026-11-26T10:00:00Z"), cluster_lock.RENEW, "this run holds"),
        (lease("awx job 7", renewed="2026-11-26T11:44:59Z"), cluster_lock.TAKE_OVER, "held by awx job 7 (scale, since"),
        (lease("awx job 7", renewed="2026-11-26T11:45:00Z"), cluster_lock.TAKE_OVER, "has expired"),
        (lease("awx job 7", renewed="2026-11-26T11:45:01Z"), cluster_lock.REFUSE,
         "locked by awx job 7, running scale since 2026-11-26T11:50:00.123456Z; the lock expires in 1 s"),
        (lease("awx job 7", renewed=None, acquired=None), cluster_lock.TAKE_OVER, "an unknown time"),
    ],
    ids=["no lease", "a lease nobody holds", "mine", "mine, expired", "another's, expired a second ago",
         "another's, expiring now", "another's, a second left", "another's with no times"],
)
def test_acquire(current, decision, words):
    got, reason = cluster_lock.decide_acquire(current, "me", NOW)
    assert got == decision and words in reason, reason


def test_release_only_ones_own_lock():
    assert cluster_lock.decide_release(lease("me"), "me")[0] == cluster_lock.RELEASE
    assert cluster_lock.decide_release(lease("you"), "me") == (cluster_lock.LEAVE, "the lock is held by you, not by this run: left alone")
    assert cluster_lock.decide_release(None, "me")[0] == cluster_lock.LEAVE


def test_holder_of_says_when_it_expires():
    assert cluster_lock.holder_of(lease("you")) == {"holder": "you", "action": "scale", "since": "2026-11-26T11:50:00.123456Z",
                                                    "expires": "2026-11-26T12:10:00Z"}
    assert cluster_lock.holder_of(None) is None


MINE = cluster_lock.run_holder("alice", "laptop", 4242, "3f9a0c1d2e4b")


def test_a_run_is_named_by_user_host_process_and_controller():
    assert MINE == "alice@laptop pid 4242 controller 3f9a0c1d2e4b"
    assert cluster_lock.run_of(MINE) == {"who": "alice@laptop", "pid": 4242, "controller": "3f9a0c1d2e4b"}
    assert cluster_lock.run_holder("alice", "laptop", 4242, None) == "alice@laptop pid 4242"
    for other in ("alice@laptop pid 4242", "awx-kubeadm-control-plane-scale", "alice@laptop pid 0 controller 3f9a0c1d2e4b", "", None):
        assert cluster_lock.run_of(other) is None


@pytest.mark.parametrize(
    "current,expected",
    [
        ("alice@laptop pid 777 controller 3f9a0c1d2e4b", 777),
        (MINE, None),
        ("alice@laptop pid 777 controller 000000000000", None),
        ("bob@laptop pid 777 controller 3f9a0c1d2e4b", None),
        ("alice@laptop", None),
    ],
    ids=["another run of this controller", "this run", "another controller of the same name", "another user", "a fixed name"],
)
def test_same_controller(current, expected):
    theirs = cluster_lock.same_controller(current, MINE)
    assert (theirs and theirs["pid"]) == expected


@pytest.mark.parametrize(
    "current,running,decision,words",
    [
        ("alice@laptop pid 777 controller 3f9a0c1d2e4b", False, cluster_lock.TAKE_OVER,
         "was left by a run of this controller that no longer runs"),
        ("alice@laptop pid 777 controller 3f9a0c1d2e4b", True, cluster_lock.REFUSE,
         "locked by alice@laptop pid 777 controller 3f9a0c1d2e4b, running scale since 2026-11-26T11:50:00.123456Z; the lock"
         " expires in 600 s unless renewed; it is another run of this controller, and its process (pid 777) still runs"),
        ("alice@laptop pid 777 controller 3f9a0c1d2e4b", None, cluster_lock.REFUSE, "expires in 600 s unless renewed"),
        # the process is looked for only on the holder's own controller: an answer about another is not trusted
        ("alice@laptop pid 777 controller 000000000000", False, cluster_lock.REFUSE, "expires in 600 s unless renewed"),
        ("alice@laptop", False, cluster_lock.REFUSE, "expires in 600 s unless renewed"),
        (MINE, True, cluster_lock.RENEW, "this run holds"),
    ],
    ids=["another run of this controller, gone", "another run of this controller, running", "not known whether it runs",
         "a run of another controller", "a fixed name", "this run"],
)
def test_acquire_from_another_run_of_this_controller(current, running, decision, words):
    got, reason = cluster_lock.decide_acquire(lease(current), MINE, NOW, running)
    assert got == decision and words in reason, reason


@pytest.mark.parametrize(
    "current,decision,words",
    [
        (lease("me"), cluster_lock.RENEW, "this run holds"),
        (lease("me", renewed="2026-11-26T10:00:00Z"), cluster_lock.RENEW, "this run holds"),
        (None, cluster_lock.REFUSE, "it was released, and nobody holds it now"),
        (lease(""), cluster_lock.REFUSE, "it was released"),
        (lease("awx job 7", action="delete"), cluster_lock.REFUSE,
         "this run no longer holds the cluster lock: awx job 7 holds it, running delete since 2026-11-26T11:50:00.123456Z"),
        (lease("awx job 7", renewed="2026-11-26T10:00:00Z"), cluster_lock.REFUSE, "awx job 7 holds it"),
    ],
    ids=["mine", "mine, expired and taken by nobody since", "released", "a lease nobody holds", "taken by another run",
         "taken by another run, expired since"],
)
def test_a_run_acts_only_while_the_lock_still_names_it(current, decision, words):
    got, reason = cluster_lock.decide_hold(current, "me")
    assert got == decision and words in reason, reason


def test_the_check_before_a_membership_change_asks_again_an_api_server_that_did_not_answer(monkeypatch):
    # right after a member's removal the load balancer may answer 504 from that machine's API server for a while
    from ansible_collections.kubeadm.control_plane.plugins.module_utils import lock_lease

    answers = [lock_lease.LockFailed("cannot reach the lock: 504"), lock_lease.LockFailed("cannot reach the lock: 504"),
               {"decision": cluster_lock.RENEW}]
    asked = []

    def apply(*args):
        asked.append(args[3])
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(lock_lease, "apply", apply)
    monkeypatch.setattr(lock_lease.time, "sleep", lambda seconds: None)
    assert lock_lease.hold("admin.conf", "me", 900, 5, False)["decision"] == cluster_lock.RENEW
    assert asked == ["held", "held", "held"]
    # a refusal is final at once
    answers[:] = [lock_lease.LockFailed("this run no longer holds the cluster lock", refused=True), {"decision": cluster_lock.RENEW}]
    with pytest.raises(lock_lease.LockFailed, match="no longer holds"):
        lock_lease.hold("admin.conf", "me", 900, 5, False)

    # an API server that never answers fails once the patience is spent
    def never_answers(*_args):
        raise lock_lease.LockFailed("cannot reach the lock")

    monkeypatch.setattr(lock_lease, "apply", never_answers)
    with pytest.raises(lock_lease.LockFailed, match="cannot reach"):
        lock_lease.hold("admin.conf", "me", 900, 5, False, patience=0.5)


def test_the_decisions_and_the_action_annotation_are_named_as_the_module_reports_them():
    assert (cluster_lock.TAKE, cluster_lock.RENEW, cluster_lock.TAKE_OVER, cluster_lock.REFUSE, cluster_lock.RELEASE,
            cluster_lock.LEAVE) == ("take", "renew", "take_over", "refuse", "release", "leave")
    written = {"metadata": {"annotations": {"control-plane.kubeadm.io/action": "upgrade"}},
               "spec": {"holderIdentity": "you", "renewTime": "2026-11-26T11:55:00Z", "leaseDurationSeconds": 60}}
    assert cluster_lock.holder_of(written)["action"] == "upgrade"


RULE_HOLDER = ("must name this run for the cluster lock (leave it unset for this controller and process, or set a fixed name such as an "
               "AWX template's)")
RULE_DURATION = "must be a whole number of seconds, at least 3 (the lock is renewed every third of it)"


@pytest.mark.parametrize(
    "holder,duration,expected",
    [
        (None, None, []),
        ("awx-kubeadm-control-plane-scale", 900, []),
        ("", None, [{"path": "flow_holder", "rule": RULE_HOLDER, "value": ""}]),
        ("   ", None, [{"path": "flow_holder", "rule": RULE_HOLDER, "value": "   "}]),
        (None, 3, []),
        (None, 2, [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": 2}]),
        (None, "900", []),
        (None, "3", []),
        (None, "2", [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": "2"}]),
        (None, "ten", [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": "ten"}]),
        (None, "-5", [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": "-5"}]),
        (None, "9\u00b2", [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": "9\u00b2"}]),
        (None, True, [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": True}]),
        (None, 900.0, [{"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": 900.0}]),
        ("", 0, [{"path": "flow_holder", "rule": RULE_HOLDER, "value": ""},
                 {"path": "kcp_lock_duration", "rule": RULE_DURATION, "value": 0}]),
    ],
    ids=["neither variable set", "a fixed name and the default duration", "an empty name is refused", "a blank name is refused",
         "the shortest duration, three seconds, is accepted", "two seconds is too short", "the digits an inventory file gives",
         "three seconds as digits is accepted", "two seconds as digits is too short", "a word is not a duration",
         "a negative number as text is not a duration", "a superscript digit is no digit an inventory gives",
         "a boolean is not a duration", "a float is not a whole number of seconds",
         "both wrong give both errors"],
)
def test_the_lock_a_flow_is_asked_to_take_is_checked_at_its_inventory_variables(holder, duration, expected):
    assert cluster_lock.run_lock_errors(holder, duration) == expected


@pytest.mark.parametrize(
    "current,running,expected",
    [
        (None, None, (cluster_lock.TAKE, "the lock is free")),
        (lease("me"), None, (cluster_lock.RENEW, "this run holds the lock")),
        (lease("awx job 7", renewed="2026-11-26T11:45:00Z"), None,
         (cluster_lock.TAKE_OVER, "the lock held by awx job 7 (scale, since 2026-11-26T11:50:00.123456Z) has expired: that run stopped"
          " without releasing it")),
        (lease("awx job 7", renewed="2026-11-26T11:45:00Z", action="", acquired=None), None,
         (cluster_lock.TAKE_OVER, "the lock held by awx job 7 (no action recorded, since an unknown time) has expired: that run stopped"
          " without releasing it")),
        (lease("alice@laptop pid 777 controller 3f9a0c1d2e4b"), False,
         (cluster_lock.TAKE_OVER, "the lock held by alice@laptop pid 777 controller 3f9a0c1d2e4b (scale, since 2026-11-26T11:50:00.123456Z)"
          " was left by a run of this controller that no longer runs")),
        (lease("alice@laptop pid 777 controller 3f9a0c1d2e4b", action="", acquired=None), False,
         (cluster_lock.TAKE_OVER, "the lock held by alice@laptop pid 777 controller 3f9a0c1d2e4b (no action recorded, since an unknown"
          " time) was left by a run of this controller that no longer runs")),
        (lease("awx job 7", action="", acquired=None), None,
         (cluster_lock.REFUSE, "the control plane is locked by awx job 7, running no action recorded since an unknown time; the lock"
          " expires in 600 s unless renewed")),
        (lease("alice@laptop pid 777 controller 3f9a0c1d2e4b"), None,
         (cluster_lock.REFUSE, "the control plane is locked by alice@laptop pid 777 controller 3f9a0c1d2e4b, running scale since"
          " 2026-11-26T11:50:00.123456Z; the lock expires in 600 s unless renewed")),
        (lease("awx job 7"), True,
         (cluster_lock.REFUSE, "the control plane is locked by awx job 7, running scale since 2026-11-26T11:50:00.123456Z; the lock"
          " expires in 600 s unless renewed")),
    ],
    ids=["a free lock is taken", "this run's lock is renewed", "an expired lock is taken over, naming its holder and action",
         "an expired lock with no action or time recorded says so", "a gone run of this controller is taken over",
         "a gone run of this controller with nothing recorded says so", "a refusal with nothing recorded says so",
         "a refusal says nothing of a process not looked for", "a running process of a fixed name is not another run of this controller"],
)
def test_the_reason_for_acquiring_names_the_holder_what_it_runs_and_since_when(current, running, expected):
    assert cluster_lock.decide_acquire(current, MINE if running is not None else "me", NOW, running) == expected


@pytest.mark.parametrize(
    "acquired,duration,decision,expires",
    [
        ("2026-11-26T11:50:00Z", 900, cluster_lock.REFUSE, "2026-11-26T12:05:00Z"),
        ("2026-11-26T11:45:00Z", 900, cluster_lock.TAKE_OVER, "2026-11-26T12:00:00Z"),
        ("2026-11-26T12:00:00Z", None, cluster_lock.TAKE_OVER, "2026-11-26T12:00:00Z"),
    ],
    ids=["a lock never renewed expires a duration after it was taken", "a lock never renewed expiring now is taken over",
         "a lock with no duration expires when it was taken"],
)
def test_a_lock_never_renewed_expires_from_when_it_was_taken(acquired, duration, decision, expires):
    current = lease("awx job 7", renewed=None, duration=duration, acquired=acquired)
    assert cluster_lock.decide_acquire(current, "me", NOW)[0] == decision
    assert cluster_lock.holder_of(current)["expires"] == expires


@pytest.mark.parametrize(
    "current,expected",
    [
        (lease("me"), (cluster_lock.RENEW, "this run holds the lock")),
        (None, (cluster_lock.REFUSE, "this run no longer holds the cluster lock: it was released, and nobody holds it now")),
        (lease("awx job 7", action="", acquired=None),
         (cluster_lock.REFUSE, "this run no longer holds the cluster lock: awx job 7 holds it, running no action recorded since an unknown"
          " time")),
    ],
    ids=["this run's lock is renewed", "a released lock is a refusal", "another's lock with nothing recorded says so"],
)
def test_the_reason_for_holding_names_who_holds_the_lock_now(current, expected):
    assert cluster_lock.decide_hold(current, "me") == expected


@pytest.mark.parametrize(
    "current,expected",
    [
        (lease("me"), (cluster_lock.RELEASE, "this run holds the lock")),
        (None, (cluster_lock.LEAVE, "the lock is free")),
        (lease(""), (cluster_lock.LEAVE, "the lock is free")),
    ],
    ids=["this run's lock is released", "no lease is left alone", "a lease nobody holds is left alone"],
)
def test_the_reason_for_releasing(current, expected):
    assert cluster_lock.decide_release(current, "me") == expected
