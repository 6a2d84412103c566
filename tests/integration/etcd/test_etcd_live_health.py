# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The etcd adapter and the health rules against real, healthy etcd clusters, and TLS trust."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_client import EtcdClient
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdTLSError
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import evaluate

pytestmark = pytest.mark.etcd

ENV_TRUST = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


def machines_for(cluster):
    return [{"name": n, "node": {"name": n}, "deleting": False} for n in cluster.members]


@pytest.mark.parametrize(
    "cluster_fixture",
    ["healthy3", "healthy5"],
    ids=["a healthy 3-member cluster is reported healthy", "a healthy 5-member cluster is reported healthy"],
)
def test_a_healthy_cluster_is_discovered_from_one_endpoint_and_reported_healthy(request, cluster_fixture, client_for):
    cluster = request.getfixturevalue(cluster_fixture)
    section = client_for(cluster.endpoints[:1]).gather()
    members = section["members"]

    assert [m["name"] for m in members] == sorted(cluster.members)
    assert all(m["responsive"] and m["error"] is None for m in members), members
    assert sum(m["leader"] for m in members) == 1
    assert {m["id"] for m in members} == {"%x" % int(i) for i in cluster.member_ids().values()}
    assert all(m["member_ids_seen"] == sorted(m2["id"] for m2 in members) for m in members)
    assert len({m["cluster_id"] for m in members}) == 1
    assert all(m["alarms"] == [] and not m["learner"] for m in members)
    assert all(m["version"] == "3.5.1" and m["db_size"] > 0 and m["raft_term"] >= 1 for m in members)

    health = evaluate(section, machines_for(cluster))
    assert health["ok"], health["problems"]
    assert {name: entry["status"] for name, entry in health["members_by_machine"].items()} == {
        name: "true" for name in cluster.members
    }
    assert health["strays"] == []


def test_a_hung_member_is_reported_unresponsive_with_the_timeout(make_cluster, client_for):
    cluster = make_cluster(3)
    cluster.pause("cp-2")
    section = client_for(cluster, timeout=0.5).gather()
    hung = next(m for m in section["members"] if m["name"] == "cp-2")
    assert hung["responsive"] is False
    assert "no answer within 0.5s" in hung["error"]
    health = evaluate(section, machines_for(cluster))
    assert health["members_by_machine"]["cp-2"]["status"] == "unknown"
    assert not health["ok"]


def test_a_wrong_ca_gives_a_clear_tls_error(healthy3, etcd_pki):
    client = EtcdClient(healthy3.endpoints, etcd_pki.foreign_ca_file(), etcd_pki.client_cert, etcd_pki.client_key, timeout=2)
    with pytest.raises(EtcdTLSError) as failure:
        client.gather()
    assert "not trusted with the given CA file" in str(failure.value)
    assert "Traceback" not in str(failure.value)


def test_an_expired_client_certificate_gives_a_clear_tls_error(healthy3, etcd_pki):
    cert, key = etcd_pki.expired_client()
    client = EtcdClient(healthy3.endpoints, etcd_pki.ca_file, cert, key, timeout=2)
    with pytest.raises(EtcdTLSError) as failure:
        client.gather()
    assert "rejected the client certificate" in str(failure.value)
    assert "expired" in str(failure.value)


def test_the_environment_adds_no_trust(healthy3, etcd_pki, monkeypatch):
    """Every variable that points other TLS clients at the etcd CA is set; a wrong ca_file still fails."""
    for variable in ENV_TRUST:
        monkeypatch.setenv(variable, etcd_pki.ca_file if variable != "SSL_CERT_DIR" else str(etcd_pki.root))
    client = EtcdClient(healthy3.endpoints, etcd_pki.foreign_ca_file(), etcd_pki.client_cert, etcd_pki.client_key, timeout=2)
    with pytest.raises(EtcdTLSError):
        client.gather()


def test_the_environment_takes_no_trust_away(healthy3, etcd_pki, monkeypatch, client_for):
    """Every variable points at a CA that signed nothing etcd knows; the given ca_file still works."""
    foreign = etcd_pki.foreign_ca_file()
    for variable in ENV_TRUST:
        monkeypatch.setenv(variable, foreign)
    section = client_for(healthy3).gather()
    assert all(m["responsive"] for m in section["members"])
