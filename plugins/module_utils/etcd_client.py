# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The etcd adapter: asks every member of a kubeadm etcd cluster how it is, and changes the membership.

I/O only; what the answers mean is decided in ``etcd_health``, whether a change is safe in ``etcd_quorum``.
Standard library only (it runs on the controller or on a control plane host), over ``etcd_gateway``.

* Trust: only the CA file passed in; the client presents kubeadm's client certificate
  (``/etc/kubernetes/pki/etcd/healthcheck-client.*`` by default, or ``apiserver-etcd-client.*``).
* ``gather`` asks every member in parallel, each under its own deadline, so k dead members cost one
  timeout, not k. Members are discovered from the member lists of the endpoints given.
* Membership changes poll, within ``retry_timeout``, while etcd refuses for a few seconds after a start or a
  previous change ("unhealthy cluster", "too many learner members", a learner not yet in sync, a leader
  change); any other refusal is raised at once with etcd's own words.
* Ids: the gateway speaks decimal strings; the snapshot and every method here use hex, as etcdctl prints them.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import re
import time

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import (
    EtcdError,
    EtcdTLSError,
    EtcdUnavailable,
    GatewayClient,
    b64,
    tls_context,
    tls_file_problems,
)

DEFAULT_CA_FILE = "/etc/kubernetes/pki/etcd/ca.crt"
DEFAULT_CERT_FILE = "/etc/kubernetes/pki/etcd/healthcheck-client.crt"
DEFAULT_KEY_FILE = "/etc/kubernetes/pki/etcd/healthcheck-client.key"

# The options every etcd module takes to reach the cluster (documented in doc_fragments/etcd_connection.py).
CONNECTION_ARGUMENT_SPEC = dict(
    endpoints=dict(type="list", elements="str", required=True),
    ca_file=dict(type="path", default=DEFAULT_CA_FILE),
    cert_file=dict(type="path", default=DEFAULT_CERT_FILE),
    key_file=dict(type="path", default=DEFAULT_KEY_FILE, no_log=False),
    timeout=dict(type="float", default=5.0),
)
RETRY_INTERVAL = 0.25

# Refusals etcd lifts by itself within seconds (etcd's error texts, matched on the message it returns).
TRANSIENT_REFUSALS = (
    "unhealthy cluster",
    "too many learner members",
    "can only promote a learner member which is in sync with leader",
    "leader changed",
    "not leader",
    "no leader",
)
HEALTH_KEY = b64("health")
PERMISSION_DENIED = "permission denied"
_ALARM = re.compile(r"memberID:(\d+)\s+alarm:([A-Z_]+)")


def hex_id(value):
    """The gateway's decimal id (string or int) as etcdctl prints it."""
    return "%x" % int(value)


def gateway_id(member_id):
    """A hex member id as the gateway wants it (a decimal string: JSON has no 64-bit integers)."""
    return str(int(member_id, 16))


def connection_problems(endpoints, ca_file, cert_file, key_file, timeout):
    """Everything wrong with these connection settings, as ``field: rule`` strings (empty = usable)."""
    problems = []
    if not endpoints:
        problems.append("endpoints: at least one client URL is required")
    for index, endpoint in enumerate(endpoints or []):
        try:
            GatewayClient(endpoint, None)
        except ValueError:
            problems.append("endpoints[%d]: %r must be an https:// URL such as https://10.0.0.11:2379" % (index, endpoint))
    for field, path in (("ca_file", ca_file), ("cert_file", cert_file), ("key_file", key_file)):
        if not path:
            problems.append("%s: is required" % field)
        elif not os.path.isfile(path):
            problems.append("%s: %s is not a file" % (field, path))
        elif not os.access(path, os.R_OK):
            problems.append("%s: %s is not readable" % (field, path))
    if not timeout or timeout <= 0:
        problems.append("timeout: must be a positive number of seconds")
    if not problems:
        problems.extend(tls_file_problems(ca_file, cert_file, key_file))
    return problems


def gather(endpoints, ca_file=DEFAULT_CA_FILE, cert_file=DEFAULT_CERT_FILE, key_file=DEFAULT_KEY_FILE, timeout=5.0, external=False):
    """The snapshot's ``etcd`` section, gathered from ``endpoints`` (see ``EtcdClient.gather``)."""
    with EtcdClient(endpoints, ca_file, cert_file, key_file, timeout=timeout) as client:
        return client.gather(external=external)


