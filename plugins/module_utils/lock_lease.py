# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster lock's Lease (kube-system/control-plane-kubeadm-io) read and written through the Kubernetes API, as
``cluster_lock`` decides (docs/flows.md "The cluster lock"). I/O only. Shared by kcp_lock and kcp_observe."""

from __future__ import annotations

import copy
import time
from datetime import datetime, timezone

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, controller_run, kube_api, observation

IMPORT_ERROR = kube_api.IMPORT_ERROR

NAMESPACE = "kube-system"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NAMESPACE
LEASE = LEASES + "/" + observation.STATE_OBJECT
# How long a check that this run holds the lock asks again an API server that did not answer. Right after an etcd
# member is removed, the load balancer may still send the request to that machine's API server, whose etcd left
# (504), until its health check takes it out.
HOLD_PATIENCE = 60.0
# How many times a write that lost a race to another writer of the Lease is decided and tried again.
WRITE_ATTEMPTS = 5


class LockFailed(Exception):
    """The lock could not be taken, kept or released: another run holds it (``refused``), or the API server did
    not answer. ``fields``: what the failed result carries besides the message (the reason, the lock)."""

    def __init__(self, message, refused=False, **fields):
        super().__init__(message)
        self.refused = refused
        self.fields = fields


def check_arguments(holder, duration):
    """The problems of the lock's arguments, each naming the field."""
    problems = []
    if duration < 1:
        problems.append("duration: must be at least 1 second")
    if not holder.strip():
        problems.append("holder: must name this run")
    return problems


def read_lease(api, timeout):
    """The Lease as the API server answered it, or None when there is none."""
    return kube_api.read_optional(api, LEASE, timeout)


def _micro_time(moment):
    """A Lease's MicroTime: RFC 3339 with microseconds."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_lease(api, lease, holder, action, duration, now, taking, timeout):
    """Create the Lease, or replace it at the version read (a conflict: another run wrote it in between)."""
    spec = {"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": _micro_time(now)}
    if taking:
        spec["acquireTime"] = spec["renewTime"]
    elif lease is not None and (lease.get("spec") or {}).get("acquireTime"):
        spec["acquireTime"] = lease["spec"]["acquireTime"]
    if lease is None:
        metadata = {"name": observation.STATE_OBJECT, "namespace": NAMESPACE, "annotations": {cluster_lock.ACTION_ANNOTATION: action}}
        kube_api.request(api, "POST", LEASES, timeout,
                         body={"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec})
        return
    replaced = copy.deepcopy(lease)
    if taking:
        replaced["metadata"]["annotations"] = dict(replaced["metadata"].get("annotations") or {}, **{cluster_lock.ACTION_ANNOTATION: action})
    replaced["spec"] = spec
    kube_api.request(api, "PUT", LEASE, timeout, body=replaced)


def delete_lease(api, lease, timeout):
    """Delete the Lease at the version read (a conflict: another run wrote it in between)."""
    kube_api.request(api, "DELETE", LEASE, timeout, body={
        "apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"resourceVersion": lease["metadata"]["resourceVersion"]}})


def holder_running(current, holder):
    """Whether the process of the run that holds the lock (``current``, as cluster_lock.holder_of gives it) runs,
    when that is another run of this controller and this is that controller; else None (not known here)."""
    theirs = cluster_lock.same_controller(current["holder"], holder) if current else None
    if theirs is None or controller_run.controller_id() != theirs["controller"]:
        return None
    return controller_run.process_running(theirs["pid"])


def apply(kubeconfig, holder, action, state, duration, timeout, check_mode):
    """Take, renew or take over (``state`` present), renew only while this run holds it (held), or release
    (absent) the lock: the result ``{changed, decision, reason, lock, warning}`` (``warning`` set on a take-over);
    raises LockFailed. A write that loses a race (the Lease changed or went since it was read) reads the Lease again
    and decides again: most often the other writer was this run's own keeper, renewing at the same moment."""
    try:
        with kube_api.connected(kubeconfig) as api:
            for attempt in range(1, WRITE_ATTEMPTS + 1):
                try:
                    return _decide_and_write(api, holder, action, state, duration, timeout, check_mode)
                except kube_api.ClusterUnreadable as exc:
                    if not _lost_race(exc) or attempt == WRITE_ATTEMPTS:
                        raise
    except kube_api.ClusterUnreadable as exc:
        if _lost_race(exc):
            # not a refusal: who holds the lock is not known; a check asks again (hold), a keeper tries again
            raise LockFailed("the lock changed between each read and write of %d attempts; run again to see who holds "
                             "it: %s" % (WRITE_ATTEMPTS, exc))
        raise LockFailed("cannot reach the lock: %s" % exc)


def _lost_race(exc):
    """A write at a version that is no longer the Lease's (409), or of a Lease deleted since it was read (404)."""
    return exc.status in (404, 409)


def _decide_and_write(api, holder, action, state, duration, timeout, check_mode):
    """One read, decision and write of ``apply``."""
    now = datetime.now(timezone.utc)
    warning = None
    lease = read_lease(api, timeout)
    current = cluster_lock.holder_of(lease)
    if state == "absent":
        decision, reason = cluster_lock.decide_release(lease, holder)
        if decision == cluster_lock.RELEASE and not check_mode:
            delete_lease(api, lease, timeout)
    else:
        decision, reason = (cluster_lock.decide_acquire(lease, holder, now, holder_running(current, holder))
                            if state == "present" else cluster_lock.decide_hold(lease, holder))
        if decision == cluster_lock.REFUSE:
            raise LockFailed(reason, refused=True, reason=reason, lock=current)
        if state == "held":  # kept for the duration it was taken with
            duration = lease["spec"].get("leaseDurationSeconds") or duration
        if not check_mode:
            write_lease(api, lease, holder, action, duration, now, decision != cluster_lock.RENEW, timeout)
        if decision == cluster_lock.TAKE_OVER:
            warning = reason
    return {"changed": decision not in (cluster_lock.LEAVE,), "decision": decision, "reason": reason, "lock": current,
            "warning": warning}


def hold(kubeconfig, holder, duration, timeout, check_mode, patience=HOLD_PATIENCE):
    """``apply`` with ``state`` held, asked again every second for up to ``patience`` seconds while the API server
    does not answer; a refusal (the lock released or taken over) is final at once."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return apply(kubeconfig, holder, "", "held", duration, timeout, check_mode)
        except LockFailed as exc:
            if exc.refused or time.monotonic() + 1 >= deadline:
                raise
        time.sleep(1)
