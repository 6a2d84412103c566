# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd for the emulators: the collection's own JSON-gateway transport plus the few calls they need.

The transport is ``plugins/module_utils/etcd_gateway.py`` (one implementation for the collection and the
sandbox). From source it is loaded by path; build.py bundles it as ``kcpsim/_etcd_gateway.py``.
Its public names are re-exported here: EtcdError, EtcdUnavailable, EtcdTLSError, GatewayClient,
tls_context, b64, unb64.

Helpers: key ranges, put, compare-on-revision transactions (the apiserver's optimistic concurrency),
delete, and membership (list, add as learner, promote, remove).
"""

import collections
import importlib.util
import os
import sys


def _load_gateway():
    try:
        from kcpsim import _etcd_gateway  # present in built bundles only
        return _etcd_gateway
    except ImportError:
        pass
    name = "kcpsim._etcd_gateway"
    if name in sys.modules:
        return sys.modules[name]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    path = os.path.join(root, "plugins", "module_utils", "etcd_gateway.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


gateway = _load_gateway()
EtcdError = gateway.EtcdError
EtcdUnavailable = gateway.EtcdUnavailable
EtcdTLSError = gateway.EtcdTLSError
GatewayClient = gateway.GatewayClient
tls_context = gateway.tls_context
b64 = gateway.b64
unb64 = gateway.unb64

KV = collections.namedtuple("KV", "key value create_revision mod_revision version")
Member = collections.namedtuple("Member", "id name peer_urls client_urls is_learner")


def prefix_end(prefix):
    """The ``range_end`` that selects every key starting with ``prefix`` (last byte + 1)."""
    data = bytearray(prefix.encode("utf-8") if isinstance(prefix, str) else prefix)
    while data and data[-1] == 0xFF:
        data.pop()
    if not data:
        return b"\0"
    data[-1] += 1
    return bytes(data)


def _kv(raw):
    return KV(key=unb64(raw.get("key")).decode("utf-8"), value=unb64(raw.get("value")),
              create_revision=int(raw.get("create_revision", 0)), mod_revision=int(raw.get("mod_revision", 0)),
              version=int(raw.get("version", 0)))


def _member(raw):
    return Member(id=int(raw.get("ID", 0)), name=raw.get("name", ""), peer_urls=list(raw.get("peerURLs") or []),
                  client_urls=list(raw.get("clientURLs") or []), is_learner=bool(raw.get("isLearner", False)))


def _revision(answer):
    return int((answer.get("header") or {}).get("revision", 0))


class Etcd:
    """One member over the gateway. Not thread-safe (one TLS connection), like GatewayClient."""

    def __init__(self, client):
        self.client = client

    @classmethod
    def connect(cls, endpoint, ca_file, cert_file=None, key_file=None, timeout=5.0):
        return cls(GatewayClient(endpoint, tls_context(ca_file, cert_file, key_file), timeout=timeout))

    @property
    def endpoint(self):
        return self.client.endpoint

    def close(self):
        self.client.close()

    # --- keys ------------------------------------------------------------------------------------------

    def range(self, key, prefix=False, limit=0, keys_only=False, serializable=False):
        """``(kvs, revision)`` for one key or, with ``prefix``, every key under it (sorted by key)."""
        body = {"key": b64(key)}
        if prefix:
            body["range_end"] = b64(prefix_end(key))
        if limit:
            body["limit"] = limit
        if keys_only:
            body["keys_only"] = True
        if serializable:
            body["serializable"] = True
        answer = self.client.call("kv/range", body)
        return [_kv(raw) for raw in answer.get("kvs") or []], _revision(answer)

    def get(self, key):
        kvs = self.range(key)[0]
        return kvs[0] if kvs else None

    def put(self, key, value):
        """Unconditional put; returns the new revision."""
        return _revision(self.client.call("kv/put", {"key": b64(key), "value": b64(value)}))

    def delete(self, key, prefix=False):
        """Number of keys deleted."""
        body = {"key": b64(key)}
        if prefix:
            body["range_end"] = b64(prefix_end(key))
        return int(self.client.call("kv/deleterange", body).get("deleted", 0))

    def _txn_on(self, key, target, revision, success_op):
        """Run ``success_op`` if the key's ``target`` revision equals ``revision``; otherwise read the key.

        Returns ``(succeeded, revision, current)`` where ``current`` is the key's KV on failure (None if absent).
        """
        field = "create_revision" if target == "CREATE" else "mod_revision"
        answer = self.client.call("kv/txn", {
            "compare": [{"key": b64(key), "target": target, "result": "EQUAL", field: str(revision)}],
            "success": [success_op],
            "failure": [{"request_range": {"key": b64(key)}}],
        })
        if answer.get("succeeded"):
            return True, _revision(answer), None
        ranges = [r.get("response_range") or {} for r in answer.get("responses") or []]
        kvs = (ranges[0].get("kvs") or []) if ranges else []
        return False, _revision(answer), (_kv(kvs[0]) if kvs else None)

    def create(self, key, value):
        """Put only if the key does not exist."""
        return self._txn_on(key, "CREATE", 0, {"request_put": {"key": b64(key), "value": b64(value)}})

    def put_if(self, key, value, mod_revision):
        """Put only if the key's mod revision is still ``mod_revision`` (a resourceVersion precondition)."""
        return self._txn_on(key, "MOD", mod_revision, {"request_put": {"key": b64(key), "value": b64(value)}})

    def delete_if(self, key, mod_revision):
        """Delete only if the key's mod revision is still ``mod_revision``."""
        return self._txn_on(key, "MOD", mod_revision, {"request_delete_range": {"key": b64(key)}})

    # --- cluster ---------------------------------------------------------------------------------------

    def members(self):
        return [_member(raw) for raw in self.client.call("cluster/member/list", {}).get("members") or []]

    def member_add(self, peer_urls, learner=False):
        """Add a member (as a learner when asked); returns the new Member (name empty until it starts)."""
        answer = self.client.call("cluster/member/add", {"peerURLs": list(peer_urls), "isLearner": bool(learner)})
        return _member(answer.get("member") or {})

    def member_promote(self, member_id):
        self.client.call("cluster/member/promote", {"ID": str(member_id)})

    def member_remove(self, member_id):
        self.client.call("cluster/member/remove", {"ID": str(member_id)})

    def status(self):
        """The raw maintenance status (leader, raftIndex, raftAppliedIndex, dbSize, errors, isLearner)."""
        return self.client.call("maintenance/status", {})
