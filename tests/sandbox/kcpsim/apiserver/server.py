# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTPS plumbing shared by the emulated control plane components: a threading HTTP/1.1 server whose TLS
handshake runs in the connection's own thread (a slow or broken client cannot stall the others), with
keep-alive, chunked streaming for watches, and client-certificate verification when a client CA is given
(a certificate is optional; one that does not verify fails the handshake, as with the real server)."""

import http.server
import select
import socket
import ssl
import urllib.parse

from kcpsim.apiserver import api

HANDSHAKE_TIMEOUT = 10.0
IDLE_TIMEOUT = 120.0


def server_context(cert_file, key_file, client_ca_file=None):
    """A TLS server context: the serving pair, and the client CA when clients may authenticate by certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    context.set_alpn_protocols(["http/1.1"])
    if client_ca_file:
        context.load_verify_locations(cafile=client_ca_file)
        context.verify_mode = ssl.CERT_OPTIONAL
    return context


class TLSServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler_class, context):
        self.context = context
        super().__init__(address, handler_class)

    def finish_request(self, request, client_address):
        request.settimeout(HANDSHAKE_TIMEOUT)
        # Headers and body leave in separate writes: without NODELAY, Nagle and the client's delayed ACK
        # add 40 ms to every answer.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            request.close()
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            tls.close()


class Handler(http.server.BaseHTTPRequestHandler):
    """Turns one HTTP request into an ``api.Request`` for ``server.app`` and writes the ``api.Response``."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT
    server_version = "kcpsim"
    sys_version = ""

    def _dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        query = {key: values[0] for key, values in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        body = self._body()
        try:
            peer_cert = self.connection.getpeercert()
        except (ValueError, AttributeError):
            peer_cert = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = api.Request(self.command, url.path or "/", query, headers, body, peer_cert, self._alive)
        response = self.server.app.handle(request)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Cache-Control", "no-cache, private")
        if response.stream is None:
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(response.body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in response.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (OSError, socket.timeout):
            self.close_connection = True
        finally:
            response.stream.close()

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()  # the blank line after the last chunk (no trailers expected)
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _alive(self):
        """Whether the client still holds the connection: during a watch it sends nothing, so a readable
        socket means it closed (or broke) its end."""
        try:
            readable = select.select([self.connection], [], [], 0)[0]
        except (OSError, ValueError):
            return False
        return not readable

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        log = getattr(self.server, "access_log", None)
        if log:
            log("%s %s" % (self.address_string(), format % args))


def serve(app, address, port, context, access_log=None):
    """A started-but-not-serving server for ``app`` on ``address:port`` (IPv4 or IPv6)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    server_class = type("TLSServer", (TLSServer,), {"address_family": family})
    server = server_class((address, port), Handler, context)
    server.app = app
    server.access_log = access_log
    return server
