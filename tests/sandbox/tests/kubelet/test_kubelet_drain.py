# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drain is real: the real kubectl 1.32 drains a node whose emulated kubelet runs etcd, the apiserver and the
controller manager. Evictions honour a PodDisruptionBudget (429 in the real server's words while it would be
broken), evicted pods terminate gracefully and their kubelet removes them, DaemonSet pods need
--ignore-daemonsets and are then left, mirror pods are left alone."""

import json
import os
import subprocess

import kubernetes.client as k8s
import kubernetes.config
import pytest

from kcpsandbox.commands import wait_until
from kcpsim import kubeclient
from kubelet_harness import Processes
from test_kubelet_api import NODE, start_control_plane

pytestmark = pytest.mark.etcd

KUBECTL = "/usr/bin/kubectl"
LABELS = {"app": "web"}


@pytest.fixture(scope="module")
def plane(tmp_path_factory, releases):
    if not os.access(KUBECTL, os.X_OK):
        pytest.skip("the real kubectl is not installed at %s" % KUBECTL)
    procs = Processes()
    try:
        yield start_control_plane(tmp_path_factory.mktemp("drain"), releases, procs, controller_manager=True)
    finally:
        procs.cleanup()


@pytest.fixture(scope="module")
def api(plane):
    client = plane.client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def kubectl(plane, tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("kubectl-cache"))

    def run(*args, timeout=120):
        return subprocess.run([KUBECTL, "--kubeconfig", plane.admin, "--cache-dir", cache] + list(args),
                              capture_output=True, text=True, timeout=timeout, check=False)
    return run


def _owner(obj, kind, api_version="apps/v1"):
    return [{"apiVersion": api_version, "kind": kind, "name": obj["metadata"]["name"],
             "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]


def _pod(name, labels, owner, grace=30):
    return {"metadata": {"name": name, "labels": labels, "ownerReferences": owner},
            "spec": {"nodeName": NODE, "hostNetwork": True, "terminationGracePeriodSeconds": grace,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}


def _running(api, name):
    pod = api.get("v1", "pods", name, "default")
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])
    return pod if pod["status"].get("phase") == "Running" and ready else None


def _gone(api, name):
    try:
        api.get("v1", "pods", name, "default")
    except kubeclient.NotFound:
        return True
    return False


def _budget_status(api, wanted):
    status = api.get("policy/v1", "poddisruptionbudgets", "web", "default").get("status") or {}
    return status if all(status.get(key) == value for key, value in wanted.items()) else None


@pytest.fixture(scope="module")
def workload(api):
    """A Deployment's ReplicaSet with two pods on the node, a DaemonSet with one, and a budget that keeps
    both web pods (minAvailable 2)."""
    template = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    deployment = api.create("apps/v1", "deployments", {
        "metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {"matchLabels": LABELS},
                                              "template": template}}, "default")
    replicaset = api.create("apps/v1", "replicasets", {
        "metadata": {"name": "web-5d4f8", "labels": LABELS, "ownerReferences": _owner(deployment, "Deployment")},
        "spec": {"replicas": 2, "selector": {"matchLabels": LABELS}, "template": template}}, "default")
    daemonset = api.create("apps/v1", "daemonsets", {
        "metadata": {"name": "agent"}, "spec": {"selector": {"matchLabels": {"app": "agent"}},
                                                "template": dict(template, metadata={"labels": {"app": "agent"}})}},
        "default")
    for name in ("web-5d4f8-a", "web-5d4f8-b"):
        api.create("v1", "pods", _pod(name, LABELS, _owner(replicaset, "ReplicaSet")), "default")
    api.create("v1", "pods", _pod("agent-x7k2p", {"app": "agent"}, _owner(daemonset, "DaemonSet")), "default")
    for name in ("web-5d4f8-a", "web-5d4f8-b", "agent-x7k2p"):
        wait_until(lambda: _running(api, name), 20, "the kubelet to start pod %s" % name, interval=0.2)
    api.create("policy/v1", "poddisruptionbudgets", {
        "metadata": {"name": "web"}, "spec": {"minAvailable": 2, "selector": {"matchLabels": LABELS}}}, "default")
    wait_until(lambda: _budget_status(api, {"observedGeneration": 1, "currentHealthy": 2, "desiredHealthy": 2,
                                            "expectedPods": 2, "disruptionsAllowed": 0}),
               20, "the disruption controller to compute the budget", interval=0.2)


def test_the_disruption_controller_reports_the_budget_as_the_real_one(api, workload):
    condition = api.get("policy/v1", "poddisruptionbudgets", "web", "default")["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed", "False", "InsufficientPods")


def test_the_python_client_eviction_is_refused_with_429_while_the_budget_would_break(plane, workload):
    core = k8s.CoreV1Api(kubernetes.config.new_client_from_config(config_file=plane.admin))
    with pytest.raises(k8s.ApiException) as refused:
        core.create_namespaced_pod_eviction("web-5d4f8-a", "default", {
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-5d4f8-a"}})
    body = json.loads(refused.value.body)
    assert (refused.value.status, body["reason"], body["message"]) == (
        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
    assert body["details"]["causes"] == [
        {"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]


def test_drain_without_ignore_daemonsets_refuses_the_daemonset_pod(kubectl, api, workload):
    result = kubectl("drain", NODE, "--timeout=20s")
    assert result.returncode == 1
    assert "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/agent-x7k2p" \
        in result.stderr
    assert _running(api, "web-5d4f8-a") and _running(api, "web-5d4f8-b")


def test_drain_blocked_by_the_budget_times_out_and_evicts_nothing(kubectl, api, workload):
    result = kubectl("drain", NODE, "--ignore-daemonsets", "--timeout=8s")
    assert result.returncode == 1
    assert "Cannot evict pod as it would violate the pod's disruption budget." in result.stderr
    assert "error when evicting pods/\"web-5d4f8-a\" -n \"default\" (will retry after 5s)" in result.stderr
    assert _running(api, "web-5d4f8-a") and _running(api, "web-5d4f8-b")
    assert api.get("v1", "nodes", NODE)["spec"]["unschedulable"] is True


def test_drain_evicts_once_the_budget_allows_and_the_kubelet_removes_the_pods(kubectl, api, workload):
    api.patch("policy/v1", "poddisruptionbudgets", "web", {"spec": {"minAvailable": 0}}, "default")
    wait_until(lambda: _budget_status(api, {"observedGeneration": 2, "disruptionsAllowed": 2}), 20,
               "the budget to allow two disruptions", interval=0.2)
    result = kubectl("drain", NODE, "--ignore-daemonsets", "--timeout=60s")
    assert result.returncode == 0, result.stderr
    assert "Warning: ignoring DaemonSet-managed Pods: default/agent-x7k2p" in result.stderr
    for name in ("web-5d4f8-a", "web-5d4f8-b"):
        assert "pod/%s evicted" % name in result.stdout
    assert "node/%s drained" % NODE in result.stdout
    left = {(pod["metadata"]["namespace"], pod["metadata"]["name"]) for pod in api.list("v1", "pods")["items"]}
    assert ("default", "agent-x7k2p") in left and not {("default", "web-5d4f8-a"), ("default", "web-5d4f8-b")} & left
    assert {("kube-system", "%s-%s" % (component, NODE)) for component in ("etcd", "kube-apiserver")} <= left
    assert kubectl("uncordon", NODE).returncode == 0


def test_a_deleted_pod_terminates_gracefully_and_its_kubelet_removes_it(api, workload):
    answer = api.delete("v1", "pods", "agent-x7k2p", "default")
    assert answer["metadata"]["deletionGracePeriodSeconds"] == 30
    assert answer["metadata"]["deletionTimestamp"]
    wait_until(lambda: _gone(api, "agent-x7k2p"), 10, "the kubelet to remove the terminated pod", interval=0.2)
