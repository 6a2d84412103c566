# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/workers.yml end to end on 3 bare sandbox hosts, over SSH as an operator runs it: cp-1 a control plane
candidate, cp-2 and cp-3 in the inventory group `workers` (groups md-0 and gpu). Before any control plane exists the
run refuses, touching no worker; a one-machine control plane is created with the create flow; a worker group name
that is no label value is refused before any host is touched; check mode on the fresh workers says what it would do
and changes nothing; a run while another holds the cluster lock is refused, naming it, and touches no worker; the
run (holding the lock, given back at its end) installs the node software from the bundle and joins both: Nodes, Ready, labelled
with their group, no control plane; the observed snapshot lists them in `workers` with their group and version, and
kcp_plan takes that snapshot as it is; a second run changes nothing. Then the whole cluster is upgraded in place to
the next patch with playbooks/upgrade.yml: the control plane machine first, then the workers one group after the
other (gpu, then md-0), each keeping a file a user left on it, cp-3 (cordoned before) left cordoned; a second
upgrade changes nothing. Then
playbooks/workers_remove.yml: naming a control plane candidate is refused before any host is touched; check mode
says what it would do and changes nothing; while a PodDisruptionBudget keeps a pod on cp-3, its drain fails, the Node
is uncordoned, cp-2 is not started on and the lock is given back; without the budget, cp-3 is drained (the pod
evicted), reset (its software kept) and its Node deleted, cp-2 left as it is, the lock given back; a second removal
changes nothing; cp-2 powered off is drained and its Node deleted through the
control plane, and once it is back (its Node registered again) the next removal drains and resets it and deletes
the Node. Last, a run with
every worker powered off fails naming each one that did not answer, and gives the lock back; with one of them back,
that one joins and the run fails naming the other. Then the workers' health check (the spec's workers, a budget of
its own for gpu, max_unhealthy 0): with both kubelets stopped, remediate.yml rebuilds cp-2 where it stands (drained,
reset, its Node deleted - killed there, the next run joins it again first - joined again, Ready with its group) and
stops naming the rule that holds gpu's cp-3 back, which it leaves as it is; a second run, cp-3 back, changes nothing. Last, a
rolling replacement: cp-3 removed and listed as a spare host of md-0, cp-2 marked with the replace-machine annotation,
and a Deployment of 2 pods on md-0 with a PodDisruptionBudget (minAvailable 1): rollout.yml joins cp-3 first (killed
there, the next run removes cp-2 first: drained, its pods made again on cp-3, reset, its Node deleted), the
Deployment never below its minimum, the record cleared; a second run changes nothing. (The upgrade to the
next minor of 3 control plane machines and 2 workers, killed half way and finished by reconcile, is
tests/e2e/test_upgrade_in_place.py's.)

The cluster starts at the newest minor's first patch, with etcd.local.imageTag pinned to a 3.5 tag: the sandbox's
etcd is 3.5.1 whatever the image tag (tests/sandbox/DESIGN.md), and the in-place upgrade's etcd path check (IP4)
rightly refuses to move a 3.5.1 member to the 3.7 the version's own tag would deploy."""

import json
import os
import threading
import time

import pytest

from e2e_support import (HERE, ROOT, bind_owned_pod, guarded_pods_on, held_by_another_run, kubectl_json, lock_holder, newest, newest_minor_start,
                         pod_is_ready, recap, steps_taken, wait_ready, write_inventory)

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-work", "172.31.236.0/24", 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
WORKERS = os.path.join(ROOT, "playbooks", "workers.yml")
OBSERVE_PLAN = os.path.join(HERE, "playbooks", "observe_plan.yml")
GROUPS = {"cp-2": "md-0", "cp-3": "gpu"}
GROUP_LABEL = "control-plane.kubeadm.io/worker-group"
UPGRADE = os.path.join(ROOT, "playbooks", "upgrade.yml")
WORKERS_REMOVE = os.path.join(ROOT, "playbooks", "workers_remove.yml")
REMEDIATE = os.path.join(ROOT, "playbooks", "remediate.yml")
ROLLOUT = os.path.join(ROOT, "playbooks", "rollout.yml")
MARKER = "/var/lib/e2e-marker"


def spec(sandbox, version=None):
    return {"cluster_name": "work", "replicas": 1, "version": version or newest_minor_start(sandbox.mirror_dir),
            "endpoint": {"host": "172.31.236.100", "port": 6443}, "upgrade": {"strategy": "in_place"},
            "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"},
                                                  "etcd": {"local": {"imageTag": "3.5.24-0"}}}}}


