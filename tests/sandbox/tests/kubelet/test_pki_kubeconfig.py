# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcpsim.kubeconfig writes kubeconfigs like kubeadm / the kubelet and reads them back into credentials."""

import datetime
import os
import stat

import pytest

from kcpsim import kubeconfig, pki


@pytest.fixture(scope="module")
def ca():
    return pki.new_ca("kubernetes", algorithm="ECDSA-P256")


@pytest.fixture(scope="module")
def admin(ca):
    return pki.new_leaf(ca[0], ca[1], "kubernetes-admin", ["kubeadm:cluster-admins"], usages=("client",),
                        algorithm="ECDSA-P256")


def test_an_embedded_kubeconfig_round_trips_with_mode_0600(tmp_path, ca, admin):
    cert, key = admin
    path = str(tmp_path / "admin.conf")
    config = kubeconfig.build("https://172.31.250.100:6443", pki.cert_pem(ca[0]), "kubernetes-admin",
                              client_cert_pem=pki.cert_pem(cert), client_key_pem=pki.key_pem(key))
    kubeconfig.write(path, config)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert kubeconfig.load(path) == config
    assert config["current-context"] == "kubernetes-admin@kubernetes"
    creds = kubeconfig.load_credentials(path)
    assert (creds.server, creds.ca_pem, creds.client_cert_pem, creds.client_key_pem, creds.token) == (
        "https://172.31.250.100:6443", pki.cert_pem(ca[0]), pki.cert_pem(cert), pki.key_pem(key), None)
    assert "BEGIN" not in repr(creds)


def test_file_references_are_read_relative_to_the_kubeconfig(tmp_path, ca, admin):
    cert, key = admin
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "kubelet-client-current.pem").write_bytes(pki.cert_pem(cert) + pki.key_pem(key))
    config = kubeconfig.build("https://10.0.0.1:6443", pki.cert_pem(ca[0]), "default-auth",
                              cluster_name="default-cluster", context_name="default-context",
                              client_cert_file="pki/kubelet-client-current.pem",
                              client_key_file="pki/kubelet-client-current.pem", namespace="default")
    kubeconfig.write(str(tmp_path / "kubelet.conf"), config)
    creds = kubeconfig.load_credentials(str(tmp_path / "kubelet.conf"))
    assert creds.client_cert_pem == creds.client_key_pem == pki.cert_pem(cert) + pki.key_pem(key)
    assert kubeconfig.client_certificate(str(tmp_path / "kubelet.conf")) == cert
    # what kubeadm certs renew (and the certs-expire-soon fault) re-signs is only what a kubeconfig embeds
    assert kubeconfig.embedded_client_certificate(str(tmp_path / "kubelet.conf")) is None
    (tmp_path / "pki" / "kubelet-client-current.pem").unlink()  # read on another machine: the file is not there
    assert kubeconfig.embedded_client_certificate(str(tmp_path / "kubelet.conf")) is None


def test_an_embedded_client_certificate_is_read_from_the_kubeconfig_alone(tmp_path, ca, admin):
    cert, key = admin
    config = kubeconfig.build("https://10.0.0.1:6443", pki.cert_pem(ca[0]), "kubernetes-admin",
                              client_cert_pem=pki.cert_pem(cert), client_key_pem=pki.key_pem(key))
    kubeconfig.write(str(tmp_path / "admin.conf"), config)
    assert kubeconfig.embedded_client_certificate(str(tmp_path / "admin.conf")) == cert


def test_a_token_kubeconfig_carries_the_token(tmp_path, ca):
    config = kubeconfig.build("https://10.0.0.1:6443", pki.cert_pem(ca[0]), "tls-bootstrap-token-user",
                              token="abcdef.0123456789abcdef")
    creds = kubeconfig.credentials(config)
    assert creds.token == "abcdef.0123456789abcdef"
    assert creds.client_cert_pem is None


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c.pop("current-context"), "current-context is not set"),
    (lambda c: c.__setitem__("current-context", "nope"), "contexts has no entry named 'nope'"),
    (lambda c: c["clusters"][0]["cluster"].pop("server"), "has no server"),
    (lambda c: c["users"][0]["user"].__setitem__("client-certificate", "/nonexistent.pem"),
     "client-certificate /nonexistent.pem"),
], ids=[
    "a kubeconfig without a current context is refused",
    "a current context that does not exist is named",
    "a cluster without a server is named",
    "an unreadable certificate file is named",
])
def test_broken_kubeconfigs_fail_naming_the_field(ca, mutate, message):
    config = kubeconfig.build("https://10.0.0.1:6443", pki.cert_pem(ca[0]), "u")
    mutate(config)
    with pytest.raises(kubeconfig.KubeconfigError, match=message):
        kubeconfig.credentials(config)


def test_a_file_that_is_not_yaml_is_refused(tmp_path):
    path = tmp_path / "bad.conf"
    path.write_text("a: [unclosed")
    with pytest.raises(kubeconfig.KubeconfigError, match="is not YAML"):
        kubeconfig.load(str(path))


def test_resigning_an_embedded_client_cert_changes_only_its_expiry(tmp_path, ca, admin):
    cert, key = admin
    path = str(tmp_path / "admin.conf")
    kubeconfig.write(path, kubeconfig.build("https://10.0.0.1:6443", pki.cert_pem(ca[0]), "kubernetes-admin",
                                            client_cert_pem=pki.cert_pem(cert), client_key_pem=pki.key_pem(key)))
    soon = pki.utcnow().replace(microsecond=0) + datetime.timedelta(days=5)
    kubeconfig.resign_embedded(path, ca[0], ca[1], not_after=soon)
    renewed = kubeconfig.client_certificate(path)
    assert pki.not_after(renewed) == soon
    assert renewed.subject == cert.subject and pki.matches_key(renewed, key)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_resigning_a_file_referencing_kubeconfig_is_left_alone(tmp_path, ca):
    path = str(tmp_path / "kubelet.conf")
    config = kubeconfig.build("https://10.0.0.1:6443", pki.cert_pem(ca[0]), "default-auth",
                              client_cert_file="/var/lib/kubelet/pki/kubelet-client-current.pem",
                              client_key_file="/var/lib/kubelet/pki/kubelet-client-current.pem")
    kubeconfig.write(path, config)
    assert kubeconfig.resign_embedded(path, ca[0], ca[1]) is None
    assert kubeconfig.load(path) == config
