# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Authentication over the wire: client certificates from the cluster CA, bootstrap tokens checked against
their Secret, and the anonymous reads kubeadm's discovery needs — nothing more for anonymous."""

import datetime

import pytest

import apiserver_harness as harness
from kcpsim import kubeclient, pki
from kcpsim.kubeadm import clusterobjects

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 3

TOKEN_ID, TOKEN_SECRET = "abcdef", "0123456789abcdef"


def rfc3339(delta):
    return (datetime.datetime.now(datetime.timezone.utc) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def tokens(cluster, admin):
    """A live token, an expired one and one without the authentication usage."""
    admin.create("v1", "secrets", harness.token_secret(TOKEN_ID, TOKEN_SECRET, rfc3339(datetime.timedelta(hours=1))),
                 "kube-system")
    admin.create("v1", "secrets", harness.token_secret("expird", TOKEN_SECRET, rfc3339(-datetime.timedelta(hours=1))),
                 "kube-system")
    admin.create("v1", "secrets", harness.token_secret("nouse0", TOKEN_SECRET, rfc3339(datetime.timedelta(hours=1)),
                                                       usages=("signing",)), "kube-system")
    # kubeadm's bootstrap-token RBAC and cluster-info, as init creates them.
    for api_version, plural, namespace, body in clusterobjects.bootstrap_token_rbac("https://10.0.0.1:6443", b"ca"):
        admin.create(api_version, plural, body, namespace)
    client = cluster.anonymous_client(cluster.ip(4), token="%s.%s" % (TOKEN_ID, TOKEN_SECRET))
    try:
        harness.wait_until_allowed(client, "certificates.k8s.io/v1", "certificatesigningrequests", {
            "metadata": {"name": "rbac-probe"},
            "spec": {"request": "cmVx", "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                     "usages": ["client auth"]}})
    finally:
        client.close()


def test_a_bootstrap_token_authenticates_as_system_bootstrap_with_its_groups(cluster, tokens):
    client = cluster.anonymous_client(cluster.ip(4), token="%s.%s" % (TOKEN_ID, TOKEN_SECRET))
    try:
        csr = client.create("certificates.k8s.io/v1", "certificatesigningrequests", {
            "metadata": {"name": "node-csr-1"},
            "spec": {"request": "cmVx", "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                     "usages": ["client auth"]}})
    finally:
        client.close()
    assert csr["spec"]["username"] == "system:bootstrap:" + TOKEN_ID
    assert csr["spec"]["groups"] == ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token",
                                     "system:authenticated"]


@pytest.mark.parametrize("token", [
    "%s.%s" % ("expird", TOKEN_SECRET),
    "%s.%s" % (TOKEN_ID, "ffffffffffffffff"),
    "%s.%s" % ("nouse0", TOKEN_SECRET),
    "%s.%s" % ("absent", TOKEN_SECRET),
    "not-a-bootstrap-token",
], ids=["an expired token is refused", "a wrong secret is refused",
        "a token without the authentication usage is refused", "a token without a Secret is refused",
        "any other bearer token is refused"])
def test_bad_bearer_tokens_are_401(cluster, tokens, token):
    client = cluster.anonymous_client(cluster.ip(4), token=token)
    try:
        with pytest.raises(kubeclient.Unauthorized):
            client.get("v1", "namespaces", "default")
    finally:
        client.close()


@pytest.mark.parametrize("path", ["/livez", "/readyz", "/healthz", "/version",
                                  "/api/v1/namespaces/kube-public/configmaps/cluster-info"],
                         ids=["livez", "readyz", "healthz", "version", "cluster-info"])
def test_anonymous_may_read_health_version_and_cluster_info(cluster, tokens, path):
    client = cluster.anonymous_client(cluster.ip(4))
    try:
        assert client.get_path(path)
    finally:
        client.close()


@pytest.mark.parametrize("method, path", [
    ("GET", "/api/v1/namespaces/kube-system/secrets"),
    ("GET", "/api/v1/namespaces/kube-public/configmaps/other"),
    ("GET", "/api"),
    ("GET", "/readyz/etcd"),
    ("POST", "/api/v1/namespaces/kube-public/configmaps"),
], ids=["listing secrets", "another kube-public configmap", "discovery", "one readyz check", "writing"])
def test_anonymous_may_do_nothing_else(cluster, tokens, method, path):
    client = cluster.anonymous_client(cluster.ip(4))
    try:
        with pytest.raises(kubeclient.Forbidden) as caught:
            client.request(method, path, body={} if method == "POST" else None)
    finally:
        client.close()
    assert 'User "system:anonymous" cannot' in caught.value.message


def test_version_reports_the_stamped_kubernetes_version(cluster):
    client = cluster.anonymous_client(cluster.ip(4))
    try:
        info = client.get_path("/version")
    finally:
        client.close()
    assert info["gitVersion"].startswith("v1.") and info["major"] == "1"


def test_a_client_certificate_from_another_ca_fails_the_handshake(cluster, tmp_path):
    other_ca, other_key = pki.new_ca("someone-else", algorithm=harness.ALGORITHM)
    cert, key = pki.new_leaf(other_ca, other_key, "intruder", organizations=("system:masters",),
                             usages=("client",), algorithm=harness.ALGORITHM)
    with open(cluster.path("ca.crt"), "rb") as handle:
        ca_pem = handle.read()
    client = kubeclient.KubeClient("https://%s:6443" % cluster.ip(4), ca_pem=ca_pem,
                                   client_cert_pem=pki.cert_pem(cert), client_key_pem=pki.key_pem(key))
    try:
        with pytest.raises(kubeclient.ApiUnavailable):
            client.get("v1", "namespaces", "default")
    finally:
        client.close()
