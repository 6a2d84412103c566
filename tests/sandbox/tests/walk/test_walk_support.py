# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The walk's pure helpers: the kubeadm configuration an operator writes, what is read from kubeadm's output and
the sandbox's inventory, and the verdicts on nodes, mirror pods and etcd. No sandbox, no root."""

import pytest
import yaml

from walk_support import (Secret, certificate_key, control_plane_join_command, control_plane_nodes, etcd_problems,
                          init_configuration, parse_inventory, unready_mirror_pods, version_minor,
                          with_certificate_key)

KEY = "ab" * 32
HASH = "sha256:" + "cd" * 32
INIT_OUTPUT = """Your Kubernetes control-plane has initialized successfully!

You can now join any number of control-plane nodes running the following command on each as root:

  kubeadm join 10.0.0.100:6443 --token abcdef.0123456789abcdef \\
\t--discovery-token-ca-cert-hash %s \\
\t--control-plane --certificate-key %s

Please note that the certificate-key gives access to cluster sensitive data, keep it secret!

Then you can join any number of worker nodes by running the following on each as root:

kubeadm join 10.0.0.100:6443 --token abcdef.0123456789abcdef \\
\t--discovery-token-ca-cert-hash %s
""" % (HASH, KEY, HASH)


@pytest.mark.parametrize("version, api_version, extra_args, algorithm", [
    ("v1.31.2", "kubeadm.k8s.io/v1beta4", [{"name": "node-labels", "value": "topology.kubernetes.io/zone=fd-2"}],
     "ECDSA-P256"),
    ("v1.30.6", "kubeadm.k8s.io/v1beta3", {"node-labels": "topology.kubernetes.io/zone=fd-2"}, None),
], ids=["kubeadm 1.31 gets v1beta4 with ECDSA keys and kubelet flags as a list",
        "kubeadm 1.30 gets v1beta3 with kubelet flags as a map and no encryptionAlgorithm"])
def test_init_configuration(version, api_version, extra_args, algorithm):
    init, cluster = yaml.safe_load_all(init_configuration("cp-9", "fd-2", "10.0.0.100:6443", version))
    assert init == {"apiVersion": api_version, "kind": "InitConfiguration",
                    "nodeRegistration": {"name": "cp-9", "kubeletExtraArgs": extra_args}}
    assert cluster["apiVersion"] == api_version and cluster["kind"] == "ClusterConfiguration"
    assert cluster["kubernetesVersion"] == version and cluster["controlPlaneEndpoint"] == "10.0.0.100:6443"
    assert cluster.get("encryptionAlgorithm") == algorithm


@pytest.mark.parametrize("text, minor", [("v1.29.10", 29), ("1.31.2\n", 31)],
                         ids=["a tagged version names its minor", "an untagged one with a newline too"])
def test_version_minor(text, minor):
    assert version_minor(text) == minor


def test_a_version_that_is_not_kubernetes_is_refused():
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        version_minor("latest")


def test_the_control_plane_join_command_is_read_from_init_output_as_one_line():
    command = control_plane_join_command(INIT_OUTPUT)
    assert command == ("kubeadm join 10.0.0.100:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "
                       "%s --control-plane --certificate-key %s" % (HASH, KEY))
    assert KEY not in repr(command) and "abcdef" not in repr(command)


@pytest.mark.parametrize("output", [
    "Your Kubernetes control-plane has initialized successfully!\n",
    INIT_OUTPUT.replace(" --certificate-key %s" % KEY, ""),
], ids=["init output without a control plane join command is refused",
        "a join command without a certificate key is refused"])
def test_control_plane_join_command_refusals(output):
    with pytest.raises(ValueError):
        control_plane_join_command(output)


@pytest.mark.parametrize("output, key", [
    ('[upload-certs] Storing the certificates in Secret "kubeadm-certs"\n[upload-certs] Using certificate key:\n'
     '%s\n' % KEY, KEY),
    ("[upload-certs] Using certificate key:\n  %s  \n" % KEY, KEY),
], ids=["the key follows its announcement", "surrounding blanks are dropped"])
def test_certificate_key(output, key):
    assert certificate_key(output) == key


@pytest.mark.parametrize("output", ["[upload-certs] Using certificate key:\n", "%s\n" % KEY,
                                    "[upload-certs] Using certificate key:\nnot-hex\n"],
                         ids=["an announcement without a key is refused", "a key without its announcement is refused",
                              "a key that is not 64 hex digits is refused"])
def test_certificate_key_refusals(output):
    with pytest.raises(ValueError):
        certificate_key(output)


