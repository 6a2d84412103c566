# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Objects in etcd: the API server's only state. Adapter (I/O only).

Values are the object's JSON without ``metadata.resourceVersion``; on the way out the resourceVersion is the
key's etcd ``mod_revision`` (a list's is the header revision). Writes are compare-and-swap transactions on the
key's revision, which is how a create of an existing name and an update from a stale resourceVersion fail.

Every read is linearizable, so without etcd quorum nothing is answered. Each operation has a deadline
(``timeout``): the members of ``--etcd-servers`` are tried in turn (a refused connection moves on at once), a
member that answers "no leader" is asked again after a short pause, and when the deadline passes the operation
fails with StoreUnavailable. A write whose member vanished mid-request is retried on the next member; should the
first attempt have landed after all, the retry reports a conflict (the real client has the same ambiguity).
"""

import json
import threading
import time

from kcpsim import etcdclient

# gRPC "Unavailable": no leader, leader changed, request timed out inside etcd. Worth asking again.
_UNAVAILABLE = 14
_RETRY_PAUSE = 0.1
_IDLE_PER_MEMBER = 8


class StoreUnavailable(Exception):
    """No etcd member answered within the deadline."""


class StoreError(Exception):
    """etcd refused the operation (e.g. database space exceeded); the message is etcd's."""


class Compacted(StoreError):
    """The revision asked for has been compacted."""


class Change:
    """One change etcd reported: ``obj`` after it (None when deleted), ``previous`` before it (None when
    created or unknown), ``revision`` at which it happened."""

    def __init__(self, obj, previous, revision):
        self.obj = obj
        self.previous = previous
        self.revision = revision


def _decoded(kv):
    if not kv or not kv.get("value"):
        return None
    return decode(etcdclient.unb64(kv["value"]), int(kv.get("mod_revision", 0)))


class Watch:
    """An etcd watch relayed as Change objects; read with ``changes()``, end with ``close()`` (from any thread:
    it unblocks a reader)."""

    def __init__(self, stream):
        self._stream = stream

    def changes(self):
        """Yield Change objects until the stream ends (closed, or etcd gone); Compacted if etcd no longer has
        the start revision."""
        for event, revision in self._events():
            previous = _decoded(event.get("prev_kv"))
            current = None if event.get("type") == "DELETE" else _decoded(event.get("kv"))
            yield Change(current, previous, int((event.get("kv") or {}).get("mod_revision", revision)))

    def raw_changes(self):
        """Yield ``(key, value or None, mod_revision, prev_value or None, prev_mod_revision)`` for each event, as
        etcd sent it (values undecoded), until the stream ends; Compacted as ``changes()``."""
        for event, revision in self._events():
            kv, prev = event.get("kv") or {}, event.get("prev_kv") or {}
            value = None if event.get("type") == "DELETE" else etcdclient.unb64(kv.get("value") or "")
            yield (etcdclient.unb64(kv.get("key") or "").decode("utf-8"), value,
                   int(kv.get("mod_revision", revision)),
                   etcdclient.unb64(prev["value"]) if prev.get("value") else None, int(prev.get("mod_revision", 0)))

    def _events(self):
        """Each raw gateway event with its message's header revision, until the stream ends; Compacted if etcd no
        longer has the start revision."""
        for result in self._stream.messages():
            if result.get("canceled"):
                raise Compacted("required revision has been compacted (compact revision %s)"
                                % result.get("compact_revision"))
            revision = int((result.get("header") or {}).get("revision", 0))
            for event in result.get("events") or []:
                yield event, revision

    def close(self):
        self._stream.close()


class Exists(Exception):
    """Create: the key is already there."""


class Missing(Exception):
    """Update / delete: the key is not there (any more)."""


class Stale(Exception):
    """Update / delete: the key changed since the revision the caller read."""


