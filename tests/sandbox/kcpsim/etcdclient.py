# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd for the emulators: kcpsim's own client of etcd's v3 JSON gateway (``POST /v3/...``) over mutual TLS.

The emulation deliberately shares no etcd code with the collection (plugins/module_utils has its own
transport): the emulated kubeadm and API server sit on the other side of every test the collection runs, so a
bug in one client must not be able to hide itself by being on both sides. Standard library only, since the
hosts run it with their own /usr/bin/python3.

``Etcd`` talks to one member over one kept-alive connection (not thread-safe): key ranges, put,
transactions that compare a key's revision (the apiserver's optimistic concurrency), delete, and membership
(list, add as learner, promote, remove). ``Etcd.watch`` opens a separate streaming connection.

Errors: EtcdError when the member answered and refused (``code`` is the gRPC status, ``message`` etcd's own
words); EtcdUnavailable when it could not be reached, the TLS handshake failed or no answer came in time.
"""

import base64
import collections
import http.client
import json
import socket
import ssl
import urllib.parse

KV = collections.namedtuple("KV", "key value create_revision mod_revision version")
Member = collections.namedtuple("Member", "id name peer_urls client_urls is_learner")


class EtcdError(Exception):
    """The member refused the request."""

    def __init__(self, endpoint, code, message):
        super().__init__("%s: %s" % (endpoint, message))
        self.endpoint, self.code, self.message = endpoint, code, message


class EtcdUnavailable(Exception):
    """No usable answer from the member (refused, reset, TLS failure, timeout)."""

    def __init__(self, endpoint, message):
        super().__init__("%s: %s" % (endpoint, message))
        self.endpoint, self.message = endpoint, message


def tls_context(ca_file, cert_file=None, key_file=None):
    """Trust exactly ``ca_file`` (no system store, no environment variable) and present the client pair."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_verify_locations(cafile=ca_file)
    if cert_file:
        context.load_cert_chain(cert_file, key_file)
    return context


def b64(data):
    """Keys and values cross the gateway base64-encoded."""
    return base64.b64encode(data.encode("utf-8") if isinstance(data, str) else bytes(data)).decode("ascii")


def unb64(text):
    return base64.b64decode(text) if text else b""


def prefix_end(prefix):
    """The ``range_end`` that selects every key starting with ``prefix``: the prefix with its last byte below
    0xff incremented (trailing 0xff bytes dropped); ``\\0`` (every key) when nothing is left."""
    data = bytearray(prefix.encode("utf-8") if isinstance(prefix, str) else prefix)
    while data and data[-1] == 0xFF:
        del data[-1]
    if not data:
        return b"\0"
    data[-1] += 1
    return bytes(data)


def _kv(raw):
    return KV(key=unb64(raw.get("key")).decode("utf-8"), value=unb64(raw.get("value")),
              create_revision=int(raw.get("create_revision") or 0), mod_revision=int(raw.get("mod_revision") or 0),
              version=int(raw.get("version") or 0))


def _member(raw):
    # The gateway leaves out fields at their zero value (isLearner false, no name before the member starts).
    return Member(id=int(raw.get("ID") or 0), name=raw.get("name") or "", peer_urls=list(raw.get("peerURLs") or ()),
                  client_urls=list(raw.get("clientURLs") or ()), is_learner=bool(raw.get("isLearner")))


def _header_revision(answer):
    return int((answer.get("header") or {}).get("revision") or 0)


def _address(endpoint):
    url = urllib.parse.urlsplit(endpoint)
    if url.scheme != "https" or not url.hostname:
        raise ValueError("etcd endpoint %r is not an https:// URL" % endpoint)
    return url.hostname, url.port or 2379


class Watch:
    """A streaming watch: ``messages()`` yields each gateway ``result`` (header, events, canceled, ...) until the
    stream ends; ``close()`` (from any thread) ends it. A ``canceled`` message (e.g. a compacted start revision)
    is yielded as it came, for the caller to judge."""

    def __init__(self, connection, response):
        self._connection = connection
        self._response = response

    def messages(self):
        while True:
            try:
                line = self._response.readline()
            except (OSError, ValueError, AttributeError, http.client.HTTPException):
                # AttributeError: close() from another thread released the stream under the reader.
                return
            if not line:
                return
            try:
                result = json.loads(line).get("result")
            except ValueError:
                return
            if result is None:
                return
            yield result

    def close(self):
        sock = self._connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._connection.close()


