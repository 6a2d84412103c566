# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Certificates renewed in place (playbooks/certificates.yml, docs/certificates.md) on a control plane of 3 machines on
exactly 3 hosts: no spare host, so a rollout could not replace a machine, and renewal in place is the only way.
The sandbox re-signs every host's certificates and kubeconfigs to expire in half an hour or so (the certs-expire-soon
fault: real certificates, not a snapshot), and the status says so. Check mode prints the three renewals, the machine that
expires first first. The run is killed while the second machine's pods restart; the next run finishes that machine
first, from the record on its host, then the third. Throughout, a background writer through the load balancer loses
no write and never waits longer than a leader election; every machine keeps its etcd member; the certificates and
kubeconfigs on every host then expire in a year, the pods run with them (the API server serves the new certificate),
the records are gone, and a second run changes nothing. Then the sandbox lets every certificate expire (the
certs-expired fault: the API server and etcd refuse every client, status cannot observe the cluster), and the same
playbook renews them through the hosts, without the API: the cluster is back with its members and what was written
before, with nothing left for the flow to do."""

import datetime
import json
import os
import ssl

import pytest

from e2e_support import ROOT, assert_writes_survived, newest, recap, status_table, steps_taken, wait_control_plane_ready

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-certs", "172.31.227.0/24", 3, 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
CERTIFICATES = os.path.join(ROOT, "playbooks", "certificates.yml")
ENDPOINT = "172.31.227.100:6443"
HOSTS = ["cp-1", "cp-2", "cp-3"]
# how soon the fault makes each host's certificates expire: cp-2 first, then cp-3, then cp-1
EXPIRE_IN = {"cp-1": "40m", "cp-2": "20m", "cp-3": "30m"}
RECORD = "/etc/kubernetes/certificate-renewal/record.json"


def flow_vars(sandbox, **spec):
    kcp = {"cluster_name": "certs", "replicas": 3, "version": newest(sandbox.mirror_dir),
           "endpoint": {"host": ENDPOINT.split(":", maxsplit=1)[0], "port": 6443},
           "rollout": {"before": {"certificates_expiry_days": 7}}, "certificates": {"renewal": "in_place"},
           "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}
    kcp.update(spec)
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir, "kcp": kcp}


def member_ids(sandbox):
    members = json.loads(sandbox.ssh(
        "cp-1", "curl -sf --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt "
        "--key /etc/kubernetes/pki/etcd/healthcheck-client.key -X POST -d '{}' https://127.0.0.1:2379/v3/cluster/member/list").stdout)["members"]
    return {m["name"]: m["ID"] for m in members}


def expiries(sandbox, host):
    """{file: days left} of every certificate kubeadm certs check-expiration lists on ``host``."""
    shown = json.loads(sandbox.ssh(host, "kubeadm certs check-expiration -o json 2>/dev/null").stdout)
    return {c["name"]: c["residualTime"] / 1e9 / 86400 for c in shown["certificates"] if not c.get("missing")}


def served_expiry(address):
    """When the certificate the API server at ``address`` serves expires (it loads its files when it starts)."""
    pem = ssl.get_server_certificate((address, 6443), timeout=10)
    der = ssl.PEM_cert_to_DER_cert(pem)
    from cryptography import x509
    return x509.load_der_x509_certificate(der).not_valid_after_utc


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    done = bare_hosts.playbook(CREATE, flow_vars(bare_hosts), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    return bare_hosts


def test_certificates_about_to_expire_are_renewed_in_place_one_machine_at_a_time_a_killed_run_finished(cluster):
    kept = member_ids(cluster)
    for host, soon in EXPIRE_IN.items():
        cluster.fault("certs-expire-soon", host, soon)
    table = " ".join(status_table(cluster, flow_vars(cluster)))
    assert "CertificatesNotExpiring=False" in table, table

    planned = cluster.playbook(CERTIFICATES, flow_vars(cluster), check=True)
    assert planned.returncode == 0, planned.stdout[-6000:]
    shown = planned.stdout.split("The whole plan from here", 1)[1]
    for index, host in enumerate(["cp-2", "cp-3", "cp-1"], 1):
        assert "%d. renew_certificates %s: renew the certificates of %s in place" % (index, host, host) in shown, shown[:4000]
    # the first machine's step runs in check mode: it says what it would do, and does nothing
    assert "cp-2: would take: renew, etcd, kube-apiserver, kube-controller-manager, kube-scheduler" in planned.stdout, planned.stdout[-6000:]
    for host in HOSTS:
        assert all(days < 1 for days in expiries(cluster, host).values()), host
        assert cluster.ssh(host, "test -e %s" % RECORD, check=False).returncode != 0, host

    with cluster.writing(ENDPOINT) as writer:
        # killed while cp-3's pods restart (cp-2 is done): its record on the host says how far it went
        killed = cluster.playbook_killed(CERTIFICATES, flow_vars(cluster), "Renew the certificates and restart the static pods of cp-3", after=4)
        # the killed run's module may go on on the host without its SSH session (the next run's waits for its lock);
        # either way the record stays until a run has seen cp-3's pods ready in the API
        left_behind = cluster.ssh("cp-3", "cat %s" % RECORD, check=False).stdout
        done = cluster.playbook(CERTIFICATES, flow_vars(cluster), timeout=1200)
    assert "This pass's step: pass 3" not in killed, killed[-6000:]
    assert done.returncode == 0, done.stdout[-8000:]
    assert_writes_survived(writer, "the certificate renewals, one killed")
    # cp-3 first, its renewal under way (on the host, or only its pods' readiness left to see), then cp-1
    assert steps_taken(done.stdout) == ["renew_certificates cp-3", "renew_certificates cp-1", "none"], steps_taken(done.stdout)
    assert json.loads(left_behind)["step"] != "ready", left_behind
    assert "cp-3: finished the renewal a run had begun" in " ".join(done.stdout.split()), done.stdout[-8000:]
    assert member_ids(cluster) == kept
    wait_control_plane_ready(cluster, HOSTS)
    now = datetime.datetime.now(datetime.timezone.utc)
    for host in HOSTS:
        left = expiries(cluster, host)
        assert left and all(days > 360 for days in left.values()), (host, left)
        assert cluster.ssh(host, "test -e %s" % RECORD, check=False).returncode != 0, host
        address = cluster.record.hosts[host]["ip"]
        assert served_expiry(address) - now > datetime.timedelta(days=360), host
    table = " ".join(" ".join(status_table(cluster, flow_vars(cluster))).split())
    assert "CertificatesNotExpiring=False" not in table and "next step: none" in table, table

    again = cluster.playbook(CERTIFICATES, flow_vars(cluster), timeout=600)
    assert again.returncode == 0 and all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]
    assert steps_taken(again.stdout) == ["none"]


def test_a_control_plane_whose_certificates_have_expired_is_renewed_through_the_hosts(cluster):
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    cluster.ssh("cp-1", admin + "create configmap written-before-expiry --from-literal=k=v")
    kept = member_ids(cluster)
    for host in HOSTS:
        cluster.fault("certs-expired", host)
    # the API server and etcd refuse every client: nothing can be observed through them
    refused = cluster.ssh("cp-1", admin + "get nodes", check=False)
    assert refused.returncode != 0, refused.stdout
    status = cluster.playbook(os.path.join(ROOT, "playbooks", "status.yml"), flow_vars(cluster))
    assert status.returncode != 0, status.stdout[-4000:]

    done = cluster.playbook(CERTIFICATES, flow_vars(cluster), timeout=1200)
    assert done.returncode == 0, done.stdout[-8000:]
    for host in HOSTS:
        assert "%s: certificates renewed" % host in " ".join(done.stdout.split()), done.stdout[-8000:]
    assert "its peer certificate had expired, so the member was in no quorum" in " ".join(done.stdout.split())
    # the flow that follows observes a control plane as declared
    assert steps_taken(done.stdout) == ["none"], steps_taken(done.stdout)
    assert member_ids(cluster) == kept
    assert cluster.ssh("cp-2", admin + "get configmap written-before-expiry -o jsonpath={.data.k}").stdout == "v"
    now = datetime.datetime.now(datetime.timezone.utc)
    for host in HOSTS:
        assert all(days > 360 for days in expiries(cluster, host).values()), host
        assert cluster.ssh(host, "test -e %s" % RECORD, check=False).returncode != 0, host
        assert served_expiry(cluster.record.hosts[host]["ip"]) - now > datetime.timedelta(days=360), host
