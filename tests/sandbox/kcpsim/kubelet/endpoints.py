# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's listening ports.

- ``healthzBindAddress:healthzPort`` (127.0.0.1:10248), plain HTTP ``/healthz`` → ``ok``: what kubeadm polls.
- ``address:port`` (0.0.0.0:10250), the kubelet API over TLS with the self-signed serving certificate the
  real kubelet makes (``<cert-dir>/kubelet.crt`` = serving cert + its CA, ``kubelet.key`` 0600). ``/healthz``
  answers; every other path wants a client certificate signed by ``authentication.x509.clientCAFile`` (kubeadm's
  config turns anonymous access off: 401 without one), and then the authorizer's yes (kubeadm's
  ``authorization.mode: Webhook``: a SubjectAccessReview to the API server), as the real kubelet maps paths to
  node subresources: ``/logs`` nodes/log, ``/stats`` nodes/stats, ``/metrics`` nodes/metrics, ``/spec``
  nodes/spec, anything else (``/containerLogs`` among them) nodes/proxy; a no is 403 in the kubelet's words.
  ``/containerLogs/<namespace>/<pod>/<container>`` serves what the container wrote (``previous``, ``tailLines``);
  no other path is emulated (404). It occupies the port, so kubeadm's ``Port-10250`` preflight sees a running
  kubelet.
A taken healthz port is logged; a taken kubelet port stops the kubelet, as the real one exits.
"""

import datetime
import http.server
import logging
import os
import ssl
import threading
import urllib.parse

from kcpsim import pki

LOG = logging.getLogger("kubelet")


class _Handler(http.server.BaseHTTPRequestHandler):
    """What both ports share: a plain-text answer, no access log."""

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _HealthzHandler(_Handler):
    def do_GET(self):
        if self.path.split("?")[0] == "/healthz":
            return self.answer(200, b"ok")
        return self.answer(404, b"404 page not found\n")


def _start(server, name):
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=name, daemon=True).start()
    return server


def serve_healthz(address, port):
    """Serve /healthz; returns the server, or None (logged) when the port is taken."""
    try:
        server = http.server.ThreadingHTTPServer((address, port), _HealthzHandler)
    except OSError as exc:
        LOG.error("failed to start the healthz server on %s:%d: %s", address, port, exc.strerror)
        return None
    return _start(server, "healthz")


def serving_certificate(cert_dir, node_name, node_ip):
    """``(cert path, key path)`` of the self-signed serving certificate, made once like the real kubelet's."""
    cert_path, key_path = os.path.join(cert_dir, "kubelet.crt"), os.path.join(cert_dir, "kubelet.key")
    if not (os.path.exists(cert_path) and os.path.exists(key_path)):
        stamp = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
        ca, ca_key = pki.new_ca("%s-ca@%d" % (node_name, stamp), algorithm="ECDSA-P256")
        cert, key = pki.new_leaf(ca, ca_key, "%s@%d" % (node_name, stamp), dns_names=[node_name],
                                 ip_addresses=[node_ip], usages=("server",), algorithm="ECDSA-P256")
        pki.write_key(key_path, key)
        pki.write_file(cert_path, pki.cert_pem(cert) + pki.cert_pem(ca), 0o644)
    return cert_path, key_path


# The node subresource a request path is authorized as (the real kubelet's auth.go); anything else is proxy.
_SUBRESOURCES = (("/logs", "log"), ("/stats", "stats"), ("/metrics", "metrics"), ("/spec", "spec"))


def subresource_of(path):
    return next((sub for prefix, sub in _SUBRESOURCES if path == prefix or path.startswith(prefix + "/")), "proxy")


def peer_identity(peer_certificate):
    """(user, groups) of a verified client certificate (``getpeercert()``): CN and every O, or None."""
    if not peer_certificate:
        return None
    names = [pair for rdn in peer_certificate.get("subject") or () for pair in rdn]
    user = next((value for key, value in names if key == "commonName"), None)
    return (user, [value for key, value in names if key == "organizationName"]) if user else None


def _api_handler(node_name, authorize, container_log):
    class Handler(_Handler):
        def do_GET(self):
            path, query = (self.path.split("?", 1) + [""])[:2]
            if path == "/healthz":
                return self.answer(200, b"ok")
            identity = peer_identity(self.connection.getpeercert())
            if identity is None:
                return self.answer(401, b"Unauthorized\n")
            subresource = subresource_of(path)
            allowed = authorize(identity[0], identity[1], "get", subresource, node_name)[0]
            if not allowed:
                refusal = "Forbidden (user=%s, verb=get, resource=nodes, subresource(s)=[%s])\n" % (identity[0], subresource)
                return self.answer(403, refusal.encode("utf-8"))
            parts = path.split("/")
            if len(parts) == 5 and parts[1] == "containerLogs":
                options = urllib.parse.parse_qs(query)
                output = container_log(parts[2], parts[3], parts[4], options.get("previous", [""])[0] == "true")
                if output is None:
                    missing = "container %s is not found in pod %s/%s" % (parts[4], parts[2], parts[3])
                    return self.answer(404, missing.encode("utf-8"))
                tail = options.get("tailLines", [""])[0]
                if tail.isdigit():
                    lines = output.splitlines(keepends=True)
                    output = b"".join(lines[len(lines) - int(tail):] if int(tail) else [])
                return self.answer(200, output)
            return self.answer(404, b"404 page not found\n")
    return Handler


def serve_kubelet_api(address, port, cert_dir, node_name, node_ip, client_ca_file, authorize, container_log):
    """Serve the kubelet port over TLS; raises OSError when the port is taken. ``authorize(user, groups, verb,
    subresource, node)`` gives (allowed, reason); ``container_log(namespace, pod, container, previous)`` bytes or
    None. Without a client CA file no client is authenticated."""
    cert_path, key_path = serving_certificate(cert_dir, node_name, node_ip)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    if client_ca_file and os.path.exists(client_ca_file):
        context.verify_mode = ssl.CERT_OPTIONAL
        context.load_verify_locations(client_ca_file)
    server = http.server.ThreadingHTTPServer((address, port), _api_handler(node_name, authorize, container_log))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return _start(server, "kubelet-api")
