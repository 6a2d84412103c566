# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small Kubernetes REST client on the standard library (http.client + ssl), for the emulators.

Authentication: client certificate, bearer token, or none (anonymous). TLS verification is always on
against the kubeconfig's CA, except in the explicit ``insecure_skip_tls_verify`` mode kubeadm uses for the
first, unauthenticated read of ``kube-public/cluster-info`` during token discovery (the CA is then pinned
by its hash, not trusted from the wire).

``watch`` opens a stream of its own (one connection per watch): the watch events as the server sends them, ending
cleanly when the server ends the stream (``timeoutSeconds``) and with WatchBroken when the connection breaks.

Failures are typed: NotFound (404), Conflict (409: stale resourceVersion or AlreadyExists),
Unauthorized (401), Forbidden (403), ServerError (5xx), other ApiError; ApiUnavailable when the server
cannot be reached, the TLS handshake fails or no answer comes within the timeout.
"""

import copy
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
import urllib.parse

from kcpsim import kubeconfig

JSON = "application/json"
PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}


class ApiUnavailable(Exception):
    """The API server could not be reached, refused the TLS handshake, or did not answer in time."""

    def __init__(self, server, message):
        super().__init__("%s: %s" % (server, message))
        self.server = server
        self.message = message


class WatchBroken(ApiUnavailable):
    """A watch stream ended without the server finishing it: the connection broke or went silent."""


class ApiError(Exception):
    """The API server answered with an error status; ``reason`` / ``message`` come from its Status object."""

    def __init__(self, status, reason, message, body=None):
        super().__init__("HTTP %d %s: %s" % (status, reason, message))
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body


class NotFound(ApiError):
    pass


class Conflict(ApiError):
    """409: ``reason`` is ``AlreadyExists`` on create, ``Conflict`` for a stale resourceVersion."""


class Unauthorized(ApiError):
    pass


class Forbidden(ApiError):
    pass


class ServerError(ApiError):
    pass


_ERRORS = {404: NotFound, 409: Conflict, 401: Unauthorized, 403: Forbidden}


def _error_for(status, body):
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    reason = data.get("reason") or http.client.responses.get(status, "Error")
    message = data.get("message") or (body or b"")[:200].decode("utf-8", "replace")
    cls = _ERRORS.get(status) or (ServerError if status >= 500 else ApiError)
    return cls(status, reason, message, data or None)


def resource_path(api_version, resource, namespace=None, name=None, subresource=None):
    """``/api/v1/namespaces/kube-system/pods/x`` or ``/apis/coordination.k8s.io/v1/...`` style paths."""
    prefix = "/api/" + api_version if "/" not in api_version else "/apis/" + api_version
    parts = [prefix]
    if namespace:
        parts.append("namespaces/" + urllib.parse.quote(namespace, safe=""))
    parts.append(resource)
    if name:
        parts.append(urllib.parse.quote(name, safe=""))
    if subresource:
        parts.append(subresource)
    return "/".join(parts)


def _context(ca_pem, client_cert_pem, client_key_pem, insecure_skip_tls_verify):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if insecure_skip_tls_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_pem:
        ctx.load_verify_locations(cadata=ca_pem.decode("ascii") if isinstance(ca_pem, bytes) else ca_pem)
    else:
        raise ValueError("a CA certificate is required unless insecure_skip_tls_verify is set")
    if client_cert_pem:
        if not client_key_pem:
            raise ValueError("a client certificate needs its key")
        # ssl loads client credentials only from files: a private 0600 temp file, removed at once.
        fd, path = tempfile.mkstemp(prefix="kcpsim-client-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(client_cert_pem + b"\n" + client_key_pem)
            ctx.load_cert_chain(path)
        finally:
            os.unlink(path)
    return ctx


class KubeClient:
    """One API server, one keep-alive connection (reopened when the server closed it); thread-safe."""

    def __init__(self, server, ca_pem=None, client_cert_pem=None, client_key_pem=None, token=None,
                 insecure_skip_tls_verify=False, timeout=10.0, user_agent="kcpsim"):
        url = urllib.parse.urlsplit(server)
        if url.scheme != "https" or not url.hostname:
            raise ValueError("API server %r must be an https:// URL" % server)
        self.server = server
        self.host = url.hostname
        self.port = url.port or 443
        self.timeout = timeout
        self.user_agent = user_agent
        self._token = token
        self._context = _context(ca_pem, client_cert_pem, client_key_pem, insecure_skip_tls_verify)
        self._conn = None
        self._lock = threading.Lock()

    @classmethod
    def from_credentials(cls, creds, **kwargs):
        return cls(creds.server, ca_pem=creds.ca_pem, client_cert_pem=creds.client_cert_pem,
                   client_key_pem=creds.client_key_pem, token=creds.token,
                   insecure_skip_tls_verify=creds.insecure_skip_tls_verify, **kwargs)

    @classmethod
    def from_kubeconfig(cls, path, **kwargs):
        return cls.from_credentials(kubeconfig.load_credentials(path), **kwargs)

    def clone(self):
        """Another client with the same server and credentials, on a connection of its own."""
        other = copy.copy(self)
        other._conn = None
        other._lock = threading.Lock()
        return other

    def close(self):
        with self._lock:
            self._close()

    def _close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method, path, body=None, content_type=JSON, query=None, timeout=None):
        """Send one request; return the decoded JSON body (or text for non-JSON answers), raise on errors."""
        if query:
            query = {k: v for k, v in query.items() if v is not None}
            path = path + "?" + urllib.parse.urlencode(query) if query else path
        payload = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        headers = {"Accept": JSON, "User-Agent": self.user_agent}
        if payload is not None:
            headers["Content-Type"] = content_type
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        timeout = timeout or self.timeout
        with self._lock:
            status, raw, response_type = self._send(method, path, payload, headers, timeout)
        if status >= 400:
            raise _error_for(status, raw)
        if "json" in (response_type or "") or raw[:1] in (b"{", b"["):
            try:
                return json.loads(raw or b"null")
            except ValueError:
                pass
        return raw.decode("utf-8", "replace")

    def _send(self, method, path, payload, headers, timeout):
        for attempt in (1, 2):
            reused = self._conn is not None
            if not reused:
                self._conn = http.client.HTTPSConnection(self.host, self.port, context=self._context, timeout=timeout)
            elif self._conn.sock is not None:
                self._conn.sock.settimeout(timeout)
            try:
                self._conn.request(method, path, body=payload, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self._close()
                return response.status, raw, response.getheader("Content-Type", "")
            except ssl.SSLError as exc:
                self._close()
                raise ApiUnavailable(self.server, "TLS handshake failed: %s" % (exc.reason or exc))
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                # A kept-alive connection the server closed meanwhile: retry once on a fresh one.
                self._close()
                if attempt == 2 or not reused:
                    raise ApiUnavailable(self.server, "connection lost: %s" % exc)
            except (socket.timeout, TimeoutError):
                self._close()
                raise ApiUnavailable(self.server, "no answer within %.1fs" % timeout)
            except (OSError, http.client.HTTPException) as exc:
                self._close()
                raise ApiUnavailable(self.server, getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
        raise AssertionError("unreachable")

    # --- resources -------------------------------------------------------------------------------------

    def get(self, api_version, resource, name, namespace=None, subresource=None, resource_version=None):
        """``resource_version="0"``: any copy the server holds (its watch cache), as client-go's GetOptions
        ``ResourceVersion: "0"``; None: the current object (a linearizable read)."""
        query = None if resource_version is None else {"resourceVersion": resource_version}
        return self.request("GET", resource_path(api_version, resource, namespace, name, subresource), query=query)

    def list(self, api_version, resource, namespace=None, label_selector=None, field_selector=None):
        """The list object (``items``, ``metadata.resourceVersion``); selectors as the API writes them."""
        return self.request("GET", resource_path(api_version, resource, namespace),
                            query={"labelSelector": label_selector, "fieldSelector": field_selector})

    def create(self, api_version, resource, body, namespace=None):
        return self.request("POST", resource_path(api_version, resource, namespace), body)

    def update(self, api_version, resource, body, namespace=None, subresource=None):
        """PUT the whole object; its ``metadata.resourceVersion`` makes the write conditional (409 if stale)."""
        name = (body.get("metadata") or {}).get("name")
        if not name:
            raise ValueError("update needs metadata.name in the body")
        return self.request("PUT", resource_path(api_version, resource, namespace, name, subresource), body)

    def patch(self, api_version, resource, name, patch, namespace=None, patch_type="merge", subresource=None):
        if patch_type not in PATCH_TYPES:
            raise ValueError("patch_type must be one of %s" % ", ".join(sorted(PATCH_TYPES)))
        return self.request("PATCH", resource_path(api_version, resource, namespace, name, subresource), patch,
                            content_type=PATCH_TYPES[patch_type])

    def delete(self, api_version, resource, name, namespace=None, body=None):
        return self.request("DELETE", resource_path(api_version, resource, namespace, name), body)

    def watch(self, api_version, resource, namespace=None, resource_version=None, field_selector=None,
              label_selector=None, timeout_seconds=300, bookmarks=True, idle_timeout=None):
        """A WatchStream from ``resource_version`` on (events after it), on a connection of its own. The server
        ends it after ``timeout_seconds``; ``idle_timeout`` (default: that plus 60 s) is how long a silent
        connection is trusted (the server sends a BOOKMARK every minute when ``bookmarks`` is asked for)."""
        query = {"watch": "true", "resourceVersion": resource_version, "fieldSelector": field_selector,
                 "labelSelector": label_selector, "timeoutSeconds": str(int(timeout_seconds)),
                 "allowWatchBookmarks": "true" if bookmarks else None}
        path = resource_path(api_version, resource, namespace) + "?" + urllib.parse.urlencode(
            {k: v for k, v in query.items() if v is not None})
        headers = {"Accept": JSON, "User-Agent": self.user_agent}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        conn = http.client.HTTPSConnection(self.host, self.port, context=self._context, timeout=self.timeout)
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            if response.status >= 400:
                raise _error_for(response.status, response.read())
        except ssl.SSLError as exc:
            conn.close()
            raise ApiUnavailable(self.server, "TLS handshake failed: %s" % (exc.reason or exc))
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise ApiUnavailable(self.server, "watch: %s" % (getattr(exc, "strerror", None) or exc))
        except ApiError:
            conn.close()
            raise
        if conn.sock is not None:
            conn.sock.settimeout(idle_timeout or timeout_seconds + 60)
        return WatchStream(self.server, conn, response)

    def get_path(self, path, timeout=None):
        """GET a non-resource path (``/readyz``, ``/version``); returns the body as text or decoded JSON."""
        return self.request("GET", path, timeout=timeout)


class WatchStream:
    """The events of one watch: ``events()`` yields each ``{"type", "object"}`` until the server ends the stream
    (returns) or the connection breaks or stays silent too long (WatchBroken); ``close()`` from any thread."""

    def __init__(self, server, connection, response):
        self.server = server
        self._connection = connection
        self._response = response
        self._closed = False

    def events(self):
        while True:
            try:
                line = self._response.readline()
            except (socket.timeout, TimeoutError):
                self.close()
                raise WatchBroken(self.server, "watch: nothing heard for too long")
            except (OSError, ValueError, AttributeError, http.client.HTTPException) as exc:
                if self._closed:
                    return
                self.close()
                raise WatchBroken(self.server, "watch: connection lost: %s" % (exc or type(exc).__name__))
            if not line:
                # http.client ends a chunked body cut short as quietly as a finished one; only a finished one
                # has read the last (empty) chunk, after which it forgets its chunk count.
                broken = self._response.chunk_left is not None and not self._closed
                self.close()
                if broken:
                    raise WatchBroken(self.server, "watch: the connection ended in the middle of the stream")
                return
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                self.close()
                raise WatchBroken(self.server, "watch: undecodable event")
            yield event

    def close(self):
        self._closed = True
        sock = self._connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._connection.close()
