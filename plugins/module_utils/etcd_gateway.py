# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The transport to one etcd member: etcd's v3 JSON gateway (``POST /v3/<service>/<method>``) over mutual TLS.

Standard library only, so it runs on the controller and on a bare control plane host alike, with no
protobuf or gRPC wheel to match (docs/etcd-client.md says why this route was chosen).

Trust is set here and only here: the CA given by the caller is the only trust anchor. Environment
variables such as SSL_CERT_FILE, REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE are never consulted.

The gateway encodes 64-bit integers as strings and leaves out fields that hold their default value
(``isLearner: false``, empty lists, ``0``): readers use ``.get(key, default)``.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
from urllib.parse import urlsplit


class EtcdError(Exception):
    """etcd answered, and refused: ``code`` is the gRPC status code, ``message`` etcd's own words."""

    def __init__(self, endpoint, code, message):
        super().__init__("%s: %s" % (endpoint, message))
        self.endpoint = endpoint
        self.code = code
        self.message = message


class EtcdUnavailable(Exception):
    """The member could not be reached or did not answer in time."""

    def __init__(self, endpoint, message):
        super().__init__("%s: %s" % (endpoint, message))
        self.endpoint = endpoint
        self.message = message


class EtcdTLSError(EtcdUnavailable):
    """The TLS handshake failed: wrong CA, expired or unknown client certificate, wrong server name."""


def b64(text):
    """etcd keys and values travel base64-encoded."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    return base64.b64encode(text).decode("ascii")


def _tls_failure(exc):
    """Say which side refused the handshake, and what usually causes it."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "TLS: the member's certificate is not trusted with the given CA file: %s" % exc.verify_message
    reason = exc.reason or str(exc)
    if "ALERT" in reason and ("CERTIFICATE" in reason or "UNKNOWN_CA" in reason):
        return (
            "TLS: the member rejected the client certificate (%s): it is expired, not yet valid, or not issued "
            "by the etcd CA" % reason
        )
    return "TLS handshake failed: %s" % reason


def _no_passphrase():
    # Without a callback OpenSSL would prompt on a terminal a module does not have (and fail with EINVAL).
    raise ValueError("the key is encrypted")


def tls_context(ca_file, cert_file=None, key_file=None):
    """A client context that trusts ``ca_file`` alone and presents the given client certificate."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cafile=ca_file)
    if cert_file:
        ctx.load_cert_chain(cert_file, key_file, password=_no_passphrase)
    return ctx


def _pem_text(path):
    with open(path, "rb") as handle:
        return handle.read().decode("ascii", "replace")


def tls_file_problems(ca_file, cert_file, key_file):
    """What is wrong with these files as a trust anchor and a client certificate, each problem naming its file
    (empty = ``tls_context`` can load them). Reads the files only to tell which one is at fault."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=ca_file)
    except (ssl.SSLError, OSError) as exc:
        return ["ca_file: %s holds no usable PEM CA certificate (%s)" % (ca_file, getattr(exc, "reason", None) or exc)]
    problems = []
    if "-----BEGIN CERTIFICATE-----" not in _pem_text(cert_file):
        problems.append("cert_file: %s holds no PEM certificate" % cert_file)
    key_text = _pem_text(key_file)
    if "ENCRYPTED" in key_text:
        problems.append(
            "key_file: %s is encrypted with a passphrase, which a module cannot type: give the unencrypted key "
            "(kubeadm writes its keys unencrypted, mode 0600)" % key_file
        )
    elif "PRIVATE KEY-----" not in key_text:
        problems.append("key_file: %s holds no PEM private key" % key_file)
    if problems:
        return problems
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=cert_file)
    except (ssl.SSLError, OSError) as exc:
        return ["cert_file: %s is not a valid PEM certificate (%s)" % (cert_file, getattr(exc, "reason", None) or exc)]
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(cert_file, key_file, password=_no_passphrase)
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        if reason == "KEY_VALUES_MISMATCH":
            return ["key_file: %s is not the private key of cert_file %s (KEY_VALUES_MISMATCH)" % (key_file, cert_file)]
        return ["key_file: %s is not a valid PEM private key for cert_file %s (%s)" % (key_file, cert_file, reason)]
    return []


