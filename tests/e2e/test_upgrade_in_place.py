# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-place upgrade flow (playbooks/upgrade.yml, docs/in-place-upgrade.md) on a cluster of the previous minor:
a control plane of 3 machines on exactly 3 control plane candidates, one a failure domain (no spare: a
replacement could not be built), and 2 workers joined with playbooks/workers.yml, cp-4 in the worker group md-0 and
cp-5 in gpu (issue 13: 3 control plane nodes and 2 workers from one minor to the next in place). Every run is given
the inventory with the group `workers`. Refused before anything is touched, workers included: a machine template
change in "in place or stop" mode (IP2) and a downgrade (IP3). Check mode prints the whole plan (the kubeadm-config,
then the oldest machine with kubeadm upgrade apply, the others with upgrade node, the last with the addons, then the
workers one group after the other: gpu, then md-0). The upgrade to the next minor: a PodDisruptionBudget blocks the
first machine's drain, so the run stops there with the node uncordoned and the status report naming the step and its
error; once the budget is gone the next run resumes at the drain and is killed during the second machine; reconcile
finishes the control plane, then upgrades the workers. The control plane hosts keep their identity (the Nodes'
created annotation, the etcd member ids), every host keeps a file a user left on it, the workers are uncordoned
with their group label and upgrade record, what was written before is there, and a background writer through the
load balancer never waits longer than one leader election; a second run changes nothing. (The patch upgrade in
place, and the workers playbook's own checks, are tests/e2e/test_workers.py's.)

The spec pins etcd.local.imageTag to the 3.5 tag the mirror holds: the sandbox's etcd is 3.5.1 whatever the image
tag says (tests/sandbox/DESIGN.md), and IP4 rightly refuses to take a 3.5.1 member to the 3.6 or 3.7 the versions'
own tags would deploy.
"""

import json
import os

import pytest

from e2e_support import (ROOT, _versions, assert_writes_survived, bind_owned_pod, kubectl_json, newest_minor_start, previous_minor, recap, steps_taken,
                         wait_control_plane_ready, write_inventory)

pytestmark = pytest.mark.sandbox
# 5 hosts in 3 failure domains, placed round robin: cp-1..cp-3 in fd-1..fd-3 are the control plane candidates,
# cp-4 (fd-1) and cp-5 (fd-2) the workers
SANDBOX = ("t-inplace", "172.31.229.0/24", 5, 3)
CONTROL_PLANE = ["cp-1", "cp-2", "cp-3"]
# two groups, upgraded one after the other by name (gpu, then md-0), so not in the hosts' order
GROUPS = {"cp-4": "md-0", "cp-5": "gpu"}
WORKERS_ORDER = ["cp-5", "cp-4"]
GROUP_LABEL = "control-plane.kubeadm.io/worker-group"
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
WORKERS = os.path.join(ROOT, "playbooks", "workers.yml")
UPGRADE = os.path.join(ROOT, "playbooks", "upgrade.yml")
RECONCILE = os.path.join(ROOT, "playbooks", "reconcile.yml")
ENDPOINT = "172.31.229.100:6443"
MARKER = "/var/lib/e2e-marker"
ANNOTATION = "control-plane.kubeadm.io/upgrade"
ETCD_TAG = "3.5.24-0"


def flow_vars(sandbox, version, **spec):
    kcp = {"cluster_name": "inplace", "replicas": 3, "version": version, "upgrade": {"strategy": "in_place"},
           "endpoint": {"host": ENDPOINT.split(":", maxsplit=1)[0], "port": 6443},
           "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"},
                                                 "etcd": {"local": {"imageTag": ETCD_TAG}}}}}
    kcp.update(spec)
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir, "kcp": kcp}


def identity(sandbox):
    """{machine: (created annotation, etcd member id)}: what an in-place upgrade keeps."""
    nodes = kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane")["items"]
    members = json.loads(sandbox.ssh(
        "cp-1", "curl -sf --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt "
        "--key /etc/kubernetes/pki/etcd/healthcheck-client.key -X POST -d '{}' https://127.0.0.1:2379/v3/cluster/member/list").stdout)["members"]
    ids = {m["name"]: m["ID"] for m in members}
    return {n["metadata"]["name"]: (n["metadata"]["annotations"]["control-plane.kubeadm.io/created"], ids[n["metadata"]["name"]])
            for n in nodes}


def versions(sandbox):
    return {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"] for n in kubectl_json(sandbox, "get nodes")["items"]}


def upgrade_records(sandbox):
    return {n["metadata"]["name"]: json.loads(n["metadata"]["annotations"][ANNOTATION])
            for n in kubectl_json(sandbox, "get nodes")["items"] if ANNOTATION in (n["metadata"].get("annotations") or {})}


def flat(output):
    return " ".join(output.split())


class Cluster:
    """The sandbox with the control plane and the workers: every flow run goes with the inventory that has the
    group `workers`, so each pass sees the workers' hosts."""

    def __init__(self, sandbox, inventory):
        self.sandbox, self.inventory = sandbox, inventory

    def __getattr__(self, name):
        return getattr(self.sandbox, name)

    def playbook(self, playbook, extra_vars=None, **kwargs):
        return self.sandbox.playbook(playbook, extra_vars, inventory=self.inventory, **kwargs)

    def playbook_killed(self, playbook, extra_vars, line, after, timeout=900):
        return self.sandbox.playbook_killed(playbook, extra_vars, line, after, timeout=timeout, inventory=self.inventory)


