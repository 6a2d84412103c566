# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a run may take, keep or release the cluster lock (docs/flows.md "The cluster lock"). Pure, no I/O.

The lock is a Lease, ``kube-system/control-plane-kubeadm-io``: ``holderIdentity`` names the run, ``renewTime``
plus ``leaseDurationSeconds`` is when it expires, and the annotation ``control-plane.kubeadm.io/action`` says
what the run does. Two runs (AWX and a laptop) never act at once: a lock held by another run that has not
expired is a refusal naming that run; an expired one was left by a run that died and is taken over.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

ACTION_ANNOTATION = "control-plane.kubeadm.io/action"
TAKE, RENEW, TAKE_OVER, REFUSE, RELEASE, LEAVE = "take", "renew", "take_over", "refuse", "release", "leave"


def holder_of(lease):
    """{holder, action, since, expires (RFC 3339)} of a Lease as the API returns it (a dict); None for no lock."""
    if not lease:
        return None
    spec = lease.get("spec") or {}
    expires = _expiry(lease)
    return {
        "holder": spec.get("holderIdentity") or "",
        "action": ((lease.get("metadata") or {}).get("annotations") or {}).get(ACTION_ANNOTATION) or "",
        "since": spec.get("acquireTime"),
        "expires": None if expires is None else datetime.fromtimestamp(expires, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _expiry(lease):
    """Unix time the lock expires at: its last renewal (else its acquisition) plus its duration; None if neither."""
    spec = lease.get("spec") or {}
    renewed = spec.get("renewTime") or spec.get("acquireTime")
    return parse_time(renewed).timestamp() + (spec.get("leaseDurationSeconds") or 0) if renewed else None


def decide_acquire(lease, holder, now):
    """(decision, reason) for a run named ``holder`` that wants the lock at ``now`` (an aware datetime)."""
    current = holder_of(lease)
    if current is None or not current["holder"]:
        return TAKE, "the lock is free"
    if current["holder"] == holder:
        return RENEW, "this run holds the lock"
    expires = _expiry(lease)
    if expires is None or expires <= now.timestamp():
        return TAKE_OVER, "the lock held by %s (%s, since %s) has expired: that run stopped without releasing it" % (
            current["holder"], current["action"] or "no action recorded", current["since"] or "an unknown time")
    return REFUSE, "the control plane is locked by %s, running %s since %s; the lock expires in %d s unless renewed" % (
        current["holder"], current["action"] or "no action recorded", current["since"] or "an unknown time",
        int(expires - now.timestamp()))


def decide_release(lease, holder):
    """(decision, reason) for a run named ``holder`` that is done: it releases only its own lock."""
    current = holder_of(lease)
    if current is None or not current["holder"]:
        return LEAVE, "the lock is free"
    if current["holder"] != holder:
        return LEAVE, "the lock is held by %s, not by this run: left alone" % current["holder"]
    return RELEASE, "this run holds the lock"
