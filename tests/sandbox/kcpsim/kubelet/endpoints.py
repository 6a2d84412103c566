# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's listening ports.

- ``healthzBindAddress:healthzPort`` (127.0.0.1:10248), plain HTTP ``/healthz`` → ``ok``: what kubeadm polls.
- ``address:port`` (0.0.0.0:10250), the kubelet API over TLS with the self-signed serving certificate the
  real kubelet makes (``<cert-dir>/kubelet.crt`` = serving cert + its CA, ``kubelet.key`` 0600): ``/healthz``
  answers, everything else is 401 (kubeadm's config turns anonymous access off and the emulation
  authenticates nobody). It occupies the port, so kubeadm's ``Port-10250`` preflight sees a running kubelet.
A taken healthz port is logged; a taken kubelet port stops the kubelet, as the real one exits.
"""

import datetime
import http.server
import logging
import os
import ssl
import threading

from kcpsim import pki

LOG = logging.getLogger("kubelet")


def _handler(public_paths, refusal):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path.split("?")[0] in public_paths
            status, body = (200, b"ok") if ok else refusal
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    return Handler


def _start(server, name):
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=name, daemon=True).start()
    return server


def serve_healthz(address, port):
    """Serve /healthz; returns the server, or None (logged) when the port is taken."""
    try:
        server = http.server.ThreadingHTTPServer((address, port), _handler({"/healthz"}, (404, b"404 page not found\n")))
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


def serve_kubelet_api(address, port, cert_dir, node_name, node_ip):
    """Serve the kubelet port over TLS; raises OSError when the port is taken."""
    cert_path, key_path = serving_certificate(cert_dir, node_name, node_ip)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server = http.server.ThreadingHTTPServer((address, port), _handler({"/healthz"}, (401, b"Unauthorized\n")))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return _start(server, "kubelet-api")
