# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox as a machine provider: machines come and go with the inventory, the ssh files and the load
balancer following; both operations are idempotent by name."""

import json
import os
import subprocess

import pytest

from kcpsandbox import net

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("t-infra")]


def inventory_hosts(sandbox):
    done = subprocess.run(["ansible-inventory", "-i", sandbox.record.inventory, "--list"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=sandbox.ansible_env(), check=True)
    parsed = json.loads(done.stdout)
    return {name: parsed["_meta"]["hostvars"][name]["failure_domain"]
            for name in parsed["control_plane_candidates"]["hosts"]}


def lb_backends(sandbox):
    return {h["name"] for h in sandbox.status()["hosts"] if h["lb_backend"] != "absent"}


def test_a_created_machine_joins_inventory_and_load_balancer_and_a_deleted_one_leaves_both(infra_sandbox):
    before = set(infra_sandbox.hosts())
    created = json.loads(infra_sandbox.cli("machine", "create").stdout)
    name = created["name"]
    try:
        assert name not in before
        assert set(created) == {"name", "host", "failure_domain", "worker_group"} and created["worker_group"] is None
        assert created["failure_domain"] == "fd-1", "3 machines over 3 domains: the tie goes to fd-1"
        assert inventory_hosts(infra_sandbox)[name] == "fd-1"
        assert name in lb_backends(infra_sandbox)
        assert infra_sandbox.ssh(name, "hostname").stdout.strip() == name
        # A provider only provides a machine: no node software, no units, no zone label on it (the failure
        # domain is provider metadata, in the inventory and the status).
        bare = infra_sandbox.ssh(name, "ls /usr/local/bin /opt/cni/bin /etc/systemd/system /etc/cni/net.d "
                                 "/etc/default/kubelet 2>/dev/null; command -v kubeadm kubelet containerd; true")
        assert [line for line in bare.stdout.split() if not line.endswith(":")] == []
        assert {h["name"]: h["failure_domain"] for h in infra_sandbox.status()["hosts"]}[name] == "fd-1"
        assert infra_sandbox.ssh(name, "ip -4 -o addr show eth0").stdout.split()[3] == created["host"] + "/24"

        again = json.loads(infra_sandbox.cli("machine", "create", "--name", name).stdout)
        assert again == created, "creating an existing machine changes nothing"
        assert set(infra_sandbox.hosts()) == before | {name}

        record = infra_sandbox.record.hosts[name]
        host_dir = infra_sandbox.record.host_dir(name)
        assert json.loads(infra_sandbox.cli("machine", "delete", name).stdout) == {"name": name, "deleted": True}
        assert name not in inventory_hosts(infra_sandbox)
        assert name not in lb_backends(infra_sandbox)
        assert not net.netns_exists(record["netns"]) and not net.link_exists(record["veth"])
        assert not os.path.exists(host_dir)
        assert json.loads(infra_sandbox.cli("machine", "delete", name).stdout) == {"name": name, "deleted": False}
    finally:
        infra_sandbox.cli("machine", "delete", name)
    assert set(infra_sandbox.hosts()) == before


def test_the_bridge_keeps_its_mac_while_machines_come_and_go_so_hosts_keep_reaching_the_controller(infra_sandbox):
    network = infra_sandbox.record.network
    name = json.loads(infra_sandbox.cli("machine", "create").stdout)["name"]
    infra_sandbox.cli("machine", "delete", name)
    with open("/sys/class/net/%s/address" % network.bridge) as handle:
        assert handle.read().strip() == network.bridge_mac
    for host in infra_sandbox.hosts():
        neighbour = infra_sandbox.ssh(host, "ip neigh show %s" % network.gateway).stdout.split()
        assert neighbour[neighbour.index("lladdr") + 1] == network.bridge_mac


def test_a_machine_goes_to_the_failure_domain_asked_for(infra_sandbox):
    created = json.loads(infra_sandbox.cli("machine", "create", "--failure-domain", "fd-3", "--name",
                                           "infra-extra").stdout)
    try:
        assert (created["name"], created["failure_domain"]) == ("infra-extra", "fd-3")
        assert inventory_hosts(infra_sandbox)["infra-extra"] == "fd-3"
        conflicting = infra_sandbox.cli("machine", "create", "--failure-domain", "fd-1", "--name", "infra-extra",
                                        check=False)
        assert conflicting.returncode == 1 and "exists in fd-3" in conflicting.stderr
    finally:
        infra_sandbox.cli("machine", "delete", "infra-extra")


def test_a_worker_host_joins_the_inventory_s_workers_with_its_group_and_no_load_balancer_backend(infra_sandbox):
    created = json.loads(infra_sandbox.cli("machine", "create", "--worker-group", "md-0", "--name", "infra-worker").stdout)
    try:
        assert (created["name"], created["worker_group"]) == ("infra-worker", "md-0")
        done = subprocess.run(["ansible-inventory", "-i", infra_sandbox.record.inventory, "--list"], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, env=infra_sandbox.ansible_env(), check=True)
        parsed = json.loads(done.stdout)
        assert "infra-worker" in parsed["workers"]["hosts"] and "infra-worker" not in parsed["control_plane_candidates"]["hosts"]
        assert parsed["_meta"]["hostvars"]["infra-worker"]["worker_group"] == "md-0"
        assert "infra-worker" not in lb_backends(infra_sandbox)
    finally:
        infra_sandbox.cli("machine", "delete", "infra-worker")


@pytest.mark.parametrize("args, fragments", [
    (["--failure-domain", "fd-9"], ["--failure-domain 'fd-9': not one of this sandbox's failure domains"]),
    (["--name", "Bad_Name", "--failure-domain", "fd-7"], ["--name 'Bad_Name': must be a DNS-1123 label",
                                                          "--failure-domain 'fd-7'"]),
    (["--worker-group", "GPU pool", "--failure-domain", "fd-9"], ["--worker-group 'GPU pool': must be a Kubernetes label value",
                                                                  "--failure-domain 'fd-9'"]),
], ids=["an unknown failure domain is refused", "every bad argument is named at once", "a worker group that is no label value"])
def test_bad_machine_requests_fail_before_anything_is_made(infra_sandbox, args, fragments):
    before = set(infra_sandbox.hosts())
    done = infra_sandbox.cli("machine", "create", *args, check=False)
    assert done.returncode == 2
    for fragment in fragments:
        assert fragment in done.stderr
    assert "Traceback" not in done.stderr
    assert set(infra_sandbox.hosts()) == before
