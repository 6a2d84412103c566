# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Proof that an operator's manual walk works on the sandbox, step by step, on its own sandbox ``t-walk``.

The operator brings up 3 bare hosts in 3 failure domains, installs the node software of the newest version from
the sandbox's mirror on each (checksums checked, units enabled) and labels each with its zone through the
kubelet's extra args, runs ``kubeadm init`` on cp-1 from a configuration file (the node stays NotReady until the
operator installs the pod network's config) and joins cp-2 and cp-3 as control planes with the command init
printed; checks the cluster through the load
balancer VIP with the real kubectl and the Python client, etcd through its API with its client certificates
(the collection's etcd adapter) and each host with testinfra; writes a ConfigMap, loses etcd quorum and gets it
back; then replaces cp-1 (powered off) by a new machine while the endpoint keeps answering. Every command on a
host goes over SSH; credentials are copied off a host with scp. The steps run in order (see conftest.py).
"""

import json
import re
import shutil
import tempfile
import uuid

import pytest
import testinfra
import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_client, etcd_health
from walk_support import (CONTROL_PLANE_ROLE, ETCD_CLIENT_FILES, WalkError, control_plane_join_command,
                          etcd_problems, poll, settle, unready_mirror_pods)

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("t-walk")]

FIRST, JOINING = "cp-1", ("cp-2", "cp-3")
SURVIVOR = "walk-survivor"  # the ConfigMap that must outlive quorum loss and the replacement of cp-1
REQUEST_TIMEOUT = 5  # seconds; the apiserver answers 504 after its 5 s etcd request timeout
JOINED = "This node has joined the cluster and a new control plane instance was created"


@pytest.fixture(scope="module")
def walk(operator):
    """What the operator knows and keeps as the walk goes on, with a private work directory (0700) for the
    credentials copied off the hosts, removed afterwards."""
    workdir = tempfile.mkdtemp(prefix="t-walk-")
    try:
        yield {"workdir": workdir, "endpoint": operator.endpoint(), "hosts": operator.inventory()[0]}
    finally:
        shutil.rmtree(workdir)


def api_client(walk, server=None):
    """The official Python client on the admin kubeconfig (the VIP, or ``server``), TLS verified, no retries:
    each call is one bounded attempt. A context manager: it closes its connections."""
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=walk["kubeconfig"], client_configuration=configuration,
                                persist_config=False)
    configuration.retries = False
    if server:
        configuration.host = server
    return k8s.ApiClient(configuration)


def readyz(api):
    """The HTTP status ``GET /readyz`` answered, or None when no answer came."""
    method, url, headers, _body, _post = api.param_serialize("GET", "/readyz")
    try:
        return api.call_api(method, url, headers, _request_timeout=REQUEST_TIMEOUT).status
    except (ApiException, urllib3.exceptions.HTTPError, OSError):
        return None


def read_survivor(api):
    """The survivor ConfigMap's data, or None while the API does not answer; its absence is a failure."""
    try:
        return k8s.CoreV1Api(api).read_namespaced_config_map(SURVIVOR, "default",
                                                             _request_timeout=REQUEST_TIMEOUT).data
    except ApiException as exc:
        if exc.status == 404:
            raise WalkError("the ConfigMap %s written before is gone" % SURVIVOR)
        return None
    except (urllib3.exceptions.HTTPError, OSError):
        return None


def etcd_endpoints(walk, hosts):
    return ["https://%s:2379" % walk["hosts"][host]["ip"] for host in hosts]


def etcd_section(walk, hosts):
    """The etcd cluster as the collection gathers it, asked at ``hosts``' client URLs."""
    return etcd_client.gather(etcd_endpoints(walk, hosts), *walk["etcd_client_files"], timeout=3.0)


def test_01_the_provider_hands_over_bare_hosts(operator, walk):
    assert sorted(walk["hosts"]) == [FIRST] + list(JOINING)
    assert sorted(h["failure_domain"] for h in walk["hosts"].values()) == ["fd-1", "fd-2", "fd-3"]
    for host in walk["hosts"]:
        found = operator.ssh(host, "ls /usr/local/bin /opt/cni/bin /etc/systemd/system /etc/cni/net.d "
                             "/etc/default/kubelet 2>/dev/null; true").stdout.split()
        assert [f for f in found if not f.endswith(":")] == [], (host, found)


def test_01b_the_operator_installs_node_software_from_the_mirror_labels_and_enables_forwarding(operator, walk):
    operator.prepare_hosts(sorted(walk["hosts"]))
    version = operator.mirror()[1]
    for host, facts in walk["hosts"].items():
        assert operator.ssh(host, "kubeadm version -o short").stdout.strip() == version
        assert operator.ssh(host, "systemctl is-active containerd; systemctl is-enabled kubelet").stdout.split() == [
            "active", "enabled"]
        assert operator.ssh(host, "ls /opt/cni/bin").stdout.split() == ["bridge", "host-local", "loopback"]
        assert operator.ssh(host, "sysctl -n net.ipv4.ip_forward; cat /etc/default/kubelet").stdout.split() == [
            "1", "KUBELET_EXTRA_ARGS=--node-labels=topology.kubernetes.io/zone=" + facts["failure_domain"]]


def test_02_kubeadm_init_on_cp1_from_a_configuration_file(operator, walk):
    output = operator.init_first_control_plane(FIRST, walk["hosts"][FIRST]["failure_domain"], walk["workdir"])
    assert "Your Kubernetes control-plane has initialized successfully!" in output
    walk["join"] = control_plane_join_command(output)
    assert walk["join"].startswith("kubeadm join %s " % walk["endpoint"])
    ca = operator.ssh(FIRST, "openssl x509 -in /etc/kubernetes/pki/ca.crt -noout -text").stdout
    assert "Public Key Algorithm: id-ecPublicKey" in ca and "NIST CURVE: P-256" in ca
    walk["kubeconfig"] = operator.fetch(FIRST, "/etc/kubernetes/admin.conf", walk["workdir"])


def test_02b_cp1_stays_not_ready_until_the_operator_installs_the_pod_network(operator, walk):
    ready = poll(lambda: operator.node_ready_condition(walk["kubeconfig"], FIRST), 30, "cp-1's Ready condition")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "KubeletNotReady", "container runtime network not ready: NetworkReady=false "
        "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")
    operator.install_pod_network(FIRST)
    poll(lambda: (operator.node_ready_condition(walk["kubeconfig"], FIRST) or {}).get("status") == "True", 30,
         "cp-1 Ready once its pod network is configured")