def run_vars(sandbox, version=None):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp": spec(sandbox, version), "kcp_etcd_snapshot_dir": sandbox.snapshot_dir}


@pytest.fixture(scope="module")
def inventory(bare_hosts, tmp_path_factory):
    return write_inventory(bare_hosts, tmp_path_factory.mktemp("inventory") / "workers.ini", GROUPS)


def untouched(sandbox, host):
    """Nothing of a node on the host: no kubeadm, no pod network configuration, no kubelet kubeconfig."""
    return sandbox.ssh(host, "test -e /usr/local/bin/kubeadm || test -e /etc/cni/net.d/99-kcp-bridge.conflist"
                             " || test -e /etc/kubernetes/kubelet.conf", check=False).returncode == 1


def flat(output):
    return " ".join(output.split())


def nodes(sandbox):
    return {n["metadata"]["name"]: n for n in kubectl_json(sandbox, "get nodes")["items"]}


def test_without_a_control_plane_the_run_refuses_and_touches_no_worker(bare_hosts, inventory):
    done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory)
    assert done.returncode != 0
    assert "no control plane: no host of control_plane_candidates holds /etc/kubernetes/admin.conf" in flat(done.stdout), done.stdout[-4000:]
    assert all(untouched(bare_hosts, host) for host in GROUPS)


@pytest.fixture(scope="module")
def cluster(bare_hosts, inventory):
    done = bare_hosts.playbook(CREATE, run_vars(bare_hosts), inventory=inventory, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:]
    return "cp-1"


def test_a_group_name_that_is_no_label_value_is_refused_before_any_host_is_touched(bare_hosts, cluster, tmp_path):
    bad = write_inventory(bare_hosts, tmp_path / "bad.ini", dict(GROUPS, **{"cp-3": "GPU pool"}))
    done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=bad)
    assert done.returncode != 0
    assert "workers.cp-3: must be a worker group name: a Kubernetes label value" in flat(done.stdout), done.stdout[-4000:]
    assert "workers.cp-2" not in done.stdout
    assert all(untouched(bare_hosts, host) for host in GROUPS)


def test_check_mode_on_fresh_workers_says_what_it_would_do_and_changes_nothing(bare_hosts, cluster, inventory):
    done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory, check=True)
    assert done.returncode == 0, done.stdout[-6000:]
    for host, group in GROUPS.items():
        assert "would run kubeadm join on %s" % host in flat(done.stdout) and "a worker of the group %s" % group in flat(done.stdout)
        assert untouched(bare_hosts, host)
    assert set(nodes(bare_hosts)) == {cluster}


def test_a_run_is_refused_while_another_holds_the_lock_and_touches_no_worker(bare_hosts, cluster, inventory, tmp_path):
    with held_by_another_run(bare_hosts, cluster, tmp_path, "awx job 7 on awx-1"):
        refused = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory)
        assert refused.returncode != 0
        assert "the control plane is locked by awx job 7 on awx-1, running rollout since" in flat(refused.stdout), refused.stdout[-4000:]
        assert all(untouched(bare_hosts, host) for host in GROUPS)


def test_the_workers_join_ready_and_labelled_with_their_group(bare_hosts, cluster, inventory):
    done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory)
    assert done.returncode == 0, done.stdout[-8000:]
    # the run held the cluster lock while it joined, and gave it back at its end
    assert "Take the cluster lock" in done.stdout and lock_holder(bare_hosts, cluster) == ""
    found = nodes(bare_hosts)
    assert set(found) == {cluster} | set(GROUPS)
    version = newest_minor_start(bare_hosts.mirror_dir)
    for host, group in GROUPS.items():
        node = found[host]
        labels = node["metadata"]["labels"]
        assert labels.get(GROUP_LABEL) == group, labels
        assert "node-role.kubernetes.io/control-plane" not in labels
        assert node["status"]["nodeInfo"]["kubeletVersion"] == version
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
        # the join's secrets went with the run: no configuration file left on the host
        assert bare_hosts.ssh(host, "test -e /etc/kubernetes/kubeadm-control-plane.yaml", check=False).returncode == 1
        # a worker runs no control plane
        assert bare_hosts.ssh(host, "ls /etc/kubernetes/manifests 2>/dev/null | wc -l").stdout.strip() == "0"
        assert bare_hosts.ssh(host, "test -e /etc/kubernetes/admin.conf", check=False).returncode == 1


