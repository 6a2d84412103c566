# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The leader elector's requests (kcpsim.controllers.leaderelection), as client-go's tryAcquireOrRenew makes them: a
leader renews with an Update of the Lease it last wrote, no GET; a conflict makes it GET and try again; a leader
whose Lease another took stops leading. Against a fake API that keeps one Lease with resourceVersions."""

import copy
import datetime

from kcpsim import kubeclient
from kcpsim.controllers import leaderelection


class FakeLeases:
    """One namespace's Leases with optimistic concurrency; ``calls`` records (verb, name)."""

    def __init__(self):
        self.leases, self.calls, self.revision = {}, [], 0

    def _stored(self, lease):
        self.revision += 1
        lease = copy.deepcopy(lease)
        lease["metadata"]["resourceVersion"] = str(self.revision)
        self.leases[lease["metadata"]["name"]] = lease
        return copy.deepcopy(lease)

    def get(self, api_version, resource, name, namespace=None):
        self.calls.append(("get", name))
        if name not in self.leases:
            raise kubeclient.NotFound(404, "NotFound", "not found")
        return copy.deepcopy(self.leases[name])

    def create(self, api_version, resource, body, namespace=None):
        self.calls.append(("create", body["metadata"]["name"]))
        return self._stored(body)

    def update(self, api_version, resource, body, namespace=None):
        name = body["metadata"]["name"]
        self.calls.append(("update", name))
        if body["metadata"].get("resourceVersion") != self.leases[name]["metadata"]["resourceVersion"]:
            raise kubeclient.Conflict(409, "Conflict", "the object has been modified")
        return self._stored(body)

    def taken_by(self, name, holder, now):
        """Another candidate writes the Lease (as after our lease ran out)."""
        lease = copy.deepcopy(self.leases[name])
        lease["spec"].update(holderIdentity=holder, renewTime=leaderelection.micro_time(now))
        self._stored(lease)


class Clock:
    def __init__(self):
        self.now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += datetime.timedelta(seconds=seconds)


def elector(api, clock, **kwargs):
    return leaderelection.LeaderElector(api, "kube-scheduler", "me", clock=clock, **kwargs)


def leader(api, clock, **kwargs):
    """An elector that has just acquired the Lease (GET: none, create), as run() leaves it."""
    chosen = elector(api, clock, **kwargs)
    assert chosen.try_once()
    chosen.is_leader.set()
    assert api.calls == [("get", "kube-scheduler"), ("create", "kube-scheduler")]
    api.calls.clear()
    return chosen


def test_a_leader_renews_with_an_update_of_the_lease_it_holds_without_a_get():
    api, clock = FakeLeases(), Clock()
    chosen = leader(api, clock)
    for attempt in range(3):
        clock.advance(2)
        assert chosen.try_once()
    assert api.calls == [("update", "kube-scheduler")] * 3
    spec = api.leases["kube-scheduler"]["spec"]
    assert spec["holderIdentity"] == "me" and spec["renewTime"] == leaderelection.micro_time(clock.now)
    assert spec["leaseTransitions"] == 0


def test_a_conflict_makes_the_leader_get_the_lease_and_renew_from_it():
    api, clock = FakeLeases(), Clock()
    chosen = leader(api, clock)
    # Someone else wrote the Lease without taking it (e.g. a relabel): our copy's resourceVersion is stale.
    api._stored(dict(api.leases["kube-scheduler"], metadata=dict(api.leases["kube-scheduler"]["metadata"],
                                                                 labels={"touched": "yes"})))
    clock.advance(2)
    assert chosen.try_once()
    assert api.calls == [("update", "kube-scheduler"), ("get", "kube-scheduler"), ("update", "kube-scheduler")]
    assert api.leases["kube-scheduler"]["metadata"]["labels"] == {"touched": "yes"}
    assert api.leases["kube-scheduler"]["spec"]["renewTime"] == leaderelection.micro_time(clock.now)
    api.calls.clear()
    clock.advance(2)
    assert chosen.try_once() and api.calls == [("update", "kube-scheduler")]   # back on the fast path


def test_a_follower_gets_the_lease_every_time_and_does_not_write_a_valid_one():
    api, clock = FakeLeases(), Clock()
    leader(api, clock)
    follower = leaderelection.LeaderElector(api, "kube-scheduler", "other", clock=clock)
    for attempt in range(2):
        clock.advance(2)
        assert not follower.try_once()
    assert api.calls == [("get", "kube-scheduler")] * 2


def test_a_leader_whose_lease_another_took_stops_leading_after_the_renew_deadline():
    api, clock = FakeLeases(), Clock()
    chosen = leader(api, clock, lease_duration=0.4, renew_deadline=0.2, retry_period=0.05)
    api.taken_by("kube-scheduler", "other", clock.now)
    assert not chosen.try_once()
    assert api.calls == [("update", "kube-scheduler"), ("get", "kube-scheduler")]
    assert chosen.run() is False           # its renewals keep failing: leaderelection lost
    assert not chosen.is_leader.is_set()
    assert api.leases["kube-scheduler"]["spec"]["holderIdentity"] == "other"