class Etcd:
    """One etcd member. ``timeout`` bounds each call and may be changed between calls."""

    def __init__(self, endpoint, context, timeout=5.0):
        self.endpoint = endpoint
        self.host, self.port = _address(endpoint)
        self.context = context
        self.timeout = timeout
        self._connection = None

    @classmethod
    def connect(cls, endpoint, ca_file, cert_file=None, key_file=None, timeout=5.0):
        return cls(endpoint, tls_context(ca_file, cert_file, key_file), timeout=timeout)

    def close(self):
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _open(self):
        if self._connection is None:
            self._connection = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                           timeout=self.timeout)
        elif self._connection.sock is not None:
            self._connection.sock.settimeout(self.timeout)
        self._connection.timeout = self.timeout
        return self._connection

    def _exchange(self, path, payload):
        """``(HTTP status, body)`` of one POST; a kept-alive connection the member dropped meanwhile is replaced
        once (the request never reached it)."""
        reused = self._connection is not None
        while True:
            connection = self._open()
            try:
                connection.request("POST", "/v3/" + path, body=payload, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                return response.status, response.read()
            except ssl.SSLError as exc:
                self.close()
                raise EtcdUnavailable(self.endpoint, "TLS handshake with the member failed: %s"
                                      % (getattr(exc, "verify_message", None) or exc.reason or exc))
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if not reused:
                    raise EtcdUnavailable(self.endpoint, "connection lost: %s" % exc)
                reused = False
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                if isinstance(exc, (socket.timeout, TimeoutError)):
                    raise EtcdUnavailable(self.endpoint, "no answer within %.1fs" % self.timeout)
                raise EtcdUnavailable(self.endpoint, getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)

    def call(self, path, body=None):
        """The decoded answer of ``/v3/<path>``; EtcdError carries etcd's own code and words on a refusal."""
        status, raw = self._exchange(path, json.dumps(body or {}).encode("utf-8"))
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            raise EtcdError(self.endpoint, -1, "HTTP %d, not JSON: %r" % (status, raw[:120]))
        if status != 200:
            raise EtcdError(self.endpoint, answer.get("code", -1), answer.get("message") or answer.get("error")
                            or "HTTP %d" % status)
        return answer

    # --- keys ------------------------------------------------------------------------------------------

    def range(self, key, prefix=False, limit=0, keys_only=False, serializable=False):
        """``(kvs, revision)`` for one key or, with ``prefix``, every key under it (sorted by key)."""
        request = {"key": b64(key)}
        if prefix:
            request["range_end"] = b64(prefix_end(key))
        for field, value in (("limit", limit), ("keys_only", keys_only), ("serializable", serializable)):
            if value:
                request[field] = value
        answer = self.call("kv/range", request)
        return [_kv(raw) for raw in answer.get("kvs") or ()], _header_revision(answer)

    def get(self, key):
        kvs = self.range(key)[0]
        return kvs[0] if kvs else None

    def put(self, key, value):
        """Unconditional put; returns the new revision."""
        return _header_revision(self.call("kv/put", {"key": b64(key), "value": b64(value)}))

    def delete(self, key, prefix=False):
        """How many keys were deleted."""
        request = {"key": b64(key)}
        if prefix:
            request["range_end"] = b64(prefix_end(key))
        return int(self.call("kv/deleterange", request).get("deleted") or 0)

    def _guarded(self, key, target, expected, operation):
        """``operation`` when the key's ``target`` (CREATE or MOD revision) equals ``expected``; otherwise the key
        is read back. ``(succeeded, revision, current KV or None)``."""
        field = {"CREATE": "create_revision", "MOD": "mod_revision"}[target]
        answer = self.call("kv/txn", {
            "compare": [{"key": b64(key), "result": "EQUAL", "target": target, field: str(expected)}],
            "success": [operation],
            "failure": [{"request_range": {"key": b64(key)}}],
        })
        if answer.get("succeeded"):
            return True, _header_revision(answer), None
        current = None
        for response in answer.get("responses") or ():
            found = (response.get("response_range") or {}).get("kvs") or ()
            current = _kv(found[0]) if found else None
        return False, _header_revision(answer), current

    def create(self, key, value):
        """Put only if the key does not exist."""
        return self._guarded(key, "CREATE", 0, {"request_put": {"key": b64(key), "value": b64(value)}})

    def put_if(self, key, value, mod_revision):
        """Put only if the key was last modified at ``mod_revision`` (a resourceVersion precondition)."""
        return self._guarded(key, "MOD", mod_revision, {"request_put": {"key": b64(key), "value": b64(value)}})

    def delete_if(self, key, mod_revision):
        """Delete only if the key was last modified at ``mod_revision``."""
        return self._guarded(key, "MOD", mod_revision, {"request_delete_range": {"key": b64(key)}})

    def watch(self, key, start_revision, prefix=True, range_end=None):
        """A Watch of the key (with ``prefix``, every key under it; with ``range_end``, every key in [key,
        range_end), ``"\0"`` meaning every key from ``key`` on) from ``start_revision`` on, with each event's
        previous value. Its own connection, with no read timeout: changes may be minutes apart."""
        request = {"create_request": {"key": b64(key), "start_revision": str(start_revision), "prev_kv": True}}
        if range_end is not None:
            request["create_request"]["range_end"] = b64(range_end)
        elif prefix:
            request["create_request"]["range_end"] = b64(prefix_end(key))
        connection = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=self.timeout)
        try:
            connection.request("POST", "/v3/watch", body=json.dumps(request).encode("utf-8"),
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise EtcdUnavailable(self.endpoint, "watch: %s" % exc)
        if response.status != 200:
            connection.close()
            raise EtcdError(self.endpoint, -1, "watch refused with HTTP %d" % response.status)
        connection.sock.settimeout(None)
        return Watch(connection, response)

    # --- cluster ---------------------------------------------------------------------------------------

    def members(self):
        return [_member(raw) for raw in self.call("cluster/member/list").get("members") or ()]

    def member_add(self, peer_urls, learner=False):
        """Add a member (a learner when asked); the new Member has no name until it starts."""
        return _member(self.call("cluster/member/add", {"peerURLs": list(peer_urls), "isLearner": bool(learner)})
                       .get("member") or {})

    def member_promote(self, member_id):
        self.call("cluster/member/promote", {"ID": str(member_id)})

    def member_remove(self, member_id):
        self.call("cluster/member/remove", {"ID": str(member_id)})

    def status(self):
        """The member's maintenance status (header.member_id, leader, raftIndex, dbSize, errors, isLearner)."""
        return self.call("maintenance/status")

    def alarm(self, action, member_id=0, alarm="NONE"):
        """``maintenance/alarm``: GET lists the alarms, ACTIVATE / DEACTIVATE one member's alarm."""
        return self.call("maintenance/alarm", {"action": action, "memberID": str(member_id), "alarm": alarm})