class GatewayClient:
    """Calls one member's gateway. Keeps its TLS connection open between calls; not thread-safe."""

    def __init__(self, endpoint, context, timeout=5.0):
        """``endpoint``: the member's client URL, e.g. ``https://10.0.0.11:2379``."""
        try:
            parts = urlsplit(endpoint)
            port = parts.port or 2379
        except ValueError:
            parts, port = None, None
        if parts is None or parts.scheme != "https" or not parts.hostname:
            raise ValueError("etcd endpoint %r must be an https:// URL" % endpoint)
        self.endpoint = endpoint
        self.host = parts.hostname
        self.port = port
        self.context = context
        self.timeout = timeout
        self._conn = None

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def call(self, path, body=None, timeout=None):
        """POST ``body`` to ``/v3/<path>`` and return the decoded answer, or raise one of this module's errors."""
        return self._request("POST", "/v3/" + path, json.dumps(body or {}), timeout)

    def stream(self, path, body=None, timeout=None):
        """POST to a server-streaming ``/v3/<path>`` (the gateway sends one JSON object a line) and yield each
        message's ``result``; an ``error`` message raises EtcdError. Uses a connection of its own."""
        timeout = timeout or self.timeout
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)
        try:
            try:
                conn.request("POST", "/v3/" + path, body=json.dumps(body or {}), headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                if response.status != 200:
                    raw = response.read()
                    raise EtcdError(self.endpoint, -1, "HTTP %d: %s" % (response.status, raw[:200]))
                for line in response:
                    if not line.strip():
                        continue
                    try:
                        message = json.loads(line)
                    except ValueError:
                        raise EtcdError(self.endpoint, -1, "a streamed message that is not JSON")
                    if message.get("error"):
                        error = message["error"]
                        raise EtcdError(self.endpoint, error.get("code", -1), error.get("message") or str(error))
                    yield message.get("result") or {}
            except ssl.SSLError as exc:
                raise EtcdTLSError(self.endpoint, _tls_failure(exc))
            except (socket.timeout, TimeoutError):
                raise EtcdUnavailable(self.endpoint, "no answer within %.1fs" % timeout)
            except (http.client.HTTPException, OSError) as exc:
                raise EtcdUnavailable(self.endpoint, getattr(exc, "strerror", None) or str(exc))
        finally:
            conn.close()

    def version(self, timeout=None):
        """``GET /version``: the member's own version and the cluster version (``etcdserver``, ``etcdcluster``)."""
        return self._request("GET", "/version", None, timeout)

    def _request(self, method, url_path, payload, timeout):
        timeout = timeout or self.timeout
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)
            else:
                self._conn.timeout = timeout
                if self._conn.sock is not None:
                    self._conn.sock.settimeout(timeout)
            try:
                self._conn.request(method, url_path, body=payload, headers={"Content-Type": "application/json"})
                response = self._conn.getresponse()
                raw = response.read()
                break
            except ssl.SSLError as exc:
                self.close()
                raise EtcdTLSError(self.endpoint, _tls_failure(exc))
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                # A kept-alive connection the member closed meanwhile: reconnect once.
                self.close()
                if attempt == 2:
                    raise EtcdUnavailable(self.endpoint, "connection lost: %s" % exc)
            except (socket.timeout, TimeoutError):
                self.close()
                raise EtcdUnavailable(self.endpoint, "no answer within %.1fs" % timeout)
            except OSError as exc:
                self.close()
                raise EtcdUnavailable(self.endpoint, exc.strerror or str(exc))
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            raise EtcdError(self.endpoint, -1, "HTTP %d with a body that is not JSON" % response.status)
        if response.status != 200:
            raise EtcdError(self.endpoint, data.get("code", -1), data.get("message") or data.get("error") or raw[:200])
        return data
