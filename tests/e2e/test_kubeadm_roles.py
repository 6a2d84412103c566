# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm_init and kubeadm_join on bare sandbox hosts, over SSH, after node_software: check mode says what it
would do and changes nothing; then three control plane machines, a voting etcd member each, Nodes named and
zoned from the spec; the configuration files that held the secrets are gone, no secret reaches the play's
output, and a second run changes nothing.

The observe role's contract on the same hosts: its snapshot, before the cluster exists and once it does, goes
to kcp_plan verbatim and is accepted, with the plan an operator expects (init first, then nothing to do)."""

import glob
import json
import os
import tempfile
import time

import pytest

from ansible_run import run
from e2e_support import HERE, newest, recap

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-kroles", "172.31.242.0/24", 3)
PLAYBOOK = os.path.join(HERE, "playbooks", "kubeadm_roles.yml")
OBSERVE_PLAN = os.path.join(HERE, "playbooks", "observe_plan.yml")


def spec_vars(sandbox):
    version = newest(sandbox.mirror_dir)
    return {"kcp_version": version,
            "e2e_spec": {"cluster_name": "e2e", "replicas": 3, "version": version,
                         "endpoint": {"host": "172.31.242.100", "port": 6443},
                         "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}}


def test_check_mode_on_bare_hosts_says_what_it_would_do_and_changes_nothing(bare_hosts):
    done = bare_hosts.playbook(PLAYBOOK, spec_vars(bare_hosts), check=True)
    assert done.returncode == 0, done.stdout[-6000:]
    first, *others = bare_hosts.hosts()
    assert "would run kubeadm init on %s" % first in done.stdout
    for host in others:
        assert "would run kubeadm join --control-plane on %s" % host in done.stdout
    for host in bare_hosts.hosts():
        assert bare_hosts.ssh(host, "test -e /usr/local/bin/kubeadm || test -e /etc/kubernetes/admin.conf",
                              check=False).returncode == 1


def observe_and_plan(sandbox, tmp_path):
    """(snapshot, plan) of the observe role and kcp_plan on it, run by ansible-playbook over SSH; the admin
    kubeconfig it read is not left on the controller."""
    kept = set(glob.glob(os.path.join(tempfile.gettempdir(), "kcp-observe-*")))
    out = tmp_path / "observed.json"
    done = sandbox.playbook(OBSERVE_PLAN, dict(spec_vars(sandbox), e2e_out=str(out)))
    assert done.returncode == 0, done.stdout[-6000:]
    assert "-----BEGIN" not in done.stdout and "client-key-data" not in done.stdout
    # another module's flow may hold one of its own for a moment (the e2e modules run side by side): only a file
    # that stays is one this run left behind
    deadline = time.monotonic() + 60
    while set(glob.glob(os.path.join(tempfile.gettempdir(), "kcp-observe-*"))) - kept and time.monotonic() < deadline:
        time.sleep(1)
    assert not set(glob.glob(os.path.join(tempfile.gettempdir(), "kcp-observe-*"))) - kept
    result = json.loads(out.read_text())
    return result["observed"], result["plan"]


def test_observed_bare_hosts_are_no_cluster_and_the_plan_starts_one(bare_hosts, tmp_path):
    observed, plan = observe_and_plan(bare_hosts, tmp_path)
    assert (observed["initialized"], observed["machines"], observed["etcd"]["members"]) == (False, [], [])
    assert [fd["name"] for fd in observed["failure_domains"]] == ["fd-1", "fd-2", "fd-3"]
    assert plan["action"] == "scale_up" and plan["init"] is True, plan


@pytest.fixture(scope="module")
def created(bare_hosts):
    done = bare_hosts.playbook(PLAYBOOK, spec_vars(bare_hosts), timeout=1800)
    assert done.returncode == 0, done.stdout[-6000:]
    return done


def test_three_machines_are_control_planes_with_a_voting_etcd_member_each(bare_hosts, created):
    first = bare_hosts.hosts()[0]
    members = json.loads(bare_hosts.ssh(first, "kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system "
                                               "get pods -l component=etcd -o json").stdout)["items"]
    assert sorted(pod["spec"]["nodeName"] for pod in members) == bare_hosts.hosts()
    nodes = json.loads(bare_hosts.ssh(first, "kubectl --kubeconfig /etc/kubernetes/admin.conf get nodes -o json")
                       .stdout)["items"]
    zones = {node["metadata"]["name"]: node["metadata"]["labels"].get("topology.kubernetes.io/zone") for node in nodes}
    assert zones == {host: "fd-%d" % (index + 1) for index, host in enumerate(bare_hosts.hosts())}
    for node in nodes:
        assert "node-role.kubernetes.io/control-plane" in node["metadata"]["labels"]


def test_the_configuration_files_with_the_secrets_are_gone(bare_hosts, created):
    for host in bare_hosts.hosts():
        assert bare_hosts.ssh(host, "test -e /etc/kubernetes/kubeadm-control-plane.yaml", check=False).returncode == 1


def test_no_token_or_certificate_key_reaches_the_output(bare_hosts, created):
    first = bare_hosts.hosts()[0]
    tokens = bare_hosts.ssh(first, "kubeadm token list").stdout
    secrets = [line.split()[0] for line in tokens.splitlines()[1:] if line.strip()]
    assert secrets, tokens
    for secret in secrets:
        assert secret not in created.stdout and secret.split(".")[1] not in created.stdout
    assert "certificateKey: " not in created.stdout or "certificateKey: <redacted>" in created.stdout


def test_each_join_deletes_its_bootstrap_token_and_the_certificates_it_uploaded(bare_hosts, created):
    # what is left are the proxies kubeadm's upload-certs makes to expire kubeadm-certs (they own nothing once it is gone)
    first = bare_hosts.hosts()[0]
    tokens = bare_hosts.ssh(first, "kubeadm token list").stdout
    assert "join of" not in tokens, tokens
    secrets = bare_hosts.ssh(first, "kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get secret kubeadm-certs", check=False)
    assert secrets.returncode != 0 and "NotFound" in secrets.stderr, secrets.stdout + secrets.stderr


def test_a_second_run_changes_nothing(bare_hosts, created):
    again = bare_hosts.playbook(PLAYBOOK, spec_vars(bare_hosts))
    assert again.returncode == 0, again.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_the_observed_cluster_is_accepted_by_the_plan_verbatim_and_needs_nothing(bare_hosts, created, tmp_path):
    # the last machine's pods may still be starting right after its join, as on a real cluster
    deadline = time.monotonic() + 60
    observed, plan = observe_and_plan(bare_hosts, tmp_path)
    while plan["blocked_by"] and time.monotonic() < deadline:
        time.sleep(1)
        observed, plan = observe_and_plan(bare_hosts, tmp_path)
    hosts = bare_hosts.hosts()
    assert observed["initialized"] is True and observed["endpoint_ready"] is True
    assert observed["kubeadm_config"]["kubernetes_version"] == newest(bare_hosts.mirror_dir)
    assert observed["kubeadm_config"]["cluster_configuration"]["kubernetesVersion"] == newest(bare_hosts.mirror_dir)
    machines = {m["name"]: m for m in observed["machines"]}
    assert sorted(machines) == hosts
    for index, host in enumerate(hosts):
        machine = machines[host]
        assert machine["failure_domain"] == "fd-%d" % (index + 1) and machine["provisioned"] is True
        assert machine["components"] == {"api_server": "healthy", "controller_manager": "healthy",
                                         "scheduler": "healthy", "etcd": "healthy"}, machine
    # each machine's etcd image tag is its etcd mirror pod's
    pods = json.loads(bare_hosts.ssh(hosts[0], "kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get pods "
                                               "-l component=etcd -o json").stdout)["items"]
    assert {name: m["etcd_image_tag"] for name, m in machines.items()} == {
        p["metadata"]["name"][len("etcd-"):]: p["spec"]["containers"][0]["image"].rpartition(":")[2] for p in pods}
    members = observed["etcd"]["members"]
    assert sorted(m["name"] for m in members) == hosts
    assert all(m["responsive"] and not m["learner"] and m["error"] is None for m in members), members
    assert (plan["action"], plan["blocked_by"]) == ("none", []), plan


@pytest.fixture()
def admin_kubeconfig(bare_hosts, created, tmp_path):
    path = tmp_path / "admin.conf"
    path.write_text(bare_hosts.ssh(bare_hosts.hosts()[0], "cat /etc/kubernetes/admin.conf").stdout)
    path.chmod(0o600)
    return str(path)


def test_the_cluster_lock_is_held_by_one_run_at_a_time_and_a_dead_runs_lock_expires(admin_kubeconfig):
    def lock(holder, **args):
        return run("kcp_lock", dict(kubeconfig=admin_kubeconfig, holder=holder, **args))[:2]

    assert lock("awx job 7", action="scale") == ("CHANGED", {"changed": True, "decision": "take", "lock": None,
                                                             "reason": "the lock is free"})
    outcome, refused = lock("alice@laptop", action="create")
    assert outcome == "FAILED!" and refused["msg"].startswith("the control plane is locked by awx job 7, running scale since")
    assert lock("alice@laptop", state="absent")[1]["decision"] == "leave"
    assert lock("awx job 7", state="absent")[1]["decision"] == "release"
    # a run that dies holding the lock: once it has not been renewed for its duration, the next run takes it
    assert lock("awx job 8", action="scale", duration=1)[1]["decision"] == "take"
    time.sleep(1.5)
    outcome, taken = lock("alice@laptop", action="create")
    assert taken["decision"] == "take_over" and "held by awx job 8 (scale, since" in taken["reason"], taken
    assert lock("alice@laptop", state="absent")[1]["decision"] == "release"


def test_observing_a_cluster_without_its_etcd_section_is_refused_and_worker_nodes_are_named(bare_hosts, admin_kubeconfig):
    hosts = [{"name": name, "address": name} for name in bare_hosts.hosts()]
    outcome, refused = run("kcp_observe", {"kubeconfig": admin_kubeconfig, "hosts": hosts})[:2]
    assert outcome == "FAILED!" and refused["msg"].startswith("etcd: required, the cluster at https://"), refused
    outcome, observed = run("kcp_observe", {"kubeconfig": admin_kubeconfig, "hosts": hosts,
                                            "etcd": {"external": False, "members": []}})[:2]
    assert outcome == "SUCCESS" and observed["worker_nodes"] == [], observed
