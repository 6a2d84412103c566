# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sandbox hosts are hosts: reachable over SSH (ssh, Ansible, testinfra), with their own files, name,
processes and address, reachable from each other by address and by name, and managed by "systemd" as
Ansible sees it."""

import json
import os
import subprocess
import uuid

import pytest
import testinfra

from infra_support import HERE

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("t-infra")]


def test_every_host_answers_plain_ssh_with_its_own_name(infra_sandbox):
    for name in infra_sandbox.hosts():
        assert infra_sandbox.ssh(name, "hostname").stdout.strip() == name


def test_ansible_pings_every_host_through_the_generated_inventory(infra_sandbox):
    done = subprocess.run(["ansible", "-i", infra_sandbox.record.inventory, "control_plane_candidates", "-m",
                           "ansible.builtin.ping"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=infra_sandbox.ansible_env(), timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in infra_sandbox.hosts():
        assert "%s | SUCCESS" % name in done.stdout
    assert done.stdout.count("pong") == len(infra_sandbox.hosts())


def test_testinfra_sees_each_host_over_ssh(infra_sandbox):
    for name in infra_sandbox.hosts():
        target = testinfra.get_host("ssh://" + name, ssh_config=infra_sandbox.record.ssh_config)
        assert target.file("/etc/hostname").content_string.strip() == name
        assert target.interface("eth0").addresses[0] == infra_sandbox.ip(name)
        assert target.process.get(pid=1).comm == "systemd"


def test_etc_kubernetes_is_private_to_each_host(infra_sandbox):
    first, *others = infra_sandbox.hosts()
    marker = "/etc/kubernetes/infra-marker-%s" % uuid.uuid4().hex[:8]
    infra_sandbox.ssh(first, "echo written on %s > %s" % (first, marker))
    try:
        for other in others:
            assert infra_sandbox.ssh(other, "test ! -e %s" % marker, check=False).returncode == 0
        assert not os.path.exists(marker), "the file leaked into the machine's own /etc/kubernetes"
        with open(infra_sandbox.record.host_fs(first, marker)) as handle:
            assert handle.read() == "written on %s\n" % first
    finally:
        infra_sandbox.ssh(first, "rm -f %s" % marker)


def test_each_host_sees_only_its_own_processes(infra_sandbox):
    for name in infra_sandbox.hosts():
        pids = infra_sandbox.ssh(name, "ps -e -o pid=").stdout.split()
        assert "1" in pids
        assert len(pids) < 50, "the host sees %d processes: not its own PID namespace" % len(pids)
        assert infra_sandbox.ssh(name, "cat /proc/1/comm").stdout.strip() == "systemd"


def test_hosts_reach_each_other_by_ip(infra_sandbox):
    first, second, third = infra_sandbox.hosts()[:3]
    infra_sandbox.ssh(first, "ping -c 1 -W 2 %s" % infra_sandbox.ip(second))
    infra_sandbox.ssh(third, "exec 3<>/dev/tcp/%s/22 && head -c 4 <&3" % infra_sandbox.ip(first))


def resolved(sandbox, host, names):
    """{name: address} of what ``getent hosts`` on ``host`` finds for ``names``."""
    done = sandbox.ssh(host, "getent hosts %s" % " ".join(names), check=False)
    return {line.split()[1]: line.split()[0] for line in done.stdout.splitlines()}


def test_every_host_resolves_every_host_name_to_its_sandbox_address(infra_sandbox):
    names = infra_sandbox.hosts()
    for name in names:
        assert resolved(infra_sandbox, name, names) == {other: infra_sandbox.ip(other) for other in names}


def test_etc_hosts_follows_machines_as_they_are_created_and_deleted(infra_sandbox):
    first = infra_sandbox.hosts()[0]
    created = json.loads(infra_sandbox.cli("machine", "create", "--name", "infra-named").stdout)
    try:
        assert resolved(infra_sandbox, first, ["infra-named"]) == {"infra-named": created["host"]}
        assert resolved(infra_sandbox, "infra-named", [first, "infra-named"]) == {
            first: infra_sandbox.ip(first), "infra-named": created["host"]}
    finally:
        infra_sandbox.cli("machine", "delete", "infra-named")
    assert infra_sandbox.ssh(first, "getent hosts infra-named", check=False).returncode == 2
    assert resolved(infra_sandbox, first, [first]) == {first: infra_sandbox.ip(first)}


def test_a_name_no_host_has_is_unknown_without_asking_an_unreachable_dns_server(infra_sandbox):
    name = infra_sandbox.hosts()[0]
    assert infra_sandbox.ssh(name, "getent hosts no-such-host", check=False).returncode == 2
    servers = infra_sandbox.ssh(name, "awk '$1 == \"nameserver\" {print $2}' /etc/resolv.conf").stdout.split()
    assert servers == ["127.0.0.1"]


def test_a_host_cannot_rewrite_the_shared_etc_hosts(infra_sandbox):
    name = infra_sandbox.hosts()[1]
    done = infra_sandbox.ssh(name, "echo 10.0.0.1 intruder >> /etc/hosts", check=False)
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert resolved(infra_sandbox, name, ["intruder"]) == {}


def test_the_etcd_data_dir_belongs_to_root_alone_as_kubeadm_makes_it(infra_sandbox):
    for name in infra_sandbox.hosts():
        assert infra_sandbox.ssh(name, "stat -c '%a %U' /var/lib/etcd").stdout == "700 root\n"


def test_root_starts_its_shell_with_a_fresh_debian_hosts_files_not_the_machines(infra_sandbox):
    name = infra_sandbox.hosts()[0]
    for dotfile in (".bashrc", ".profile"):
        with open(os.path.join("/usr/share/base-files", "dot" + dotfile)) as handle:
            assert infra_sandbox.ssh(name, "cat /root/%s" % dotfile).stdout == handle.read()
    # what a developer machine's start-up files add (a tool manager's shims first on PATH) is not there
    assert infra_sandbox.ssh(name, "echo $PATH").stdout.strip() == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def test_units_started_through_ansible_systemd_service_honour_drop_ins_and_environment_files(infra_sandbox):
    done = subprocess.run(["ansible-playbook", "-i", infra_sandbox.record.inventory,
                           os.path.join(HERE, "playbooks", "systemd_stand_in.yml")], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=infra_sandbox.ansible_env(), timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "failed=0" in done.stdout and "ok=" in done.stdout


def test_a_service_with_restart_always_comes_back_after_it_is_killed(infra_sandbox):
    host = infra_sandbox.hosts()[0]
    unit = "/etc/systemd/system/kcp-infra-respawn.service"
    infra_sandbox.ssh(host, "printf '[Service]\\nExecStart=/bin/sleep 3600\\nRestart=always\\nRestartSec=0.2\\n' > %s"
                      " && systemctl start kcp-infra-respawn" % unit)
    try:
        first = infra_sandbox.ssh(host, "systemctl show -p MainPID --value kcp-infra-respawn").stdout.strip()
        infra_sandbox.ssh(host, "kill -KILL %s" % first)
        # Bounded wait inside the host: until a new main process runs.
        infra_sandbox.ssh(host, "for i in $(seq 100); do p=$(systemctl show -p MainPID --value kcp-infra-respawn); "
                                "[ \"$p\" != 0 ] && [ \"$p\" != %s ] && exit 0; sleep 0.05; done; exit 1" % first)
        assert infra_sandbox.ssh(host, "systemctl show -p NRestarts --value kcp-infra-respawn").stdout.strip() == "1"
        infra_sandbox.ssh(host, "systemctl stop kcp-infra-respawn")
        assert infra_sandbox.ssh(host, "systemctl is-active kcp-infra-respawn", check=False).stdout.strip() == \
            "inactive"
        assert infra_sandbox.ssh(host, "pgrep -x sleep", check=False).returncode == 1
    finally:
        infra_sandbox.ssh(host, "systemctl stop kcp-infra-respawn; rm -f %s" % unit, check=False)


def test_sandbox_wide_environment_reaches_ssh_sessions_and_services(infra_sandbox):
    host = infra_sandbox.hosts()[1]
    assert infra_sandbox.ssh(host, "echo \"$KCP_INFRA_ENV\"").stdout == "set by sandbox up\n"
    unit = "/etc/systemd/system/kcp-infra-env.service"
    infra_sandbox.ssh(host, "printf '[Service]\\nType=oneshot\\nExecStart=/bin/sh -c \"echo $$KCP_INFRA_ENV "
                            "> /run/kcp-infra-env.out\"\\n' > %s && systemctl start kcp-infra-env" % unit)
    try:
        assert infra_sandbox.ssh(host, "cat /run/kcp-infra-env.out").stdout == "set by sandbox up\n"
    finally:
        infra_sandbox.ssh(host, "rm -f %s /run/kcp-infra-env.out" % unit)