def test_the_observed_snapshot_lists_the_workers_and_the_plan_takes_it_as_it_is(bare_hosts, cluster, inventory, tmp_path):
    out = tmp_path / "observed.json"
    done = bare_hosts.playbook(OBSERVE_PLAN, {"e2e_spec": spec(bare_hosts), "e2e_out": str(out)}, inventory=inventory)
    assert done.returncode == 0, done.stdout[-6000:]
    got = json.loads(out.read_text())
    workers = {w["name"]: w for w in got["observed"]["workers"]}
    assert set(workers) == set(GROUPS)
    for host, group in GROUPS.items():
        assert (workers[host]["group"], workers[host]["version"], workers[host]["ready"], workers[host]["unschedulable"]) == \
            (group, newest_minor_start(bare_hosts.mirror_dir), True, False), workers[host]
    assert [m["name"] for m in got["observed"]["machines"]] == [cluster]
    assert got["plan"]["action"] == "none", got["plan"]


def test_a_second_run_changes_nothing(bare_hosts, cluster, inventory):
    done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory)
    assert done.returncode == 0, done.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-4000:]
    for host, group in GROUPS.items():
        assert "%s has joined (group %s): left alone" % (host, group) in flat(done.stdout)


def test_the_cluster_is_upgraded_in_place_control_plane_first_then_each_worker_group(bare_hosts, cluster, inventory):
    new = newest(bare_hosts.mirror_dir)
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    for host in [cluster] + sorted(GROUPS):
        bare_hosts.ssh(host, "echo kept > %s" % MARKER)
    # cordoned by someone else before the upgrade: drained and upgraded, and left cordoned
    bare_hosts.ssh(cluster, admin + "cordon cp-3")
    done = bare_hosts.playbook(UPGRADE, run_vars(bare_hosts, new), inventory=inventory, timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert steps_taken(done.stdout) == ["update_kubeadm_config", "upgrade_in_place %s" % cluster, "upgrade_workers cp-3",
                                        "upgrade_workers cp-2", "none"], steps_taken(done.stdout)
    found = nodes(bare_hosts)
    assert {name: node["status"]["nodeInfo"]["kubeletVersion"] for name, node in found.items()} == \
        {name: new for name in [cluster] + sorted(GROUPS)}
    for host, group in GROUPS.items():
        assert found[host]["metadata"]["labels"].get(GROUP_LABEL) == group
        assert bool(found[host]["spec"].get("unschedulable")) == (host == "cp-3"), (host, found[host]["spec"])
        record = json.loads(found[host]["metadata"]["annotations"]["control-plane.kubeadm.io/upgrade"])
        assert (record["version"], record["command"], record["step"], record["uncordon"]) == (new, "node", "ready", host != "cp-3"), record
    for host in [cluster] + sorted(GROUPS):
        assert bare_hosts.ssh(host, "cat %s" % MARKER).stdout.strip() == "kept"
    again = bare_hosts.playbook(UPGRADE, run_vars(bare_hosts, new), inventory=inventory, timeout=600)
    assert again.returncode == 0 and all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
    bare_hosts.ssh(cluster, admin + "uncordon cp-3")


@pytest.mark.parametrize("named, refusal", [
    (["cp-3", "cp-1"], "control plane candidates, not workers (scale the control plane down instead): cp-1"),
    (["cp-3", "nope"], "not inventory hosts: nope"),
    # what an AWX survey's textarea gives for a bare name
    ("cp-3", "must be a list of inventory host names, the workers to remove"),
])
def test_a_removal_naming_no_worker_host_is_refused_before_any_host_is_touched(bare_hosts, cluster, inventory, named, refusal):
    done = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": named}, inventory=inventory)
    assert done.returncode != 0
    assert "kcp_workers_remove: " + refusal in flat(done.stdout), done.stdout[-4000:]
    assert set(nodes(bare_hosts)) == {cluster} | set(GROUPS)
    assert lock_holder(bare_hosts, cluster) == ""


def test_a_removal_is_refused_while_another_run_holds_the_lock_and_leaves_that_lock_alone(bare_hosts, cluster, inventory, tmp_path):
    with held_by_another_run(bare_hosts, cluster, tmp_path, "awx job 8 on awx-1"):
        refused = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": ["cp-3"]}, inventory=inventory)
        assert refused.returncode != 0
        assert "the control plane is locked by awx job 8 on awx-1, running rollout since" in flat(refused.stdout), refused.stdout[-4000:]
        assert set(nodes(bare_hosts)) == {cluster} | set(GROUPS)
        assert lock_holder(bare_hosts, cluster) == "awx job 8 on awx-1"


def test_a_worker_is_drained_reset_and_its_node_deleted_the_others_left_as_they_are(bare_hosts, cluster, inventory):
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    check = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": ["cp-3"]}, inventory=inventory, check=True)
    assert check.returncode == 0, check.stdout[-6000:]
    assert "cp-3: drain, kubeadm reset on the host, its Node deleted (check mode: nothing is changed)" in flat(check.stdout)
    assert set(nodes(bare_hosts)) == {cluster} | set(GROUPS)
    assert not nodes(bare_hosts)["cp-3"]["spec"].get("unschedulable")
    assert bare_hosts.ssh("cp-3", "test -e /etc/kubernetes/kubelet.conf && test -e /etc/cni/net.d/99-kcp-bridge.conflist",
                          check=False).returncode == 0
    bind_owned_pod(bare_hosts, cluster, "cp-3", budget=True)
    # the budget keeps the pod: cp-3's drain cannot finish, the Node is uncordoned, cp-2 is not started on
    blocked = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": ["cp-3", "cp-2"], "worker_remove_drain_timeout": 5,
                                                   "worker_remove_drain_retries": 0}, inventory=inventory)
    assert blocked.returncode != 0
    assert "the drain of cp-3 did not finish" in flat(blocked.stdout), blocked.stdout[-6000:]
    assert ("the Node is uncordoned; the worker stays in the cluster; the next run drains it again; the workers after it were "
            "not touched") in flat(blocked.stdout), blocked.stdout[-6000:]
    assert set(nodes(bare_hosts)) == {cluster} | set(GROUPS)
    assert not any(node["spec"].get("unschedulable") for node in nodes(bare_hosts).values())
    assert bare_hosts.ssh("cp-3", "test -e /etc/kubernetes/kubelet.conf && test -e /etc/cni/net.d/99-kcp-bridge.conflist",
                          check=False).returncode == 0
    assert lock_holder(bare_hosts, cluster) == ""
    # without the budget the pod is evicted, and the removal goes on
    bare_hosts.ssh(cluster, admin + "delete poddisruptionbudget guarded")
    done = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": ["cp-3"]}, inventory=inventory)
    assert done.returncode == 0, done.stdout[-8000:]
    assert guarded_pods_on(bare_hosts, cluster, "cp-3") == []
    bare_hosts.ssh(cluster, admin + "delete replicaset guarded")
    assert set(nodes(bare_hosts)) == {cluster, "cp-2"}
    # reset, its software kept; the other worker untouched
    assert bare_hosts.ssh("cp-3", "test -e /etc/kubernetes/kubelet.conf || test -e /etc/cni/net.d/99-kcp-bridge.conflist",
                          check=False).returncode == 1
    assert bare_hosts.ssh("cp-3", "test -x /usr/local/bin/kubeadm", check=False).returncode == 0
    assert not nodes(bare_hosts)["cp-2"]["spec"].get("unschedulable")
    assert lock_holder(bare_hosts, cluster) == ""
    again = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": ["cp-3"]}, inventory=inventory)
    assert again.returncode == 0 and all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
    assert "cp-3: removed already, nothing to do" in flat(again.stdout)


