# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-place upgrade flow (playbooks/upgrade.yml) on a one-machine control plane of v1.33 made with
etcd.local.imageTag 3.5.21-0: an upgrade that skips a minor (to v1.35) is refused before anything is touched (IP3);
etcd alone, at the same Kubernetes version, is upgraded in place when the spec's tag moves to 3.5.24-0: the flow
updates the kubeadm-config first, then runs kubeadm upgrade apply on the machine, which re-renders etcd from it; the
etcd manifest and mirror pod carry 3.5.24-0, the node is Ready, and a second run changes nothing. Only 3.5 tags:
every sandbox etcd runs 3.5.1 (a documented gap), so a 3.5 -> 3.6 path would be judged against a 3.5.1 member
(rules.md IP4)."""

import json
import os

import pytest

from e2e_support import HERE, ROOT, recap, steps_taken, wait_control_plane_ready

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-etcdtag", "172.31.230.0/24", 1)
CLUSTER = os.path.join(HERE, "playbooks", "node_upgrade_cluster.yml")
PLAYBOOK = os.path.join(HERE, "playbooks", "node_upgrade.yml")
UPGRADE = os.path.join(ROOT, "playbooks", "upgrade.yml")
ANNOTATION = "control-plane.kubeadm.io/upgrade"
OLD_TAG, NEW_TAG = "3.5.21-0", "3.5.24-0"


def version_of_minor(mirror_dir, minor):
    """The mirror's release of v1.<minor>."""
    return [v for v in sorted(os.listdir(mirror_dir)) if v.startswith("v1.%d." % minor)][-1]


def spec(version, etcd_tag):
    return {"cluster_name": "e2e", "replicas": 1, "version": version, "endpoint": {"host": "172.31.230.100", "port": 6443},
            "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"},
                                                  "etcd": {"local": {"imageTag": etcd_tag}}}}}


def upgrade_vars(sandbox, version, etcd_tag):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir,
            "kcp": dict(spec(version, etcd_tag), upgrade={"strategy": "in_place"})}


def kubectl(sandbox, host, args):
    return json.loads(sandbox.ssh(host, "kubectl --kubeconfig /etc/kubernetes/admin.conf %s -o json" % args).stdout)


def etcd_tags(sandbox, host):
    """(the etcd manifest's image tag, the etcd mirror pod's)."""
    manifest = sandbox.ssh(host, "grep -o 'image: .*' /etc/kubernetes/manifests/etcd.yaml").stdout.strip()
    pod = kubectl(sandbox, host, "-n kube-system get pod etcd-%s" % host)
    return manifest.rpartition(":")[2].strip("'\""), pod["spec"]["containers"][0]["image"].rpartition(":")[2]


def flat(output):
    return " ".join(output.split())


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    version = version_of_minor(bare_hosts.mirror_dir, 33)
    done = bare_hosts.playbook(CLUSTER, {"kcp_version": version, "e2e_spec": spec(version, OLD_TAG)}, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:]
    host = bare_hosts.hosts()[0]
    wait_control_plane_ready(bare_hosts, [host])
    return host, version


def test_the_control_plane_runs_the_etcd_tag_of_its_spec(bare_hosts, cluster):
    host, version = cluster
    assert etcd_tags(bare_hosts, host) == (OLD_TAG, OLD_TAG)
    # of the version already, and nothing of etcd asked: nothing to do
    done = bare_hosts.playbook(PLAYBOOK, {"node_upgrade_version": version, "node_upgrade_command": "apply", "e2e_snapshot_dir": bare_hosts.snapshot_dir},
                               check=True)
    assert done.returncode == 0 and "nothing to do, it is of that version" in flat(done.stdout), done.stdout[-4000:]


def test_an_upgrade_that_skips_a_minor_is_refused_before_anything_is_touched(bare_hosts, cluster):
    host, version = cluster
    skipping = version_of_minor(bare_hosts.mirror_dir, 35)
    done = bare_hosts.playbook(UPGRADE, upgrade_vars(bare_hosts, skipping, OLD_TAG))
    assert done.returncode != 0
    assert "IP3 in_place_minor_skip" in flat(done.stdout) and "upgrade it to v1.34 first" in flat(done.stdout), done.stdout[-6000:]
    node = kubectl(bare_hosts, host, "get node %s" % host)
    assert node["status"]["nodeInfo"]["kubeletVersion"] == version and ANNOTATION not in node["metadata"].get("annotations", {})
    config = kubectl(bare_hosts, host, "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "kubernetesVersion: %s" % version in config and "imageTag: %s" % OLD_TAG in config
    assert bare_hosts.ssh(host, "kubeadm version -o short").stdout.strip() == version


def test_etcd_alone_is_upgraded_in_place_at_the_same_version(bare_hosts, cluster):
    host, version = cluster
    done = bare_hosts.playbook(UPGRADE, upgrade_vars(bare_hosts, version, NEW_TAG), timeout=900)
    assert done.returncode == 0, done.stdout[-6000:]
    assert steps_taken(done.stdout) == ["update_kubeadm_config", "upgrade_in_place %s" % host, "none"], steps_taken(done.stdout)
    assert ("%s to %s and etcd %s with kubeadm upgrade apply (and the addons): etcd-snapshot, software, kubeadm-upgrade, "
            "drain, kubelet, uncordon, ready" % (host, version, NEW_TAG)) in flat(done.stdout), done.stdout[-4000:]
    wait_control_plane_ready(bare_hosts, [host], timeout=60)
    assert etcd_tags(bare_hosts, host) == (NEW_TAG, NEW_TAG)
    config = kubectl(bare_hosts, host, "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "imageTag: %s" % NEW_TAG in config and "kubernetesVersion: %s" % version in config
    node = kubectl(bare_hosts, host, "get node %s" % host)
    assert node["status"]["nodeInfo"]["kubeletVersion"] == version and not node["spec"].get("unschedulable")
    record = json.loads(node["metadata"]["annotations"][ANNOTATION])
    assert (record["version"], record["etcd_image_tag"], record["step"]) == (version, NEW_TAG, "ready")


def test_a_second_run_changes_nothing(bare_hosts, cluster):
    done = bare_hosts.playbook(UPGRADE, upgrade_vars(bare_hosts, cluster[1], NEW_TAG))
    assert done.returncode == 0, done.stdout[-6000:]
    assert "next step: none (the control plane is as declared)" in done.stdout
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-4000:]
    assert etcd_tags(bare_hosts, cluster[0]) == (NEW_TAG, NEW_TAG)
