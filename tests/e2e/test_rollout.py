# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollouts and reconcile, end to end on 6 bare sandbox hosts over 3 failure domains (a spare
host in each, which max_surge 1 needs with the static pool): create 3 of the previous minor; reconcile's check
mode prints the whole plan to the newest minor and changes nothing; a rollout to the next minor killed half way
(SIGKILL to the controller during its third step) and, with one of the machines it had not replaced made
unhealthy meanwhile (a stopped kubelet), finished by reconcile, which remediates first and then completes the
rollout (the seed's scenario 4), every machine new and what was written before still there; scale refuses a
rollout's step; a second rollout changes nothing. Then a patch to patch rollout with max_surge 0: each machine is
removed before its replacement is added, so the control plane never holds more than 3 machines. Every flow on the
cluster runs with a background writer through the load balancer (docs/flows.md "What a workload sees").
"""

import json
import os

import pytest

from e2e_support import (ROOT, assert_writes_survived, kubectl_json, newest, newest_minor_start, previous_minor, recap, status_table, steps_taken,
                         wait_ready)

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-roll", "172.31.234.0/24", 6, 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
ROLLOUT = os.path.join(ROOT, "playbooks", "rollout.yml")
RECONCILE = os.path.join(ROOT, "playbooks", "reconcile.yml")
ENDPOINT = "172.31.234.100:6443"
ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
UNHEALTHY_AFTER_SECONDS = 5


def versions(sandbox):
    """(the previous minor's newest patch, the newest minor's first patch) the mirror holds: the minor rollout's
    start and target (the newest patch is the patch rollout's)."""
    return previous_minor(sandbox.mirror_dir), newest_minor_start(sandbox.mirror_dir)


def flow_vars(sandbox, version, max_surge=1):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir,
            "machine_delete_unreachable_pod_timeout": 5,
            "kcp": {"cluster_name": "roll", "replicas": 3, "version": version, "rollout": {"max_surge": max_surge},
                    "endpoint": {"host": ENDPOINT.split(":", maxsplit=1)[0], "port": 6443},
                    "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}},
                    "health_check": {"unhealthy_conditions": [
                        {"type": "Ready", "status": "Unknown", "timeout": "%ds" % UNHEALTHY_AFTER_SECONDS},
                        {"type": "Ready", "status": "False", "timeout": "%ds" % UNHEALTHY_AFTER_SECONDS}]}}}


def flow(sandbox, playbook, version, check=False, max_surge=1):
    with sandbox.writing(ENDPOINT) as writer:
        done = sandbox.playbook(playbook, flow_vars(sandbox, version, max_surge), check=check, timeout=1800)
    assert done.returncode == 0, done.stdout[-8000:]
    assert_writes_survived(writer, os.path.basename(playbook))
    return done


def being_deleted(sandbox, node):
    """Whether the machine of ``node`` is being removed, as the observation reads it: the Node's annotation, or the
    host record, which the delete writes first (a kill between the two leaves only the record)."""
    if "control-plane.kubeadm.io/deleting" in (node["metadata"].get("annotations") or {}):
        return True
    record = sandbox.ssh(node["metadata"]["name"], "cat /etc/kubernetes/control-plane-machine.json").stdout
    return json.loads(record).get("step") == "deleting"


def machines(sandbox):
    """{machine: (version, zone)} of the control plane Nodes."""
    return {n["metadata"]["name"]: (n["status"]["nodeInfo"]["kubeletVersion"], n["metadata"]["labels"].get("topology.kubernetes.io/zone"))
            for n in kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane")["items"]}


def created(sandbox):
    """{machine: its created annotation} of the control plane Nodes."""
    return {n["metadata"]["name"]: n["metadata"]["annotations"]["control-plane.kubeadm.io/created"]
            for n in kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane")["items"]}


def assert_one_voter_a_machine(sandbox, version):
    table = status_table(sandbox, flow_vars(sandbox, version))
    assert table[0] == "next step: none (the control plane is as declared)" and table[1] == "control plane: Ready", table
    roles = sorted(row.split()[3] for row in table[3:])
    assert roles == ["leader", "voter", "voter"], table


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    old, _new = versions(bare_hosts)
    done = bare_hosts.playbook(CREATE, flow_vars(bare_hosts, old), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    yield bare_hosts


def test_reconcile_check_mode_prints_the_whole_rollout_and_changes_nothing(cluster):
    old, new = versions(cluster)
    before = machines(cluster)
    done = flow(cluster, RECONCILE, new, check=True)
    shown = done.stdout.split("The whole plan from here", 1)[1].split("TASK [", 1)[0]
    steps = [line.strip()[2:].strip("'\"") for line in shown.splitlines() if line.strip().startswith("- ")]
    assert [s.split(":", 1)[0] for s in steps][:1] == ["1. update_kubeadm_config"], steps
    # the kubeadm-config update, then add-and-remove for each of the 3 machines, then none
    assert len(steps) == 8 and steps[-1].startswith("8. none"), steps
    assert [s.split(" ")[1:3] for s in steps[1:7]] == [["rollout", "scale_up"], ["rollout", "scale_down"]] * 3, steps
    assert machines(cluster) == before and all(v == old for v, _zone in before.values())
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-6000:]


def test_a_rollout_killed_half_way_is_finished_by_reconcile_which_remediates_first(cluster):
    _old, new = versions(cluster)
    created_before = created(cluster)
    cluster.ssh("cp-1", ADMIN + "create configmap written-before-rollout --from-literal=k=v")
    # as in a cluster made before kubeadm's May 2026 patches: no binding gives the API servers' kubelet client access
    # to the kubelets, and kubeadm join does not make one (docs/kubeadm-roles.md)
    cluster.ssh("cp-1", ADMIN + "delete clusterrolebinding kubeadm:apiserver-kubelet-client")
    # the scale flow does not roll out: it names the step and the flow that takes it
    refused = cluster.playbook(os.path.join(ROOT, "playbooks", "scale.yml"), flow_vars(cluster, new), timeout=600)
    assert refused.returncode != 0 and "the scale flow takes only" in refused.stdout
    with cluster.writing(ENDPOINT) as writer:
        # killed in the rollout's first removal (pass 3) as its host's reset begins, its etcd member gone, its Node
        # still there: a point in the step, not a time after its start (the removal takes about 8 s on the sandbox)
        killed = cluster.playbook_killed(ROLLOUT, flow_vars(cluster, new), "machine_delete : Reset the host with kubeadm", after=0, timeout=1500)
    assert_writes_survived(writer, "the killed rollout")
    assert "This pass's step: pass 3, rollout scale_down" in killed and "This pass's step: pass 4" not in killed, killed[-6000:]
    nodes = kubectl_json(cluster, "get nodes -l node-role.kubernetes.io/control-plane")["items"]
    outdated = sorted(n["metadata"]["name"] for n in nodes if n["status"]["nodeInfo"]["kubeletVersion"] != new
                      and not being_deleted(cluster, n))
    assert outdated, "the killed rollout left no outdated machine that is not being removed"
    sick = outdated[0]
    cluster.fault("kubelet-stop", sick)
    try:
        wait_ready(cluster, [sick], "Unknown", longer_than=UNHEALTHY_AFTER_SECONDS + 1)
        done = flow(cluster, RECONCILE, new)
    finally:
        cluster.fault("kubelet-start", sick)
    taken = steps_taken(done.stdout)
    # whatever the kill left half done is finished first; the unhealthy machine goes before any further rollout step
    assert "remediate" in taken and not any(step.startswith("rollout") for step in taken[:taken.index("remediate")]), taken
    assert "next step: none (the control plane is as declared)" in done.stdout, done.stdout[-6000:]
    after = machines(cluster)
    assert sorted(zone for _version, zone in after.values()) == ["fd-1", "fd-2", "fd-3"], after
    assert all(version == new for version, _zone in after.values()), after
    # every machine is new: created by this rollout, after the ones it replaced
    assert all(c > max(created_before.values()) for c in created(cluster).values()), (created_before, created(cluster))
    assert kubectl_json(cluster, "get configmap written-before-rollout")["data"] == {"k": "v"}
    assert_one_voter_a_machine(cluster, new)
    # the joins made the binding again: every new API server reads pod logs through the kubelets
    for machine in after:
        logs = cluster.ssh(machine, ADMIN + "-n kube-system logs --tail=3 kube-apiserver-" + machine, check=False)
        assert logs.returncode == 0 and logs.stdout.strip(), (machine, logs.stdout, logs.stderr)
    again = flow(cluster, ROLLOUT, new)
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_a_patch_rollout_with_max_surge_0_removes_each_machine_before_adding_its_replacement(cluster):
    _old, start = versions(cluster)
    patch = newest(cluster.mirror_dir)
    assert patch != start, "the mirror holds one patch of the newest minor: no patch rollout to make"
    created_before = created(cluster)
    done = flow(cluster, ROLLOUT, patch, max_surge=0)
    # for each machine: remove, then add in its failure domain (never a 4th machine); the kubeadm-config is brought
    # to the new version before the first machine joins (docs/flows.md), so after the first removal; the last
    # replacement is a plain scale up, as no machine is outdated any more
    assert steps_taken(done.stdout) == ["rollout scale_down", "update_kubeadm_config"] + ["rollout scale_up", "rollout scale_down"] * 2 \
        + ["scale_up", "none"], steps_taken(done.stdout)
    after = machines(cluster)
    assert sorted(zone for _version, zone in after.values()) == ["fd-1", "fd-2", "fd-3"], after
    assert all(version == patch for version, _zone in after.values()), after
    assert all(c > max(created_before.values()) for c in created(cluster).values()), (created_before, created(cluster))
    assert kubectl_json(cluster, "get configmap written-before-rollout")["data"] == {"k": "v"}
    assert_one_voter_a_machine(cluster, patch)
    again = flow(cluster, ROLLOUT, patch, max_surge=0)
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
