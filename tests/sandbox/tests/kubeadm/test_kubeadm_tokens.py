# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bootstrap tokens, join commands, kubeadm-certs encryption and token discovery (kubeadm-reference.md §2.1,
§5.3, §5.4)."""

import base64
import datetime
import re

import pytest

from kcpsim import pki
from kcpsim.kubeadm import bootstraptoken, certsecret, clusterobjects, discovery

NOW = datetime.datetime(2026, 11, 22, 10, 0, tzinfo=datetime.timezone.utc)
TOKEN = "abcdef.0123456789abcdef"
HASH = "sha256:" + "0" * 64


def test_generated_tokens_have_kubeadms_format():
    tokens = {bootstraptoken.generate() for attempt in range(20)}
    assert len(tokens) == 20
    assert all(re.match(r"^[a-z0-9]{6}\.[a-z0-9]{16}$", t) for t in tokens)


@pytest.mark.parametrize("token", ["abcdef.0123456789abcde", "ABCDEF.0123456789abcdef", "abcdef0123456789abcdef",
                                   ""], ids=["a short secret is refused", "upper case is refused",
                                             "a token needs its dot", "an empty token is refused"])
def test_malformed_tokens(token):
    with pytest.raises(ValueError, match=r"\[a-z0-9\]\{6\}"):
        bootstraptoken.split(token)


def test_token_secret():
    secret = bootstraptoken.secret(TOKEN, 86400, ["signing", "authentication"],
                                   ["system:bootstrappers:kubeadm:default-node-token"], "init token", NOW)
    assert secret["metadata"] == {"name": "bootstrap-token-abcdef", "namespace": "kube-system"}
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert bootstraptoken.secret_fields(secret) == {
        "token-id": "abcdef", "token-secret": "0123456789abcdef", "expiration": "2026-11-23T10:00:00Z",
        "usage-bootstrap-signing": "true", "usage-bootstrap-authentication": "true",
        "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token", "description": "init token"}
    assert not bootstraptoken.is_expired(bootstraptoken.secret_fields(secret), NOW)
    assert bootstraptoken.is_expired(bootstraptoken.secret_fields(secret), NOW + datetime.timedelta(days=2))


def test_a_zero_ttl_token_never_expires():
    secret = bootstraptoken.secret(TOKEN, 0, [], [], "", NOW)
    assert "expiration" not in bootstraptoken.secret_fields(secret)


@pytest.mark.parametrize("control_plane, key, one_line", [
    (False, "", "kubeadm join lb:6443 --token %s --discovery-token-ca-cert-hash %s " % (TOKEN, HASH)),
    (True, "k" * 64, "kubeadm join lb:6443 --token %s --discovery-token-ca-cert-hash %s --control-plane "
                     "--certificate-key %s" % (TOKEN, HASH, "k" * 64)),
], ids=["a worker's join command ends with a space", "a control plane's adds --control-plane --certificate-key"])
def test_join_command(control_plane, key, one_line):
    command = bootstraptoken.join_command("lb:6443", TOKEN, [HASH], control_plane=control_plane, certificate_key=key)
    assert "\\\n\t" in command
    assert bootstraptoken.one_line(command) == one_line
    assert "\n" not in bootstraptoken.one_line(command)


def test_kubeadm_certs_round_trip():
    key = certsecret.new_key()
    assert re.match(r"^[0-9a-f]{64}$", key)
    owner = {"metadata": {"name": "bootstrap-token-abcdef", "uid": "u-1"}}
    files = {"ca.crt": b"CERT", "ca.key": b"KEY", "etcd-ca.key": b"ETCD"}
    secret = certsecret.secret(key, files, owner)
    assert secret["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Secret",
                                                      "name": "bootstrap-token-abcdef", "uid": "u-1",
                                                      "controller": True, "blockOwnerDeletion": True}]
    blob = base64.b64decode(secret["data"]["ca.key"])
    assert len(blob) == 12 + len(b"KEY") + 16 and b"KEY" not in blob
    assert certsecret.open_secret(key, secret) == files


def test_a_wrong_certificate_key_fails_authentication():
    secret = certsecret.secret(certsecret.new_key(), {"ca.key": b"KEY"}, {"metadata": {"name": "t"}})
    with pytest.raises(certsecret.DecryptError, match="message authentication failed"):
        certsecret.open_secret(certsecret.new_key(), secret)


def test_entry_names_flatten_paths():
    assert certsecret.entry_name("etcd/ca.crt") == "etcd-ca.crt"


@pytest.fixture(scope="module")
def ca_pem():
    cert = pki.new_ca("kubernetes", algorithm="ECDSA-P256")[0]
    return pki.cert_pem(cert)


def test_discovery_accepts_a_signed_cluster_info_with_a_pinned_ca(ca_pem):
    text = clusterobjects.cluster_info_kubeconfig("https://lb:6443", ca_pem)
    data = {"kubeconfig": text, "jws-kubeconfig-abcdef": discovery.sign(text, "abcdef", "0123456789abcdef")}
    assert discovery.verify_signature(data, "abcdef", "0123456789abcdef") == text
    server, ca = discovery.cluster_of(text)
    assert server == "https://lb:6443" and ca == ca_pem
    discovery.check_pin(ca, [discovery.ca_hash(ca_pem)], unsafe_skip=False)
    assert discovery.ca_hash(ca_pem) == pki.ca_cert_hash(pki.load_cert_pem(ca_pem))


def test_discovery_waits_for_a_missing_signature(ca_pem):
    text = clusterobjects.cluster_info_kubeconfig("https://lb:6443", ca_pem)
    with pytest.raises(discovery.NotSignedYet, match='does not yet contain a JWS signature for token ID "abcdef"'):
        discovery.verify_signature({"kubeconfig": text}, "abcdef", "0123456789abcdef")


@pytest.mark.parametrize("signer_secret, signed_text", [
    ("ffffffffffffffff", None), ("0123456789abcdef", "other content"),
], ids=["a signature made with another secret is not trusted", "a signature over other content is not trusted"])
def test_discovery_refuses_a_bad_signature(ca_pem, signer_secret, signed_text):
    text = clusterobjects.cluster_info_kubeconfig("https://lb:6443", ca_pem)
    data = {"kubeconfig": text, "jws-kubeconfig-abcdef": discovery.sign(signed_text or text, "abcdef", signer_secret)}
    with pytest.raises(discovery.Untrusted, match="can't trust this API Server"):
        discovery.verify_signature(data, "abcdef", "0123456789abcdef")


def test_discovery_refuses_an_unpinned_ca(ca_pem):
    with pytest.raises(discovery.Untrusted, match="none of the public keys"):
        discovery.check_pin(ca_pem, [HASH], unsafe_skip=False)
    discovery.check_pin(ca_pem, [HASH], unsafe_skip=True)