def test_a_printed_worker_join_command_becomes_a_control_plane_one():
    printed = "kubeadm join 10.0.0.100:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash %s \n" % HASH
    command = with_certificate_key(printed, KEY)
    assert isinstance(command, Secret)
    assert command == printed.strip() + " --control-plane --certificate-key " + KEY


def test_something_else_than_a_join_command_is_refused():
    with pytest.raises(ValueError, match="not a kubeadm join command"):
        with_certificate_key("error: token expired", KEY)


def test_the_inventory_gives_hosts_with_failure_domains_and_the_endpoint():
    text = """# generated
[control_plane_candidates]
cp-1 ansible_host=10.0.0.11 failure_domain=fd-1
cp-4 ansible_host=10.0.0.14 failure_domain=fd-3

[all:vars]
ansible_ssh_common_args='-F /srv/x/ssh/ssh_config'
sandbox_endpoint_host=10.0.0.100
sandbox_endpoint_port=6443
"""
    hosts, variables = parse_inventory(text)
    assert hosts == {"cp-1": {"ip": "10.0.0.11", "failure_domain": "fd-1"},
                     "cp-4": {"ip": "10.0.0.14", "failure_domain": "fd-3"}}
    assert variables["sandbox_endpoint_host"] == "10.0.0.100" and variables["sandbox_endpoint_port"] == "6443"


def node(name, ready="True", control_plane=True, zone="fd-1"):
    labels = {"topology.kubernetes.io/zone": zone}
    if control_plane:
        labels["node-role.kubernetes.io/control-plane"] = ""
    return {"metadata": {"name": name, "labels": labels},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}


@pytest.mark.parametrize("nodes, expected", [
    ([node("cp-1"), node("cp-2", zone="fd-2")], {"cp-1": "fd-1", "cp-2": "fd-2"}),
    ([node("cp-1"), node("cp-2", ready="Unknown")], {"cp-1": "fd-1"}),
    ([node("cp-1"), node("w-1", control_plane=False)], {"cp-1": "fd-1"}),
], ids=["Ready control planes are listed with their zones", "a node whose Ready is Unknown is left out",
        "a worker is left out"])
def test_control_plane_nodes(nodes, expected):
    assert control_plane_nodes(nodes) == expected


def pod(component, host, ready="True", mirror=True, node_name=None):
    annotations = {"kubernetes.io/config.mirror": "abc"} if mirror else {}
    return {"metadata": {"name": "%s-%s" % (component, host), "annotations": annotations},
            "spec": {"nodeName": node_name or host}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}


ALL_PODS = [pod(c, "cp-1") for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")]


@pytest.mark.parametrize("pods, expected", [
    (ALL_PODS, []),
    (ALL_PODS[1:], ["etcd-cp-1"]),
    ([pod("etcd", "cp-1", ready="False")] + ALL_PODS[1:], ["etcd-cp-1"]),
    ([pod("etcd", "cp-1", mirror=False)] + ALL_PODS[1:], ["etcd-cp-1"]),
    ([pod("etcd", "cp-1", node_name="cp-2")] + ALL_PODS[1:], ["etcd-cp-1"]),
], ids=["four Ready mirror pods per host leave nothing", "a missing component is named",
        "a component that is not Ready is named", "a pod that is not a mirror pod does not count",
        "a mirror pod bound to another node does not count"])
def test_unready_mirror_pods(pods, expected):
    assert unready_mirror_pods(pods, ["cp-1"]) == expected


def member(name, leader=False, learner=False, responsive=True, alarms=(), cluster_id="c1"):
    return {"name": name, "id": name + "-id", "leader": leader, "learner": learner, "responsive": responsive,
            "error": None if responsive else "connection refused", "alarms": list(alarms), "cluster_id": cluster_id}


@pytest.mark.parametrize("members, expected", [
    ([member("a", leader=True), member("b")], []),
    ([member("a", leader=True)], ["members ['a'], expected ['a', 'b']"]),
    ([member("a", leader=True), member("b", learner=True)], ["b is a learner"]),
    ([member("a", leader=True), member("b", responsive=False)], ["b does not answer: connection refused"]),
    ([member("a", leader=True), member("b", alarms=["NOSPACE"])], ["b has alarms ['NOSPACE']"]),
    ([member("a"), member("b")], ["leaders: none"]),
    ([member("a", leader=True), member("b", leader=True, cluster_id="c2")],
     ["leaders: ['a', 'b']", "members answer for different clusters"]),
], ids=["two healthy voters with one leader are healthy", "a missing member is named",
        "a learner is not a voting member yet", "a member that does not answer is named", "an alarm is named",
        "no leader is a problem", "two leaders of two clusters are problems"])
def test_etcd_problems(members, expected):
    assert etcd_problems({"members": members}, ["a", "b"]) == expected
