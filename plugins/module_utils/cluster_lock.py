# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a run may take, keep or release the cluster lock (docs/flows.md "The cluster lock"). Pure, no I/O.

The lock is a Lease, ``kube-system/control-plane-kubeadm-io``: ``holderIdentity`` names the run, ``renewTime``
plus ``leaseDurationSeconds`` is when it expires, and the annotation ``control-plane.kubeadm.io/action`` says
what the run does. Two runs (AWX and a laptop, or two on one laptop) never act at once: a lock held by another run
that has not expired is a refusal naming that run; an expired one was left by a run that died and is taken over.

A flow names its run ``<user>@<host> pid <pid> controller <id>`` (:func:`run_holder`): the process of the run on
that controller, and the controller's own id. A lock that another run of the same controller left is taken over at
once when that run's process is gone (a run killed and started again), and refused while it runs.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import error, whole_number

ACTION_ANNOTATION = "control-plane.kubeadm.io/action"
TAKE, RENEW, TAKE_OVER, REFUSE, RELEASE, LEAVE = "take", "renew", "take_over", "refuse", "release", "leave"
# How often a held lock is renewed while its run acts: a third of its duration, so that two renewals in a row may
# fail (an API server restarting, a load balancer failing over) before it expires.
RENEWALS_PER_DURATION = 3
# The shortest duration a lock may be taken for: renewed every third of it, at least once a second.
MIN_DURATION = RENEWALS_PER_DURATION
_RUN = re.compile(r"^(?P<who>\S+) pid (?P<pid>[1-9][0-9]*) controller (?P<controller>[0-9a-f]{12})$")


def run_lock_errors(holder, duration):
    """The errors (validation.error) of the lock a flow is asked to take, each at the inventory variable that gives
    it: ``holder`` (flow_holder) and ``duration`` (kcp_lock_duration, an integer or the digits an inventory file
    gives), None where the variable is not set. An empty name would act without the lock, beside any other run."""
    errors = []
    if holder is not None and not str(holder).strip():
        rule = "must name this run for the cluster lock (leave it unset for this controller and process, or set a fixed " \
            "name such as an AWX template's)"
        errors.append(error("flow_holder", rule, holder))
    if duration is not None:
        seconds = whole_number(duration)
        if seconds is None or seconds < MIN_DURATION:
            rule = "must be a whole number of seconds, at least %d (the lock is renewed every third of it)" % MIN_DURATION
            errors.append(error("kcp_lock_duration", rule, duration))
    return errors


def run_holder(user, host, pid, controller):
    """The lock's name for the run ``pid`` of ``user`` on ``host``, the controller ``controller`` (None: an id could
    not be kept, and the run is named by user, host and process only)."""
    name = "%s@%s pid %d" % (user, host, pid)
    return "%s controller %s" % (name, controller) if controller else name


def run_of(holder):
    """{who, pid, controller} of a holder :func:`run_holder` named; None for any other name (a fixed one, say)."""
    found = _RUN.match(holder or "")
    return None if found is None else {"who": found.group("who"), "pid": int(found.group("pid")), "controller": found.group("controller")}


def same_controller(current, holder):
    """The run (as :func:`run_of` gives it) that holds the lock as ``current`` when it is another run of the
    controller and user that ``holder`` names; else None."""
    theirs, mine = run_of(current), run_of(holder)
    if theirs is None or mine is None or (theirs["who"], theirs["controller"]) != (mine["who"], mine["controller"]):
        return None
    return theirs if theirs["pid"] != mine["pid"] else None


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


def decide_acquire(lease, holder, now, holder_running=None):
    """(decision, reason) for a run named ``holder`` that wants the lock at ``now`` (an aware datetime).
    ``holder_running``: whether the process of the run that holds it runs, when that is another run of this
    controller (:func:`same_controller`) and the process could be looked for; else None."""
    current = holder_of(lease)
    if current is None or not current["holder"]:
        return TAKE, "the lock is free"
    if current["holder"] == holder:
        return RENEW, "this run holds the lock"
    theirs = same_controller(current["holder"], holder)
    if holder_running is False and theirs:
        return TAKE_OVER, "the lock held by %s (%s, since %s) was left by a run of this controller that no longer runs" % (
            current["holder"], current["action"] or "no action recorded", current["since"] or "an unknown time")
    expires = _expiry(lease)
    if expires is None or expires <= now.timestamp():
        return TAKE_OVER, "the lock held by %s (%s, since %s) has expired: that run stopped without releasing it" % (
            current["holder"], current["action"] or "no action recorded", current["since"] or "an unknown time")
    reason = "the control plane is locked by %s, running %s since %s; the lock expires in %d s unless renewed" % (
        current["holder"], current["action"] or "no action recorded", current["since"] or "an unknown time",
        int(expires - now.timestamp()))
    if holder_running and theirs:
        reason += "; it is another run of this controller, and its process (pid %d) still runs" % theirs["pid"]
    return REFUSE, reason


def decide_hold(lease, holder):
    """(decision, reason) for a run named ``holder`` that is about to act, or keeps the lock alive while it acts:
    RENEW only while the lock still names this run. A lock that expired and still names it was taken by nobody
    since, so nobody else acted: it is renewed. A lock released, or held by another run (taken over after it
    expired), is a refusal naming that run: this run must act no further."""
    current = holder_of(lease)
    if current is not None and current["holder"] == holder:
        return RENEW, "this run holds the lock"
    if current is None or not current["holder"]:
        return REFUSE, "this run no longer holds the cluster lock: it was released, and nobody holds it now"
    return REFUSE, "this run no longer holds the cluster lock: %s holds it, running %s since %s" % (
        current["holder"], current["action"] or "no action recorded", current["since"] or "an unknown time")


def decide_release(lease, holder):
    """(decision, reason) for a run named ``holder`` that is done: it releases only its own lock."""
    current = holder_of(lease)
    if current is None or not current["holder"]:
        return LEAVE, "the lock is free"
    if current["holder"] != holder:
        return LEAVE, "the lock is held by %s, not by this run: left alone" % current["holder"]
    return RELEASE, "this run holds the lock"