def test_a_worker_whose_host_is_down_is_removed_through_the_control_plane_and_reset_once_back(bare_hosts, cluster, inventory):
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    # a pod on cp-2 that its drain evicts; with the host off, no kubelet confirms it gone
    bind_owned_pod(bare_hosts, cluster, "cp-2", budget=False)
    bare_hosts.fault("power-off", "cp-2")
    try:
        wait_ready(bare_hosts, ["cp-2"], "Unknown")
        # the drain stops waiting for the evicted pod after 5 s: without that it would wait out its 60 s and fail
        removal = {"kcp_workers_remove": ["cp-2"], "worker_remove_unreachable_pod_timeout": 5, "worker_remove_drain_timeout": 60,
                   "worker_remove_drain_retries": 0}
        done = bare_hosts.playbook(WORKERS_REMOVE, removal, inventory=inventory)
        assert done.returncode == 0, done.stdout[-8000:]
        assert "cp-2: does not answer and its Node is not Ready: drained and its Node deleted through %s" % cluster in flat(done.stdout)
        assert set(nodes(bare_hosts)) == {cluster}
        # nothing is concluded from no answer: with its Node gone, whether the host still holds a join is unknown
        unknown = bare_hosts.playbook(WORKERS_REMOVE, removal, inventory=inventory)
        assert unknown.returncode != 0
        assert "cp-2: its Node is gone, but the host does not answer" in flat(unknown.stdout), unknown.stdout[-4000:]
        assert lock_holder(bare_hosts, cluster) == ""
    finally:
        bare_hosts.fault("power-on", "cp-2")
    # back, it still holds what kubeadm join left, and its kubelet registers the Node again: the next removal drains
    # it, resets the host and deletes the Node
    wait_ready(bare_hosts, ["cp-2"], "True")
    again = bare_hosts.playbook(WORKERS_REMOVE, removal, inventory=inventory)
    assert again.returncode == 0, again.stdout[-8000:]
    assert "cp-2: drain, kubeadm reset on the host, its Node deleted" in flat(again.stdout), again.stdout[-6000:]
    assert bare_hosts.ssh("cp-2", "test -e /etc/kubernetes/kubelet.conf", check=False).returncode == 1
    assert set(nodes(bare_hosts)) == {cluster}
    bare_hosts.ssh(cluster, admin + "delete replicaset guarded")


