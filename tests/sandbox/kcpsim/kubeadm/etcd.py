# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stacked etcd membership as kubeadm changes it. Adapter over kcpsim.etcdclient: I/O and kubeadm's retry
loops, no decisions.

kubeadm's client: CA ``etcd/ca.crt``, client certificate ``apiserver-etcd-client``; endpoints from the etcd
mirror pods' ``kubeadm.kubernetes.io/etcd.advertise-client-urls`` annotations, then synced from the member
list. Membership calls are retried as kubeadm retries them: etcd refuses changes for a few seconds after a
start or a reconfiguration ("unhealthy cluster"), and refuses to promote a learner until it caught up.
"""

from __future__ import annotations

import time

from kcpsim import etcdclient
from kcpsim.kubeadm.waiting import wait_for

RETRYABLE = ("unhealthy cluster", "too many learner members", "not in sync", "in sync with leader",
             "request timed out", "leader changed", "no leader", "request cancelled")


class EtcdAdminError(Exception):
    """etcd membership could not be read or changed."""


def _retryable(exc):
    text = str(getattr(exc, "message", exc)).lower()
    return isinstance(exc, etcdclient.EtcdUnavailable) or any(fragment in text for fragment in RETRYABLE)


class EtcdAdmin:
    """Talks to the first answering endpoint of ``endpoints``."""

    def __init__(self, endpoints, ca_file, cert_file, key_file, timeout=5.0):
        self.endpoints = list(endpoints)
        self.ca_file, self.cert_file, self.key_file = ca_file, cert_file, key_file
        self.timeout = timeout
        self._client = None

    def close(self):
        if self._client is not None:
            self._client.close()
            self._client = None

    def _call(self, operation):
        """Run ``operation(client)`` on the current endpoint, moving on to the next on connection errors."""
        errors = []
        order = self.endpoints if self._client is None else [self._client.endpoint] + \
            [e for e in self.endpoints if e != self._client.endpoint]
        for endpoint in order:
            if self._client is None or self._client.endpoint != endpoint:
                self.close()
                self._client = etcdclient.Etcd.connect(endpoint, self.ca_file, self.cert_file, self.key_file,
                                                       timeout=self.timeout)
            try:
                return operation(self._client)
            except etcdclient.EtcdUnavailable as exc:
                errors.append(str(exc))
                self.close()
        raise etcdclient.EtcdUnavailable(",".join(self.endpoints), "; ".join(errors) or "no endpoints")

    def members(self):
        return self._call(lambda c: c.members())

    def sync_endpoints(self):
        """Use every started member's client URLs from now on (kubeadm's ``Sync``)."""
        urls = []
        for member in self.members():
            urls.extend(u for u in member.client_urls if u not in urls)
        if urls:
            self.endpoints = urls
        return list(self.endpoints)

    def status(self, endpoint):
        client = etcdclient.Etcd.connect(endpoint, self.ca_file, self.cert_file, self.key_file, timeout=self.timeout)
        try:
            return client.status()
        finally:
            client.close()

    def unhealthy_endpoints(self):
        """``[(endpoint, reason)]`` of the synced endpoints that do not answer a status request."""
        bad = []
        for endpoint in self.endpoints:
            try:
                self.status(endpoint)
            except (etcdclient.EtcdUnavailable, etcdclient.EtcdError) as exc:
                bad.append((endpoint, getattr(exc, "message", str(exc))))
        return bad

    def _retry(self, operation, timeout, interval, what):
        deadline = time.monotonic() + timeout

        def attempt():
            try:
                return ("ok", self._call(operation))
            except (etcdclient.EtcdUnavailable, etcdclient.EtcdError) as exc:
                if not _retryable(exc) or time.monotonic() >= deadline:
                    return ("error", exc)
                raise

        try:
            outcome, value = wait_for(attempt, timeout, interval, what)
        except TimeoutError as exc:
            raise EtcdAdminError(str(exc))
        if outcome == "error":
            raise EtcdAdminError("%s: %s" % (what, getattr(value, "message", value)))
        return value

    def add_member(self, name, peer_url, learner, timeout=120.0):
        """Add (or reuse) the member with ``peer_url``; returns ``(member, added)``."""
        for member in self.members():
            if peer_url in member.peer_urls:
                return member, False
        member = self._retry(lambda c: c.member_add([peer_url], learner=learner), timeout, 0.5,
                             "adding etcd member %s" % name)
        return member, True

    def promote(self, member_id, timeout=120.0, interval=0.5):
        self._retry(lambda c: c.member_promote(member_id), timeout, interval,
                    "promoting the learner %016x" % member_id)

    def remove(self, member_id, timeout=120.0):
        self._retry(lambda c: c.member_remove(member_id), timeout, 0.5, "removing etcd member %016x" % member_id)

    def wait_available(self, retries, interval):
        """kubeadm's WaitForClusterAvailable: every endpoint answers, within ``retries`` x ``interval``."""
        def all_answer():
            self.sync_endpoints()
            return not self.unhealthy_endpoints()
        try:
            wait_for(all_answer, retries * interval, interval, "the etcd cluster to be available")
        except TimeoutError as exc:
            raise EtcdAdminError(str(exc))
