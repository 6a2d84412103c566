# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm_init and kubeadm_join on bare sandbox hosts, over SSH, after node_software: check mode says what it
would do and changes nothing; then three control plane machines, a voting etcd member each, Nodes named and
zoned from the spec; the configuration files that held the secrets are gone, no secret reaches the play's
output, and a second run changes nothing."""

import json
import os

import pytest

from e2e_support import HERE, newest, recap

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-kroles", "172.31.242.0/24", 3)
PLAYBOOK = os.path.join(HERE, "playbooks", "kubeadm_roles.yml")


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


def test_a_second_run_changes_nothing(bare_hosts, created):
    again = bare_hosts.playbook(PLAYBOOK, spec_vars(bare_hosts))
    assert again.returncode == 0, again.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
