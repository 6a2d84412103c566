# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The load balancer on the API endpoint: a real HAProxy on ``<VIP>:6443`` in the root namespace.

TCP mode; each backend is health-checked with ``GET /readyz`` over TLS without verification, every 500 ms,
down after 2 failures, up after 1 success. It connects to backends from the VIP, so a partitioned host
is cut off from the load balancer too. The backends are the control plane candidates; when machines come
and go the config is rewritten and HAProxy reloaded without dropping connections (master-worker,
SIGUSR2), carrying the servers' health state over through a server-state file.
"""

import os
import signal
import socket

from . import external_etcd
from .addressing import API_PORT
from .commands import WAIT_LIMIT, run, wait_until, where_to_look
from .errors import SandboxError
from .state import write_file

BACKEND = "control-plane"
PROCESS = "haproxy"
# How long a stopping HAProxy may finish its connections before it is killed.
STOP_GRACE = 2.0


def render_config(vip, backends, admin_socket, state_file):
    """HAProxy's config for the VIP and ``backends`` [(name, ip)] (pure)."""
    lines = [
        "# The sandbox's API endpoint load balancer (test and demo infrastructure); generated, do not edit.",
        "global",
        "    log stderr format iso local0 notice",
        "    stats socket %s mode 600 level admin expose-fd listeners" % admin_socket,
        "    server-state-file %s" % state_file,
        "defaults",
        "    mode tcp",
        "    log global",
        "    option dontlognull",
        "    load-server-state-from-file global",
        "    timeout connect 2s",
        # API watches stay open for a long time.
        "    timeout client 1h",
        "    timeout server 1h",
        "    retries 2",
        "    option redispatch 1",
        "frontend kube-apiserver",
        "    bind %s:%d" % (vip, API_PORT),
        "    default_backend %s" % BACKEND,
        "backend %s" % BACKEND,
        "    balance roundrobin",
        "    source %s" % vip,
        "    option httpchk GET /readyz",
        "    http-check expect status 200",
        "    default-server check check-ssl verify none inter 500ms fall 2 rise 1",
    ]
    lines += ["    server %s %s:%d" % (name, ip, API_PORT) for name, ip in backends]
    return "\n".join(lines) + "\n"


class LoadBalancer:
    def __init__(self, sbx):
        self.sbx = sbx
        self.config = os.path.join(sbx.haproxy_dir, "haproxy.cfg")
        self.admin_socket = os.path.join(sbx.haproxy_dir, "admin.sock")
        self.state_file = os.path.join(sbx.haproxy_dir, "server-state")
        self.log = os.path.join(sbx.logs_dir, "haproxy.log")

    def backends(self):
        """The control plane candidates: a worker host (``worker_group``) or an external etcd host serves no API."""
        return sorted((name, record["ip"]) for name, record in self.sbx.hosts.items()
                      if not record.get("worker_group") and not external_etcd.is_etcd_host(record))

    def backend_names(self):
        return {name for name, _ip in self.backends()}

    def master(self):
        return self.sbx.process(PROCESS)

    def write_config(self):
        text = render_config(self.sbx.network.vip, self.backends(), self.admin_socket, self.state_file)
        write_file(self.config, text, 0o600)
        run(["haproxy", "-c", "-q", "-f", self.config])

    def start(self):
        """Start HAProxy with the current backends (no-op when it runs); returns once it serves."""
        if self.master():
            return self.sync()
        os.makedirs(self.sbx.haproxy_dir, mode=0o700, exist_ok=True)
        self.write_config()
        process = self.sbx.spawn(PROCESS, ["haproxy", "-W", "-db", "-f", self.config], self.log)
        wanted = self.backend_names()
        wait_until(lambda: self.serving_names() == wanted or process.poll() is not None, WAIT_LIMIT,
                   "HAProxy to serve on %s:%d" % (self.sbx.network.vip, API_PORT), [self.log])
        if process.poll() is not None:
            raise SandboxError("HAProxy exited at start (exit %d); %s" % (process.returncode, where_to_look([self.log])))

    def sync(self):
        """Make HAProxy's backends the current hosts: rewrite the config and reload without a drop."""
        master = self.master()
        if not master:
            return self.start()
        wanted = self.backend_names()
        if self.serving_names() == wanted:
            return None
        write_file(self.state_file, self.command("show servers state"), 0o600)
        self.write_config()
        master.signal(signal.SIGUSR2)
        wait_until(lambda: self.serving_names() == wanted, WAIT_LIMIT, "HAProxy to reload its backends", [self.log])
        return None

    def stop(self):
        """SIGTERM to the master (it stops its workers), SIGKILL if it has not ended in time."""
        ref = self.master()
        if ref:
            ref.signal(signal.SIGTERM)
            try:
                wait_until(lambda: not ref.alive(), STOP_GRACE, "HAProxy to stop")
            except SandboxError:
                ref.signal(signal.SIGKILL)
                wait_until(lambda: not ref.alive(), WAIT_LIMIT, "HAProxy to be killed", [self.log])
        self.sbx.forget_process(PROCESS)

    def command(self, text):
        """One command on HAProxy's admin socket; its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2.0)
            conn.connect(self.admin_socket)
            conn.sendall(text.encode() + b"\n")
            chunks = []
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def server_states(self):
        """{server: status} of the backend, e.g. ``UP``, ``DOWN``, ``MAINT``; {} when HAProxy does not answer."""
        try:
            csv = self.command("show stat")
        except OSError:
            return {}
        header, states = None, {}
        for line in csv.splitlines():
            if line.startswith("# "):
                header = line[2:].split(",")
            elif header and line:
                row = dict(zip(header, line.split(",")))
                if row.get("pxname") == BACKEND and row.get("svname") not in ("BACKEND", "FRONTEND"):
                    states[row["svname"]] = row.get("status", "")
        return states

    def serving_names(self):
        states = self.server_states()
        return set(states) if states or self._answers() else None

    def _answers(self):
        try:
            return bool(self.command("show info"))
        except OSError:
            return False
