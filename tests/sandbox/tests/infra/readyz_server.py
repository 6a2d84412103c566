# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tiny TLS server that stands in for an API server behind the sandbox's load balancer (test helper,
run inside a host): ``GET /readyz`` answers 200, or 500 while the file ``not_ready`` exists; any other
path answers the host's name. Usage: readyz_server.py <ip> <cert> <key> <not_ready> <pid file>."""

import http.server
import os
import socket
import ssl
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    not_ready = None

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        if self.path == "/readyz":
            code, body = (500, b"not ready") if os.path.exists(self.not_ready) else (200, b"ok")
        else:
            code, body = 200, socket.gethostname().encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main(ip, cert, key, not_ready, pid_file):
    Handler.not_ready = not_ready
    server = http.server.ThreadingHTTPServer((ip, 6443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(pid_file, "w") as handle:
        handle.write("%d\n" % os.getpid())
    server.serve_forever()


if __name__ == "__main__":
    main(*sys.argv[1:6])
