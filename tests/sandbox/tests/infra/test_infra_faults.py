# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Faults on demand, observed the way the collection would observe them: over SSH, through etcd's own API,
and in the certificates kubeadm reads."""

import datetime
import os
import shutil

import pytest
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_gateway
from kcpsim import kubeconfig, pki, version

import node_setup
from kcpsandbox.commands import wait_until

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("t-infra")]

# The release mirror every host has read-only (a checkout or venv under /tmp is hidden by the host's tmpfs).
ETCD = "/opt/kcpsim/releases/etcd/%s/etcd" % version.ETCD_BINARY_VERSION


def ping(sandbox, source, target):
    return sandbox.ssh(source, "ping -c 1 -W 1 %s" % sandbox.ip(target), check=False).returncode == 0


def host_state(sandbox, name):
    return next(h for h in sandbox.status()["hosts"] if h["name"] == name)


def test_a_partition_cuts_a_host_off_from_its_peers_but_not_from_the_controller(infra_sandbox):
    cut, peer, other = infra_sandbox.hosts()[:3]
    assert ping(infra_sandbox, peer, cut)
    infra_sandbox.cli("fault", "partition", cut)
    try:
        assert host_state(infra_sandbox, cut)["partitioned"] is True
        assert not ping(infra_sandbox, peer, cut)
        assert not ping(infra_sandbox, cut, other)
        assert infra_sandbox.ssh(cut, "hostname").stdout.strip() == cut
        assert ping(infra_sandbox, peer, other)
    finally:
        infra_sandbox.cli("fault", "heal", cut)
    assert host_state(infra_sandbox, cut)["partitioned"] is False
    assert ping(infra_sandbox, peer, cut) and ping(infra_sandbox, cut, other)


def test_power_off_and_on_keeps_the_disk_but_not_tmpfs(infra_sandbox):
    name = infra_sandbox.hosts()[1]
    infra_sandbox.ssh(name, "echo kept > /etc/kubernetes/power-test && echo kept > /root/power-test && "
                            "echo gone > /tmp/power-test")
    try:
        infra_sandbox.cli("fault", "power-off", name)
        assert host_state(infra_sandbox, name)["state"] == "off"
        assert infra_sandbox.ssh(name, "true", check=False).returncode == 255
        infra_sandbox.cli("fault", "power-on", name)
        assert host_state(infra_sandbox, name)["state"] == "running"
        assert infra_sandbox.ssh(name, "cat /etc/kubernetes/power-test /root/power-test").stdout == "kept\nkept\n"
        assert infra_sandbox.ssh(name, "test ! -e /tmp/power-test", check=False).returncode == 0
        assert infra_sandbox.ssh(name, "hostname").stdout.strip() == name
    finally:
        infra_sandbox.cli("fault", "power-on", name)
        infra_sandbox.ssh(name, "rm -f /etc/kubernetes/power-test /root/power-test")


def test_kubelet_stop_and_start_go_through_the_hosts_systemctl(infra_sandbox):
    name = infra_sandbox.hosts()[0]
    # The provider hands over bare hosts: the operator installs the kubelet and its unit first.
    mirror = infra_sandbox.record.mirror_dir
    node = node_setup.Node(infra_sandbox.record.ssh_config, name)
    node.install_node_software(mirror, node_setup.newest_version(mirror))
    infra_sandbox.cli("fault", "kubelet-stop", name)
    try:
        assert infra_sandbox.ssh(name, "systemctl is-active kubelet", check=False).stdout.strip() == "inactive"
    finally:
        infra_sandbox.cli("fault", "kubelet-start", name)
    state = infra_sandbox.ssh(name, "systemctl is-active kubelet", check=False).stdout.strip()
    assert state in ("active", "activating")


@pytest.mark.parametrize("fault, undo, path", [
    ("join-fail-next", None, "/var/lib/kcpsim/faults/join-fail-next"),
    ("etcd-stop", "etcd-start", "/run/kcpsim/pods/etcd.hold"),
], ids=["join-fail-next leaves the marker the kubeadm emulation consumes",
        "etcd-stop holds the etcd pod through the kubelet's hold file until etcd-start"])
def test_marker_faults_leave_the_file_the_emulation_reads(infra_sandbox, fault, undo, path):
    name = infra_sandbox.hosts()[2]
    infra_sandbox.cli("fault", fault, name)
    try:
        assert infra_sandbox.ssh(name, "test -s %s" % path, check=False).returncode == 0
        if undo:
            infra_sandbox.cli("fault", undo, name)
            assert infra_sandbox.ssh(name, "test ! -e %s" % path, check=False).returncode == 0
    finally:
        infra_sandbox.ssh(name, "rm -f %s" % path)


@pytest.mark.parametrize("args, fragments", [
    (["bogus-fault", "no-such-host"], ["fault 'bogus-fault': not one of", "host 'no-such-host'"]),
    (["certs-expire-soon", "cp-1"], ["certs-expire-soon <when>"]),
    (["certs-expire-soon", "cp-1", "0"], ["certs-expire-soon <when>"]),
    (["certs-expire-soon", "cp-1", "10s"], ["certs-expire-soon <when>"]),
    (["partition", "cp-1", "extra"], ["fault partition takes no arguments"]),
], ids=["an unknown fault on an unknown host names both problems", "certs-expire-soon needs its days",
        "certs-expire-soon needs at least a day, a minute or an hour", "certs-expire-soon takes no seconds",
        "a fault without arguments refuses extra ones"])
def test_bad_fault_requests_fail_before_touching_anything(infra_sandbox, args, fragments):
    done = infra_sandbox.cli("fault", *args, check=False)
    assert done.returncode == 2
    for fragment in fragments:
        assert fragment in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture()
def etcd_member(infra_sandbox):
    """A real single-member etcd on the third host, with kubeadm's etcd PKI, run as the kubelet would
    (its PID in /run/kcpsim/pods/etcd.pid); the kubelet is stopped meanwhile so it leaves that file alone."""
    name = infra_sandbox.hosts()[2]
    ip = infra_sandbox.ip(name)
    pki_dir = infra_sandbox.record.host_fs(name, "/etc/kubernetes/pki")
    ca, ca_key = pki.new_ca("etcd-ca", algorithm="ECDSA-P256")
    server = pki.new_leaf(ca, ca_key, name, dns_names=[name, "localhost"], ip_addresses=[ip, "127.0.0.1"],
                          usages=("server", "client"), algorithm="ECDSA-P256")
    client = pki.new_leaf(ca, ca_key, "kube-etcd-healthcheck-client", usages=("client",), algorithm="ECDSA-P256")
    pki.write_pair(pki_dir, "etcd/ca", ca, ca_key)
    pki.write_pair(pki_dir, "etcd/server", *server)
    pki.write_pair(pki_dir, "etcd/healthcheck-client", *client)
    has_kubelet = infra_sandbox.ssh(name, "test -e /etc/systemd/system/kubelet.service", check=False).returncode == 0
    if has_kubelet:
        infra_sandbox.cli("fault", "kubelet-stop", name)
    etc = "/etc/kubernetes/pki/etcd"
    command = ("%s --name %s --data-dir /var/lib/etcd/infra-test --listen-client-urls https://%s:2379 "
               "--advertise-client-urls https://%s:2379 --listen-peer-urls http://127.0.0.1:2380 "
               "--initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster %s=http://127.0.0.1:2380 "
               "--cert-file %s/server.crt --key-file %s/server.key --trusted-ca-file %s/ca.crt "
               "--client-cert-auth --listen-metrics-urls http://127.0.0.1:2381"
               % (ETCD, name, ip, ip, name, etc, etc, etc))
    infra_sandbox.back_door(name, "sh", "-c", "mkdir -p /run/kcpsim/pods && setsid -f sh -c 'echo $$ > "
                            "/run/kcpsim/pods/etcd.pid; exec %s' </dev/null >/var/log/infra-test-etcd.log 2>&1"
                            % command)
    files = [os.path.join(pki_dir, "etcd", f) for f in ("ca.crt", "healthcheck-client.crt", "healthcheck-client.key")]
    client = etcd_gateway.GatewayClient("https://%s:2379" % ip, etcd_gateway.tls_context(*files), timeout=2)

    def answers():
        try:
            return client.call("maintenance/status")
        except (etcd_gateway.EtcdError, etcd_gateway.EtcdUnavailable):
            return None

    try:
        wait_until(answers, 30, "etcd on %s" % name, interval=0.2)
        yield name, client
    finally:
        client.close()
        pid = infra_sandbox.ssh(name, "cat /run/kcpsim/pods/etcd.pid").stdout.strip()
        infra_sandbox.back_door(name, "/usr/bin/kill", "-KILL", "--", "-" + pid, check=False)
        wait_until(lambda: infra_sandbox.ssh(name, "kill -0 %s" % pid, check=False).returncode != 0, 10,
                   "etcd (PID %s) to end" % pid, interval=0.2)
        infra_sandbox.ssh(name, "rm -rf /run/kcpsim/pods/etcd.pid /var/lib/etcd/infra-test")
        shutil.rmtree(os.path.join(pki_dir, "etcd"), ignore_errors=True)
        if has_kubelet:
            infra_sandbox.cli("fault", "kubelet-start", name)


def test_the_nospace_alarm_blocks_writes_until_it_is_cleared(infra_sandbox, etcd_member):
    name, client = etcd_member
    client.call("kv/put", {"key": etcd_gateway.b64("infra/before"), "value": etcd_gateway.b64("1")})
    infra_sandbox.cli("fault", "etcd-alarm-nospace", name)
    assert [a["alarm"] for a in client.call("maintenance/alarm", {"action": "GET"})["alarms"]] == ["NOSPACE"]
    with pytest.raises(etcd_gateway.EtcdError, match="database space exceeded"):
        client.call("kv/put", {"key": etcd_gateway.b64("infra/during"), "value": etcd_gateway.b64("2")})
    infra_sandbox.cli("fault", "etcd-alarm-clear", name)
    assert client.call("maintenance/alarm", {"action": "GET"}).get("alarms", []) == []
    client.call("kv/put", {"key": etcd_gateway.b64("infra/after"), "value": etcd_gateway.b64("3")})


def test_etcd_kill_ends_the_pod_process_named_by_the_kubelets_pid_file(infra_sandbox, etcd_member):
    name, client = etcd_member
    pid = infra_sandbox.ssh(name, "cat /run/kcpsim/pods/etcd.pid").stdout.strip()
    infra_sandbox.cli("fault", "etcd-kill", name)
    wait_until(lambda: infra_sandbox.ssh(name, "kill -0 %s" % pid, check=False).returncode != 0, 10,
               "etcd (PID %s on %s) to die" % (pid, name), interval=0.2)
    with pytest.raises(etcd_gateway.EtcdUnavailable):
        client.call("maintenance/status")


def test_etcd_wipe_kills_etcd_and_empties_the_data_dir_its_command_line_names(infra_sandbox, etcd_member):
    name, client = etcd_member
    client.call("kv/put", {"key": etcd_gateway.b64("infra/kept"), "value": etcd_gateway.b64("1")})
    pid = infra_sandbox.ssh(name, "cat /run/kcpsim/pods/etcd.pid").stdout.strip()
    infra_sandbox.cli("fault", "etcd-wipe", name)
    assert infra_sandbox.ssh(name, "kill -0 %s" % pid, check=False).returncode != 0, "etcd still runs"
    assert infra_sandbox.ssh(name, "ls -A /var/lib/etcd/infra-test").stdout == ""
    # the hold is lifted: with a kubelet, etcd starts again on the empty directory
    assert infra_sandbox.ssh(name, "test -e /run/kcpsim/pods/etcd.hold", check=False).returncode != 0


@pytest.fixture()
def kubeadm_pki(infra_sandbox):
    """kubeadm-like certificates and an admin.conf on the first host (removed afterwards)."""
    name = infra_sandbox.hosts()[0]
    pki_dir = infra_sandbox.record.host_fs(name, "/etc/kubernetes/pki")
    ca, ca_key = pki.new_ca("kubernetes", algorithm="ECDSA-P256")
    pki.write_pair(pki_dir, "ca", ca, ca_key)
    apiserver = pki.new_leaf(ca, ca_key, "kube-apiserver", ip_addresses=["10.96.0.1"], algorithm="ECDSA-P256")
    pki.write_pair(pki_dir, "apiserver", *apiserver)
    etcd_ca, etcd_key = pki.new_ca("etcd-ca", algorithm="ECDSA-P256")
    pki.write_pair(pki_dir, "etcd/ca", etcd_ca, etcd_key)
    pki.write_pair(pki_dir, "etcd/peer", *pki.new_leaf(etcd_ca, etcd_key, name, usages=("server", "client"),
                                                       algorithm="ECDSA-P256"))
    admin_cert, admin_key = pki.new_leaf(ca, ca_key, "kubernetes-admin", organizations=["kubeadm:cluster-admins"],
                                         usages=("client",), algorithm="ECDSA-P256")
    admin_conf = infra_sandbox.record.host_fs(name, "/etc/kubernetes/admin.conf")
    kubeconfig.write(admin_conf, kubeconfig.build("https://172.31.251.100:6443", pki.cert_pem(ca), "kubernetes-admin",
                                                  client_cert_pem=pki.cert_pem(admin_cert),
                                                  client_key_pem=pki.key_pem(admin_key)))
    try:
        yield name, pki_dir, admin_conf
    finally:
        shutil.rmtree(pki_dir, ignore_errors=True)
        os.unlink(admin_conf)


def test_certs_expire_soon_resigns_leaves_and_kubeconfigs_but_not_the_cas(infra_sandbox, kubeadm_pki):
    name, pki_dir, admin_conf = kubeadm_pki
    ca_before = pki.load_cert(os.path.join(pki_dir, "ca.crt"))
    done = infra_sandbox.cli("fault", "certs-expire-soon", name, "3")
    for renewed in ("apiserver.crt", "etcd/peer.crt", "admin.conf"):
        assert renewed in done.stdout
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3)
    leaves = [pki.load_cert(os.path.join(pki_dir, f)) for f in ("apiserver.crt", "etcd/peer.crt")]
    leaves.append(kubeconfig.client_certificate(admin_conf))
    for cert in leaves:
        assert abs((pki.not_after(cert) - soon).total_seconds()) < 3600
    assert pki.load_cert(os.path.join(pki_dir, "ca.crt")) == ca_before
    assert pki.signed_by(leaves[1], pki.load_cert(os.path.join(pki_dir, "etcd/ca.crt")))


def test_certs_expire_soon_takes_minutes_too(infra_sandbox, kubeadm_pki):
    name, pki_dir, admin_conf = kubeadm_pki
    infra_sandbox.cli("fault", "certs-expire-soon", name, "30m")
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=30)
    for cert in (pki.load_cert(os.path.join(pki_dir, "apiserver.crt")), kubeconfig.client_certificate(admin_conf)):
        assert abs((pki.not_after(cert) - soon).total_seconds()) < 120


def test_certs_expired_resigns_leaves_and_kubeconfigs_expired_within_a_year_of_validity(infra_sandbox, kubeadm_pki):
    name, pki_dir, admin_conf = kubeadm_pki
    done = infra_sandbox.cli("fault", "certs-expired", name)
    assert "apiserver.crt" in done.stdout and "admin.conf" in done.stdout
    now = datetime.datetime.now(datetime.timezone.utc)
    for cert in (pki.load_cert(os.path.join(pki_dir, "apiserver.crt")), kubeconfig.client_certificate(admin_conf)):
        assert now - datetime.timedelta(hours=2) < pki.not_after(cert) < now
        assert cert.not_valid_before_utc < now - datetime.timedelta(days=364)
    assert pki.signed_by(pki.load_cert(os.path.join(pki_dir, "etcd/peer.crt")), pki.load_cert(os.path.join(pki_dir, "etcd/ca.crt")))
