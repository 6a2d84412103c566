# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox's external etcd (``sandbox up --external-etcd 3``, kcpsandbox/external_etcd.py): three real etcd
members on hosts of their own, TLS for clients and peers, answering the client certificate an operator hands to the
control plane hosts, outside the control plane candidates and the load balancer, started again by a host's boot."""

import json
import os
import stat
import subprocess
import time

import pytest

from infra_support import SandboxHandle, ansible_inventory, needs_root
from kcpsandbox import state
from kcpsim import build

NAME, SUBNET = "t-xetcd", "172.31.224.0/24"
MEMBERS = ("etcd-1", "etcd-2", "etcd-3")


@pytest.fixture(scope="module")
def sandbox():
    needs_root()
    handle = SandboxHandle(NAME)
    with state.lock_for_test_run(NAME):
        handle.cli("down")
        handle.cli("up", "--machines", "1", "--external-etcd", "3", "--subnet", SUBNET)
        yield handle
        handle.cli("down")


def etcdctl(sandbox, *argv, endpoints=MEMBERS):
    """The real etcdctl, on the controller, with the files the control plane host was handed (read through its disk)."""
    record = sandbox.record

    def pki(path):
        return record.host_fs("cp-1", "/etc/kubernetes/pki/" + path)

    return subprocess.run([os.path.join(build.find_etcd_dir(), "etcdctl"),
                           "--endpoints=" + ",".join("https://%s:2379" % sandbox.ip(name) for name in endpoints),
                           "--cacert=" + pki("etcd/ca.crt"), "--cert=" + pki("apiserver-etcd-client.crt"),
                           "--key=" + pki("apiserver-etcd-client.key"), "--dial-timeout=3s", "--command-timeout=10s"] + list(argv),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)


def test_three_members_answer_the_client_certificate_the_control_plane_hosts_hold(sandbox):
    members = json.loads(etcdctl(sandbox, "member", "list", "-w", "json").stdout)["members"]
    assert sorted(m["name"] for m in members) == list(MEMBERS)
    assert all(url.startswith("https://") for m in members for url in m["clientURLs"] + m["peerURLs"])
    assert etcdctl(sandbox, "put", "canary", "before").returncode == 0
    assert etcdctl(sandbox, "get", "canary", "--print-value-only", endpoints=("etcd-3",)).stdout.strip() == "before"
    # the key handed over is private; the CA key never leaves the sandbox's state directory
    key = sandbox.record.host_fs("cp-1", "/etc/kubernetes/pki/apiserver-etcd-client.key")
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert sandbox.ssh("cp-1", "test ! -e /etc/kubernetes/pki/etcd/ca.key", check=False).returncode == 0
    assert sandbox.ssh("etcd-1", "test ! -e /etc/etcd/pki/ca.key", check=False).returncode == 0


def test_a_client_without_a_certificate_of_the_cluster_is_refused(sandbox):
    done = subprocess.run([os.path.join(build.find_etcd_dir(), "etcdctl"), "--endpoints=https://%s:2379" % sandbox.ip("etcd-1"),
                           "--insecure-skip-tls-verify", "--dial-timeout=3s", "--command-timeout=5s", "get", "canary"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0


def test_the_etcd_hosts_are_no_control_plane_candidates_and_no_load_balancer_backends(sandbox):
    parsed = ansible_inventory(sandbox.record.inventory)
    assert parsed["control_plane_candidates"]["hosts"] == ["cp-1"]
    assert parsed["external_etcd"]["hosts"] == list(MEMBERS)
    assert {h["name"]: h["lb_backend"] for h in sandbox.status()["hosts"] if h["name"] in MEMBERS} == dict.fromkeys(MEMBERS, "absent")


def test_a_member_powered_off_leaves_a_quorum_and_comes_back_with_its_host(sandbox):
    sandbox.cli("fault", "power-off", "etcd-2")
    try:
        health = etcdctl(sandbox, "endpoint", "health", "-w", "json", endpoints=("etcd-1", "etcd-3"))
        assert health.returncode == 0 and all(entry["health"] for entry in json.loads(health.stdout)), health.stdout + health.stderr
        assert etcdctl(sandbox, "put", "canary", "while-one-is-off", endpoints=("etcd-1", "etcd-3")).returncode == 0
    finally:
        sandbox.cli("fault", "power-on", "etcd-2")
    # enabled at boot: the member starts again and catches up
    done = None
    for _attempt in range(60):
        done = etcdctl(sandbox, "get", "canary", "--print-value-only", "--consistency=s", endpoints=("etcd-2",))
        if done.stdout.strip() == "while-one-is-off":
            break
        time.sleep(0.5)
    assert done.stdout.strip() == "while-one-is-off", done.stdout + done.stderr
