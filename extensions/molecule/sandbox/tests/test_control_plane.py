# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule verify (testinfra, over the sandbox hosts' real SSH): every control plane candidate is a machine of the
control plane the converge created: its node software and services, its kubeconfig, its host record, its Node Ready
in its failure domain, and one etcd member a machine."""

import json

testinfra_hosts = ["ansible://control_plane_candidates"]

ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
ETCD_MEMBERS = ("curl -sS --fail --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt"
                " --key /etc/kubernetes/pki/etcd/healthcheck-client.key -X POST -d '{}' https://127.0.0.1:2379/v3/cluster/member/list")


def name_of(host):
    return host.ansible.get_variables()["inventory_hostname"]


def test_containerd_and_kubelet_run_and_are_enabled(host):
    for unit in ("containerd", "kubelet"):
        service = host.service(unit)
        assert service.is_running, unit
        assert service.is_enabled, unit


def test_kubeadm_is_installed(host):
    kubeadm = host.file("/usr/local/bin/kubeadm")
    assert kubeadm.is_file
    assert kubeadm.mode & 0o111


def test_the_admin_kubeconfig_is_private(host):
    admin = host.file("/etc/kubernetes/admin.conf")
    assert admin.is_file
    assert admin.user == "root"
    assert admin.mode == 0o600


def test_the_host_record_says_the_machine_joined(host):
    record_file = host.file("/etc/kubernetes/control-plane-machine.json")
    assert record_file.mode == 0o600
    record = json.loads(record_file.content_string)
    assert record["name"] == name_of(host)
    assert record["step"] == "joined"
    assert record["bootstrap"] in ("init", "join")


def test_the_node_is_ready_in_its_failure_domain(host):
    node = json.loads(host.check_output(ADMIN + "get node %s -o json", name_of(host)))
    ready = [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready == ["True"], node["status"]["conditions"]
    labels = node["metadata"]["labels"]
    assert labels["topology.kubernetes.io/zone"] == host.ansible.get_variables()["failure_domain"]
    assert "node-role.kubernetes.io/control-plane" in labels


def test_etcd_has_one_member_a_machine(host):
    members = json.loads(host.check_output(ETCD_MEMBERS))["members"]
    candidates = host.ansible.get_variables()["groups"]["control_plane_candidates"]
    assert len(members) == len(candidates), members
    assert name_of(host) in [member.get("name") for member in members]