class Probe(
    collections.namedtuple("Probe", "endpoint order target status members error tls_failed seconds cluster_version")
):
    """What one endpoint answered: ``status`` (None = it did not answer), its member list (None = that call
    failed), the error text (a failed call, or a failed health read through quorum) and whether it was a TLS
    failure; ``target`` = hex id of the member it was probed for (None = a given endpoint); ``seconds`` = how
    long the answers took; ``cluster_version`` as the member reports it (None = not asked or not answered)."""

    @property
    def member_id(self):
        return hex_id(self.status["header"]["member_id"]) if self.status else None

    @property
    def cluster_id(self):
        return hex_id(self.status["header"]["cluster_id"]) if self.status else None


Observation = collections.namedtuple("Observation", "section endpoints")


def endpoint_report(probe, names):
    """What one endpoint answered, for people: ``names`` maps member ids to names."""
    status = probe.status or {}
    return {
        "url": probe.endpoint,
        "given": probe.target is None,
        "answered": probe.status is not None,
        "member": names.get(probe.member_id) or probe.member_id,
        "error": probe.error,
        "seconds": round(probe.seconds, 4),
        "raft_applied_index": int(status["raftAppliedIndex"]) if "raftAppliedIndex" in status else None,
        "db_size_in_use": int(status["dbSizeInUse"]) if "dbSizeInUse" in status else None,
        "storage_version": status.get("storageVersion"),
        "cluster_version": probe.cluster_version,
    }


