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