def encode(obj):
    body = dict(obj)
    metadata = dict(body.get("metadata") or {})
    metadata.pop("resourceVersion", None)
    body["metadata"] = metadata
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def decode(value, mod_revision):
    obj = json.loads(value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(mod_revision)
    return obj


class Store:
    """etcd behind ``--etcd-servers``; thread-safe (a small pool of gateway connections per member)."""

    def __init__(self, endpoints, context, timeout=5.0):
        if not endpoints:
            raise ValueError("at least one etcd endpoint is required")
        self.endpoints = list(endpoints)
        self.timeout = timeout
        self._context = context
        self._idle = {endpoint: [] for endpoint in self.endpoints}
        self._preferred = 0
        self._lock = threading.Lock()

    def _acquire(self, endpoint):
        with self._lock:
            if self._idle[endpoint]:
                return self._idle[endpoint].pop()
        return etcdclient.Etcd(endpoint, self._context, timeout=self.timeout)

    def _release(self, endpoint, etcd):
        with self._lock:
            if len(self._idle[endpoint]) < _IDLE_PER_MEMBER:
                self._idle[endpoint].append(etcd)
                return
        etcd.close()

    def close(self):
        with self._lock:
            for idle in self._idle.values():
                for etcd in idle:
                    etcd.close()
                del idle[:]

    def _order(self):
        with self._lock:
            start = self._preferred
        return [self.endpoints[(start + i) % len(self.endpoints)] for i in range(len(self.endpoints))]

    def _run(self, operation, timeout=None):
        """``operation(etcd)`` on the first member that answers within the deadline."""
        deadline = time.monotonic() + (timeout or self.timeout)
        last = "no etcd member was tried"
        while True:
            for endpoint in self._order():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise StoreUnavailable(last)
                etcd = self._acquire(endpoint)
                etcd.timeout = remaining
                try:
                    result = operation(etcd)
                except etcdclient.EtcdUnavailable as exc:
                    etcd.close()
                    last = str(exc)
                    continue
                except etcdclient.EtcdError as exc:
                    self._release(endpoint, etcd)
                    if exc.code == _UNAVAILABLE:
                        last = str(exc)
                        break
                    raise StoreError(exc.message)
                self._release(endpoint, etcd)
                with self._lock:
                    self._preferred = self.endpoints.index(endpoint)
                return result
            if time.monotonic() + _RETRY_PAUSE >= deadline:
                raise StoreUnavailable(last)
            time.sleep(_RETRY_PAUSE)

    # --- objects ---------------------------------------------------------------------------------------

    def get(self, key, timeout=None):
        """The object at ``key`` or None."""
        kv = self._run(lambda etcd: etcd.get(key), timeout)
        return decode(kv.value, kv.mod_revision) if kv else None

    def list(self, prefix):
        """``(objects, revision)`` of every key under ``prefix``, in key order."""
        kvs, revision = self._run(lambda etcd: etcd.range(prefix, prefix=True))
        return [decode(kv.value, kv.mod_revision) for kv in kvs], revision

    def list_raw(self, prefix):
        """``([(key, value, mod_revision)], revision)`` of every key under ``prefix``, values undecoded."""
        kvs, revision = self._run(lambda etcd: etcd.range(prefix, prefix=True))
        return [(kv.key, kv.value, kv.mod_revision) for kv in kvs], revision

    def create(self, key, obj):
        """Store a new object; returns it with its resourceVersion. Exists if the key is taken."""
        succeeded, revision = self._run(lambda etcd: etcd.create(key, encode(obj)))[:2]
        if not succeeded:
            raise Exists(key)
        return decode(encode(obj), revision)

    def update(self, key, obj, mod_revision):
        """Replace the object stored at revision ``mod_revision``; Stale / Missing when it moved on."""
        succeeded, revision, current = self._run(lambda etcd: etcd.put_if(key, encode(obj), mod_revision))
        if not succeeded:
            raise Stale(key) if current else Missing(key)
        return decode(encode(obj), revision)

    def delete(self, key, mod_revision):
        """Delete the object stored at revision ``mod_revision``; Stale / Missing when it moved on."""
        succeeded, current = self._run(lambda etcd: etcd.delete_if(key, mod_revision))[::2]
        if not succeeded:
            raise Stale(key) if current else Missing(key)

    def delete_prefix(self, prefix):
        return self._run(lambda etcd: etcd.delete(prefix, prefix=True))

    def watch(self, prefix, start_revision):
        """A Watch of every change under ``prefix`` from ``start_revision`` on, on the first member that takes it."""
        last = "no etcd member was tried"
        for endpoint in self._order():
            try:
                member = etcdclient.Etcd(endpoint, self._context, timeout=self.timeout)
                return Watch(member.watch(prefix, start_revision))
            except etcdclient.EtcdUnavailable as exc:
                last = str(exc)
            except etcdclient.EtcdError as exc:
                raise StoreError(str(exc))
        raise StoreUnavailable(last)

    def watch_all(self, start_revision):
        """A Watch of every key in etcd from ``start_revision`` on (so the watcher sees every revision)."""
        last = "no etcd member was tried"
        for endpoint in self._order():
            try:
                member = etcdclient.Etcd(endpoint, self._context, timeout=self.timeout)
                return Watch(member.watch("\0", start_revision, range_end="\0"))
            except etcdclient.EtcdUnavailable as exc:
                last = str(exc)
            except etcdclient.EtcdError as exc:
                raise StoreError(str(exc))
        raise StoreUnavailable(last)

    def revision(self, timeout=None):
        """The store's current revision, read linearizably: the health probe."""
        return self._run(lambda etcd: etcd.range("/registry/health", keys_only=True)[1], timeout)