class EtcdClient:
    """A kubeadm etcd cluster reached through ``endpoints`` (client URLs; more members are discovered)."""

    def __init__(
        self,
        endpoints,
        ca_file=DEFAULT_CA_FILE,
        cert_file=DEFAULT_CERT_FILE,
        key_file=DEFAULT_KEY_FILE,
        timeout=5.0,
        retry_timeout=30.0,
    ):
        self.endpoints = list(dict.fromkeys(endpoints))
        self.context = tls_context(ca_file, cert_file, key_file)
        self.timeout = float(timeout)
        self.retry_timeout = float(retry_timeout)
        self._clients = {}
        self._members = []

    def close(self):
        for client in self._clients.values():
            client.close()
        self._clients = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- reads ---------------------------------------------------------------------------------------

    def probe(self, endpoint, target=None, order=0):
        """Status, member list, health read through quorum and cluster version of one endpoint, all within one
        ``timeout``; never raises.

        The health read is a linearizable read of the key ``health``, as ``etcdctl endpoint health`` does: only a
        member in touch with a quorum can serve it. A learner serves neither it nor a member list (etcd 3.5).

        The member list is read from the member itself, which may trail the leader by the last membership change
        (a member removed a moment ago still listed). Once the health read has come through quorum, the member has
        applied every change committed before it, so the list is read again and that one is kept; without quorum
        the first list stays, what the member knows, to count the members a lost quorum leaves.
        """
        started = time.monotonic()
        deadline = started + self.timeout
        client = GatewayClient(endpoint, self.context, self.timeout)
        status = members = cluster_version = None

        def remaining():
            return max(deadline - time.monotonic(), 0.001)

        def member_list():
            return client.call("cluster/member/list", timeout=remaining()).get("members", [])

        step = "status"
        try:
            status = client.call("maintenance/status", timeout=self.timeout)
            learner = bool(status.get("isLearner"))
            if not learner:
                step = "member list"
                members = member_list()
            if not learner and not status.get("errors"):
                step = "health read through quorum"
                try:
                    client.call("kv/range", {"key": HEALTH_KEY}, timeout=remaining())
                except EtcdError as exc:
                    if PERMISSION_DENIED not in exc.message:  # an answer through quorum all the same
                        raise
                step = "member list after the health read"
                members = member_list()
            step = "version"
            cluster_version = client.version(timeout=remaining()).get("etcdcluster")
            failure, tls_failed = None, False
        except (EtcdError, EtcdUnavailable) as exc:
            failure, tls_failed = "%s: %s" % (step, exc.message), isinstance(exc, EtcdTLSError)
        finally:
            client.close()
        seconds = time.monotonic() - started
        return Probe(endpoint, order, target, status, members, failure, tls_failed, seconds, cluster_version)

    def observe(self, external=False):
        """The ``etcd`` section of the snapshot (docs/snapshot.md), every member as it reports itself, and what
        each endpoint asked answered (``endpoint_report``), given or discovered, including those that are not
        members (a wrong port, another service).

        Raises EtcdTLSError when every endpoint refused the handshake: the CA or the client certificate is
        wrong, and a snapshot of unresponsive members would hide that.
        """
        probes = self._probe_all()
        if all(p.tls_failed for p in probes):
            raise EtcdTLSError(probes[0].endpoint, probes[0].error.split(": ", 1)[1])
        self._members = _assemble(probes)
        names = {m["id"]: m["name"] for m in self._members}
        section = {"external": bool(external), "members": [dict(m) for m in self._members]}
        return Observation(section, [endpoint_report(p, names) for p in probes])

    def gather(self, external=False):
        """The ``etcd`` section of the snapshot alone (see ``observe``)."""
        return self.observe(external).section

    def gather_until(self, condition, external=False):
        """Gather until ``condition(section)`` holds or ``retry_timeout`` has passed; return the last section."""
        deadline = time.monotonic() + self.retry_timeout
        while True:
            section = self.gather(external)
            if condition(section) or time.monotonic() + RETRY_INTERVAL > deadline:
                return section
            time.sleep(RETRY_INTERVAL)

    def _probe_all(self):
        """Probe the given endpoints and, as soon as a member list names them, every other member, in parallel."""
        queued = set(self.endpoints)
        done = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            pending = {pool.submit(self.probe, url, None, i) for i, url in enumerate(self.endpoints)}
            while pending:
                finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    probe = future.result()
                    done.append(probe)
                    answered = {p.member_id for p in done if p.status}
                    for listed in probe.members or []:
                        urls = listed.get("clientURLs") or []
                        if not urls or hex_id(listed["ID"]) in answered or queued.intersection(urls):
                            continue
                        queued.update(urls)
                        order = len(queued)
                        pending.add(pool.submit(self.probe, urls[0], hex_id(listed["ID"]), order))
        return sorted(done, key=lambda p: p.order)

    # -- membership changes -------------------------------------------------------------------------

    def add_member(self, peer_urls, learner=True):
        """Add a member (as a learner by default); return it, with the id etcd gave it in its answer."""
        body = {"peerURLs": list(peer_urls), "isLearner": bool(learner)}
        try:
            answer = self._change("cluster/member/add", body)
        except EtcdError as exc:
            # A retry after a lost answer finds its own earlier add: report that member.
            existing = self._find_by_peer_urls(peer_urls) if "peerURL exists" in exc.message else None
            if existing is None:
                raise
            return existing
        return _listed_member(answer["member"])

    def promote_member(self, member_id):
        """Promote learner ``member_id``, polling while etcd says it is not in sync with the leader yet."""
        try:
            self._change("cluster/member/promote", {"ID": gateway_id(member_id)})
        except EtcdError as exc:
            if "can only promote a learner member" not in exc.message or self._is_learner(member_id) is not False:
                raise

    def remove_member(self, member_id):
        """Remove ``member_id``; a member already gone counts as removed (KCP EH10)."""
        try:
            self._change("cluster/member/remove", {"ID": gateway_id(member_id)})
        except EtcdError as exc:
            if "member not found" not in exc.message:
                raise

    def move_leader(self, target_id):
        """Hand leadership to ``target_id`` and return once it leads. Asks the current leader, as etcd requires."""
        deadline = time.monotonic() + self.retry_timeout
        while True:
            leader = next((m for m in self.gather()["members"] if m["leader"] and m["client_urls"]), None)
            if leader is not None and leader["id"] == target_id:
                return
            if time.monotonic() > deadline:
                raise EtcdUnavailable(
                    ", ".join(self.endpoints), "member %s did not take the lead within %.0fs" % (target_id, self.retry_timeout)
                )
            if leader is None:
                time.sleep(RETRY_INTERVAL)
                continue
            try:
                self._client(leader["client_urls"][0]).call(
                    "maintenance/transfer-leadership", {"targetID": gateway_id(target_id)}
                )
            except EtcdTLSError:
                raise
            except EtcdError as exc:
                if not _transient(exc):
                    raise
                time.sleep(RETRY_INTERVAL)
            except EtcdUnavailable:
                time.sleep(RETRY_INTERVAL)  # the leader went away meanwhile: find the next one

    # -- maintenance -------------------------------------------------------------------------------

    def revision(self):
        """The keyspace's current revision, as the first member that answers has it."""
        return int(self._read("maintenance/status")["header"]["revision"])

    def alarms(self):
        """The cluster's active alarms, each (the hex id of the member that raised it, the alarm: NOSPACE, CORRUPT).
        Every member reports every alarm of the cluster in its status; this says whose it is."""
        listed = self._read("maintenance/alarm", {"action": "GET"}).get("alarms") or []
        return [(hex_id(alarm.get("memberID", 0)), alarm.get("alarm", "NONE")) for alarm in listed]

    def compact(self, revision):
        """Compact the keyspace's history up to ``revision`` and return once every member dropped it from its
        database (``physical``); a revision compacted already counts as done."""
        try:
            self._change("kv/compaction", {"revision": str(revision), "physical": True})
        except EtcdError as exc:
            if "required revision has been compacted" not in exc.message:
                raise

    def defragment(self, client_url, timeout):
        """Defragment the member at ``client_url``: it rewrites its database without the free pages, answering
        nothing meanwhile; within ``timeout`` seconds."""
        self._client(client_url).call("maintenance/defragment", timeout=timeout)

    def disarm(self, member_id, alarm):
        """Clear ``alarm`` (NOSPACE) raised by ``member_id``."""
        self._change("maintenance/alarm", {"action": "DEACTIVATE", "memberID": gateway_id(member_id), "alarm": alarm})

    # -- helpers -----------------------------------------------------------------------------------

    def _client(self, url):
        if url not in self._clients:
            self._clients[url] = GatewayClient(url, self.context, self.timeout)
        return self._clients[url]

    def _write_urls(self):
        """Where to send a change: the leader first, then the other answering voters, then the given endpoints."""
        if not self._members:
            self.gather()
        ranked = sorted(
            (m for m in self._members if m["responsive"] and not m["learner"] and m["client_urls"]),
            key=lambda m: not m["leader"],
        )
        return list(dict.fromkeys([m["client_urls"][0] for m in ranked] + self.endpoints))

    def _read(self, path, body=None):
        """One read from the first member that answers it."""
        failures = {}
        for url in self._write_urls():
            try:
                return self._client(url).call(path, body)
            except EtcdTLSError:
                raise
            except (EtcdError, EtcdUnavailable) as exc:
                failures[url] = exc
        raise _not_accepted(path, failures)

    def _change(self, path, body):
        """Send one membership change; poll while etcd refuses for now; try the next member when one is down."""
        deadline = time.monotonic() + self.retry_timeout
        while True:
            failures = {}
            for url in self._write_urls():
                try:
                    return self._client(url).call(path, body)
                except EtcdTLSError:
                    raise
                except EtcdUnavailable as exc:
                    failures[url] = exc
                except EtcdError as exc:
                    if not _transient(exc):
                        raise
                    failures[url] = exc
                    break
            if time.monotonic() + RETRY_INTERVAL > deadline:
                raise _not_accepted(path, failures)
            time.sleep(RETRY_INTERVAL)

    def _find_by_peer_urls(self, peer_urls):
        return next((m for m in self.gather()["members"] if set(m["peer_urls"]) & set(peer_urls)), None)

    def _is_learner(self, member_id):
        return next((m["learner"] for m in self.gather()["members"] if m["id"] == member_id), None)


