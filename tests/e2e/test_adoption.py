# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adoption: a control plane this collection did not create. An operator builds three control plane machines by
hand with kubeadm over SSH (the manual walk's steps: node software from the mirror, kubeadm init --upload-certs,
kubeadm join --control-plane); then status reports it and changes nothing, the first scale run records what it
found (creation time from the Node, failure domain from the inventory where the Node has no zone label) and
changes nothing else on those machines, and scale 3 -> 5 -> 3 works across the hand-made and the new machines,
keeping what the cluster holds."""

import json
import os
import time

import pytest

from e2e_support import ROOT, newest, recap, walk

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-adopt", "172.31.240.0/24", 5, 3)
SCALE = os.path.join(ROOT, "playbooks", "scale.yml")
STATUS = os.path.join(ROOT, "playbooks", "status.yml")
ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
PREFIX = "control-plane.kubeadm.io/"


def flow_vars(sandbox, replicas, snapshots):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": snapshots,
            "kcp": {"cluster_name": "adopted", "replicas": replicas, "version": newest(sandbox.mirror_dir),
                    "endpoint": {"host": "172.31.240.100", "port": 6443}}}


def nodes(sandbox):
    """{name: {labels, annotations, creationTimestamp}} of the control plane Nodes (what a flow may record; the
    rest of the metadata moves with every kubelet heartbeat), read on the first host that answers."""
    for host in sandbox.hosts():
        got = sandbox.ssh(host, ADMIN + "get nodes -l node-role.kubernetes.io/control-plane -o json", check=False)
        if got.returncode == 0:
            return {n["metadata"]["name"]: {key: n["metadata"].get(key) or {} for key in ("labels", "annotations", "creationTimestamp")}
                    for n in json.loads(got.stdout)["items"]}
    raise AssertionError("no host answers kubectl")


def control_plane_pods_ready(sandbox, count):
    got = sandbox.ssh("cp-1", ADMIN + "-n kube-system get pods -l tier=control-plane -o json", check=False)
    if got.returncode != 0:
        return False
    pods = json.loads(got.stdout)["items"]
    return len(pods) == 4 * count and all(
        any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []) for p in pods)


@pytest.fixture(scope="module")
def by_hand(bare_hosts, tmp_path_factory):
    """Three control plane machines an operator built with kubeadm, cp-3's Node without a zone label."""
    operator = walk.Operator(bare_hosts.name)
    workdir = str(tmp_path_factory.mktemp("walk"))
    operator.prepare_hosts(["cp-1", "cp-2", "cp-3"])
    output = operator.init_first_control_plane("cp-1", "fd-1", workdir)
    operator.install_pod_network("cp-1")
    join = walk.control_plane_join_command(output)
    for host in ("cp-2", "cp-3"):
        operator.join_control_plane(host, join)
        operator.install_pod_network(host)
    # an operator who never labelled a zone on this one: its failure domain is the inventory's
    bare_hosts.ssh("cp-1", ADMIN + "label node cp-3 topology.kubernetes.io/zone-")
    deadline = time.monotonic() + 180
    while not control_plane_pods_ready(bare_hosts, 3):
        assert time.monotonic() < deadline, "the hand-made control plane did not become ready"
        time.sleep(2)
    bare_hosts.ssh("cp-1", ADMIN + "create configmap written-by-hand --from-literal=k=v")
    return bare_hosts


def test_status_reports_the_hand_made_control_plane_and_changes_nothing(by_hand, tmp_path):
    before = nodes(by_hand)
    done = by_hand.playbook(STATUS, flow_vars(by_hand, 3, str(tmp_path)))
    assert done.returncode == 0, done.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values())
    assert "next step: none (the control plane is as declared)" in done.stdout
    assert "control plane: Ready" in done.stdout
    assert nodes(by_hand) == before
    assert not any(key.startswith(PREFIX) for meta in before.values() for key in meta.get("annotations") or {})


def test_the_first_scale_run_records_what_it_found_and_changes_nothing_else(by_hand, tmp_path):
    before = nodes(by_hand)
    done = by_hand.playbook(SCALE, flow_vars(by_hand, 3, str(tmp_path)))
    assert done.returncode == 0, done.stdout[-6000:]
    after = nodes(by_hand)
    for name, meta in after.items():
        annotations = meta.get("annotations") or {}
        assert annotations[PREFIX + "created"] == before[name]["creationTimestamp"]
        assert PREFIX + "spec-hash" not in annotations and PREFIX + "bootstrap" not in annotations
        assert meta["labels"]["topology.kubernetes.io/zone"] == {"cp-1": "fd-1", "cp-2": "fd-2", "cp-3": "fd-3"}[name]
        # nothing else changed: the annotations but the one recorded, the labels but cp-3's zone
        assert {k: v for k, v in annotations.items() if k != PREFIX + "created"} == before[name]["annotations"]
        assert {k: v for k, v in meta["labels"].items() if name != "cp-3" or k != "topology.kubernetes.io/zone"} == before[name]["labels"]
    for host in ("cp-1", "cp-2", "cp-3"):
        assert by_hand.ssh(host, "test -e /etc/kubernetes/control-plane-machine.json", check=False).returncode == 1
    again = by_hand.playbook(SCALE, flow_vars(by_hand, 3, str(tmp_path)))
    assert again.returncode == 0 and all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_scale_to_five_and_back_to_three_across_hand_made_and_new_machines(by_hand, tmp_path):
    done = by_hand.playbook(SCALE, flow_vars(by_hand, 5, str(tmp_path)), timeout=1200)
    assert done.returncode == 0, done.stdout[-6000:]
    five = nodes(by_hand)
    assert sorted(meta["labels"]["topology.kubernetes.io/zone"] for meta in five.values()) == ["fd-1", "fd-1", "fd-2", "fd-2", "fd-3"]
    for name in ("cp-4", "cp-5"):
        assert five[name]["annotations"][PREFIX + "bootstrap"] == "join"
    done = by_hand.playbook(SCALE, flow_vars(by_hand, 3, str(tmp_path)), timeout=1200)
    assert done.returncode == 0, done.stdout[-6000:]
    three = nodes(by_hand)
    assert sorted(meta["labels"]["topology.kubernetes.io/zone"] for meta in three.values()) == ["fd-1", "fd-2", "fd-3"]
    # the oldest machines of the fullest domains go first (docs/rules.md FD5, FD6): the hand-made cp-1 and cp-2
    assert sorted(three) == ["cp-3", "cp-4", "cp-5"], sorted(three)
    for host in ("cp-1", "cp-2"):
        assert by_hand.ssh(host, "test -e /etc/kubernetes/admin.conf || test -e /etc/kubernetes/control-plane-machine.json",
                           check=False).returncode == 1
    assert by_hand.ssh("cp-3", ADMIN + "get configmap written-by-hand -o jsonpath={.data.k}").stdout == "v"
    status = by_hand.playbook(STATUS, flow_vars(by_hand, 3, str(tmp_path)))
    assert "next step: none (the control plane is as declared)" in status.stdout and "control plane: Ready" in status.stdout
