# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hook machine provider (docs/providers.md) with the sandbox's create and delete tasks
(tests/providers/sandbox): a sandbox of one bare host; create takes it from the pool; scale 1 -> 3 asks the
provider for a host in each failure domain the plan names; scale 3 -> 1 gives the removed machines' hosts back
to the provider, which deletes them; a second run changes nothing; a hook without its task files is refused
before any host is touched, and so is a static pool with no host in the failure domains the inventory
declares. Then workers (docs/rules.md WR6): a worker w-1 of group md-0, marked for replacement - check mode says
the two steps and the provider it would ask, making nothing - is replaced by a new md-0 host the provider makes,
and its own host given back; that worker, its kubelet stopped, is first power
cycled by the external remediation tasks (healed: its request cleared, the same Node), and, its host then powered
off for good and the tasks no help (they open a ticket), replaced by a new host once its one attempt timed out -
drained and its Node deleted through the control plane, killed then, before its host went back: the next run gives
the host back and joins a new one, never the old host (and, in check mode against an inventory the host is gone from,
as if the provider had deleted it before the kill, plans that join and refuses nothing)."""

import json
import os

import pytest

from e2e_support import ROOT, kubectl_json, lock_holder, newest, recap, steps_taken, wait_ready

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-provid", "172.31.239.0/24", 1, 3)
PROVIDER = os.path.join(ROOT, "tests", "providers", "sandbox")
ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "


def flow_vars(sandbox, replicas, tmp_path, provider="hook"):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": str(tmp_path),
            "kcp_provider": provider, "kcp_failure_domains": ["fd-1", "fd-2", "fd-3"],
            "kcp_provider_create_tasks": os.path.join(PROVIDER, "create.yml"),
            "kcp_provider_delete_tasks": os.path.join(PROVIDER, "delete.yml"),
            "kcp": {"cluster_name": "provider", "replicas": replicas, "version": newest(sandbox.mirror_dir),
                    "endpoint": {"host": "172.31.239.100", "port": 6443}}}


def flow(sandbox, playbook, replicas, tmp_path):
    done = sandbox.playbook(os.path.join(ROOT, "playbooks", playbook), flow_vars(sandbox, replicas, tmp_path), timeout=1200)
    assert done.returncode == 0, done.stdout[-8000:]
    return done


def inventory_hosts(sandbox, key="failure_domain"):
    """{host: failure domain} of the control plane candidates as the sandbox's inventory lists them now (the provider
    rewrites it); with ``key`` worker_group, {host: worker group} of its workers."""
    hosts = {}
    with open(sandbox.inventory, encoding="utf-8") as handle:
        for line in handle:
            if "failure_domain=" in line and not line.startswith("#") and (key == "worker_group") == ("worker_group=" in line):
                name = line.split()[0]
                hosts[name] = line.split(key + "=")[1].split()[0]
    return hosts


def zones(sandbox, host):
    got = sandbox.ssh(host, ADMIN + "get nodes -l node-role.kubernetes.io/control-plane -o json")
    return {n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone") for n in json.loads(got.stdout)["items"]}


def test_a_hook_without_its_task_files_is_refused_before_any_host_is_touched(bare_hosts, tmp_path):
    extra = flow_vars(bare_hosts, 1, tmp_path)
    del extra["kcp_provider_create_tasks"]
    refused = bare_hosts.playbook(os.path.join(ROOT, "playbooks", "create.yml"), extra)
    assert refused.returncode != 0
    assert "kcp_provider_create_tasks" in refused.stdout
    assert bare_hosts.ssh("cp-1", "test -e /usr/local/bin/kubeadm", check=False).returncode == 1


def test_a_pool_with_no_host_in_the_declared_failure_domains_is_refused_before_any_host_is_touched(bare_hosts, tmp_path):
    extra = dict(flow_vars(bare_hosts, 1, tmp_path, provider="static"), kcp_failure_domains=["fd-7"])
    refused = bare_hosts.playbook(os.path.join(ROOT, "playbooks", "create.yml"), extra)
    assert refused.returncode != 0
    assert "no free host in failure domain fd-7" in refused.stdout
    assert bare_hosts.ssh("cp-1", "test -e /usr/local/bin/kubeadm || test -e /etc/kubernetes/control-plane-machine.json",
                          check=False).returncode == 1


def test_scale_up_asks_the_provider_for_a_host_in_each_failure_domain(bare_hosts, tmp_path):
    flow(bare_hosts, "create.yml", 1, tmp_path)
    assert inventory_hosts(bare_hosts) == {"cp-1": "fd-1"}
    flow(bare_hosts, "scale.yml", 3, tmp_path)
    hosts = inventory_hosts(bare_hosts)
    assert sorted(hosts.values()) == ["fd-1", "fd-2", "fd-3"], hosts
    assert zones(bare_hosts, "cp-1") == hosts
    again = flow(bare_hosts, "scale.yml", 3, tmp_path)
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_scale_down_gives_the_hosts_back_to_the_provider(bare_hosts, tmp_path):
    before = inventory_hosts(bare_hosts)
    flow(bare_hosts, "scale.yml", 1, tmp_path)
    hosts = inventory_hosts(bare_hosts)
    assert len(hosts) == 1 and set(hosts) < set(before), hosts
    [left] = list(hosts)
    assert zones(bare_hosts, left) == hosts
    again = flow(bare_hosts, "scale.yml", 1, tmp_path)
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


REMEDIATE = os.path.join(ROOT, "playbooks", "remediate.yml")
REMEDIATION_TASKS = os.path.join(ROOT, "tests", "remediation", "sandbox")
GROUP_LABEL = "control-plane.kubeadm.io/worker-group"


def worker_nodes(sandbox):
    """{worker Node: (its group, its uid)}."""
    return {n["metadata"]["name"]: (n["metadata"]["labels"].get(GROUP_LABEL), n["metadata"]["uid"])
            for n in kubectl_json(sandbox, "get nodes -l '!node-role.kubernetes.io/control-plane'")["items"]}


def state_data(sandbox):
    return (kubectl_json(sandbox, "-n kube-system get configmap control-plane-kubeadm-io --ignore-not-found") or {}).get("data") or {}


def test_a_worker_marked_for_replacement_gets_a_new_host_from_the_provider_and_its_own_goes_back(bare_hosts, tmp_path):
    bare_hosts.machine_create("w-1", worker_group="md-0")
    flow(bare_hosts, "workers.yml", 1, tmp_path)
    assert {name: group for name, (group, _uid) in worker_nodes(bare_hosts).items()} == {"w-1": "md-0"}
    [control_plane] = list(inventory_hosts(bare_hosts))
    bare_hosts.ssh(control_plane, ADMIN + "annotate node w-1 control-plane.kubeadm.io/replace-machine=")
    # check mode: the plan, the provider it would ask, and nothing made
    looked = bare_hosts.playbook(os.path.join(ROOT, "playbooks", "rollout.yml"), flow_vars(bare_hosts, 1, tmp_path), check=True)
    assert looked.returncode == 0, looked.stdout[-6000:]
    said = " ".join(looked.stdout.split())
    assert "1. roll_workers join_worker w-1: replace worker w-1 of worker group md-0" in said, said[-6000:]
    assert "2. roll_workers remove_worker w-1: the replacement of worker w-1 of worker group md-0 by new-worker-1 begun at" in said, said[-6000:]
    assert "would ask the machine provider (hook) for a worker host of group md-0" in said, said[-6000:]
    assert inventory_hosts(bare_hosts, "worker_group") == {"w-1": "md-0"} and "worker-rollout" not in state_data(bare_hosts)
    done = flow(bare_hosts, "rollout.yml", 1, tmp_path)
    assert steps_taken(done.stdout) == ["roll_workers join_worker w-1", "roll_workers remove_worker w-1", "none"], steps_taken(done.stdout)
    workers = inventory_hosts(bare_hosts, "worker_group")
    assert list(workers.values()) == ["md-0"] and "w-1" not in workers, workers
    [new] = list(workers)
    assert {name: group for name, (group, _uid) in worker_nodes(bare_hosts).items()} == {new: "md-0"}
    wait_ready(bare_hosts, [new], "True")
    assert "worker-rollout" not in state_data(bare_hosts)
    again = flow(bare_hosts, "rollout.yml", 1, tmp_path)
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def remediation_vars(sandbox, tmp_path, tasks, **external):
    extra = flow_vars(sandbox, 1, tmp_path)
    check = {"unhealthy_conditions": [{"type": "Ready", "status": status, "timeout": "5s"} for status in ("Unknown", "False")]}
    extra["kcp"]["workers"] = {"health_check": check, "external_remediation": dict(external, escalate=True)}
    return dict(extra, kcp_remediation_tasks=os.path.join(REMEDIATION_TASKS, tasks), worker_remove_unreachable_pod_timeout=5)


def test_an_unhealthy_worker_is_power_cycled_first_and_replaced_by_a_new_host_when_that_does_not_heal_it(bare_hosts, tmp_path):
    bare_hosts.reload()
    [worker] = list(inventory_hosts(bare_hosts, "worker_group"))
    [control_plane] = list(inventory_hosts(bare_hosts))
    uid = worker_nodes(bare_hosts)[worker][1]
    bare_hosts.fault("kubelet-stop", worker)
    wait_ready(bare_hosts, [worker], "Unknown", longer_than=6)
    healed = bare_hosts.playbook(REMEDIATE, remediation_vars(bare_hosts, tmp_path, "power-cycle.yml", attempts=1, timeout="2m"), timeout=1200)
    assert healed.returncode == 0, healed.stdout[-8000:]
    assert steps_taken(healed.stdout) == ["remediate_external %s" % worker, "clear_external_remediation %s" % worker, "none"], \
        steps_taken(healed.stdout)
    node = kubectl_json(bare_hosts, "get node %s" % worker)
    assert node["metadata"]["uid"] == uid and "control-plane.kubeadm.io/external-remediation" not in node["metadata"].get("annotations", {})

    # its host lost (powered off), and the tasks only open a ticket: the one attempt runs out, and the worker is
    # replaced by a new host, removed through the control plane (killed then, before its host goes back to the provider)
    bare_hosts.fault("power-off", worker)
    wait_ready(bare_hosts, [worker], "Unknown", longer_than=6)
    ticket = remediation_vars(bare_hosts, tmp_path, "open-ticket.yml", attempts=1, timeout="5s")
    killed = bare_hosts.playbook_killed(REMEDIATE, ticket, "Give the host back to the machine provider", after=0, timeout=1200)
    assert steps_taken(killed)[:2] == ["remediate_external %s" % worker, "remediate_worker remove_worker %s" % worker], killed[-6000:]
    record = json.loads(state_data(bare_hosts)["worker-rollout"])
    assert (record["worker"], record["uid"], record["group"], record["replacement"], record["surge"], record["remediation"]) == (
        worker, uid, "md-0", None, False, True), record
    assert worker not in worker_nodes(bare_hosts) and worker in inventory_hosts(bare_hosts, "worker_group")
    # had the provider deleted the host before the kill, with the inventory made from its hosts: the join does not
    # need the replaced worker's host (check mode against an inventory without it: the plan, and no refusal)
    without = tmp_path / "inventory-without-the-worker.ini"
    with open(bare_hosts.inventory, encoding="utf-8") as handle:
        without.write_text("".join(line for line in handle if not line.startswith(worker + " ")), encoding="utf-8")
    looked = bare_hosts.playbook(REMEDIATE, ticket, check=True, inventory=str(without))
    assert looked.returncode == 0 and "would ask the machine provider (hook) for a worker host of group md-0" in looked.stdout, looked.stdout[-6000:]
    done = bare_hosts.playbook(REMEDIATE, ticket, timeout=1200)
    assert done.returncode == 0, done.stdout[-8000:]
    said = " ".join(done.stdout.split())
    assert steps_taken(done.stdout) == ["remediate_worker join_worker %s" % worker, "none"], steps_taken(done.stdout)
    assert ("the remediation of worker %s of worker group md-0 by a new host begun at %s: join a new host of the group" % (
        worker, record["timestamp"])) in said, said[-6000:]
    workers = inventory_hosts(bare_hosts, "worker_group")
    assert list(workers.values()) == ["md-0"] and worker not in workers, workers
    [new] = list(workers)
    assert {name: group for name, (group, _uid) in worker_nodes(bare_hosts).items()} == {new: "md-0"}
    wait_ready(bare_hosts, [new], "True")
    assert "worker-rollout" not in state_data(bare_hosts) and lock_holder(bare_hosts, control_plane) == ""
    again = bare_hosts.playbook(REMEDIATE, ticket)
    assert again.returncode == 0 and all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
