# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files the harness generates, checked by the tools that read them: HAProxy's config by ``haproxy -c``,
the inventory by ``ansible-inventory``, ssh_config by ``ssh -G``, known_hosts by ``ssh-keygen -F``; the
hosts' shared /etc/hosts; the node software layout a host gets from a release bundle; and how waits end."""

import json
import os
import subprocess
import tarfile

import node_setup
import pytest
from kcpsandbox import commands, external_etcd, faults, inventory, lb, node_software, timings
from kcpsandbox.errors import SandboxError
from kcpsandbox.host import new_key_pair
from kcpsandbox.state import Sandbox

from infra_support import ansible_inventory

HOSTS = {"cp-1": {"ip": "172.31.251.11", "failure_domain": "fd-1"},
         "cp-2": {"ip": "172.31.251.12", "failure_domain": "fd-2"}}


def test_haproxy_accepts_the_config_and_checks_readyz_over_tls(tmp_path):
    text = lb.render_config("172.31.251.100", [("cp-1", "172.31.251.11"), ("cp-2", "172.31.251.12")],
                            str(tmp_path / "admin.sock"), str(tmp_path / "server-state"))
    (tmp_path / "haproxy.cfg").write_text(text)
    done = subprocess.run(["haproxy", "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "    bind 172.31.251.100:6443" in text
    assert "    option httpchk GET /readyz" in text
    assert "    default-server check check-ssl verify none inter 500ms fall 2 rise 1" in text
    assert "    source 172.31.251.100" in text
    assert text.endswith("    server cp-1 172.31.251.11:6443\n    server cp-2 172.31.251.12:6443\n")


def test_haproxy_accepts_a_config_without_backends(tmp_path):
    (tmp_path / "haproxy.cfg").write_text(lb.render_config("10.1.2.100", [], str(tmp_path / "a.sock"),
                                                           str(tmp_path / "state")))
    assert subprocess.run(["haproxy", "-c", "-q", "-f", str(tmp_path / "haproxy.cfg")], check=False).returncode == 0


def write_for(tmp_path, hosts):
    """Inventory, ssh_config and known_hosts written for ``hosts`` into a scratch sandbox dir: (sandbox, host keys)."""
    sbx = Sandbox("t-render", root=str(tmp_path))
    sbx.data = {"subnet": "172.31.251.0/24", "failure_domains": ["fd-1", "fd-2", "fd-3"],
                "hosts": {name: dict(rec) for name, rec in hosts.items()}}
    keys = {name: new_key_pair()[1] for name in hosts}
    inventory.write_all(sbx, keys)
    return sbx, keys


@pytest.fixture()
def written(tmp_path):
    """The files written for HOSTS."""
    return write_for(tmp_path, HOSTS)


def test_ansible_reads_the_inventory_groups_and_vars(written):
    sbx = written[0]
    parsed = ansible_inventory(sbx.inventory)
    assert parsed["control_plane_candidates"]["hosts"] == ["cp-1", "cp-2"]
    cp2 = parsed["_meta"]["hostvars"]["cp-2"]
    assert cp2["ansible_host"] == "172.31.251.12"
    assert cp2["failure_domain"] == "fd-2"
    assert cp2["ansible_python_interpreter"] == "/usr/bin/python3"
    assert cp2["ansible_ssh_common_args"] == "-F %s" % sbx.ssh_config
    assert cp2["sandbox_endpoint_host"] == "172.31.251.100"
    assert cp2["sandbox_endpoint_port"] == 6443
    assert cp2["sandbox_failure_domains"] == ["fd-1", "fd-2", "fd-3"]
    assert os.stat(sbx.inventory).st_mode & 0o777 == 0o600


def test_worker_hosts_are_in_the_workers_group_with_their_group_and_serve_no_api(tmp_path):
    """`sandbox up --workers N --worker-group G`: hosts w-1.. as the worker flows read them (docs/workers.md)."""
    hosts = dict(HOSTS, **{"w-1": {"ip": "172.31.251.13", "failure_domain": "fd-3", "worker_group": "gpu"}})
    sbx = write_for(tmp_path, hosts)[0]
    parsed = ansible_inventory(sbx.inventory)
    assert parsed["control_plane_candidates"]["hosts"] == ["cp-1", "cp-2"]
    assert parsed["workers"]["hosts"] == ["w-1"]
    assert parsed["_meta"]["hostvars"]["w-1"]["worker_group"] == "gpu"
    assert [name for name, _ip in lb.LoadBalancer(sbx).backends()] == ["cp-1", "cp-2"]


def test_external_etcd_hosts_are_a_group_of_their_own_with_their_endpoints_and_serve_no_api(tmp_path):
    """`sandbox up --external-etcd N`: hosts etcd-1.. outside the control plane candidates (external_etcd.py)."""
    hosts = dict(HOSTS, **{"etcd-%d" % n: {"ip": "172.31.251.%d" % (20 + n), "failure_domain": "fd-%d" % n, "role": "etcd"}
                           for n in (1, 2, 3)})
    sbx = write_for(tmp_path, hosts)[0]
    parsed = ansible_inventory(sbx.inventory)
    assert parsed["control_plane_candidates"]["hosts"] == ["cp-1", "cp-2"]
    assert parsed["external_etcd"]["hosts"] == ["etcd-1", "etcd-2", "etcd-3"]
    assert parsed["_meta"]["hostvars"]["cp-1"]["sandbox_external_etcd_endpoints"] == [
        "https://172.31.251.21:2379", "https://172.31.251.22:2379", "https://172.31.251.23:2379"]
    assert [name for name, _ip in lb.LoadBalancer(sbx).backends()] == ["cp-1", "cp-2"]


def test_an_external_etcd_member_runs_with_tls_for_clients_and_peers_in_a_cluster_of_every_member():
    unit = external_etcd.render_unit("etcd-2", "10.0.0.12", [("etcd-1", "10.0.0.11"), ("etcd-2", "10.0.0.12")], "t")
    command = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    for flag in ("--name=etcd-2", "--initial-cluster=etcd-1=https://10.0.0.11:2380,etcd-2=https://10.0.0.12:2380",
                 "--client-cert-auth=true", "--peer-client-cert-auth=true", "--advertise-client-urls=https://10.0.0.12:2379",
                 "--initial-cluster-state=new"):
        assert flag in command.split(), flag
    assert "Restart=always" in unit and "WantedBy=multi-user.target" in unit


@pytest.mark.parametrize("etcd, problem", [
    (0, None), (3, None), (2, "--external-etcd 2: must be 0 (stacked etcd), 1, 3 or 5 members"),
    (5, None),
], ids=["stacked", "three members", "an even count", "five members"])
def test_up_checks_the_external_etcd_before_touching_anything(etcd, problem):
    from kcpsandbox import lifecycle
    found = [p for p in lifecycle.up_problems("t-render", "172.31.251.0/24", 3, 3, "cp", 0, "md-0", etcd)
             if p.startswith("--external-etcd")]
    assert found == ([] if problem is None else [problem])


@pytest.mark.parametrize("workers, group, problem", [
    (2, "md-0", None),
    (-1, "md-0", "--workers -1: must be 0 to"),
    (1, "not a label", "--worker-group 'not a label': must be a Kubernetes label value"),
], ids=["two workers of md-0", "no negative count", "a group that is no label value"])
def test_up_checks_the_workers_before_touching_anything(workers, group, problem):
    from kcpsandbox import lifecycle
    found = [p for p in lifecycle.up_problems("t-render", "172.31.251.0/24", 3, 3, "cp", workers, group)
             if p.startswith("--worker")]
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith(problem), found


def test_ssh_resolves_host_names_and_pins_host_keys(written):
    sbx = written[0]
    done = subprocess.run(["ssh", "-G", "-F", sbx.ssh_config, "cp-1"], capture_output=True, text=True, check=True)
    effective = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert effective["hostname"] == "172.31.251.11"
    assert effective["user"] == "root"
    assert effective["stricthostkeychecking"] == "true"
    assert effective["userknownhostsfile"] == sbx.known_hosts
    assert effective["identityfile"] == sbx.ssh_key
    assert effective["batchmode"] == "yes"


@pytest.mark.parametrize("lookup", ["cp-2", "172.31.251.12"], ids=["by host name", "by IP address"])
def test_known_hosts_holds_each_host_key(written, lookup):
    sbx, keys = written
    done = subprocess.run(["ssh-keygen", "-F", lookup, "-f", sbx.known_hosts], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0
    assert keys["cp-2"] in done.stdout and keys["cp-1"] not in done.stdout


def test_a_partition_keeps_loopback_and_the_controller_before_dropping_the_subnet():
    rules = faults.partition_rules("172.31.251.1", "172.31.251.0/24").splitlines()
    inbound = [r for r in rules if r.startswith("-A KCP-PARTITION-IN")]
    outbound = [r for r in rules if r.startswith("-A KCP-PARTITION-OUT")]
    assert inbound == ["-A KCP-PARTITION-IN -i lo -j RETURN", "-A KCP-PARTITION-IN -s 172.31.251.1/32 -j RETURN",
                       "-A KCP-PARTITION-IN -s 172.31.251.0/24 -j DROP"]
    assert outbound == ["-A KCP-PARTITION-OUT -o lo -j RETURN", "-A KCP-PARTITION-OUT -d 172.31.251.1/32 -j RETURN",
                        "-A KCP-PARTITION-OUT -d 172.31.251.0/24 -j DROP"]


@pytest.mark.parametrize("versions, expected", [
    (["v1.29.10", "v1.30.6", "v1.31.2", "v1.30.5"], "v1.31.2"),
    (["v1.9.0", "v1.10.0"], "v1.10.0"),
    (["v1.30.6", "containerd", "images.json"], "v1.30.6"),
    ([], None),
], ids=["the newest of the mirror's versions", "numeric, not alphabetical", "other entries are not versions",
        "none"])
def test_the_operator_takes_the_newest_version_the_mirror_offers(versions, expected):
    assert node_setup.newest(versions) == expected


def _bundle(releases, version, containerd="1.7.22"):
    os.makedirs(os.path.join(releases, version, "bin"))
    (open(os.path.join(releases, version, "VERSION"), "w")).write(version + "\n")
    for program in ("kubeadm", "kubelet"):
        with open(os.path.join(releases, version, "bin", program), "w") as handle:
            handle.write("#!/usr/bin/python3\n# %s %s\n" % (program, version))
    with open(os.path.join(releases, version, "components.json"), "w") as handle:
        json.dump({"containerd": containerd, "cni-plugins": "1.5.1"}, handle)
    for component, files in (("containerd/1.7.20", ["containerd"]), ("containerd/1.7.22", ["containerd"]),
                             ("cni/1.5.1", ["bridge", "host-local", "loopback"])):
        os.makedirs(os.path.join(releases, component), exist_ok=True)
        for name in files:
            with open(os.path.join(releases, component, name), "w") as handle:
                handle.write("#!/usr/bin/python3\n# %s %s\n" % (name, component))


def _mirror(tmp_path):
    releases, mirror = str(tmp_path / "releases"), str(tmp_path / "mirror")
    _bundle(releases, "v1.36.4", containerd="1.7.20")
    _bundle(releases, "v1.37.1")
    kubectl = tmp_path / "kubectl"
    kubectl.write_text("#!/bin/sh\necho kubectl\n")
    kubectl.chmod(0o755)
    versions = node_software.lay_out_mirror(releases, mirror, str(kubectl), arch="amd64")
    return mirror, versions


def test_the_mirror_lays_out_each_version_as_release_artifacts_with_checksums(tmp_path):
    mirror, versions = _mirror(tmp_path)
    assert versions == ["v1.36.4", "v1.37.1"]
    top = os.path.join(mirror, "v1.37.1")
    files = sorted(os.path.relpath(os.path.join(d, f), top) for d, _dirs, names in os.walk(top) for f in names)
    assert files == ["SHA256SUMS", "bin/linux/amd64/kubeadm", "bin/linux/amd64/kubectl", "bin/linux/amd64/kubelet",
                     "cni-plugins-linux-amd64-v1.5.1.tgz", "cni/10-bridge.conflist",
                     "containerd-1.7.22-linux-amd64.tar.gz", "systemd/containerd.service",
                     "systemd/kubelet.service", "systemd/kubelet.service.d/10-kubeadm.conf"]
    checked = subprocess.run(["sha256sum", "--strict", "-c", "SHA256SUMS"], cwd=top, capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count(": OK") == len(files) - 1
    with open(os.path.join(top, "systemd", "kubelet.service.d", "10-kubeadm.conf")) as handle:
        dropin = handle.read()
    assert "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env" in dropin
    assert "EnvironmentFile=-/etc/default/kubelet" in dropin


def test_the_mirror_packs_the_runtime_and_the_cni_plugins_as_their_releases_do(tmp_path):
    mirror, _versions = _mirror(tmp_path)
    with tarfile.open(os.path.join(mirror, "v1.37.1", "cni-plugins-linux-amd64-v1.5.1.tgz")) as archive:
        assert sorted(m.name for m in archive.getmembers()) == ["./bridge", "./host-local", "./loopback"]
        assert {m.mode for m in archive.getmembers()} == {0o755}
    with tarfile.open(os.path.join(mirror, "v1.36.4", "containerd-1.7.20-linux-amd64.tar.gz")) as archive:
        assert archive.getnames() == ["bin/containerd"]
        assert b"containerd/1.7.20" in archive.extractfile("bin/containerd").read(), \
            "the runtime the release names, not the newest"


def test_laying_out_the_mirror_again_rewrites_nothing(tmp_path):
    mirror, _versions = _mirror(tmp_path)
    top = os.path.join(mirror, "v1.37.1")
    before = {d + "/" + f: os.stat(os.path.join(d, f)).st_mtime_ns for d, _dirs, names in os.walk(top) for f in names}
    again = node_software.lay_out_mirror(str(tmp_path / "releases"), mirror, str(tmp_path / "kubectl"), arch="amd64")
    assert again == ["v1.36.4", "v1.37.1"]
    after = {d + "/" + f: os.stat(os.path.join(d, f)).st_mtime_ns for d, _dirs, names in os.walk(top) for f in names}
    assert after == before


@pytest.mark.parametrize("real_timings, requested, expected", [
    (False, {}, {"KCPSIM_HEARTBEAT": "2", "KCPSIM_KEY_ALGORITHM": "ECDSA-P256"}),
    (True, {}, {}),
    (False, {"KCPSIM_HEARTBEAT": "5", "X": "y"}, {"KCPSIM_HEARTBEAT": "5", "KCPSIM_KEY_ALGORITHM": "ECDSA-P256",
                                                  "X": "y"}),
], ids=["a sandbox runs with its speed-ups", "real timings turn every speed-up off",
        "--env overrides a speed-up and adds to them"])
def test_one_switch_runs_the_sandbox_at_real_timings(real_timings, requested, expected):
    assert timings.environment(real_timings, requested) == expected


def test_etc_hosts_names_every_host_and_is_replaced_whole(tmp_path):
    sbx = Sandbox("t-render", root=str(tmp_path))
    sbx.data = {"hosts": {name: dict(rec, slot=i) for i, (name, rec) in enumerate(sorted(HOSTS.items()), 1)}}
    os.makedirs(sbx.dir)
    inventory.write_etc_hosts(sbx)
    with open(sbx.etc_hosts) as handle:
        first = os.fstat(handle.fileno()).st_ino
        lines = handle.read().splitlines()
    assert lines[1:] == ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                         "172.31.251.11\tcp-1", "172.31.251.12\tcp-2"]
    del sbx.hosts["cp-1"]
    inventory.write_etc_hosts(sbx)
    with open(sbx.etc_hosts) as handle:
        assert handle.read().splitlines()[3:] == ["172.31.251.12\tcp-2"]
    # A new file renamed into place: a reader holds either the old one or the new one, never a mix.
    assert os.stat(sbx.etc_hosts).st_ino != first
    assert os.listdir(sbx.etc_hosts_dir) == ["hosts"]


def test_a_wait_returns_the_first_true_value_without_waiting_longer():
    answers = iter([None, 0, "ready", "never asked"])
    assert commands.wait_until(lambda: next(answers), 30, "the third answer", interval=0) == "ready"
    assert next(answers) == "never asked"


def test_a_wait_that_times_out_names_what_it_awaited_and_quotes_the_logs_that_tell_why(tmp_path):
    console = tmp_path / "console.log"
    console.write_text("".join("boot line %d\n" % n for n in range(1, 11)) + "sshd: fatal: no host key\n")
    missing = ["cp-2"]
    with pytest.raises(SandboxError) as raised:
        commands.wait_until(lambda: False, 0, lambda: "sshd on %s" % ", ".join(missing),
                            lambda: [str(console), str(tmp_path / "absent.log")])
    assert str(raised.value).splitlines() == [
        "timed out after 0.0s waiting for sshd on cp-2; see %s" % console,
        "    | boot line 6", "    | boot line 7", "    | boot line 8", "    | boot line 9", "    | boot line 10",
        "    | sshd: fatal: no host key; see %s" % (tmp_path / "absent.log")]
