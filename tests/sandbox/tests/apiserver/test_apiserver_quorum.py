# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Without etcd quorum the API server stops answering, as the real one does: readyz turns 500 and resource
requests fail with an error instead of hanging; with quorum back, it serves again and nothing was lost."""

import datetime
import time

import pytest

import apiserver_harness as harness
from kcpsim import kubeclient
from kcpsim.kubeadm import clusterobjects

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 4

# Requests give up on etcd after this (the flag's default is 5s); the client waits longer, so an error
# answer proves the server bounded the wait itself.
ETCD_REQUEST_TIMEOUT = "3s"
CLIENT_TIMEOUT = 10.0
# The real server's etcd check reads etcd at most once per half its timeout and shows a lost quorum within
# timeout / 2 + timeout (kcpsim/apiserver/health.py): 3 s at the real 2 s default, 1.5 s at the emulation's 1 s.
READYZ_FAILS_WITHIN = 3.0


@pytest.fixture(scope="module")
def server(cluster):
    process = cluster.start_apiserver(5, etcd_request_timeout=ETCD_REQUEST_TIMEOUT)
    client = cluster.client("admin", cluster.ip(5), timeout=CLIENT_TIMEOUT)
    yield client
    client.close()
    process.stop()


def readyz(client):
    """The /readyz body, or the ServerError it answered with."""
    try:
        return client.get_path("/readyz", timeout=CLIENT_TIMEOUT)
    except kubeclient.ServerError as exc:
        return exc


def readyz_failure(client):
    answer = readyz(client)
    return answer if isinstance(answer, kubeclient.ServerError) else None


def test_losing_quorum_stops_the_api_and_regaining_it_restores_it_with_the_data(cluster, server):
    server.create("v1", "configmaps", {"metadata": {"name": "before-the-outage"}, "data": {"k": "v"}}, "default")
    assert readyz(server) == "ok"

    cluster.etcd[1].stop(kill=True)
    cluster.etcd[2].stop(kill=True)
    lost = time.monotonic()

    failing = harness.wait_until(lambda: readyz_failure(server), 30, interval=0.05, what="readyz failing")
    assert time.monotonic() - lost <= READYZ_FAILS_WITHIN
    assert failing.status == 500 and "[-]etcd failed" in failing.message
    with pytest.raises(kubeclient.ServerError) as read:
        server.get("v1", "configmaps", "before-the-outage", "default")
    assert (read.value.status, read.value.reason) in ((504, "Timeout"), (500, "InternalError"))
    with pytest.raises(kubeclient.ServerError) as write:
        server.create("v1", "configmaps", {"metadata": {"name": "during-the-outage"}}, "default")
    assert write.value.status in (500, 504)
    assert server.get_path("/livez") == "ok", "the process itself is alive"

    cluster.restart_etcd(2)
    cluster.restart_etcd(3)
    harness.wait_until(lambda: readyz(server) == "ok", 60, interval=0.5, what="readyz back")
    assert server.get("v1", "configmaps", "before-the-outage", "default")["data"] == {"k": "v"}
    server.create("v1", "configmaps", {"metadata": {"name": "after-the-outage"}}, "default")


def test_one_member_down_keeps_the_api_serving(cluster, server):
    cluster.etcd[0].stop(kill=True)
    try:
        harness.wait_until(lambda: readyz(server) == "ok", 30, what="readyz with two of three members")
        server.create("v1", "configmaps", {"metadata": {"name": "with-two-members"}}, "default")
    finally:
        cluster.restart_etcd(1)
        cluster.wait_member(1, 30)


def _answer_with_token(cluster, token):
    """What a GET of kubeadm-config with this bearer token answers: the error's (status, reason)."""
    client = cluster.anonymous_client(cluster.ip(5), token=token)
    try:
        client.get("v1", "configmaps", "kubeadm-config", "kube-system")
    except kubeclient.ApiError as exc:
        return exc.status, exc.reason
    finally:
        client.close()
    return 200, "OK"


def test_a_bootstrap_token_still_authenticates_without_quorum_and_a_bad_one_is_still_401(cluster, server):
    expiration = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    server.create("v1", "secrets", harness.token_secret("quorum", "0123456789abcdef", expiration), "kube-system")
    # kubeadm-config with the Role and RoleBinding that let bootstrap tokens read it, as kubeadm init makes them.
    for api_version, plural, namespace, body in clusterobjects.upload_kubeadm_config("kind: ClusterConfiguration"):
        server.create(api_version, plural, body, namespace)
    valid, wrong = "quorum.0123456789abcdef", "quorum.ffffffffffffffff"
    # The authorizer reads RBAC from a watch cache, as the real one does: the binding is in force soon, not at once.
    harness.wait_until(lambda: _answer_with_token(cluster, valid) == (200, "OK"), 10,
                       what="the token's RoleBinding to reach the authorizer")

    cluster.etcd[1].stop(kill=True)
    cluster.etcd[2].stop(kill=True)
    try:
        harness.wait_until(lambda: readyz_failure(server), 30, what="readyz failing")
        # Authenticated and authorized from the server's caches; only the read itself needs etcd.
        assert _answer_with_token(cluster, valid) in ((504, "Timeout"), (500, "InternalError"))
        assert _answer_with_token(cluster, wrong) == (401, "Unauthorized")
        assert _answer_with_token(cluster, "absent.0123456789abcdef") == (401, "Unauthorized")
    finally:
        cluster.restart_etcd(2)
        cluster.restart_etcd(3)
        harness.wait_until(lambda: readyz(server) == "ok", 60, interval=0.5, what="readyz back")