@pytest.mark.parametrize("host", JOINING, ids=["cp-2 joins as a control plane with the printed command",
                                               "cp-3 joins as a control plane with the printed command"])
def test_03_join(operator, walk, host):
    output = operator.join_control_plane(host, walk["join"])
    assert JOINED in output
    assert "[etcd] Announced new etcd member joining to the existing etcd cluster" in output
    operator.install_pod_network(host)


def test_04_kubectl_through_the_vip_lists_three_ready_control_planes_in_their_zones(operator, walk):
    server = operator.kubectl(walk["kubeconfig"], "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
    assert server.stdout == "https://%s" % walk["endpoint"]
    zones = {host: facts["failure_domain"] for host, facts in walk["hosts"].items()}
    poll(lambda: operator.ready_control_plane_nodes(walk["kubeconfig"]) == zones, 60,
         "cp-1..3 Ready as control planes in their failure domains")
    table = operator.kubectl(walk["kubeconfig"], "get", "nodes")
    assert table.returncode == 0, table.stderr
    for host in zones:
        assert re.search(r"^%s\s+Ready\s+control-plane\s" % host, table.stdout, re.M), table.stdout


def test_05_every_control_plane_component_runs_as_a_ready_mirror_pod(walk):
    with api_client(walk) as api:
        def unready():
            pods = k8s.CoreV1Api(api).list_namespaced_pod("kube-system", _request_timeout=REQUEST_TIMEOUT).items
            return unready_mirror_pods([api.sanitize_for_serialization(p) for p in pods], walk["hosts"])

        settle(unready, 60, "etcd, kube-apiserver, kube-controller-manager and kube-scheduler Ready on cp-1..3")


def test_06_etcd_has_three_voting_members_one_leader_and_no_alarm(operator, walk):
    walk["etcd_client_files"] = [operator.fetch(FIRST, path, walk["workdir"]) for path in ETCD_CLIENT_FILES]
    settle(lambda: etcd_problems(etcd_section(walk, walk["hosts"]), walk["hosts"]), 30,
           "3 voting etcd members named cp-1..3 with one leader")


@pytest.mark.parametrize("host", (FIRST,) + JOINING,
                         ids=["cp-1 runs the kubelet and etcd on the files kubeadm init left",
                              "cp-2 runs the kubelet and etcd on the files kubeadm join left",
                              "cp-3 runs the kubelet and etcd on the files kubeadm join left"])
def test_07_host(operator, walk, host):
    machine = testinfra.get_host("ssh://root@%s" % host, ssh_config=operator.ssh_config)
    kubelet = machine.service("kubelet")
    assert kubelet.is_running and kubelet.is_enabled
    assert machine.file("/etc/kubernetes/pki/ca.crt").is_file
    assert machine.file("/etc/kubernetes/pki/ca.key").mode == 0o600
    data_dir = machine.file("/var/lib/etcd")
    assert data_dir.is_directory and data_dir.mode == 0o700
    assert machine.socket("tcp://%s:2379" % walk["hosts"][host]["ip"]).is_listening
    assert machine.file("/var/lib/kubelet/config.yaml").contains("kind: KubeletConfiguration")


def test_08_a_configmap_written_through_the_vip_reads_back(walk):
    walk["survivor"] = {"written": "before quorum loss", "nonce": uuid.uuid4().hex}
    body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=SURVIVOR), data=walk["survivor"])
    with api_client(walk) as api:
        k8s.CoreV1Api(api).create_namespaced_config_map("default", body, _request_timeout=REQUEST_TIMEOUT)
        assert read_survivor(api) == walk["survivor"]


