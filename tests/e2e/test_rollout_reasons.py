# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What rolls a machine out besides its version, end to end on one machine with max_surge 1 (two bare hosts in one
failure domain: each rollout adds the new machine on the spare host, then removes the old one and returns its host to
the pool): a change to the kubeadm configuration, rollout.after, and certificates that expire within
rollout.before.certificates_expiry_days (docs/flows.md "Rollout"). After each, the new machine is built as the spec
says and a second run changes nothing. Quorum is not the point here (test_rollout.py rolls out three machines under
a background writer): one machine keeps these cheap enough for CI's hour."""

import os
from datetime import datetime, timedelta, timezone

import pytest

from e2e_support import ROOT, kubectl_json, newest, recap, steps_taken

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-reasons", "172.31.231.0/24", 2, 1)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
ROLLOUT = os.path.join(ROOT, "playbooks", "rollout.yml")
ENDPOINT_HOST = "172.31.231.100"
AUDIT_ARG = {"name": "audit-log-maxage", "value": "7"}


def spec(sandbox, **changes):
    kcp = {"cluster_name": "reasons", "replicas": 1, "version": newest(sandbox.mirror_dir), "rollout": {"max_surge": 1},
           "endpoint": {"host": ENDPOINT_HOST, "port": 6443},
           "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        target = kcp
        for key in parents:
            target = target.setdefault(key, {})
        target[leaf] = value
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir, "kcp": kcp}


def machine(sandbox):
    """(name, annotations) of the one control plane Node."""
    [node] = kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane")["items"]
    return node["metadata"]["name"], node["metadata"]["annotations"]


def rollout(sandbox, extra_vars, steps=("rollout scale_up", "rollout scale_down", "none")):
    """Run the rollout; assert it replaced the machine (on the other host) with ``steps`` and a second run changes
    nothing. Each test changes one thing since the last rollout, so that one thing is why the machine was replaced.
    Returns (the new machine's name, its annotations)."""
    before, _annotations = machine(sandbox)
    done = sandbox.playbook(ROLLOUT, extra_vars, timeout=900)
    assert done.returncode == 0, done.stdout[-8000:]
    assert steps_taken(done.stdout) == list(steps), steps_taken(done.stdout)
    after, annotations = machine(sandbox)
    assert after != before
    assert sandbox.ssh(before, "test -e /etc/kubernetes/admin.conf || test -e /etc/kubernetes/control-plane-machine.json",
                       check=False).returncode == 1, "the replaced host went back to the pool"
    again = sandbox.playbook(ROLLOUT, extra_vars, timeout=600)
    assert again.returncode == 0, again.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
    return after, annotations


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    done = bare_hosts.playbook(CREATE, spec(bare_hosts), timeout=900)
    assert done.returncode == 0, done.stdout[-8000:]
    yield bare_hosts


def test_a_change_to_the_kubeadm_configuration_rolls_the_machine_out(cluster):
    _name, before = machine(cluster)
    extra_vars = spec(cluster, **{"kubeadm.cluster_configuration.apiServer": {"extraArgs": [AUDIT_ARG]}})
    # the cluster's kubeadm configuration first, then the new machine joins with it
    name, annotations = rollout(cluster, extra_vars, ("update_kubeadm_config", "rollout scale_up", "rollout scale_down", "none"))
    assert annotations["control-plane.kubeadm.io/spec-hash"] != before["control-plane.kubeadm.io/spec-hash"]
    # the new machine's API server runs with the argument, and the cluster's configuration says it for later joins
    manifest = cluster.ssh(name, "cat /etc/kubernetes/manifests/kube-apiserver.yaml").stdout
    assert "--audit-log-maxage=7" in manifest
    stored = kubectl_json(cluster, "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "audit-log-maxage" in stored


def test_rollout_after_replaces_the_machines_created_before_it(cluster):
    created = machine(cluster)[1]["control-plane.kubeadm.io/created"]
    after = (datetime.now(timezone.utc) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    extra_vars = spec(cluster, **{"kubeadm.cluster_configuration.apiServer": {"extraArgs": [AUDIT_ARG]}, "rollout.after": after})
    _name, annotations = rollout(cluster, extra_vars)
    assert annotations["control-plane.kubeadm.io/created"] > after > created


def test_certificates_expiring_within_the_days_asked_roll_the_machine_out(cluster):
    name, _annotations = machine(cluster)
    cluster.fault("certs-expire-soon", name, 10)
    extra_vars = spec(cluster, **{"kubeadm.cluster_configuration.apiServer": {"extraArgs": [AUDIT_ARG]},
                                  "rollout.before": {"certificates_expiry_days": 30}})
    new, _annotations = rollout(cluster, extra_vars)
    # the new machine's certificates are kubeadm's fresh ones (a year), not the old host's re-signed ones
    end = cluster.ssh(new, "openssl x509 -enddate -noout -in /etc/kubernetes/pki/apiserver.crt").stdout.strip()
    expires = datetime.strptime(end.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z").replace(tzinfo=timezone.utc)
    assert expires - datetime.now(timezone.utc) > timedelta(days=300), end