def _not_accepted(path, failures):
    """The error for a change no member accepted in time, naming every member tried and what it said (the last
    one alone could be a dead member, while the live one that never answered is the one that matters)."""
    if len(failures) == 1:
        return next(iter(failures.values()))
    tried = "; ".join("%s: %s" % (url, exc.message) for url, exc in failures.items())
    last = list(failures.values())[-1]
    if isinstance(last, EtcdError):
        return EtcdError(", ".join(failures), last.code, "%s not accepted by any member: %s" % (path, tried))
    return EtcdUnavailable(", ".join(failures), "%s not accepted by any member: %s" % (path, tried))


def _transient(exc):
    return any(text in exc.message for text in TRANSIENT_REFUSALS)


def _listed_member(listed):
    """A member-list entry in snapshot terms (id in hex; the gateway omits empty names and false flags)."""
    return {
        "name": listed.get("name", ""),
        "id": hex_id(listed["ID"]) if listed.get("ID") else "",
        "peer_urls": list(listed.get("peerURLs") or []),
        "client_urls": list(listed.get("clientURLs") or []),
        "learner": bool(listed.get("isLearner", False)),
    }


def _split_status_errors(errors):
    """etcd puts active alarms among a status's errors ("memberID:… alarm:NOSPACE"): separate the two."""
    alarms, others = set(), []
    for text in errors or []:
        match = _ALARM.search(text)
        if match:
            alarms.add(match.group(2))
        else:
            others.append(text.strip())
    return sorted(alarms), others


