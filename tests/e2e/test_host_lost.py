# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane machine whose host does not answer, end to end on 4 bare sandbox hosts over 3 failure domains
(cp-4 a spare in fd-1). The create is stopped once by cp-3 powered off while its node software is installed ahead of
its step (the run stops, naming it, and gives the lock back; the next finishes). Then cp-1 is powered off (sandbox
fault power-off), its Node goes Ready Unknown, and remediate removes the machine through another one (drain, etcd
snapshot, member, Node) without its host's own steps, then builds the replacement on the spare; a second run changes
nothing while cp-1 stays off. Powered on again, cp-1 comes back with what kubeadm left on it, and the next run
resets it and gives it back to the pool. A host only the controller cannot reach (a wrong SSH port in the inventory)
while its Node is Ready is not removed: the run refuses, naming it, and nothing changes. A machine removed by hand
(its host off, its Node deleted) leaves its etcd member behind: remediate removes that member, after an etcd
snapshot, then builds a machine in its place. A background writer through the load balancer runs during each flow
(docs/flows.md "A host that does not answer")."""

import os

import pytest

from e2e_support import ROOT, assert_writes_survived, kubectl_json, newest, recap, snapshot_copies, status_table, steps_taken, wait_ready

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-lost", "172.31.228.0/24", 4, 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
REMEDIATE = os.path.join(ROOT, "playbooks", "remediate.yml")
SCALE = os.path.join(ROOT, "playbooks", "scale.yml")
ENDPOINT = "172.31.228.100:6443"
ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
UNHEALTHY_AFTER_SECONDS = 5


def flow_vars(sandbox, snapshots, replicas=3):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": str(snapshots),
            # the Node of a powered-off host is unreachable: its pods' deletion is not waited for long
            "machine_delete_unreachable_pod_timeout": 5,
            "kcp": {"cluster_name": "lost", "replicas": replicas, "version": newest(sandbox.mirror_dir),
                    "endpoint": {"host": ENDPOINT.split(":", maxsplit=1)[0], "port": 6443},
                    "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}},
                    "health_check": {"unhealthy_conditions": [
                        {"type": "Ready", "status": status, "timeout": "%ds" % UNHEALTHY_AFTER_SECONDS} for status in ("Unknown", "False")]}}}


def run(sandbox, playbook, extra_vars, inventory=None):
    with sandbox.writing(ENDPOINT) as writer:
        done = sandbox.playbook(playbook, extra_vars, timeout=1500, inventory=inventory)
    assert_writes_survived(writer, os.path.basename(playbook))
    return done


def machines(sandbox, but=()):
    """{machine: zone} of the control plane Nodes."""
    return {n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone")
            for n in kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane", but=but)["items"]}


def flat(output):
    return " ".join(output.split())


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    return tmp_path_factory.mktemp("etcd-snapshots")


@pytest.fixture(scope="module")
def cluster(bare_hosts, snapshots):
    # The first step of create installs the node software of its three hosts at once. cp-3, installed ahead for the
    # third machine, is powered off meanwhile: the step on cp-1 goes on (kubeadm init), then the run stops, naming
    # cp-3, and gives the lock back. Once cp-3 is back, the next run makes the two machines left.
    try:
        code, output = bare_hosts.playbook_meanwhile(CREATE, flow_vars(bare_hosts, snapshots), "node_software : Install the node software",
                                                     lambda _process: bare_hosts.fault("power-off", "cp-3"), timeout=1500)
        assert code != 0 and "Hand the step its hosts: cp-1 (and cp-2, cp-3 ahead)" in output, output[-6000:]
        assert "cp-3 stopped answering during scale_up (pass 1): the run stops here" in flat(output), output[-6000:]
    finally:
        bare_hosts.fault("power-on", "cp-3")
    assert machines(bare_hosts) == {"cp-1": "fd-1"}
    lease = kubectl_json(bare_hosts, "-n kube-system get lease control-plane-kubeadm-io --ignore-not-found")
    assert lease is None or lease["spec"].get("holderIdentity") is None, lease
    done = bare_hosts.playbook(CREATE, flow_vars(bare_hosts, snapshots), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert machines(bare_hosts) == {"cp-1": "fd-1", "cp-2": "fd-2", "cp-3": "fd-3"}
    bare_hosts.ssh("cp-2", ADMIN + "create configmap written-before --from-literal=k=v")
    return bare_hosts


def test_a_machine_whose_host_is_powered_off_is_removed_through_another_and_replaced_on_the_spare(cluster, snapshots):
    cluster.fault("power-off", "cp-1")
    wait_ready(cluster, ["cp-1"], "Unknown", longer_than=UNHEALTHY_AFTER_SECONDS + 1)
    done = run(cluster, REMEDIATE, flow_vars(cluster, snapshots))
    assert done.returncode == 0, done.stdout[-8000:]
    assert steps_taken(done.stdout) == ["remediate", "scale_up", "none"], steps_taken(done.stdout)
    assert "cp-1 does not answer and its Node is not Ready: the machine is removed through" in flat(done.stdout), done.stdout[-8000:]
    assert machines(cluster, but=("cp-1",)) == {"cp-2": "fd-2", "cp-3": "fd-3", "cp-4": "fd-1"}
    assert kubectl_json(cluster, "get configmap written-before", but=("cp-1",))["data"] == {"k": "v"}
    # the etcd snapshot before the member removal was taken through another machine
    assert any("before-remove-cp-1" in name for name in snapshot_copies(snapshots, "lost")), snapshot_copies(snapshots, "lost")
    again = run(cluster, REMEDIATE, flow_vars(cluster, snapshots))
    assert again.returncode == 0 and steps_taken(again.stdout) == ["none"], again.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
    # the status names the host that did not answer, which its table cannot show
    table = status_table(cluster, flow_vars(cluster, snapshots))
    assert table[-1] == "hosts that did not answer: cp-1" and table[1] == "control plane: Ready", table


def test_the_host_back_on_is_reset_and_given_back_to_the_pool(cluster, snapshots):
    cluster.fault("power-on", "cp-1")
    done = run(cluster, REMEDIATE, flow_vars(cluster, snapshots))
    assert done.returncode == 0, done.stdout[-8000:]
    # its host record says it joined, and it has neither a Node nor an etcd member: an unhealthy machine (its Node
    # gone), removed as any other
    assert steps_taken(done.stdout) == ["remediate", "none"], steps_taken(done.stdout)
    assert cluster.ssh("cp-1", "test -e /etc/kubernetes/manifests/kube-apiserver.yaml || test -e /etc/kubernetes/control-plane-machine.json"
                       " || test -e /etc/kubernetes/kubelet.conf", check=False).returncode == 1, "cp-1 still holds what kubeadm left"
    assert "cp-1" not in {n["metadata"]["name"] for n in kubectl_json(cluster, "get nodes")["items"]}
    assert machines(cluster) == {"cp-2": "fd-2", "cp-3": "fd-3", "cp-4": "fd-1"}
    table = status_table(cluster, flow_vars(cluster, snapshots))
    assert table[0] == "next step: none (the control plane is as declared)" and table[1] == "control plane: Ready", table
    assert sorted(row.split()[3] for row in table[3:]) == ["leader", "voter", "voter"], table


def test_a_host_only_the_controller_cannot_reach_is_not_removed(cluster, snapshots, tmp_path):
    # cp-3 marked for deletion, and a scale down to 1 would remove it first; the inventory sends SSH to a closed port
    cluster.ssh("cp-2", ADMIN + "annotate node cp-3 control-plane.kubeadm.io/delete-machine=yes")
    with open(cluster.inventory, encoding="utf-8") as handle:
        lines = [line + " ansible_port=1" if line.split(" ", 1)[0] == "cp-3" else line for line in handle.read().splitlines()]
    inventory = tmp_path / "closed-port.ini"
    inventory.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run(cluster, SCALE, flow_vars(cluster, snapshots, replicas=1), inventory=str(inventory))
    assert done.returncode != 0
    assert "cp-3 does not answer the controller, yet its Node is Ready" in flat(done.stdout), done.stdout[-8000:]
    assert machines(cluster) == {"cp-2": "fd-2", "cp-3": "fd-3", "cp-4": "fd-1"}
    annotations = kubectl_json(cluster, "get node cp-3")["metadata"]["annotations"]
    assert "control-plane.kubeadm.io/deleting" not in annotations, annotations
    cluster.ssh("cp-2", ADMIN + "annotate node cp-3 control-plane.kubeadm.io/delete-machine-")
    table = status_table(cluster, flow_vars(cluster, snapshots))
    assert sorted(row.split()[3] for row in table[3:]) == ["leader", "voter", "voter"], table


def test_a_machine_removed_by_hand_without_its_etcd_member_has_the_member_removed_and_is_replaced(cluster, snapshots):
    # cp-4's host powered off and its Node deleted by hand: its etcd member stays behind, belonging to no machine
    saved = set(snapshot_copies(snapshots, "lost"))
    cluster.fault("power-off", "cp-4")
    try:
        cluster.ssh("cp-2", ADMIN + "delete node cp-4")
        done = run(cluster, REMEDIATE, flow_vars(cluster, snapshots))
        assert done.returncode == 0, done.stdout[-8000:]
        # the stray member goes first (EH11), after an etcd snapshot, then a machine is built on the free host of fd-1
        assert steps_taken(done.stdout) == ["remove_etcd_member", "scale_up", "none"], steps_taken(done.stdout)
        added = set(snapshot_copies(snapshots, "lost")) - saved
        assert any(name.endswith("before-remove-cp-4.db") for name in added), added
        assert machines(cluster, but=("cp-4",)) == {"cp-1": "fd-1", "cp-2": "fd-2", "cp-3": "fd-3"}
        table = status_table(cluster, flow_vars(cluster, snapshots))
        assert table[1] == "control plane: Ready", table
        assert sorted(row.split()[3] for row in table[3:-1]) == ["leader", "voter", "voter"], table
        assert table[-1] == "hosts that did not answer: cp-4", table
    finally:
        cluster.fault("power-on", "cp-4")
