# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane on an external etcd cluster (the spec's etcd.external), on the sandbox's own external etcd
(`sandbox up --external-etcd 3`: three real members with TLS, their CA and a client certificate handed to the
control plane hosts as kubeadm expects them): created with 2 machines, scaled to 4 and back to 2 (even counts: no
etcd quorum of the control plane's to keep) and deleted; a spec switching to stacked etcd is refused with the rule,
and while the external cluster is down no step is taken and the run says why; with no etcd member call, no etcd snapshot through a
machine and kubeadm reset leaving the external cluster alone: its member list and a canary key are the same after.

4 hosts over 3 failure domains, and etcd-1 to etcd-3."""

import json
import os
import subprocess

import pytest

from e2e_support import ROOT, newest, wait_control_plane_ready
from kcpsim import build  # the sandbox's, on sys.path through e2e_support

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-xetcd2", "172.31.223.0/24", 4, 3)
SANDBOX_UP_ARGS = ("--external-etcd", "3")
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
SCALE = os.path.join(ROOT, "playbooks", "scale.yml")
DELETE = os.path.join(ROOT, "playbooks", "delete.yml")


def spec(sandbox, replicas):
    return {"cluster_name": "xetcd", "replicas": replicas, "version": newest(sandbox.mirror_dir),
            "endpoint": {"host": "172.31.223.100", "port": 6443},
            "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}, "etcd": {"external": {
                "endpoints": ["https://172.31.223.%d:2379" % (11 + n) for n in range(3)],
                "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
                "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}}}}


def flow_vars(sandbox, replicas, **extra):
    return dict({"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir,
                 "kcp": spec(sandbox, replicas)}, **extra)


def etcdctl(sandbox, *argv):
    """The real etcdctl on the controller, with the client certificate the sandbox made for the control plane."""
    pki = os.path.join(sandbox.record.dir, "external-etcd")
    done = subprocess.run([os.path.join(build.find_etcd_dir(), "etcdctl"), "--endpoints=https://172.31.223.11:2379",
                           "--cacert=%s/ca.crt" % pki, "--cert=%s/client.crt" % pki, "--key=%s/client.key" % pki] + list(argv),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def control_plane_nodes(sandbox, via):
    listed = sandbox.ssh(via, "kubectl --kubeconfig /etc/kubernetes/admin.conf get nodes -l node-role.kubernetes.io/control-plane "
                              "-o jsonpath='{.items[*].metadata.name}'").stdout
    return sorted(listed.split())


def members(sandbox):
    return sorted((m["name"], m["ID"]) for m in json.loads(etcdctl(sandbox, "member", "list", "-w", "json"))["members"])


def test_a_control_plane_on_external_etcd_is_created_scaled_to_even_counts_and_deleted_leaving_the_cluster_alone(bare_hosts):
    before = members(bare_hosts)
    assert [name for name, _id in before] == ["etcd-1", "etcd-2", "etcd-3"]
    etcdctl(bare_hosts, "put", "/canary", "the etcd operator's")

    done = bare_hosts.playbook(CREATE, flow_vars(bare_hosts, 2), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert control_plane_nodes(bare_hosts, "cp-1") == ["cp-1", "cp-2"]
    # the machines run no etcd of their own, and no snapshot was taken through one
    assert all(bare_hosts.ssh(host, "test ! -e /etc/kubernetes/manifests/etcd.yaml", check=False).returncode == 0 for host in ("cp-1", "cp-2"))
    assert os.listdir(bare_hosts.snapshot_dir) == []

    # a spec that switches to stacked etcd is refused with the rule (kubeadm cannot migrate it), nothing touched
    stacked = flow_vars(bare_hosts, 3)
    del stacked["kcp"]["kubeadm"]["cluster_configuration"]["etcd"]
    refused = bare_hosts.playbook(SCALE, stacked)
    said = " ".join(refused.stdout.split())
    assert refused.returncode != 0 and "the spec declares stacked etcd but the observed cluster uses external etcd" in said, said[-6000:]
    # the external cluster down: nothing is read, no step taken, and the run says why
    for host in ("etcd-1", "etcd-2", "etcd-3"):
        bare_hosts.fault("power-off", host)
    try:
        refused = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 4))
        said = " ".join(refused.stdout.split())
        assert refused.returncode != 0 and "no external etcd member answered at https://172.31.223.11:2379" in said, said[-6000:]
    finally:
        for host in ("etcd-1", "etcd-2", "etcd-3"):
            bare_hosts.fault("power-on", host)
    wait_control_plane_ready(bare_hosts, ["cp-1", "cp-2"], components=("kube-apiserver", "kube-controller-manager", "kube-scheduler"))
    assert control_plane_nodes(bare_hosts, "cp-1") == ["cp-1", "cp-2"]

    done = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 4), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert control_plane_nodes(bare_hosts, "cp-1") == ["cp-1", "cp-2", "cp-3", "cp-4"]
    done = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 2), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    left = [host for host in ("cp-1", "cp-2", "cp-3", "cp-4")
            if bare_hosts.ssh(host, "test -e /etc/kubernetes/admin.conf", check=False).returncode == 0]
    assert len(left) == 2 and control_plane_nodes(bare_hosts, left[0]) == left
    assert os.listdir(bare_hosts.snapshot_dir) == []

    done = bare_hosts.playbook(DELETE, flow_vars(bare_hosts, 2), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert all(bare_hosts.ssh(host, "test ! -e /etc/kubernetes/admin.conf", check=False).returncode == 0 for host in left)
    # the external cluster as it was: the same members, the canary, and the control plane's objects kept there
    assert members(bare_hosts) == before
    assert etcdctl(bare_hosts, "get", "/canary", "--print-value-only").strip() == "the etcd operator's"
    assert etcdctl(bare_hosts, "get", "/registry/", "--prefix", "--keys-only", "--limit", "1").strip()
