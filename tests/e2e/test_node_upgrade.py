# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node_upgrade role on a one-machine control plane of the previous minor, over SSH: check mode shows the steps
and changes nothing; a run killed once kubeadm upgrade apply is recorded leaves the old kubelet (never newer than
the API server) and is resumed by the next run after the last step recorded (the drain, which a single-node
cluster skips, or the one after it: the kill may land as the drain's record is written); the node then
reports the newest version and Ready, its static pods run it, a file left on the host survives, the etcd snapshot
is on the controller; a second run changes nothing."""

import json
import os

import pytest

from e2e_support import HERE, newest, previous_minor, recap, snapshot_copies, wait_control_plane_ready

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-nupg", "172.31.237.0/24", 1)
CLUSTER = os.path.join(HERE, "playbooks", "node_upgrade_cluster.yml")
PLAYBOOK = os.path.join(HERE, "playbooks", "node_upgrade.yml")
MARKER = "/var/lib/e2e-marker"
ANNOTATION = "control-plane.kubeadm.io/upgrade"
STEPS = ("etcd-snapshot", "software", "kubeadm-upgrade", "drain", "kubelet", "uncordon", "ready")


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    old = previous_minor(bare_hosts.mirror_dir)
    spec = {"cluster_name": "e2e", "replicas": 1, "version": old, "endpoint": {"host": "172.31.237.100", "port": 6443},
            "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}
    done = bare_hosts.playbook(CLUSTER, {"kcp_version": old, "e2e_spec": spec}, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:]
    host = bare_hosts.hosts()[0]
    bare_hosts.ssh(host, "echo kept > %s" % MARKER)
    wait_control_plane_ready(bare_hosts, [host])
    return host


@pytest.fixture(scope="module")
def upgrade_vars(bare_hosts, tmp_path_factory):
    return {"node_upgrade_version": newest(bare_hosts.mirror_dir), "node_upgrade_command": "apply", "node_upgrade_addons": True,
            "e2e_snapshot_dir": str(tmp_path_factory.mktemp("snapshots"))}


def kubectl(sandbox, host, args):
    return json.loads(sandbox.ssh(host, "kubectl --kubeconfig /etc/kubernetes/admin.conf %s -o json" % args).stdout)


def record(sandbox, host):
    annotations = kubectl(sandbox, host, "get node %s" % host)["metadata"].get("annotations") or {}
    return json.loads(annotations[ANNOTATION]) if ANNOTATION in annotations else None


def flat(output):
    """The play's output with its line breaks gone (the callback wraps long messages)."""
    return " ".join(output.split())


def versions(sandbox, host):
    return (sandbox.ssh(host, "kubeadm version -o short").stdout.strip(), sandbox.ssh(host, "kubelet --version").stdout.split()[-1])


def test_check_mode_shows_every_step_and_changes_nothing(bare_hosts, cluster, upgrade_vars):
    old, new = previous_minor(bare_hosts.mirror_dir), newest(bare_hosts.mirror_dir)
    done = bare_hosts.playbook(PLAYBOOK, upgrade_vars, check=True)
    assert done.returncode == 0, done.stdout[-6000:]
    assert ("%s to %s with kubeadm upgrade apply (and the addons): etcd-snapshot, software, kubeadm-upgrade, drain, kubelet, "
            "uncordon, ready (check mode: nothing is changed)" % (cluster, new)) in flat(done.stdout), done.stdout[-4000:]
    assert versions(bare_hosts, cluster) == (old, old)
    assert record(bare_hosts, cluster) is None


def test_a_run_killed_after_kubeadm_upgrade_leaves_the_old_kubelet_and_the_step_recorded(bare_hosts, cluster, upgrade_vars):
    old, new = previous_minor(bare_hosts.mirror_dir), newest(bare_hosts.mirror_dir)
    printed = bare_hosts.playbook_killed(PLAYBOOK, upgrade_vars, "Take the step drain", after=0)
    assert "Run kubeadm upgrade apply" in printed
    found = record(bare_hosts, cluster)
    # the drain step (skipped on a single node) may have been recorded too: the kill can land while its annotation
    # is on its way, and a command already sent still runs on the host
    assert (found["version"], found["command"], found["uncordon"]) == (new, "apply", True), found
    assert found["step"] in ("kubeadm-upgrade", "drain"), found
    # the new kubeadm ran the upgrade; the kubelet is still the old one: never newer than the API server
    assert versions(bare_hosts, cluster) == (new, old)
    software = json.loads(bare_hosts.ssh(cluster, "cat /var/lib/kubeadm-control-plane/node-software.json").stdout)
    assert software["version"] is None and software["versions"] == {"kubeadm": new, "kubelet": old, "kubectl": old}


def test_the_next_run_resumes_after_the_last_step_recorded_and_finishes_the_upgrade(bare_hosts, cluster, upgrade_vars):
    new = newest(bare_hosts.mirror_dir)
    remaining = STEPS[STEPS.index(record(bare_hosts, cluster)["step"]) + 1:]
    done = bare_hosts.playbook(PLAYBOOK, upgrade_vars)
    assert done.returncode == 0, done.stdout[-6000:]
    assert "%s to %s with kubeadm upgrade apply (and the addons): %s" % (cluster, new, ", ".join(remaining)) in flat(done.stdout), \
        done.stdout[-6000:]
    assert "Run kubeadm upgrade apply" not in done.stdout and "Take the step software" not in done.stdout
    if "drain" in remaining:
        assert "%s is not drained: a single-node cluster: the pods have nowhere to go" % cluster in flat(done.stdout)
    found = record(bare_hosts, cluster)
    assert (found["version"], found["step"], found["drain"]) == (new, "ready", "skipped: a single-node cluster: the pods have nowhere to go")
    assert versions(bare_hosts, cluster) == (new, new)
    node = kubectl(bare_hosts, cluster, "get node %s" % cluster)
    assert node["status"]["nodeInfo"]["kubeletVersion"] == new and not node["spec"].get("unschedulable")
    wait_control_plane_ready(bare_hosts, [cluster], timeout=30)
    pods = kubectl(bare_hosts, cluster, "-n kube-system get pods -l tier=control-plane")["items"]
    images = {pod["metadata"]["labels"]["component"]: pod["spec"]["containers"][0]["image"] for pod in pods}
    assert all(images[c].endswith(":" + new) for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")), images
    config = kubectl(bare_hosts, cluster, "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "kubernetesVersion: %s" % new in config
    assert bare_hosts.ssh(cluster, "cat %s" % MARKER).stdout.strip() == "kept"
    software = json.loads(bare_hosts.ssh(cluster, "cat /var/lib/kubeadm-control-plane/node-software.json").stdout)
    assert software["version"] == new
    snapshots = snapshot_copies(upgrade_vars["e2e_snapshot_dir"], "e2e")
    assert [name for name in snapshots if name.endswith("-before-upgrade-%s.db" % new)], snapshots


def test_a_second_run_changes_nothing(bare_hosts, cluster, upgrade_vars):
    done = bare_hosts.playbook(PLAYBOOK, upgrade_vars)
    assert done.returncode == 0, done.stdout[-6000:]
    assert "nothing to do, it is of that version" in flat(done.stdout)
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-4000:]
