# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real kubectl (1.32) against the emulated API server: discovery, tables, label / annotate / patch,
cordon / drain, apply with validation, watch, and the protobuf bodies its typed clients write."""

import json
import os
import subprocess

import pytest

import apiserver_harness as harness

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 2


@pytest.fixture(scope="module")
def kubectl(cluster, tmp_path_factory):
    if not os.access(harness.KUBECTL, os.X_OK):
        pytest.skip("the real kubectl is not installed at %s" % harness.KUBECTL)
    config = cluster.kubeconfig("admin", cluster.ip(4))
    cache = str(tmp_path_factory.mktemp("kubectl-cache"))
    return lambda *args, **kwargs: harness.kubectl(config, *args, cache_dir=cache, **kwargs)


@pytest.fixture(scope="module")
def node(admin):
    """A control plane Node with two pods on it: a mirror pod and an ordinary one."""
    admin.create("v1", "nodes", {"metadata": {"name": "cp-1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
                                 "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                            "nodeInfo": {"kubeletVersion": "v1.31.2"}}})
    for namespace, name, annotations in (("kube-system", "etcd-cp-1", {"kubernetes.io/config.mirror": "h"}),
                                         ("default", "web", {})):
        admin.create("v1", "pods", {"metadata": {"name": name, "annotations": annotations},
                                    "spec": {"nodeName": "cp-1", "containers": [{"name": "c", "image": "pause"}]}},
                     namespace)
    return "cp-1"


def test_get_nodes_prints_the_server_side_table(kubectl, node):
    out = kubectl("get", "nodes").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert out[1].split()[:3] == ["cp-1", "Ready", "control-plane"] and out[1].split()[-1] == "v1.31.2"


def test_get_pods_in_kube_system_and_configmaps_by_short_name(kubectl, node):
    pods = kubectl("get", "pods", "-n", "kube-system", "-o", "name").stdout.split()
    assert pods == ["pod/etcd-cp-1"]
    kubectl("-n", "kube-system", "create", "configmap", "kubeadm-config", "--from-literal=ClusterConfiguration=x")
    assert "kubeadm-config" in kubectl("-n", "kube-system", "get", "cm").stdout


def test_label_and_annotate_write_to_the_object(kubectl, admin, node):
    kubectl("label", "node", node, "topology.kubernetes.io/zone=fd-1")
    kubectl("annotate", "node", node, "kcp.example/spec-hash=abc")
    got = admin.get("v1", "nodes", node)["metadata"]
    assert got["labels"]["topology.kubernetes.io/zone"] == "fd-1"
    assert got["annotations"]["kcp.example/spec-hash"] == "abc"
    kubectl("label", "node", node, "topology.kubernetes.io/zone-")
    assert "topology.kubernetes.io/zone" not in admin.get("v1", "nodes", node)["metadata"]["labels"]


@pytest.mark.parametrize("patch_type, patch", [
    ("strategic", '{"metadata":{"labels":{"patched":"strategic"}}}'),
    ("merge", '{"metadata":{"labels":{"patched":"merge"}}}'),
    ("json", '[{"op":"add","path":"/metadata/labels/patched","value":"json"}]'),
], ids=["strategic merge patch", "merge patch", "JSON patch"])
def test_patch_of_each_type(kubectl, admin, node, patch_type, patch):
    kubectl("patch", "node", node, "--type", patch_type, "-p", patch)
    assert admin.get("v1", "nodes", node)["metadata"]["labels"]["patched"] == patch_type


def test_cordon_drain_uncordon(kubectl, admin, node):
    kubectl("cordon", node)
    assert admin.get("v1", "nodes", node)["spec"]["unschedulable"] is True
    assert "SchedulingDisabled" in kubectl("get", "node", node).stdout
    # No kubelet runs here to finish a graceful deletion (tests/kubelet/test_kubelet_drain.py drains with one):
    # grace period 0 removes the pod at once, as on a real server.
    kubectl("drain", node, "--ignore-daemonsets", "--force", "--grace-period=0", "--timeout=30s")
    remaining = kubectl("get", "pods", "-A", "-o", "name").stdout.split()
    assert remaining == ["pod/etcd-cp-1"], "drain evicts ordinary pods and leaves mirror pods"
    kubectl("uncordon", node)
    assert not admin.get("v1", "nodes", node)["spec"].get("unschedulable")


def test_secret_and_namespace_written_as_protobuf_are_stored_as_sent(kubectl, admin):
    kubectl("create", "namespace", "team")
    kubectl("-n", "team", "create", "secret", "generic", "token", "--from-literal=key=s3cret",
            "--type=example.com/token")
    secret = admin.get("v1", "secrets", "token", "team")
    assert secret["data"] == {"key": "czNjcmV0"} and secret["type"] == "example.com/token"
    assert admin.get("v1", "namespaces", "team")["metadata"]["name"] == "team"


def test_rbac_objects_written_as_protobuf_are_stored_as_sent(kubectl, admin):
    kubectl("create", "clusterrole", "log-reader", "--verb=get", "--resource=pods/log")
    kubectl("create", "clusterrolebinding", "log-readers", "--clusterrole=log-reader", "--user=alice", "--group=ops")
    binding = admin.get("rbac.authorization.k8s.io/v1", "clusterrolebindings", "log-readers")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "log-reader"}
    assert sorted((s["kind"], s["name"]) for s in binding["subjects"]) == [("Group", "ops"), ("User", "alice")]
    rules = admin.get("rbac.authorization.k8s.io/v1", "clusterroles", "log-reader")["rules"]
    assert rules == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}]
    # a second create is refused as the real server refuses it, in kubectl's words
    again = kubectl("create", "clusterrolebinding", "log-readers", "--clusterrole=log-reader", "--user=alice", check=False)
    assert again.returncode == 1 and 'clusterrolebindings.rbac.authorization.k8s.io "log-readers" already exists' in again.stderr


def test_a_kind_the_emulation_cannot_decode_from_protobuf_is_refused_in_words(kubectl):
    refused = kubectl("create", "deployment", "web", "--image=pause", check=False)
    assert refused.returncode == 1
    assert "decodes protobuf bodies only for" in refused.stderr and "apps/v1 Deployment" in refused.stderr


def test_apply_creates_then_updates_with_validation_on(kubectl, admin):
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "namespace": "default"},
                "data": {"k": "v1"}}
    for value in ("v1", "v2"):
        manifest["data"]["k"] = value
        kubectl("apply", "-f", "-", input_text=json.dumps(manifest))
    assert admin.get("v1", "configmaps", "applied", "default")["data"] == {"k": "v2"}


def test_get_json_output_and_a_missing_object(kubectl, node):
    got = json.loads(kubectl("get", "node", node, "-o", "json").stdout)
    assert got["kind"] == "Node" and got["metadata"]["resourceVersion"]
    missing = kubectl("get", "cm", "nope", check=False)
    assert missing.returncode == 1 and 'configmaps "nope" not found' in missing.stderr


def test_get_watch_streams_a_change(cluster, kubectl, admin, tmp_path):
    """``kubectl get NAME --watch`` prints the object it GETs as ADDED, then watches from resourceVersion "0" and
    drops that watch's first event (the synthetic ADDED of the object as the server sees it then). A change made
    before the server has started that watch is folded into the dropped event, with the real server too: so the
    patch waits for kubectl's -v=6 log of the watch response, sent once the server's watch has its start
    revision."""
    admin.create("v1", "configmaps", {"metadata": {"name": "watched"}}, "default")
    config = cluster.kubeconfig("admin", cluster.ip(4))
    watcher = subprocess.Popen([harness.KUBECTL, "--kubeconfig", config, "--cache-dir", str(tmp_path), "-v=6", "get",
                                "cm", "watched", "--watch", "--output-watch-events", "--request-timeout=15s"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watcher.stdout.readline().split()[:2] == ["EVENT", "NAME"]
        assert "ADDED" in watcher.stdout.readline()
        log = []
        while not log or not ("watch=true" in log[-1] and " 200 OK " in log[-1]):
            log.append(watcher.stderr.readline())
            assert log[-1], "kubectl ended before its watch was answered: %s" % "".join(log)
        admin.patch("v1", "configmaps", "watched", {"data": {"x": "y"}}, "default")
        assert "MODIFIED" in watcher.stdout.readline()
    finally:
        watcher.kill()
        watcher.wait(10)