def _snapshot_member(listed, probe):
    """One snapshot member: ``listed`` (its member-list entry), as ``probe`` found it (None = not reached)."""
    member = _listed_member(listed)
    member.update(
        responsive=False,
        error=None,
        leader=False,
        alarms=[],
        member_ids_seen=[],
        cluster_id=None,
        version=None,
        db_size=None,
        raft_term=None,
        raft_index=None,
    )
    if probe is None:
        member["error"] = "not started yet: it has no client URL" if not member["client_urls"] else "not reached"
        return member
    if probe.status is None:
        member["error"] = probe.error
        return member
    status = probe.status
    alarms, errors = _split_status_errors(status.get("errors"))
    if probe.error:
        errors.append(probe.error)
    member.update(
        responsive=True,
        error="; ".join(errors) or None,
        leader=status.get("leader") == status["header"]["member_id"],
        learner=member["learner"] or bool(status.get("isLearner", False)),
        alarms=alarms,
        member_ids_seen=sorted(hex_id(m["ID"]) for m in probe.members or []),
        cluster_id=probe.cluster_id,
        version=status.get("version"),
        db_size=int(status.get("dbSize", 0)),
        raft_term=int(status.get("raftTerm", 0)),
        raft_index=int(status.get("raftIndex", 0)),
    )
    return member


def _assemble(probes):
    """Turn probes into snapshot members.

    The member list is the one reported by the cluster most answering endpoints belong to (ties: the first
    endpoint given). Each listed member gets the answer that came from it (by member id), else the answer
    found at its client URL (a different cluster answering there shows up as a different member list), else
    the failure met there. Answers from another cluster that match no listed member are added as members
    of their own, so they surface as strays. With no answer at all, each endpoint becomes a nameless,
    unresponsive member carrying its error.
    """
    answered = [p for p in probes if p.status]
    if not answered:
        return [_snapshot_member({"clientURLs": [p.endpoint]}, p) for p in probes]
    votes = collections.Counter(p.cluster_id for p in answered)
    cluster = max(answered, key=lambda p: (votes[p.cluster_id], -p.order)).cluster_id
    own = [p for p in answered if p.cluster_id == cluster]

    listed = {}
    for probe in own:
        for entry in probe.members or [{"ID": probe.status["header"]["member_id"], "clientURLs": [probe.endpoint]}]:
            listed.setdefault(hex_id(entry["ID"]), entry)

    used = []
    members = []
    for member_id, entry in listed.items():
        urls = set(entry.get("clientURLs") or [])
        probe = (
            next((p for p in own if p.member_id == member_id), None)
            or next((p for p in answered if p.endpoint in urls and p.cluster_id != cluster), None)
            or next((p for p in probes if not p.status and (p.endpoint in urls or p.target == member_id)), None)
        )
        used.append(probe)
        members.append(_snapshot_member(entry, probe))
    for probe in answered:
        if probe.cluster_id != cluster and not any(probe is u for u in used):
            entry = next((m for m in probe.members or [] if hex_id(m["ID"]) == probe.member_id), None)
            members.append(_snapshot_member(entry or {"ID": probe.status["header"]["member_id"]}, probe))
    return sorted(members, key=lambda m: (m["name"] == "", m["name"], m["id"]))