@pytest.fixture(scope="module")
def cluster(bare_hosts, tmp_path_factory):
    # the control plane candidates cover every failure domain, one each
    placed = {host: record["failure_domain"] for host, record in bare_hosts.record.hosts.items()}
    assert sorted(placed) == sorted(CONTROL_PLANE + list(GROUPS)), placed
    assert sorted(placed[host] for host in CONTROL_PLANE) == ["fd-1", "fd-2", "fd-3"], placed
    sandbox = Cluster(bare_hosts, write_inventory(bare_hosts, tmp_path_factory.mktemp("inventory") / "inplace.ini", GROUPS))
    old = previous_minor(sandbox.mirror_dir)
    done = sandbox.playbook(CREATE, flow_vars(sandbox, old), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    joined = sandbox.playbook(WORKERS, flow_vars(sandbox, old), timeout=900)
    assert joined.returncode == 0, joined.stdout[-8000:]
    assert versions(sandbox) == {host: old for host in CONTROL_PLANE + sorted(GROUPS)}
    for host in sandbox.hosts():
        sandbox.ssh(host, "echo kept > %s" % MARKER)
    sandbox.ssh("cp-1", "kubectl --kubeconfig /etc/kubernetes/admin.conf create configmap written-before-upgrade --from-literal=k=v")
    return sandbox


def assert_untouched(sandbox, before_versions, before_identity, config_version):
    assert versions(sandbox) == before_versions
    assert identity(sandbox) == before_identity
    assert upgrade_records(sandbox) == {}
    config = kubectl_json(sandbox, "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "kubernetesVersion: %s" % config_version in config, config


def test_requests_in_place_cannot_carry_are_refused_before_anything_is_touched(cluster):
    old, new = previous_minor(cluster.mirror_dir), newest_minor_start(cluster.mirror_dir)
    before, kept = versions(cluster), identity(cluster)
    # another change in "in place or stop" mode: the machines would have to be replaced, which in place never does
    refused = cluster.playbook(UPGRADE, flow_vars(cluster, new, machine_template={"image": "other"}), timeout=600)
    assert refused.returncode != 0
    assert "the in-place upgrade to %s is refused (IP2 in_place_other_changes)" % new in flat(refused.stdout), refused.stdout[-6000:]
    assert "set upgrade.other_changes to rolling" in flat(refused.stdout)
    assert_untouched(cluster, before, kept, old)
    # a downgrade: the previous minor's previous minor
    older = [v for v in _versions(cluster.mirror_dir) if v.split(".")[:2] < old.split(".")[:2]][-1]
    refused = cluster.playbook(UPGRADE, flow_vars(cluster, older), timeout=600)
    assert refused.returncode != 0
    assert "IP3 in_place_downgrade" in flat(refused.stdout) and "an in-place upgrade never goes down" in flat(refused.stdout), \
        refused.stdout[-6000:]
    assert_untouched(cluster, before, kept, old)


def test_check_mode_prints_the_whole_in_place_upgrade_and_changes_nothing(cluster):
    old, new = previous_minor(cluster.mirror_dir), newest_minor_start(cluster.mirror_dir)
    before, kept = versions(cluster), identity(cluster)
    done = cluster.playbook(UPGRADE, flow_vars(cluster, new), check=True, timeout=600)
    assert done.returncode == 0, done.stdout[-8000:]
    shown = done.stdout.split("The whole plan from here", 1)[1].split("TASK [", 1)[0]
    steps = [line.strip()[2:].strip("'\"") for line in shown.splitlines() if line.strip().startswith("- ")]
    actions = [" ".join(s.split(":", 1)[0].split(" ")[1:]) for s in steps]
    assert actions == ["update_kubeadm_config", "upgrade_in_place cp-1", "upgrade_in_place cp-2", "upgrade_in_place cp-3"] + \
        ["upgrade_workers %s" % host for host in WORKERS_ORDER] + ["none"], steps
    # the callback wraps long lines: the reasons are read with the line breaks gone
    shown = flat(shown)
    assert "2. upgrade_in_place cp-1: upgrade cp-1 in place to %s with kubeadm upgrade apply" % new in shown, shown
    assert "3. upgrade_in_place cp-2: upgrade cp-2 in place to %s with kubeadm upgrade node" % new in shown, shown
    assert "4. upgrade_in_place cp-3: upgrade cp-3 in place to %s with kubeadm upgrade node, the last one: it upgrades the addons" % new \
        in shown, shown
    assert "5. upgrade_workers cp-5: upgrade cp-5 of worker group gpu in place to %s with kubeadm upgrade node" % new in shown, shown
    assert "6. upgrade_workers cp-4: upgrade cp-4 of worker group md-0 in place to %s with kubeadm upgrade node" % new in shown, shown
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-6000:]
    assert_untouched(cluster, before, kept, old)


def test_an_upgrade_a_pdb_stops_then_killed_during_the_second_machine_is_finished_by_reconcile(cluster):
    new = newest_minor_start(cluster.mirror_dir)
    kept = identity(cluster)
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    # a pod on cp-1 that a PodDisruptionBudget keeps
    bind_owned_pod(cluster, "cp-2", "cp-1", budget=True)
    blocked_vars = dict(flow_vars(cluster, new), node_upgrade_drain_timeout=5, node_upgrade_drain_retries=0)
    with cluster.writing(ENDPOINT) as writer:
        # the budget keeps the one pod on cp-1: its drain cannot finish, and the run stops there
        blocked = cluster.playbook(UPGRADE, blocked_vars, timeout=1200)
        assert blocked.returncode != 0, blocked.stdout[-6000:]
        assert "the drain of cp-1 did not finish" in flat(blocked.stdout), blocked.stdout[-6000:]
        assert not kubectl_json(cluster, "get node cp-1")["spec"].get("unschedulable"), "the drain left cp-1 cordoned"
        assert upgrade_records(cluster)["cp-1"]["failed"]["step"] == "drain"
        # the status report shows how far the upgrade went and why it stopped
        status = cluster.playbook(os.path.join(ROOT, "playbooks", "status.yml"), flow_vars(cluster, new))
        assert "%s: kubeadm-upgrade done, drain failed: the drain of cp-1 did not finish" % new in flat(status.stdout), status.stdout[-6000:]
        cluster.ssh("cp-2", admin + "delete poddisruptionbudget guarded")
        # killed once the second machine runs its new kubelet, as it is uncordoned: at the spec's version already,
        # cordoned still
        killed = cluster.playbook_killed(UPGRADE, flow_vars(cluster, new), "steps/uncordon.yml for cp-2", after=0, timeout=1500)
        recorded = upgrade_records(cluster)
        done = cluster.playbook(RECONCILE, flow_vars(cluster, new), timeout=1800)
    assert "cp-1 to %s and etcd %s with kubeadm upgrade apply: drain, kubelet, uncordon, ready" % (new, ETCD_TAG) in flat(killed), \
        flat(killed)[-6000:]
    assert "This pass's step: pass 3" not in killed
    assert recorded["cp-1"]["step"] == "ready" and "failed" not in recorded["cp-1"], recorded
    assert recorded["cp-2"]["step"] in ("kubelet", "uncordon"), recorded
    assert "cp-3" not in recorded, recorded
    assert done.returncode == 0, done.stdout[-8000:]
    assert_writes_survived(writer, "the killed in-place upgrade and the reconcile that finished it")
    # the half-upgraded machine is finished first (not taken for up to date for its new kubelet), with upgrade node,
    # then the last one with the addons, then the workers one group after the other
    assert steps_taken(done.stdout) == ["upgrade_in_place cp-2", "upgrade_in_place cp-3"] + \
        ["upgrade_workers %s" % host for host in WORKERS_ORDER] + ["none"], steps_taken(done.stdout)
    resumed = "cp-2 to %s and etcd %s with kubeadm upgrade node: " % (new, ETCD_TAG)
    assert resumed + "uncordon, ready" in flat(done.stdout) or resumed + "ready" in flat(done.stdout), done.stdout[-8000:]
    assert "next step: none (the control plane is as declared)" in done.stdout
    assert versions(cluster) == {host: new for host in CONTROL_PLANE + sorted(GROUPS)}
    assert identity(cluster) == kept
    records = upgrade_records(cluster)
    assert {name: (r["version"], r["command"], r["step"]) for name, r in records.items()} == \
        {"cp-1": (new, "apply", "ready"), **{host: (new, "node", "ready") for host in CONTROL_PLANE[1:] + sorted(GROUPS)}}, records
    for host, group in GROUPS.items():
        node = kubectl_json(cluster, "get node %s" % host)
        assert node["metadata"]["labels"].get(GROUP_LABEL) == group, node["metadata"]["labels"]
        assert not node["spec"].get("unschedulable"), "%s left cordoned" % host
    for host in cluster.hosts():
        assert cluster.ssh(host, "cat %s" % MARKER).stdout.strip() == "kept"
    assert kubectl_json(cluster, "get configmap written-before-upgrade")["data"] == {"k": "v"}
    wait_control_plane_ready(cluster, sorted(kept))
    again = cluster.playbook(UPGRADE, flow_vars(cluster, new), timeout=600)
    assert again.returncode == 0 and all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
