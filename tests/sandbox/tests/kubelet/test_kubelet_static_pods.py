# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet (built bundle, Debian's python3) runs real etcd from a static pod manifest, like kubeadm's.

No API server here: the kubelet runs standalone (no kubeconfig flags), which is also how it must behave on
an init node before the first apiserver exists. Everything listens on loopback ports picked at random.
"""

import json
import os
import signal
import socket
import ssl
import stat
import urllib.error
import urllib.request

import pytest
import yaml

from kcpsandbox.commands import wait_until
from kcpsim import pki
from kubelet_harness import free_port

pytestmark = pytest.mark.etcd


@pytest.fixture
def etcd_setup(kubelet_host):
    """PKI and ports for one etcd member on loopback; returns a function that writes its manifest."""
    pki_dir = kubelet_host.root / "pki"
    ca, ca_key = pki.new_ca("etcd-ca", algorithm="ECDSA-P256")
    pki.write_pair(str(pki_dir), "ca", ca, ca_key)
    server, server_key = pki.new_leaf(ca, ca_key, kubelet_host.node_name, dns_names=["localhost"],
                                      ip_addresses=["127.0.0.1"], usages=("server", "client"), algorithm="ECDSA-P256")
    pki.write_pair(str(pki_dir), "server", server, server_key)
    ports = {"client": free_port(), "peer": free_port(), "metrics": free_port()}

    def write(extra_flags=(), name="etcd.yaml", image="registry.k8s.io/etcd:3.6.8-0"):
        manifest = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "etcd", "namespace": "kube-system",
                         "labels": {"component": "etcd", "tier": "control-plane"}},
            "spec": {"hostNetwork": True, "containers": [{
                "name": "etcd", "image": image,
                "command": ["etcd", "--name=%s" % kubelet_host.node_name,
                            "--data-dir=%s" % (kubelet_host.root / "etcd-data"),
                            "--listen-client-urls=https://127.0.0.1:%d" % ports["client"],
                            "--advertise-client-urls=https://127.0.0.1:%d" % ports["client"],
                            "--listen-peer-urls=http://127.0.0.1:%d" % ports["peer"],
                            "--initial-advertise-peer-urls=http://127.0.0.1:%d" % ports["peer"],
                            "--initial-cluster=%s=http://127.0.0.1:%d" % (kubelet_host.node_name, ports["peer"]),
                            "--listen-metrics-urls=http://127.0.0.1:%d" % ports["metrics"],
                            "--cert-file=%s/server.crt" % pki_dir, "--key-file=%s/server.key" % pki_dir,
                            "--trusted-ca-file=%s/ca.crt" % pki_dir, "--client-cert-auth=true"] + list(extra_flags),
                "startupProbe": {"httpGet": {"host": "127.0.0.1", "port": ports["metrics"], "scheme": "HTTP",
                                             "path": "/health?serializable=false"},
                                 "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 15,
                                 "failureThreshold": 24},
            }]},
        }
        (kubelet_host.manifests / name).write_text(yaml.safe_dump(manifest))
        return manifest

    return {"write": write, "ports": ports}


def etcd_healthy(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=2) as response:
            return json.load(response).get("health") == "true"
    except OSError:
        return False


@pytest.fixture
def running_etcd(kubelet_host, etcd_setup):
    """containerd + kubelet up, and etcd started by the kubelet from its manifest and healthy."""
    kubelet_host.start_containerd()
    manifest = etcd_setup["write"]()
    kubelet_host.start_kubelet()
    pid = wait_until(lambda: kubelet_host.pid("etcd"), 20, "etcd's pid file")
    wait_until(lambda: etcd_healthy(etcd_setup["ports"]["metrics"]), 30, "etcd to be healthy")
    return {"pid": pid, "manifest": manifest}


def test_a_manifest_starts_real_etcd_with_exactly_its_flags(kubelet_host, etcd_setup, running_etcd, releases):
    argv = kubelet_host.cmdline(running_etcd["pid"])
    command = running_etcd["manifest"]["spec"]["containers"][0]["command"]
    # etcd:3.6.8-0's entry point is the wrapper that adds /livez and /readyz (test_etcd_image.py), a
    # python3 zipapp: the kernel puts its interpreter first.
    entry_point = str(releases / "etcd" / "3.5.1" / "etcd-image")
    assert argv == ["/usr/bin/python3", entry_point] + command[1:]
    assert os.getpgid(running_etcd["pid"]) == running_etcd["pid"], "a static pod runs in its own process group"
    assert (kubelet_host.log_dir / "pods" / "etcd.log").stat().st_size > 0


def test_a_killed_etcd_is_restarted_with_a_new_pid(kubelet_host, etcd_setup, running_etcd):
    os.kill(running_etcd["pid"], signal.SIGKILL)
    new_pid = wait_until(lambda: (kubelet_host.pid("etcd") or running_etcd["pid"]) != running_etcd["pid"]
                         and kubelet_host.pid("etcd"), 15, "etcd to be restarted")
    wait_until(lambda: etcd_healthy(etcd_setup["ports"]["metrics"]), 30, "the restarted etcd to be healthy")
    state = json.loads((kubelet_host.run_dir / "pods" / "etcd.json").read_text())
    assert (state["pid"], state["restarts"]) == (new_pid, 1)


def test_a_changed_manifest_restarts_etcd_with_the_new_flags(kubelet_host, etcd_setup, running_etcd):
    etcd_setup["write"](["--snapshot-count=5000"])
    new_pid = wait_until(lambda: kubelet_host.pid("etcd") not in (None, running_etcd["pid"]) and kubelet_host.pid("etcd"),
                         15, "etcd to be restarted for its new manifest")
    assert "--snapshot-count=5000" in kubelet_host.cmdline(new_pid)
    wait_until(lambda: etcd_healthy(etcd_setup["ports"]["metrics"]), 30, "etcd with the new flags to be healthy")


def test_a_removed_manifest_stops_etcd_and_its_pid_file(kubelet_host, etcd_setup, running_etcd):
    (kubelet_host.manifests / "etcd.yaml").unlink()
    wait_until(lambda: not os.path.exists("/proc/%d" % running_etcd["pid"]), 15, "etcd to stop")
    wait_until(lambda: not (kubelet_host.run_dir / "pods" / "etcd.pid").exists(), 5, "the pid file to go")


def test_etcd_outlives_a_stopped_kubelet_and_the_next_kubelet_adopts_it(kubelet_host, running_etcd, procs):
    procs.stop(kubelet_host.kubelet)
    assert kubelet_host.kubelet.returncode == 0
    assert kubelet_host.pid("etcd") == running_etcd["pid"], "containers outlive the kubelet"
    kubelet_host.start_kubelet()
    wait_until(lambda: "adopted static pod etcd" in kubelet_host.log(), 15, "the new kubelet to adopt etcd")
    assert kubelet_host.pid("etcd") == running_etcd["pid"]
    os.kill(running_etcd["pid"], signal.SIGKILL)
    wait_until(lambda: kubelet_host.pid("etcd") not in (None, running_etcd["pid"]), 15,
               "the adopting kubelet to restart a killed etcd")


def test_a_hold_file_keeps_etcd_down_until_removed(kubelet_host, etcd_setup, running_etcd):
    hold = kubelet_host.run_dir / "pods" / "etcd.hold"
    hold.touch()
    wait_until(lambda: not os.path.exists("/proc/%d" % running_etcd["pid"]), 15, "the held etcd to stop")
    assert not etcd_healthy(etcd_setup["ports"]["metrics"])
    hold.unlink()
    wait_until(lambda: etcd_healthy(etcd_setup["ports"]["metrics"]), 30, "etcd to come back after the hold")


def test_an_image_missing_from_the_mirror_is_not_started(kubelet_host, etcd_setup):
    kubelet_host.start_containerd()
    etcd_setup["write"](image="registry.k8s.io/etcd:9.9.9-0")
    kubelet_host.start_kubelet()
    wait_until(lambda: "image registry.k8s.io/etcd:9.9.9-0 is not in the mirror" in kubelet_host.log(), 15,
               "the kubelet to report the missing image")
    assert kubelet_host.pid("etcd") is None


@pytest.mark.parametrize("breakage, message", [
    ("no config", "failed to load kubelet config file"),
    ("no runtime socket", "validate CRI v1 runtime API"),
    ("no kubeconfig files", "unable to load bootstrap kubeconfig"),
    ("restricted node label", "unknown 'kubernetes.io' or 'k8s.io' labels"),
], ids=[
    "the kubelet exits 1 while config.yaml is missing",
    "the kubelet exits 1 while the container runtime socket is missing",
    "the kubelet exits 1 when neither kubelet.conf nor bootstrap-kubelet.conf exists",
    "the kubelet exits 1 when --node-labels sets a node-role label",
])
def test_the_kubelet_refuses_to_start(kubelet_host, procs, breakage, message):
    flags = []
    if breakage == "no config":
        kubelet_host.config.unlink()
    if breakage != "no runtime socket":
        kubelet_host.start_containerd()
    if breakage == "no kubeconfig files":
        flags = ["--kubeconfig=%s" % (kubelet_host.root / "kubelet.conf"),
                 "--bootstrap-kubeconfig=%s" % (kubelet_host.root / "bootstrap-kubelet.conf")]
    if breakage == "restricted node label":
        flags = ["--node-labels=node-role.kubernetes.io/control-plane="]
    process = kubelet_host.start_kubelet(*flags)
    assert process.wait(20) == 1
    assert message in kubelet_host.log()


def _get(url, context=None):
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return None


def test_the_kubelet_serves_healthz_and_its_tls_port(kubelet_host):
    kubelet_host.start_containerd()
    kubelet_host.start_kubelet("--cert-dir=%s" % (kubelet_host.root / "kubelet-pki"))
    wait_until(lambda: _get("http://127.0.0.1:%d/healthz" % kubelet_host.healthz_port) == (200, b"ok"), 15,
               "the kubelet's /healthz")
    ca = pki.load_cert_pems((kubelet_host.root / "kubelet-pki" / "kubelet.crt").read_bytes())[1]
    context = ssl.create_default_context(cadata=pki.cert_pem(ca).decode())
    context.check_hostname = False
    api = "https://127.0.0.1:%d" % kubelet_host.api_port
    assert _get(api + "/healthz", context) == (200, b"ok")
    assert _get(api + "/pods", context)[0] == 401
    assert stat.S_IMODE(os.stat(kubelet_host.root / "kubelet-pki" / "kubelet.key").st_mode) == 0o600


def test_the_kubelet_exits_when_its_port_is_taken(kubelet_host):
    kubelet_host.start_containerd()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", kubelet_host.api_port))
        taken.listen(1)
        process = kubelet_host.start_kubelet()
        assert process.wait(20) == 1
    assert "failed to listen on 127.0.0.1:%d" % kubelet_host.api_port in kubelet_host.log()
