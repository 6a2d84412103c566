# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcpsim.pki makes certificates the way kubeadm does (kubeadm-reference.md §1.2)."""

import datetime
import os
import stat

import pytest
from cryptography import x509

from kcpsim import pki

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture(scope="module")
def ca():
    return pki.new_ca("kubernetes", algorithm="ECDSA-P256", now=NOW)


@pytest.mark.parametrize("algorithm, kind, size", [
    ("RSA-2048", "RSA", 2048),
    ("RSA-3072", "RSA", 3072),
    ("RSA-4096", "RSA", 4096),
    ("ECDSA-P256", "EC", 256),
], ids=[
    "RSA-2048 makes a 2048-bit RSA key",
    "RSA-3072 makes a 3072-bit RSA key",
    "RSA-4096 makes a 4096-bit RSA key",
    "ECDSA-P256 makes a P-256 key",
])
def test_key_algorithms(algorithm, kind, size):
    key = pki.new_key(algorithm)
    assert pki.key_algorithm(key) == algorithm
    assert key.key_size == size
    header = b"-----BEGIN %s PRIVATE KEY-----" % kind.encode()
    assert pki.key_pem(key).startswith(header)


def test_an_unknown_algorithm_is_refused_naming_the_choices():
    with pytest.raises(pki.PKIError, match="RSA-2048, RSA-3072, RSA-4096, ECDSA-P256"):
        pki.new_key("DSA-1024")


def test_a_ca_is_self_signed_for_ten_years_and_may_sign(ca):
    cert = ca[0]
    assert pki.common_name(cert) == "kubernetes"
    assert pki.is_ca(cert)
    assert pki.signed_by(cert, cert)
    assert pki.not_after(cert) - NOW == datetime.timedelta(days=3650)
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.key_cert_sign and usage.value.digital_signature


@pytest.mark.parametrize("kwargs, cn, orgs, dns, ips, usages", [
    (dict(common_name="cp-1", dns_names=["cp-1", "localhost"], ip_addresses=["172.31.250.11", "127.0.0.1", "::1"],
          usages=("server", "client")),
     "cp-1", [], ["cp-1", "localhost"], ["172.31.250.11", "127.0.0.1", "::1"], {"server", "client"}),
    (dict(common_name="kube-apiserver", dns_names=["kubernetes", "kubernetes.default"],
          ip_addresses=["10.96.0.1", "172.31.250.100"], usages=("server",)),
     "kube-apiserver", [], ["kubernetes", "kubernetes.default"], ["10.96.0.1", "172.31.250.100"], {"server"}),
    (dict(common_name="kubernetes-admin", organizations=["kubeadm:cluster-admins"], usages=("client",)),
     "kubernetes-admin", ["kubeadm:cluster-admins"], [], [], {"client"}),
    (dict(common_name="system:node:cp-1", organizations=["system:nodes"], usages=("client",)),
     "system:node:cp-1", ["system:nodes"], [], [], {"client"}),
], ids=[
    "an etcd peer cert has the node, localhost and loopback SANs and both usages",
    "the apiserver cert has the service names, service IP and endpoint VIP, server usage only",
    "the admin client cert carries its group as O and client usage only",
    "a kubelet client cert names system:node:<name> in system:nodes",
])
def test_leaf_certificates(ca, kwargs, cn, orgs, dns, ips, usages):
    ca_cert, ca_key = ca
    cert, key = pki.new_leaf(ca_cert, ca_key, algorithm="ECDSA-P256", now=NOW, **kwargs)
    assert pki.common_name(cert) == cn
    assert pki.organizations(cert) == orgs
    assert pki.sans(cert) == (dns, ips)
    assert pki.ext_key_usages(cert) == usages
    assert not pki.is_ca(cert)
    assert pki.signed_by(cert, ca_cert)
    assert pki.matches_key(cert, key)
    assert pki.not_after(cert) - NOW == datetime.timedelta(days=365)
    assert pki.not_before(cert) < NOW


def test_a_leaf_is_not_signed_by_another_ca(ca):
    other_cert, other_key = pki.new_ca("etcd-ca", algorithm="ECDSA-P256")
    cert = pki.new_leaf(other_cert, other_key, "x", usages=("client",), algorithm="ECDSA-P256")[0]
    assert not pki.signed_by(cert, ca[0])


def test_an_rsa_ca_signs_and_verifies_an_rsa_leaf():
    ca_cert, ca_key = pki.new_ca("front-proxy-ca", algorithm="RSA-2048")
    cert = pki.new_leaf(ca_cert, ca_key, "front-proxy-client", usages=("client",), algorithm="RSA-2048")[0]
    assert pki.signed_by(cert, ca_cert)
    assert cert.extensions.get_extension_for_class(x509.KeyUsage).value.key_encipherment


