# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated kube-scheduler: leader election, /healthz, binding pending pods to nodes that fit, a clean
hand-over on SIGTERM, and refusal of bad flags."""

import subprocess

import pytest

import apiserver_harness as harness
from kcpsim import kubeclient

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 6


def scheduler_argv(cluster, offset, *extra):
    return ["--kubeconfig=" + cluster.kubeconfig("scheduler", cluster.ip(4)),
            "--authentication-kubeconfig=" + cluster.kubeconfig("scheduler", cluster.ip(4)),
            "--bind-address=" + cluster.ip(offset), "--leader-elect=true", "--leader-elect-lease-duration=3s",
            "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"] + list(extra)


@pytest.fixture(scope="module")
def scheduler(cluster):
    process = cluster.component("kcpsim.controllers.scheduler", "kube-scheduler-1", scheduler_argv(cluster, 5))
    yield process
    process.stop()


def lease_holder(admin):
    try:
        return admin.get("coordination.k8s.io/v1", "leases", "kube-scheduler", "kube-system")["spec"].get(
            "holderIdentity")
    except kubeclient.NotFound:
        return None


def node(name, ready="True", taints=(), labels=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": list(taints)},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}


def pod(name, **spec):
    body = {"containers": [{"name": "c", "image": "pause"}]}
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def test_the_scheduler_leads_and_serves_healthz_on_its_port(cluster, admin, scheduler):
    harness.wait_until(lambda: lease_holder(admin), 20, what="a leader")
    assert harness.healthz("%s:10259" % cluster.ip(5)) == "ok"


def test_pending_pods_are_bound_only_to_ready_nodes_whose_taints_they_tolerate(admin, scheduler):
    admin.create("v1", "nodes", node("cp", taints=[{"key": "node-role.kubernetes.io/control-plane",
                                                   "effect": "NoSchedule"}]))
    admin.create("v1", "nodes", node("down", ready="False"))
    admin.create("v1", "pods", pod("tolerant", tolerations=[{"key": "node-role.kubernetes.io/control-plane",
                                                             "operator": "Exists", "effect": "NoSchedule"}]),
                 "default")
    admin.create("v1", "pods", pod("intolerant"), "default")
    bound = harness.wait_until(lambda: admin.get("v1", "pods", "tolerant", "default")["spec"].get("nodeName"), 15,
                               what="the tolerant pod bound")
    assert bound == "cp"
    assert not admin.get("v1", "pods", "intolerant", "default")["spec"].get("nodeName")


def test_sigterm_releases_the_lease_for_a_quick_hand_over(cluster, admin, scheduler):
    first = harness.wait_until(lambda: lease_holder(admin), 20, what="a leader")
    standby = cluster.component("kcpsim.controllers.scheduler", "kube-scheduler-2", scheduler_argv(cluster, 6))
    try:
        scheduler.stop()
        assert scheduler.popen.returncode == 0
        harness.wait_until(lambda: lease_holder(admin) not in (None, "", first), 20, what="the standby leading")
    finally:
        standby.stop()


@pytest.mark.parametrize("argv, message", [
    (["--leader-elect=maybe"],
     'invalid argument "maybe" for "--leader-elect" flag: strconv.ParseBool: parsing "maybe": invalid syntax'),
    (["--secure-port=x"], 'invalid argument "x" for "--secure-port" flag: strconv.ParseInt: parsing "x": invalid syntax'),
    (["--kubeconfig=/k", "schedule"], '"kube-scheduler" does not take any arguments, got ["schedule"]'),
    ([], "--kubeconfig is required"),
], ids=["a non-boolean boolean", "a non-numeric port", "a word that is not a flag", "no kubeconfig"])
def test_bad_flags_exit_1_naming_the_flag(argv, message):
    result = subprocess.run([harness.HOST_PYTHON, "-m", "kcpsim.controllers.scheduler"] + argv, capture_output=True,
                            text=True, timeout=30, env={"PYTHONPATH": harness.SANDBOX, "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 1 and message in result.stderr
