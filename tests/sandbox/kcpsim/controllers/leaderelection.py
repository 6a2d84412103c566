# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Leader election over a ``coordination.k8s.io/v1`` Lease in kube-system, as client-go's leaderelection does.

Rule (``lease_action``, pure): a Lease that is absent, has no holder, or whose ``renewTime +
leaseDurationSeconds`` has passed may be acquired; one held by us is renewed; one held by someone else within
its duration is left alone. Every write carries the resourceVersion read, so two candidates cannot both win.

The leader renews from the copy it last wrote, without a GET, while that copy is valid by its own clock; a GET
only when it has none, is not the leader, or that update failed (e.g. a conflict), as client-go's leaderelection.
The elector (adapter) tries every ``retry_period``; a leader that has not renewed within ``renew_deadline``
has lost the lease: ``run`` returns and the component exits, as the real ones do ("leaderelection lost"), so
the kubelet restarts it. On a clean stop the leader releases the lease (empty holder) for a fast hand-over.
"""

import datetime
import socket
import threading
import time
import uuid

from kcpsim import kubeclient
from kcpsim.apiserver import auth

API = "coordination.k8s.io/v1"
NAMESPACE = "kube-system"


def micro_time(moment):
    """A Lease MicroTime: RFC 3339 with microseconds."""
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_identity():
    """``<hostname>_<uuid>``, the real components' identity format."""
    return "%s_%s" % (socket.gethostname(), uuid.uuid4())


def lease_action(spec, identity, now):
    """``"acquire"``, ``"renew"`` or ``"wait"`` for a Lease ``spec`` (None: no Lease yet); see the docstring."""
    if spec is None:
        return "acquire"
    holder = spec.get("holderIdentity") or ""
    renewed = auth.parse_time(spec.get("renewTime") or "")
    duration = datetime.timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0))
    if holder == identity:
        return "renew"
    if not holder or renewed is None or renewed + duration < now:
        return "acquire"
    return "wait"


def next_spec(spec, identity, now, lease_duration):
    """The Lease spec after acquiring or renewing it."""
    spec = dict(spec or {})
    stamp = micro_time(now)
    if spec.get("holderIdentity") != identity:
        if spec.get("holderIdentity"):
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        spec["holderIdentity"] = identity
        spec["acquireTime"] = stamp
    spec["leaseDurationSeconds"] = int(lease_duration)
    spec["renewTime"] = stamp
    spec.setdefault("leaseTransitions", 0)
    return spec


class LeaderElector:
    """Holds the Lease ``name`` while ``run`` runs; ``is_leader`` is an Event the controllers check."""

    def __init__(self, client, name, identity, lease_duration=15.0, renew_deadline=10.0, retry_period=2.0,
                 log=None, clock=None):
        self.client = client
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.log = log or (lambda message, level="I": None)
        self.clock = clock or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self.is_leader = threading.Event()
        self.stopping = threading.Event()
        self.lease = None         # the Lease as last read or written
        self.observed_at = 0.0    # monotonic time it was

    def try_once(self):
        """One attempt to acquire or renew, as client-go's tryAcquireOrRenew; True when we hold the Lease afterwards.

        The leader (the Lease it last saw names it) whose lease is still valid by its own clock renews with an Update of the Lease it last wrote (no
        GET); only when it has none, is not the leader, or that Update failed (a conflict: someone else wrote it)
        does it GET the Lease and decide from what it read."""
        now = self.clock()
        observed = (self.lease or {}).get("spec") or {}
        if self.is_leader.is_set() and observed.get("holderIdentity") == self.identity and \
                time.monotonic() - self.observed_at < self.lease_duration:
            lease = dict(self.lease, spec=next_spec(self.lease.get("spec"), self.identity, now, self.lease_duration))
            try:
                self._observe(self.client.update(API, "leases", lease, NAMESPACE))
                return True
            except (kubeclient.ApiUnavailable, kubeclient.ApiError) as exc:
                self.log("Failed to update lock optimistically: %s, falling back to slow path" % exc, "E")
        try:
            lease = self.client.get(API, "leases", self.name, NAMESPACE)
        except kubeclient.NotFound:
            lease = None
        if lease is not None and lease.get("spec") != (self.lease or {}).get("spec"):
            self._observe(lease)
        action = lease_action(lease.get("spec") if lease else None, self.identity, now)
        if action == "wait":
            return False
        spec = next_spec(lease.get("spec") if lease else None, self.identity, now, self.lease_duration)
        try:
            if lease is None:
                written = self.client.create(API, "leases", {"apiVersion": API, "kind": "Lease",
                                                             "metadata": {"name": self.name, "namespace": NAMESPACE},
                                                             "spec": spec}, NAMESPACE)
            else:
                lease["spec"] = spec
                written = self.client.update(API, "leases", lease, NAMESPACE)
        except kubeclient.Conflict:
            return False  # someone else wrote first
        self._observe(written)
        return True

    def _observe(self, lease):
        """Remember ``lease`` as the newest we know and when we saw it (client-go's observedRecord / observedTime)."""
        self.lease, self.observed_at = lease, time.monotonic()

    def run(self):
        """Acquire, then renew until stopped (returns True) or the lease is lost (returns False)."""
        last_renew = time.monotonic() if self.is_leader.is_set() else None
        while not self.stopping.is_set():
            try:
                held = self.try_once()
            except (kubeclient.ApiUnavailable, kubeclient.ApiError) as exc:
                held = False
                self.log("error retrieving resource lock %s/%s: %s" % (NAMESPACE, self.name, exc), "E")
            if held:
                if not self.is_leader.is_set():
                    self.log("successfully acquired lease %s/%s" % (NAMESPACE, self.name))
                    self.is_leader.set()
                last_renew = time.monotonic()
            elif self.is_leader.is_set() and time.monotonic() - last_renew > self.renew_deadline:
                self.is_leader.clear()
                self.log("failed to renew lease %s/%s: timed out waiting for the condition; leaderelection lost"
                         % (NAMESPACE, self.name), "E")
                return False
            self.stopping.wait(self.retry_period)
        self.release()
        return True

    def release(self):
        """Give the Lease up (clean stop), so a standby takes over at once."""
        if not self.is_leader.is_set():
            return
        self.is_leader.clear()
        try:
            lease = self.client.get(API, "leases", self.name, NAMESPACE)
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                lease["spec"]["holderIdentity"] = ""
                lease["spec"]["leaseDurationSeconds"] = 1
                self.client.update(API, "leases", lease, NAMESPACE)
        except (kubeclient.ApiUnavailable, kubeclient.ApiError):
            pass