@pytest.mark.parametrize("usages, san", [
    ((), None), (("peer",), None), (("client",), "not-an-ip"),
], ids=[
    "a leaf without usages is refused",
    "an unknown usage is refused",
    "a malformed IP SAN is refused",
])
def test_bad_leaf_arguments_are_refused(ca, usages, san):
    with pytest.raises(pki.PKIError):
        pki.new_leaf(ca[0], ca[1], "x", usages=usages, ip_addresses=[san] if san else [], algorithm="ECDSA-P256")


def test_a_given_validity_is_honoured(ca):
    cert = pki.new_leaf(ca[0], ca[1], "x", usages=("client",), algorithm="ECDSA-P256", now=NOW,
                        validity=datetime.timedelta(hours=10))[0]
    assert pki.not_after(cert) == NOW + datetime.timedelta(hours=10)


def test_resigning_keeps_subject_key_sans_and_usages_and_changes_expiry(ca):
    ca_cert, ca_key = ca
    cert, key = pki.new_leaf(ca_cert, ca_key, "cp-1", organizations=["o"], dns_names=["cp-1"],
                             ip_addresses=["172.31.250.11"], usages=("server", "client"), algorithm="ECDSA-P256",
                             now=NOW)
    soon = NOW + datetime.timedelta(days=3)
    again = pki.resign(cert, ca_cert, ca_key, not_after=soon, now=NOW)
    assert again.subject == cert.subject
    assert pki.sans(again) == pki.sans(cert)
    assert pki.ext_key_usages(again) == pki.ext_key_usages(cert)
    assert pki.matches_key(again, key)
    assert pki.signed_by(again, ca_cert)
    assert pki.not_after(again) == soon
    assert again.serial_number != cert.serial_number


def test_ca_cert_hash_is_sha256_of_the_der_subject_public_key_info(ca, tmp_path):
    import subprocess
    path = tmp_path / "ca.crt"
    pki.write_cert(str(path), ca[0])
    # The recipe kubeadm's documentation gives for computing the hash by hand.
    pipeline = ("openssl x509 -pubkey -in %s | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex"
                % path)
    out = subprocess.run(["sh", "-c", pipeline], check=True, capture_output=True, text=True).stdout
    assert pki.ca_cert_hash(ca[0]) == "sha256:" + out.split("=")[-1].strip()


def test_files_are_written_with_kubeadm_modes_and_load_back(ca, tmp_path):
    ca_cert, ca_key = ca
    pki.write_pair(str(tmp_path), "etcd/ca", ca_cert, ca_key)
    sa_key = pki.new_key("ECDSA-P256")
    pki.write_sa_pair(str(tmp_path), sa_key)
    modes = {name: stat.S_IMODE(os.stat(tmp_path / name).st_mode)
             for name in ("etcd/ca.crt", "etcd/ca.key", "sa.key", "sa.pub")}
    assert modes == {"etcd/ca.crt": 0o644, "etcd/ca.key": 0o600, "sa.key": 0o600, "sa.pub": 0o600}
    cert, key = pki.load_pair(str(tmp_path), "etcd/ca")
    assert cert == ca_cert and pki.matches_key(cert, key)
    assert pki.load_public_key(str(tmp_path / "sa.pub")).public_numbers() == sa_key.public_key().public_numbers()
    assert [p for p in os.listdir(tmp_path / "etcd") if p.startswith(".")] == []


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"), (b"garbage", "not a PEM"),
], ids=["a missing file is named in the error", "a corrupt file is named in the error"])
def test_loading_bad_files_fails_clearly(tmp_path, content, message):
    path = tmp_path / "x.crt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(pki.PKIError, match=message):
        pki.load_cert(str(path))


def test_resign_file_rewrites_the_cert_and_leaves_the_key(ca, tmp_path):
    ca_cert, ca_key = ca
    cert, key = pki.new_leaf(ca_cert, ca_key, "etcd-healthcheck-client", usages=("client",), algorithm="ECDSA-P256")
    pki.write_pair(str(tmp_path), "healthcheck-client", cert, key)
    key_before = (tmp_path / "healthcheck-client.key").read_bytes()
    soon = pki.utcnow() + datetime.timedelta(days=2)
    pki.resign_file(str(tmp_path / "healthcheck-client.crt"), ca_cert, ca_key, not_after=soon)
    assert pki.not_after(pki.load_cert(str(tmp_path / "healthcheck-client.crt"))) == soon.replace(microsecond=0)
    assert (tmp_path / "healthcheck-client.key").read_bytes() == key_before


def test_a_csr_is_signed_for_client_use_with_its_subject(ca):
    key = pki.new_key("ECDSA-P256")
    csr = pki.new_csr(key, "system:node:cp-2", ["system:nodes"])
    cert = pki.sign_csr(csr, ca[0], ca[1], usages=("client",))
    assert pki.common_name(cert) == "system:node:cp-2"
    assert pki.organizations(cert) == ["system:nodes"]
    assert pki.matches_key(cert, key) and pki.signed_by(cert, ca[0])


def test_a_csr_that_is_not_pem_is_refused(ca):
    with pytest.raises(pki.PKIError, match="not a PEM CSR"):
        pki.sign_csr(b"nope", ca[0], ca[1])
