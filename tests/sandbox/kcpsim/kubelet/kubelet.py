# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet process: startup checks in the real kubelet's order, then the static pod loop.

Startup: flags → ``--config`` (missing: exit 1, systemd restarts it until kubeadm writes it; both are read by
kcpsim.kubelet.__main__ before this module is imported) → credentials
(``--kubeconfig``, else TLS bootstrap with ``--bootstrap-kubeconfig``: first when ``rotateCertificates`` is
off, beside the static pods when it is on; else exit 1; neither flag given = standalone, static pods only) →
the runtime socket must answer (else exit 1). Then the pod loop runs every 0.5 s on the main thread, the API
side on its own thread, the listening ports (endpoints) on others; a taken kubelet port (10250) stops it.
SIGTERM / SIGINT stop the kubelet and leave its static pods running.
"""

import json
import logging
import os
import signal
import socket
import stat
import subprocess
import threading

from kcpsim import kubeclient, version
from kcpsim.kubelet import apisync, certs, config, endpoints, manifests, pods
from kcpsim.runtime import images, processes

LOG = logging.getLogger("kubelet")
SYNC_PERIOD = 0.5
BOOTSTRAP_TIMEOUT = 300.0
API_TIMEOUT = 10.0


def runtime_up(socket_path):
    try:
        return stat.S_ISSOCK(os.stat(socket_path).st_mode)
    except OSError:
        return False


def runtime_answers(socket_path):
    """Whether the runtime socket accepts a connection (the startup check of the CRI endpoint)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(socket_path)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def runtime_version(socket_path):
    """The runtime's CRI version answer (its stand-in's one JSON line on the socket), None when it gives none."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        answer = b""
        try:
            probe.connect(socket_path)
            while b"\n" not in answer and len(answer) < 4096:
                chunk = probe.recv(4096)
                if not chunk:
                    break
                answer += chunk
        except OSError:
            return None
    try:
        parsed = json.loads(answer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _read(path, default=""):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return default


def detect_node_ip():
    """IPv4 of the default route's interface, else the first global IPv4, else 127.0.0.1."""
    device = None
    for line in _read("/proc/net/route").splitlines()[1:]:
        fields = line.split()
        if len(fields) > 2 and fields[1] == "00000000":
            device = fields[0]
            break
    command = ["ip", "-4", "-o", "addr", "show"] + (["dev", device] if device else ["scope", "global"])
    try:
        output = subprocess.run(command, capture_output=True, text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        output = ""
    for line in output.splitlines():
        fields = line.split()
        if "inet" in fields and not fields[fields.index("inet") + 1].startswith("127."):
            return fields[fields.index("inet") + 1].split("/")[0]
    return "127.0.0.1"


def machine_facts(node_name, node_ip, socket_path, storage_path, kubelet_port=10250):
    meminfo = dict(line.split(":", 1) for line in _read("/proc/meminfo").splitlines() if ":" in line)
    try:
        fs = os.statvfs(storage_path)
        storage_kib = fs.f_blocks * fs.f_frsize // 1024
    except OSError:
        storage_kib = 0
    os_release = dict(line.split("=", 1) for line in _read("/etc/os-release").splitlines() if "=" in line)
    return {
        "hostname": node_name, "node_ip": node_ip, "runtime_socket": socket_path, "kubelet_port": kubelet_port,
        "cpus": os.cpu_count() or 1, "memory_kib": int((meminfo.get("MemTotal") or "0 kB").split()[0]),
        "storage_kib": storage_kib, "os_image": os_release.get("PRETTY_NAME", "Linux").strip('"'),
        "kernel": os.uname().release, "machine_id": _read("/etc/machine-id") or node_name,
        "boot_id": _read("/proc/sys/kernel/random/boot_id"), "kubelet_version": version.current(),
    }


class Kubelet:
    def __init__(self, parsed, kubelet_config, node_name, node_ip, credentials):
        self.flags = parsed
        self.config = kubelet_config
        self.node_name = node_name
        self.node_ip = node_ip
        self.credentials = credentials  # None: standalone
        self.stop = threading.Event()

    def authorize(self, user, groups, verb, subresource, node):
        """(allowed, reason) of a kubelet API request: AlwaysAllow, or Webhook (a SubjectAccessReview the API
        server answers, with this kubelet's own credentials; no answer is no)."""
        if self.config.authorization_mode == "AlwaysAllow":
            return True, ""
        if self.credentials is None or not os.path.exists(self.credentials.kubeconfig_path):
            return False, "no credentials to ask the API server with"
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                  "spec": {"user": user, "groups": list(groups), "resourceAttributes": {
                      "verb": verb, "group": "", "version": "v1", "resource": "nodes", "subresource": subresource,
                      "name": node}}}
        try:
            answer = kubeclient.KubeClient.from_kubeconfig(self.credentials.kubeconfig_path, timeout=API_TIMEOUT).create(
                "authorization.k8s.io/v1", "subjectaccessreviews", review)
        except (kubeclient.ApiError, kubeclient.ApiUnavailable, OSError, ValueError) as exc:
            LOG.error("authorizing %s for nodes/%s: %s", user, subresource, exc)
            return False, str(exc)
        status = answer.get("status") or {}
        return bool(status.get("allowed")), status.get("reason") or ""

    def run(self):
        signal.signal(signal.SIGTERM, lambda *_: self.stop.set())
        signal.signal(signal.SIGINT, lambda *_: self.stop.set())
        socket_path = self.flags.runtime_socket
        workers = pods.PodWorkers(processes.ProcessRuntime(), images.ImageIndex(), self.node_ip,
                                  self.config.probe_scale)
        workers.adopt()
        static_pods = manifests.ManifestDir(self.config.static_pod_path)
        try:
            servers = [endpoints.serve_kubelet_api(
                self.config.address, self.config.port, self.flags.get("cert-dir", "/var/lib/kubelet/pki"),
                self.node_name, self.node_ip, self.config.client_ca_file, self.authorize,
                lambda namespace, pod, container, previous: workers.container_log(namespace, pod, container,
                                                                                  self.node_name, previous))]
        except OSError as exc:
            LOG.error("failed to listen on %s:%d: %s", self.config.address, self.config.port, exc.strerror or exc)
            return 1
        servers.append(endpoints.serve_healthz(self.config.healthz_bind_address, self.config.healthz_port))
        if self.credentials is not None:
            facts = machine_facts(self.node_name, self.node_ip, socket_path,
                                  self.flags.get("root-dir", "/var/lib/kubelet"), self.config.port)
            apisync.ApiSync(
                connect=lambda: self.credentials.client(self.stop, BOOTSTRAP_TIMEOUT, timeout=API_TIMEOUT),
                node_name=self.node_name, flag_labels=self.flags.labels,
                taints=self.flags.taints or self.config.register_with_taints, machine=facts,
                runtime_up=lambda: runtime_up(socket_path), runtime_version=lambda: runtime_version(socket_path),
                pods=workers, heartbeat=self.config.heartbeat, report_frequency=self.config.node_status_report_frequency,
                lease_duration=self.config.node_lease_duration, stop=self.stop).start()
        LOG.info("kubelet %s running as node %s (%s), static pods from %s", version.current(), self.node_name,
                 self.node_ip, self.config.static_pod_path or "(none)")
        reported = set()
        while not self.stop.is_set():
            wanted, problems = static_pods.scan()
            for problem in set(problems) - reported:
                LOG.error("static pod manifest: %s", problem)
            reported = set(problems)
            workers.sync(wanted, runtime_up(socket_path))
            self.stop.wait(SYNC_PERIOD)
        workers.shutdown()
        for server in filter(None, servers):
            server.shutdown()
        LOG.info("kubelet stopped; static pods keep running")
        return 0