def test_workers_that_do_not_answer_are_named_at_the_end_and_the_lock_is_given_back(bare_hosts, cluster, inventory):
    # every worker powered off: without care Ansible would end the run with its last worker, before the play that
    # gives the lock back
    for host in GROUPS:
        bare_hosts.fault("power-off", host)
    try:
        done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory)
        assert done.returncode != 0
        last = flat(done.stdout).rsplit("Stop with the workers that were not joined or removed", 1)[-1]
        for host in GROUPS:
            assert "%s: does not answer (" % host in last, done.stdout[-4000:]
        assert lock_holder(bare_hosts, cluster) == ""
        # one back: it joins, and the run still fails naming the other
        bare_hosts.fault("power-on", "cp-2")
        done = bare_hosts.playbook(WORKERS, run_vars(bare_hosts), inventory=inventory)
        assert done.returncode != 0
        last = flat(done.stdout).rsplit("Stop with the workers that were not joined or removed", 1)[-1].split("PLAY RECAP", 1)[0]
        assert "cp-3: does not answer (" in last and "cp-2" not in last, done.stdout[-4000:]
        wait_ready(bare_hosts, ["cp-2"], "True")
        assert nodes(bare_hosts)["cp-2"]["metadata"]["labels"].get(GROUP_LABEL) == GROUPS["cp-2"]
        assert lock_holder(bare_hosts, cluster) == ""
    finally:
        for host in GROUPS:
            bare_hosts.fault("power-on", host)


