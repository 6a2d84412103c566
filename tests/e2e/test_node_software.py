# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node_software role on bare sandbox hosts, over SSH: the bundle's software installed with its checksums,
the runtime started and the kubelet enabled; a second run changes nothing; another version replaces what the role
installed; a host with someone else's kubectl is refused and left as it was; check mode changes nothing."""

import hashlib
import json
import os

import pytest

from e2e_support import HERE, newest, previous_minor, recap

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-nodesw", "172.31.244.0/24", 2)
PLAYBOOK = os.path.join(HERE, "playbooks", "node_software.yml")


def sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def test_check_mode_on_bare_hosts_changes_nothing(bare_hosts):
    version = newest(bare_hosts.mirror_dir)
    done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": version}, check=True)
    assert done.returncode == 0, done.stdout[-4000:]
    for host in bare_hosts.hosts():
        assert bare_hosts.ssh(host, "test -e /usr/local/bin/kubeadm", check=False).returncode == 1


def test_the_bundles_software_is_installed_and_its_services_set_up(bare_hosts):
    version = newest(bare_hosts.mirror_dir)
    done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": version})
    assert done.returncode == 0, done.stdout[-4000:]
    binaries = os.path.join(bare_hosts.mirror_dir, version, "bin", "linux", "amd64")
    for host in bare_hosts.hosts():
        for name in ("kubeadm", "kubelet", "kubectl"):
            found = bare_hosts.ssh(host, "sha256sum /usr/local/bin/%s" % name).stdout.split()[0]
            assert found == sha256(os.path.join(binaries, name)), (host, name)
        assert bare_hosts.ssh(host, "kubeadm version -o short").stdout.strip() == version
        assert bare_hosts.ssh(host, "systemctl is-active containerd").stdout.strip() == "active"
        assert bare_hosts.ssh(host, "systemctl is-enabled kubelet").stdout.strip() == "enabled"
        assert bare_hosts.ssh(host, "test -x /opt/cni/bin/bridge && test -x /usr/local/bin/containerd",
                              check=False).returncode == 0
        # the stand-in pod network's configuration, under a name every pod network's own sorts before
        assert bare_hosts.ssh(host, "stat -c '%a %U' /etc/cni/net.d/99-kcp-bridge.conflist").stdout.split() == ["644", "root"]
        assert bare_hosts.ssh(host, "sha256sum /etc/cni/net.d/99-kcp-bridge.conflist").stdout.split()[0] == \
            sha256(os.path.join(bare_hosts.mirror_dir, version, "cni", "10-bridge.conflist"))


def test_a_second_run_changes_nothing(bare_hosts):
    done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": newest(bare_hosts.mirror_dir)})
    assert done.returncode == 0, done.stdout[-4000:]
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-4000:]


def test_another_version_replaces_what_the_role_installed(bare_hosts):
    # a host back in the pool is given to a machine of another version (a rollout; docs/node-software.md)
    host = bare_hosts.hosts()[1]
    for version in (previous_minor(bare_hosts.mirror_dir), newest(bare_hosts.mirror_dir)):
        done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": version}, limit=host)
        assert done.returncode == 0, done.stdout[-4000:]
        assert bare_hosts.ssh(host, "kubeadm version -o short").stdout.strip() == version
        record = json.loads(bare_hosts.ssh(host, "cat /var/lib/kubeadm-control-plane/node-software.json").stdout)
        assert record["version"] == version
        assert record["sha256"]["kubelet"] == bare_hosts.ssh(host, "sha256sum /usr/local/bin/kubelet").stdout.split()[0]


def test_a_host_with_someone_elses_kubectl_is_refused_and_left_as_it_was(bare_hosts):
    host = bare_hosts.hosts()[0]
    bare_hosts.ssh(host, "printf 'not the bundle' > /usr/local/bin/kubectl")
    kubeadm_before = bare_hosts.ssh(host, "stat -c %Y /usr/local/bin/kubeadm").stdout
    done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": newest(bare_hosts.mirror_dir)}, limit=host)
    assert done.returncode != 0
    assert "/usr/local/bin/kubectl is not the bundle's" in done.stdout and "not one the node_software role installed" in done.stdout
    assert hashlib.sha256(b"not the bundle").hexdigest() in done.stdout
    assert bare_hosts.ssh(host, "cat /usr/local/bin/kubectl").stdout == "not the bundle"
    assert bare_hosts.ssh(host, "stat -c %Y /usr/local/bin/kubeadm").stdout == kubeadm_before
    replaced = bare_hosts.playbook(PLAYBOOK, {"node_software_version": newest(bare_hosts.mirror_dir),
                                              "node_software_replace": True}, limit=host)
    assert replaced.returncode == 0, replaced.stdout[-4000:]
    assert bare_hosts.ssh(host, "kubectl version --client -o json", check=False).returncode == 0


def test_an_upgrade_installs_kubeadm_first_and_the_kubelet_later_and_the_record_says_so(bare_hosts):
    # the in-place upgrade's order (docs/in-place-upgrade.md): the new kubeadm, runtime and CNI plugins before kubeadm
    # upgrade; the new kubelet and kubectl only after it
    host = bare_hosts.hosts()[1]
    old, new = previous_minor(bare_hosts.mirror_dir), newest(bare_hosts.mirror_dir)
    done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": old}, limit=host)
    assert done.returncode == 0, done.stdout[-4000:]

    def record():
        return json.loads(bare_hosts.ssh(host, "cat /var/lib/kubeadm-control-plane/node-software.json").stdout)

    first = {"node_software_version": new, "node_software_only": ["kubeadm", "containerd", "cni_plugins"]}
    for run in range(2):  # the second changes nothing
        done = bare_hosts.playbook(PLAYBOOK, first, limit=host)
        assert done.returncode == 0, done.stdout[-4000:]
        assert recap(done.stdout)[host]["changed"] == (1 - run), done.stdout[-4000:]
        assert bare_hosts.ssh(host, "kubeadm version -o short").stdout.strip() == new
        assert bare_hosts.ssh(host, "kubelet --version").stdout.split()[-1] == old
        assert record()["version"] is None
        assert record()["versions"] == {"kubeadm": new, "kubelet": old, "kubectl": old}
    done = bare_hosts.playbook(PLAYBOOK, {"node_software_version": new, "node_software_only": ["kubelet", "kubectl"]}, limit=host)
    assert done.returncode == 0, done.stdout[-4000:]
    assert bare_hosts.ssh(host, "kubelet --version").stdout.split()[-1] == new
    assert record()["version"] == new and record()["versions"] == dict.fromkeys(("kubeadm", "kubelet", "kubectl"), new)
    assert record()["sha256"]["kubelet"] == bare_hosts.ssh(host, "sha256sum /usr/local/bin/kubelet").stdout.split()[0]
