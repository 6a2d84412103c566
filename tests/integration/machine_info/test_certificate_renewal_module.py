# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""certificate_renewal run as a user runs it (`ansible localhost -m`) on a kubeadm directory whose static pods a
stand-in kubelet runs: each manifest present gets an HTTP server on the port of its readiness probe, a manifest gone
stops it, one back starts a new one. kubeadm is a script that says what it was asked. The renewal takes its steps in
order, each pod restarted once; a killed run's record and a manifest it set aside are finished from where they
stopped; a pod that never stops fails the step with its manifest back in place and the failure recorded; check mode
changes nothing. Then machine_info reads the record the way the observation does. (etcd's quorum check and leadership
hand-over run against real etcd in the sandbox, tests/e2e/test_certificates.py.)"""

import http.server
import json
import os
import socket
import threading
import time

import pytest

from ansible_run import run

COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Healthy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


class Unready(Healthy):
    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(503)
        self.end_headers()


class Kubelet:
    """Runs a server per manifest in ``manifests`` while it is there; ``starts`` counts each component's starts.
    A component in ``stuck`` keeps running when its manifest goes, as a kubelet that does not notice."""

    def __init__(self, manifests, ports, stuck=(), unready=()):
        self.manifests, self.ports, self.stuck, self.unready = manifests, ports, set(stuck), set(unready)
        self.servers, self.starts = {}, {c: 0 for c in ports}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            for component in self.ports:
                present = os.path.exists(os.path.join(self.manifests, component + ".yaml"))
                if present and component not in self.servers:
                    server = http.server.HTTPServer(("127.0.0.1", self.ports[component]), Unready if component in self.unready else Healthy)
                    threading.Thread(target=server.serve_forever, daemon=True).start()
                    self.servers[component] = server
                    self.starts[component] += 1
                elif not present and component in self.servers and component not in self.stuck:
                    server = self.servers.pop(component)
                    server.shutdown()
                    server.server_close()
            time.sleep(0.05)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 5
        while len(self.servers) < len([c for c in self.ports if os.path.exists(os.path.join(self.manifests, c + ".yaml"))]):
            assert time.monotonic() < deadline, "the stand-in kubelet did not start the pods"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        for server in self.servers.values():
            server.shutdown()
            server.server_close()


def manifest(component, port):
    # kubeadm's shape: the probe's port named, the container declaring it (1.34+)
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": component, "namespace": "kube-system"},
                       "spec": {"containers": [{"name": component, "image": "registry.k8s.io/%s:v1.36.4" % component,
                                                "ports": [{"name": "probe-port", "containerPort": port}],
                                                "readinessProbe": {"httpGet": {"host": "127.0.0.1", "path": "/readyz", "port": "probe-port",
                                                                               "scheme": "HTTP"}}}]}})


@pytest.fixture
def host(tmp_path):
    """A kubernetes_dir with the three manifests and a kubeadm that logs its arguments (exit code in kubeadm.rc)."""
    kubernetes_dir = tmp_path / "kubernetes"
    (kubernetes_dir / "manifests").mkdir(parents=True)
    ports = {component: free_port() for component in COMPONENTS}
    for component, port in ports.items():
        (kubernetes_dir / "manifests" / (component + ".yaml")).write_text(manifest(component, port))
    kubeadm = tmp_path / "kubeadm"
    kubeadm.write_text('#!/bin/sh\necho "$@" >> %s/kubeadm.log\nexit $(cat %s/kubeadm.rc 2>/dev/null || echo 0)\n' % (tmp_path, tmp_path))
    kubeadm.chmod(0o755)
    return tmp_path, kubernetes_dir, ports


def renew(tmp_path, kubernetes_dir, check=False, timeout=10, expired=False, done=False):
    return run("certificate_renewal", {"name": "cp-1", "kubernetes_dir": str(kubernetes_dir), "kubeadm": str(tmp_path / "kubeadm"),
                                       "restart_timeout": timeout, "expired": expired, "done": done}, check=check)


def test_certificates_renewed_then_each_pod_restarted_once_and_the_record_gone(host):
    tmp_path, kubernetes_dir, ports = host
    with Kubelet(str(kubernetes_dir / "manifests"), ports) as kubelet:
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir)
    assert outcome == "CHANGED", result
    assert result["steps"] == ["renew"] + list(COMPONENTS)
    assert (result["resumed"], result["new_leader"]) == (False, None)
    assert kubelet.starts == {component: 2 for component in COMPONENTS}
    assert (tmp_path / "kubeadm.log").read_text() == "certs renew all\n"
    assert result["msg"].startswith("certificates renewed (")
    # the record stays until the caller has seen the pods ready in the API and says so
    record = json.loads((kubernetes_dir / "certificate-renewal" / "record.json").read_text())
    assert (record["step"], record["expired"]) == ("kube-scheduler", False)
    outcome, info, _rc, _output = run("machine_info", {"kubernetes_dir": str(kubernetes_dir)})
    assert info["certificate_renewal"]["step"] == "kube-scheduler"
    with Kubelet(str(kubernetes_dir / "manifests"), ports) as kubelet:
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir)
        assert (outcome, result["steps"], result["resumed"]) == ("SUCCESS", [], True), result
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, done=True)
    assert (outcome, result["steps"], result["msg"]) == ("CHANGED", ["ready"], "renewal done"), result
    assert kubelet.starts == {component: 1 for component in COMPONENTS}
    assert sorted(os.listdir(kubernetes_dir)) == ["manifests"]
    outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, done=True)
    assert (outcome, result["msg"]) == ("SUCCESS", "no renewal under way"), result


def test_a_killed_run_is_finished_from_its_record_and_the_manifest_it_set_aside_is_put_back(host):
    tmp_path, kubernetes_dir, ports = host
    aside = kubernetes_dir / "certificate-renewal"
    aside.mkdir(mode=0o700)
    (aside / "record.json").write_text(json.dumps({"started": "2026-11-28T23:00:00Z", "step": "kube-apiserver"}))
    os.rename(kubernetes_dir / "manifests" / "kube-controller-manager.yaml", aside / "kube-controller-manager.yaml")
    with Kubelet(str(kubernetes_dir / "manifests"), ports) as kubelet:
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir)
    assert outcome == "CHANGED", result
    assert (result["steps"], result["resumed"]) == (["kube-controller-manager", "kube-scheduler"], True)
    assert result["msg"].startswith("finished the renewal a run had begun: kube-controller-manager restarted (")
    # the controller manager was down: put back and restarted (the two may make one start), the scheduler restarted, the
    # API server left alone; kubeadm was not run again
    assert (kubelet.starts["kube-apiserver"], kubelet.starts["kube-scheduler"]) == (1, 2)
    assert kubelet.starts["kube-controller-manager"] >= 1 and "kube-controller-manager" in kubelet.servers
    assert not (tmp_path / "kubeadm.log").exists()
    assert sorted(os.listdir(kubernetes_dir / "certificate-renewal")) == ["lock", "record.json"]
    assert sorted(os.listdir(kubernetes_dir / "manifests")) == sorted(c + ".yaml" for c in COMPONENTS)


def test_a_pod_the_kubelet_does_not_stop_fails_the_step_with_its_manifest_back_and_the_failure_recorded(host):
    tmp_path, kubernetes_dir, ports = host
    with Kubelet(str(kubernetes_dir / "manifests"), ports, stuck=["kube-apiserver"]):
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, timeout=2)
    assert outcome == "FAILED!", result
    assert "cp-1: the step kube-apiserver failed: kube-apiserver still answered http://127.0.0.1:%d/readyz 2 s after its manifest was " \
           "moved out: the kubelet did not stop it; its manifest is back; the next run resumes it" % ports["kube-apiserver"] == result["msg"]
    assert os.path.exists(kubernetes_dir / "manifests" / "kube-apiserver.yaml")
    record_path = kubernetes_dir / "certificate-renewal" / "record.json"
    assert oct(os.stat(record_path).st_mode & 0o777) == "0o600"
    record = json.loads(record_path.read_text())
    assert (record["step"], record["failed"]["step"]) == ("renew", "kube-apiserver")
    # not done while steps remain on the host
    outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, done=True)
    assert (outcome, result["msg"]) == ("FAILED!", "the renewal is not done on the host: kube-apiserver, kube-controller-manager, "
                                                   "kube-scheduler remain"), result
    # what the observation reads of it
    outcome, info, _rc, _output = run("machine_info", {"kubernetes_dir": str(kubernetes_dir)})
    assert info["certificate_renewal"] == {"started": record["started"], "step": "renew", "failed_step": "kube-apiserver",
                                           "error": record["failed"]["error"], "expired": False}


def test_a_kubeadm_that_fails_stops_the_renewal_before_any_pod_restarts(host):
    tmp_path, kubernetes_dir, ports = host
    (tmp_path / "kubeadm.rc").write_text("1")
    with Kubelet(str(kubernetes_dir / "manifests"), ports) as kubelet:
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir)
    assert outcome == "FAILED!", result
    assert "the step renew failed: kubeadm certs renew all failed (exit 1)" in result["msg"]
    assert kubelet.starts == {component: 1 for component in COMPONENTS}


def test_check_mode_says_the_steps_and_changes_nothing(host):
    tmp_path, kubernetes_dir, ports = host
    with Kubelet(str(kubernetes_dir / "manifests"), ports) as kubelet:
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, check=True)
    assert outcome == "CHANGED", result
    assert result["msg"] == "would take: renew, kube-apiserver, kube-controller-manager, kube-scheduler"
    assert kubelet.starts == {component: 1 for component in COMPONENTS}
    assert sorted(os.listdir(kubernetes_dir)) == ["manifests"] and not (tmp_path / "kubeadm.log").exists()
    outcome, info, _rc, _output = run("machine_info", {"kubernetes_dir": str(kubernetes_dir)})
    assert info["certificate_renewal"] is None


def test_expired_certificates_restart_pods_that_answer_unhealthy_as_they_wait_for_their_peers(host):
    tmp_path, kubernetes_dir, ports = host
    with Kubelet(str(kubernetes_dir / "manifests"), ports, unready=["kube-apiserver"]) as kubelet:
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, timeout=3, expired=True)
        assert outcome == "CHANGED", result
        assert kubelet.starts == {component: 2 for component in COMPONENTS}
        assert renew(tmp_path, kubernetes_dir, done=True)[0] == "CHANGED"
        # without expired, an API server that does not answer healthy fails the step
        outcome, result, _rc, _output = renew(tmp_path, kubernetes_dir, timeout=2)
    assert outcome == "FAILED!", result
    assert "kube-apiserver did not answer its probe http://127.0.0.1:%d/readyz healthy within 2 s" % ports["kube-apiserver"] in result["msg"]
    assert json.loads((kubernetes_dir / "certificate-renewal" / "record.json").read_text())["expired"] is False