def test_an_unhealthy_worker_is_rebuilt_once_and_one_beyond_its_group_s_budget_is_left_alone_with_the_rule(bare_hosts, cluster, inventory):
    # the version the cluster runs now (upgraded in place above): the spec must not ask for a downgrade
    version = nodes(bare_hosts)[cluster]["status"]["nodeInfo"]["kubeletVersion"]
    joined = bare_hosts.playbook(WORKERS, run_vars(bare_hosts, version), inventory=inventory)
    assert joined.returncode == 0, joined.stdout[-6000:]
    wait_ready(bare_hosts, list(GROUPS), "True")
    check = {"unhealthy_conditions": [{"type": "Ready", "status": status, "timeout": "5s"} for status in ("Unknown", "False")]}
    remediation = dict(run_vars(bare_hosts, version), worker_remove_unreachable_pod_timeout=5)
    remediation["kcp"]["workers"] = {"health_check": check, "groups": {"gpu": {"health_check": dict(check, max_unhealthy=0)}}}
    before = {name: node["metadata"]["uid"] for name, node in nodes(bare_hosts).items()}
    for host in GROUPS:
        bare_hosts.fault("kubelet-stop", host)
    try:
        wait_ready(bare_hosts, list(GROUPS), "Unknown", longer_than=6)
        # killed once cp-2 is drained, reset and its Node deleted, before it joins again: only the record says so
        killed = bare_hosts.playbook_killed(REMEDIATE, remediation, "Join the worker again", after=0, inventory=inventory)
        assert "This pass's step: pass 1, remediate_worker cp-2" in killed, killed[-6000:]
        assert "cp-2" not in nodes(bare_hosts)
        record = json.loads(kubectl_json(bare_hosts, "-n kube-system get configmap control-plane-kubeadm-io")["data"]["worker-remediation"])
        assert (record["worker"], record["group"]) == ("cp-2", "md-0"), record
        done = bare_hosts.playbook(REMEDIATE, remediation, inventory=inventory, timeout=1200)
        said = flat(done.stdout)
        assert done.returncode != 0, done.stdout[-8000:]
        assert steps_taken(done.stdout)[0] == "remediate_worker cp-2", said[-6000:]
        assert "the remediation of worker cp-2 of worker group md-0 begun at %s was stopped after its Node was deleted: join it again" % (
            record["timestamp"]) in said, said[-6000:]
        assert ("unhealthy workers are not remediated (worker_remediation_not_allowed): worker group gpu: Remediation is blocked: "
                "1 of 1 machines not healthy, more than the 0 that max_unhealthy 0 allows. (unhealthy: cp-3)") in said, said[-6000:]
        after = nodes(bare_hosts)
        assert after["cp-2"]["metadata"]["uid"] != before["cp-2"] and after["cp-2"]["metadata"]["labels"].get(GROUP_LABEL) == "md-0"
        assert after["cp-3"]["metadata"]["uid"] == before["cp-3"]
        wait_ready(bare_hosts, ["cp-2"], "True")
        assert bare_hosts.ssh("cp-3", "test -e /etc/kubernetes/kubelet.conf", check=False).returncode == 0
        assert lock_holder(bare_hosts, cluster) == ""
        state = kubectl_json(bare_hosts, "-n kube-system get configmap control-plane-kubeadm-io")["data"]
        assert "worker-remediation" not in state, state
    finally:
        bare_hosts.fault("kubelet-start", "cp-3")
    wait_ready(bare_hosts, ["cp-3"], "True")
    again = bare_hosts.playbook(REMEDIATE, remediation, inventory=inventory)
    assert again.returncode == 0, again.stdout[-8000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


WEB = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {control-plane.kubeadm.io/worker-group: md-0}
      containers: [{name: web, image: registry.k8s.io/pause:3.10.1}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"""


def ready_web_pods(sandbox, via):
    """{pod name: node} of the Deployment web's pods that are Ready and not terminating."""
    pods = json.loads(sandbox.ssh(via, "kubectl --kubeconfig /etc/kubernetes/admin.conf get pods -l app=web -o json").stdout)["items"]
    return {pod["metadata"]["name"]: pod["spec"].get("nodeName") for pod in pods if not pod["metadata"].get("deletionTimestamp") and pod_is_ready(pod)}


def wait_web_pods_on(sandbox, via, node, timeout=120):
    """Until both of the Deployment web's pods are Ready, on ``node``."""
    deadline = time.monotonic() + timeout
    while True:
        ready = ready_web_pods(sandbox, via)
        if len(ready) == 2 and set(ready.values()) == {node}:
            return
        assert time.monotonic() < deadline, "the Deployment web's 2 pods not Ready on %s within %d s: %s" % (node, timeout, ready)
        time.sleep(1)


class ReadyPodsWatch:
    """The fewest Ready pods of the Deployment web seen, read about twice a second while it runs."""

    def __init__(self, sandbox, via):
        self.sandbox, self.via, self.fewest, self.reads = sandbox, via, None, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self._stop.is_set():
            ready = len(ready_web_pods(self.sandbox, self.via))
            self.fewest = ready if self.fewest is None else min(self.fewest, ready)
            self.reads += 1
            self._stop.wait(0.5)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_exc):
        self._stop.set()
        self._thread.join(30)


def test_a_worker_group_rolls_new_worker_first_while_a_deployment_with_a_budget_keeps_its_minimum(bare_hosts, cluster, inventory, tmp_path):
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    version = nodes(bare_hosts)[cluster]["status"]["nodeInfo"]["kubeletVersion"]
    joined = bare_hosts.playbook(WORKERS, run_vars(bare_hosts, version), inventory=inventory)
    assert joined.returncode == 0, joined.stdout[-6000:]
    # cp-3 becomes a spare host of md-0: removed from gpu, then listed in md-0 without a Node
    removed = bare_hosts.playbook(WORKERS_REMOVE, {"kcp_workers_remove": ["cp-3"]}, inventory=inventory)
    assert removed.returncode == 0, removed.stdout[-6000:]
    spare = write_inventory(bare_hosts, tmp_path / "spare.ini", {"cp-2": "md-0", "cp-3": "md-0"})
    bare_hosts.ssh(cluster, admin + "apply -f - <<'EOF'\n%s\nEOF" % WEB)
    wait_web_pods_on(bare_hosts, cluster, "cp-2")
    before = nodes(bare_hosts)["cp-2"]["metadata"]["uid"]
    bare_hosts.ssh(cluster, admin + "annotate node cp-2 control-plane.kubeadm.io/replace-machine=")
    with ReadyPodsWatch(bare_hosts, cluster) as watch:
        # killed once cp-3 joined, before cp-2 is drained (the removal's task is reached, skipped, in the join's pass)
        killed = bare_hosts.playbook_killed(ROLLOUT, run_vars(bare_hosts, version), "Drain the replaced worker, reset it and delete its Node",
                                            after=0, inventory=spare)
        assert steps_taken(killed)[0] == "roll_workers join_worker cp-2", killed[-6000:]
        record = json.loads(kubectl_json(bare_hosts, "-n kube-system get configmap control-plane-kubeadm-io")["data"]["worker-rollout"])
        assert (record["worker"], record["uid"], record["group"], record["replacement"], record["surge"]) == ("cp-2", before, "md-0", "cp-3", True)
        assert set(nodes(bare_hosts)) == {cluster, "cp-2", "cp-3"}
        wait_ready(bare_hosts, ["cp-3"], "True")
        done = bare_hosts.playbook(ROLLOUT, run_vars(bare_hosts, version), inventory=spare, timeout=1200)
        assert done.returncode == 0, done.stdout[-8000:]
    said = flat(done.stdout)
    assert steps_taken(done.stdout)[0] == "roll_workers remove_worker cp-2", said[-6000:]
    assert "the replacement of worker cp-2 of worker group md-0 by cp-3 begun at %s: drain it, kubeadm reset, delete its Node" % (
        record["timestamp"]) in said, said[-6000:]
    assert set(nodes(bare_hosts)) == {cluster, "cp-3"}
    assert nodes(bare_hosts)["cp-3"]["metadata"]["labels"].get(GROUP_LABEL) == "md-0"
    assert bare_hosts.ssh("cp-2", "test -e /etc/kubernetes/kubelet.conf", check=False).returncode == 1
    # the budget's minimum held the whole time, and the pods run on the new worker
    assert watch.reads > 10 and watch.fewest >= 1, (watch.reads, watch.fewest)
    wait_web_pods_on(bare_hosts, cluster, "cp-3")
    state = kubectl_json(bare_hosts, "-n kube-system get configmap control-plane-kubeadm-io")["data"]
    assert "worker-rollout" not in state, state
    assert lock_holder(bare_hosts, cluster) == ""
    again = bare_hosts.playbook(ROLLOUT, run_vars(bare_hosts, version), inventory=spare)
    assert again.returncode == 0, again.stdout[-8000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
