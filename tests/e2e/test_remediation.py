# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate playbook end to end on 3 bare sandbox hosts over 3 failure domains, the unhealthy machines made
with sandbox faults (a stopped kubelet, which the controller manager's node lifecycle emulation turns into Ready
Unknown after its grace period; a stopped etcd member): the seed's scenario 1 (one machine unhealthy: deleted,
then its replacement joins on the host it gave back, carrying the remediation record), the retry limit reached
(the replacement fails again within min_healthy_period with max_retry 0: refused as manual intervention, nothing
touched), scenario 3 (another machine's etcd member down: refused, the machine and its member stay), a machine
whose etcd data directory was wiped (its real etcd crash-loops: replaced, nothing the cluster held lost), scenario 2
(two machines unhealthy: replaced one after the other); external remediation with the user's tasks: a power cycle
that heals the machine (kept, with what the user left on its host; the request cleared), and tasks that do not,
escalated to delete-and-recreate after the last attempt. Every remediation runs with a background writer through
the load balancer (docs/flows.md "What a workload sees"). The remediation record lives in the cluster
(docs/state.md)."""

import json
import os
import time

import pytest

from e2e_support import (ROOT, assert_writes_survived, kubectl_json, newest, recap, status_table, steps_taken, wait_control_plane_ready,
                         wait_pod_started_since, wait_ready)

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-remed", "172.31.235.0/24", 3, 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
REMEDIATE = os.path.join(ROOT, "playbooks", "remediate.yml")
ENDPOINT = "172.31.235.100:6443"
ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
TASKS = os.path.join(ROOT, "tests", "remediation", "sandbox")
# The unhealthy conditions' timeout: short, so a test waits the node lifecycle's grace period (40 s) and little more.
UNHEALTHY_AFTER_SECONDS = 5
UNHEALTHY_AFTER = "%ds" % UNHEALTHY_AFTER_SECONDS


def flow_vars(sandbox, tasks=None, **remediation):
    extra = {"kcp_remediation_tasks": os.path.join(TASKS, tasks)} if tasks else {}
    return {**extra, "kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir,
            # the Node of a stopped kubelet is unreachable: its pods' deletion is not waited for long
            "machine_delete_unreachable_pod_timeout": 5,
            "kcp": {"cluster_name": "remed", "replicas": 3, "version": newest(sandbox.mirror_dir),
                    "endpoint": {"host": ENDPOINT.split(":", maxsplit=1)[0], "port": 6443},
                    "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}},
                    "health_check": {"unhealthy_conditions": [{"type": "Ready", "status": "Unknown", "timeout": UNHEALTHY_AFTER},
                                                              {"type": "Ready", "status": "False", "timeout": UNHEALTHY_AFTER}]},
                    "remediation": remediation}}


def remediate(sandbox, tasks=None, **remediation):
    """The remediate flow's run, with a workload writing through the load balancer all along."""
    with sandbox.writing(ENDPOINT) as writer:
        done = sandbox.playbook(REMEDIATE, flow_vars(sandbox, tasks, **remediation), timeout=1500)
    assert_writes_survived(writer, "remediate")
    return done


def nodes(sandbox):
    return {n["metadata"]["name"]: n for n in kubectl_json(sandbox, "get nodes")["items"]}


def ready(node):
    return next((c["status"] for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), None)


def wait_unhealthy(sandbox, names):
    wait_ready(sandbox, names, "Unknown", longer_than=UNHEALTHY_AFTER_SECONDS + 1)


def etcd_roles(sandbox):
    """{machine: its etcd member's role} as the status flow reads etcd itself, once the control plane is Ready."""
    table = status_table(sandbox, flow_vars(sandbox))
    assert table[1] == "control plane: Ready", table
    return {row.split()[0]: row.split()[3] for row in table[3:]}


def assert_one_voter_a_machine(sandbox):
    roles = etcd_roles(sandbox)
    assert sorted(roles) == ["cp-1", "cp-2", "cp-3"] and sorted(roles.values()) == ["leader", "voter", "voter"], roles


def state_config_map(sandbox):
    got = kubectl_json(sandbox, "-n kube-system get configmap control-plane-kubeadm-io --ignore-not-found")
    return (got or {}).get("data") or {}


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    done = bare_hosts.playbook(CREATE, flow_vars(bare_hosts), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    yield bare_hosts


def test_one_unhealthy_machine_is_replaced_on_the_host_it_gave_back(cluster):
    before = nodes(cluster)["cp-2"]["metadata"]["uid"]
    cluster.fault("kubelet-stop", "cp-2")
    wait_unhealthy(cluster, ["cp-2"])
    done = remediate(cluster)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "cp-2 is unhealthy and etcd keeps quorum without it" in done.stdout
    after = nodes(cluster)
    assert after["cp-2"]["metadata"]["uid"] != before, "cp-2's Node was not replaced"
    assert all(ready(node) == "True" for node in after.values()), {n: ready(node) for n, node in after.items()}
    record = json.loads(after["cp-2"]["metadata"]["annotations"]["control-plane.kubeadm.io/remediation"])
    assert record["retries"] == 0 and record["last"]
    assert "remediation" not in state_config_map(cluster), "the remediation record was not cleared once the replacement was created"
    assert_one_voter_a_machine(cluster)
    again = remediate(cluster)
    assert again.returncode == 0, again.stdout[-8000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_a_replacement_failing_again_past_max_retry_needs_a_person_and_nothing_is_touched(cluster):
    cluster.fault("kubelet-stop", "cp-2")
    try:
        wait_unhealthy(cluster, ["cp-2"])
        uid = nodes(cluster)["cp-2"]["metadata"]["uid"]
        refused = remediate(cluster, max_retry=0)
        assert refused.returncode != 0
        assert "manual intervention needed (max_retries)" in refused.stdout, refused.stdout[-6000:]
        assert nodes(cluster)["cp-2"]["metadata"]["uid"] == uid
    finally:
        cluster.fault("kubelet-start", "cp-2")
    wait_control_plane_ready(cluster, ["cp-2"])
    assert_one_voter_a_machine(cluster)


def test_another_machines_etcd_member_down_blocks_remediation(cluster):
    # scenario 3: cp-1 unhealthy, cp-3's member silent; removing cp-1's member would leave 1 of 2 healthy. cp-1 is
    # the one asked for by hand (the remediate-machine annotation): with cp-3's etcd down its kubelet, which talks to
    # its own API server, turns cp-3 unhealthy too, and the most broken machine, cp-3, would go first (docs/rules.md
    # RM4), which keeps the quorum
    cluster.ssh("cp-2", ADMIN + "annotate node cp-1 control-plane.kubeadm.io/remediate-machine=")
    cluster.fault("etcd-stop", "cp-3")
    try:
        uid = nodes(cluster)["cp-1"]["metadata"]["uid"]
        refused = remediate(cluster)
        assert refused.returncode != 0
        assert "manual intervention needed (etcd_quorum)" in refused.stdout, refused.stdout[-6000:]
        assert nodes(cluster)["cp-1"]["metadata"]["uid"] == uid
    finally:
        started = time.time()
        cluster.fault("etcd-start", "cp-3")
        wait_pod_started_since(cluster, "etcd-cp-3", started)
        wait_control_plane_ready(cluster, ["cp-1", "cp-3"])
        cluster.ssh("cp-2", ADMIN + "annotate node cp-1 control-plane.kubeadm.io/remediate-machine-")
    assert_one_voter_a_machine(cluster)


def test_a_machine_whose_etcd_data_is_lost_is_replaced_and_the_cluster_keeps_what_it_held(cluster):
    cluster.ssh("cp-2", ADMIN + "-n default create configmap before-the-wipe")
    uid = nodes(cluster)["cp-3"]["metadata"]["uid"]
    cluster.fault("etcd-wipe", "cp-3")
    # real etcd on an empty data dir, in a cluster that had it as a member: it panics on the leader's first append
    deadline = time.monotonic() + 60
    while "is out of range [lastIndex(0)]" not in cluster.ssh("cp-3", "cat /var/log/kcpsim/pods/etcd.log").stdout:
        assert time.monotonic() < deadline, "cp-3's etcd did not refuse the leader's log on its empty data dir within 60 s"
        time.sleep(1)
    # its kubelet talks to its own API server, which has no etcd: the Node turns Unknown, and the health check sees it
    wait_unhealthy(cluster, ["cp-3"])
    done = remediate(cluster)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "cp-3 is unhealthy and etcd keeps quorum without it" in done.stdout
    after = nodes(cluster)
    assert after["cp-3"]["metadata"]["uid"] != uid and all(ready(node) == "True" for node in after.values())
    assert kubectl_json(cluster, "-n default get configmap before-the-wipe")["metadata"]["name"] == "before-the-wipe"
    assert_one_voter_a_machine(cluster)


def test_two_unhealthy_machines_are_replaced_one_after_the_other(cluster):
    before = {name: node["metadata"]["uid"] for name, node in nodes(cluster).items()}
    cluster.fault("kubelet-stop", "cp-1")
    cluster.fault("kubelet-stop", "cp-3")
    wait_unhealthy(cluster, ["cp-1", "cp-3"])
    done = remediate(cluster)
    assert done.returncode == 0, done.stdout[-8000:]
    taken = steps_taken(done.stdout)
    assert taken[:4] == ["remediate", "scale_up", "remediate", "scale_up"], taken
    after = nodes(cluster)
    assert after["cp-1"]["metadata"]["uid"] != before["cp-1"] and after["cp-3"]["metadata"]["uid"] != before["cp-3"]
    assert after["cp-2"]["metadata"]["uid"] == before["cp-2"]
    assert all(ready(node) == "True" for node in after.values())
    assert_one_voter_a_machine(cluster)


def test_external_remediation_that_heals_the_machine_keeps_it_and_clears_the_request(cluster):
    uid = nodes(cluster)["cp-2"]["metadata"]["uid"]
    cluster.ssh("cp-2", "echo left-by-the-user > /root/marker")
    cluster.fault("kubelet-stop", "cp-2")
    wait_unhealthy(cluster, ["cp-2"])
    done = remediate(cluster, "power-cycle.yml", external={"attempts": 2, "timeout": "3m"})
    assert done.returncode == 0, done.stdout[-8000:]
    assert steps_taken(done.stdout)[:2] == ["remediate_external", "clear_external_remediation"], steps_taken(done.stdout)
    node = nodes(cluster)["cp-2"]
    # the same machine on the same host: power cycled, not replaced
    assert node["metadata"]["uid"] == uid and ready(node) == "True"
    assert "control-plane.kubeadm.io/external-remediation" not in (node["metadata"].get("annotations") or {})
    assert cluster.ssh("cp-2", "cat /root/marker").stdout.strip() == "left-by-the-user"
    wait_control_plane_ready(cluster, ["cp-2"])
    assert_one_voter_a_machine(cluster)


def test_external_remediation_that_does_not_heal_escalates_to_delete_and_recreate(cluster):
    uid = nodes(cluster)["cp-3"]["metadata"]["uid"]
    cluster.fault("kubelet-stop", "cp-3")
    wait_unhealthy(cluster, ["cp-3"])
    done = remediate(cluster, "open-ticket.yml", external={"attempts": 1, "timeout": "10s", "escalate": True})
    assert done.returncode == 0, done.stdout[-8000:]
    taken = steps_taken(done.stdout)
    assert taken[:3] == ["remediate_external", "remediate", "scale_up"], taken
    assert "would open a ticket: cp-3 unhealthy, external remediation attempt 1" in done.stdout
    node = nodes(cluster)["cp-3"]
    assert node["metadata"]["uid"] != uid and ready(node) == "True"
    assert_one_voter_a_machine(cluster)