def test_09_losing_two_etcd_members_makes_the_api_stop_answering(operator, walk):
    for host in JOINING:
        operator.sandbox("fault", "etcd-stop", host)
    with api_client(walk) as api:
        poll(lambda: readyz(api) != 200 and read_survivor(api) is None, 60,
             "the API through the VIP to stop answering without etcd quorum")
    with api_client(walk, server="https://%s:6443" % walk["hosts"][FIRST]["ip"]) as direct:
        poll(lambda: readyz(direct) == 500, 30, "cp-1's apiserver to answer /readyz with 500")


def test_10_restarting_the_two_members_brings_the_api_and_the_configmap_back(operator, walk):
    for host in JOINING:
        operator.sandbox("fault", "etcd-start", host)
    with api_client(walk) as api:
        assert poll(lambda: read_survivor(api), 60, "the ConfigMap through the VIP again") == walk["survivor"]
        poll(lambda: readyz(api) == 200, 30, "/readyz through the VIP to answer 200")
    settle(lambda: etcd_problems(etcd_section(walk, walk["hosts"]), walk["hosts"]), 30,
           "3 healthy voting etcd members again")


def test_11_the_vip_keeps_answering_while_cp1_is_powered_off(operator, walk):
    operator.sandbox("fault", "power-off", FIRST)
    assert operator.ssh(FIRST, "true", timeout=60, check=False).returncode == 255
    with api_client(walk) as api:
        # Three answers in a row: round robin over the three backends would have sent one of them to cp-1.
        poll(lambda: all(readyz(api) == 200 for _attempt in range(3)), 30, "the VIP to answer from cp-2 and cp-3")
        assert read_survivor(api) == walk["survivor"]


def test_12_cp1_is_removed_from_etcd_after_a_quorum_check_and_from_the_nodes(operator, walk):
    with etcd_client.EtcdClient(etcd_endpoints(walk, JOINING), *walk["etcd_client_files"], timeout=3.0) as etcd:
        section = etcd.gather()  # health re-checked right before the change, as the flows do
        gone = next(m for m in section["members"] if m["name"] == FIRST)
        assert not gone["responsive"]
        verdict = etcd_health.change_verdict(section, remove=[gone["id"]])
        assert verdict["ok"], verdict["reasons"]
        assert verdict["voters_after"] == 2 and verdict["healthy_after"] == 2
        etcd.remove_member(gone["id"])
    settle(lambda: etcd_problems(etcd_section(walk, JOINING), JOINING), 30, "cp-2 and cp-3 as the only members")
    deleted = operator.kubectl(walk["kubeconfig"], "delete", "node", FIRST)
    assert deleted.returncode == 0, deleted.stderr


def test_13_a_new_machine_joins_as_control_plane_with_a_fresh_token_and_certificate_key(operator, walk):
    created = json.loads(operator.sandbox("machine", "create"))
    walk["hosts"] = operator.inventory()[0]
    assert walk["hosts"][created["name"]] == {"ip": created["host"], "failure_domain": created["failure_domain"]}
    walk["replacement"] = created["name"]
    operator.prepare_hosts([created["name"]])
    join = operator.fresh_control_plane_join_command(JOINING[0])
    assert join != walk["join"]
    assert JOINED in operator.join_control_plane(created["name"], join)
    operator.install_pod_network(created["name"])


def test_14_three_voting_members_and_three_ready_control_planes_again(operator, walk):
    members = list(JOINING) + [walk["replacement"]]
    settle(lambda: etcd_problems(etcd_section(walk, members), members), 30,
           "3 voting etcd members: cp-2, cp-3 and %s" % walk["replacement"])
    operator.sandbox("machine", "delete", FIRST)
    assert FIRST not in operator.inventory()[0]
    zones = {host: walk["hosts"][host]["failure_domain"] for host in members}
    poll(lambda: operator.ready_control_plane_nodes(walk["kubeconfig"]) == zones, 60,
         "cp-2, cp-3 and %s Ready as control planes in their failure domains" % walk["replacement"])
    node = operator.kubectl(walk["kubeconfig"], "get", "node", walk["replacement"], "-o", "json")
    assert json.loads(node.stdout)["metadata"]["labels"][CONTROL_PLANE_ROLE] == ""


def test_15_the_configmap_survived_the_replacement(walk):
    with api_client(walk) as api:
        assert read_survivor(api) == walk["survivor"]