def start(parsed, config_text):
    """Everything after the flags and the ``--config`` file are read (kcpsim.kubelet.__main__ reads them):
    config, credentials, the runtime check, then the kubelet until it stops. Returns the exit status."""
    try:
        kubelet_config = config.parse(config_text, parsed.get("config")) if parsed.get("config") else config.KubeletConfig({})
    except config.ConfigError as exc:
        LOG.error("command failed: %s", exc)
        return 1
    node_name = (parsed.get("hostname-override") or socket.gethostname()).lower()
    credentials = None
    if parsed.get("kubeconfig") or parsed.get("bootstrap-kubeconfig"):
        credentials = certs.ClientCredentials(
            parsed.get("kubeconfig", "/etc/kubernetes/kubelet.conf"),
            parsed.get("bootstrap-kubeconfig", "/etc/kubernetes/bootstrap-kubelet.conf"),
            parsed.get("cert-dir", "/var/lib/kubelet/pki"), node_name)
        if not credentials.available():
            LOG.error("failed to run Kubelet: unable to load bootstrap kubeconfig: stat %s: no such file or "
                      "directory", credentials.bootstrap_path)
            return 1
    socket_path = parsed.runtime_socket
    problem = runtime_answers(socket_path)
    if problem:
        LOG.error("failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint "
                  "%r: %s", parsed.get("container-runtime-endpoint", "unix://" + socket_path), problem)
        return 1
    kubelet = Kubelet(parsed, kubelet_config, node_name, parsed.get("node-ip") or detect_node_ip(), credentials)
    if credentials is not None and not os.path.exists(credentials.kubeconfig_path) \
            and not kubelet_config.rotate_certificates:
        # Without certificate rotation the real kubelet bootstraps before it starts anything else, static pods
        # included. With rotation (kubeadm's setting) its certificate manager bootstraps in the background while
        # the static pods run: that is how a control plane node bootstraps against its own API server
        # (ControlPlaneKubeletLocalMode), which runs as one of those static pods.
        try:
            credentials.bootstrap(kubelet.stop, BOOTSTRAP_TIMEOUT, timeout=API_TIMEOUT)
        except certs.CredentialsError as exc:
            LOG.error("failed to run Kubelet: %s", exc)
            return 1
    return kubelet.run()
