# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hook machine provider (docs/providers.md) with the sandbox's create and delete tasks
(tests/providers/sandbox): a sandbox of one bare host; create takes it from the pool; scale 1 -> 3 asks the
provider for a host in each failure domain the plan names; scale 3 -> 1 gives the removed machines' hosts back
to the provider, which deletes them; a second run changes nothing; a hook without its task files is refused
before any host is touched, and so is a static pool with no host in the failure domains the inventory
declares."""

import json
import os

import pytest

from e2e_support import ROOT, newest, recap

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


def inventory_hosts(sandbox):
    """{host: failure domain} as the sandbox's inventory lists them now (the provider rewrites it)."""
    hosts = {}
    with open(sandbox.inventory, encoding="utf-8") as handle:
        for line in handle:
            if "failure_domain=" in line and not line.startswith("#"):
                name = line.split()[0]
                hosts[name] = line.split("failure_domain=")[1].split()[0]
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
