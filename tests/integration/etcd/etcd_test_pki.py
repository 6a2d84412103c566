# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test PKI in kubeadm's etcd layout, made with `cryptography` (ECDSA P-256: fast, and etcd accepts it).

    <root>/pki/etcd/ca.crt, ca.key                       the etcd CA
    <root>/pki/etcd/healthcheck-client.crt, .key         client (clientAuth)
    <root>/pki/apiserver-etcd-client.crt, .key           client (clientAuth)
    <member dir>/pki/etcd/server.crt, .key               per member, SANs: its IP, 127.0.0.1, localhost
    <member dir>/pki/etcd/peer.crt, .key                 per member, serverAuth + clientAuth
Private keys are written 0600.
"""

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ONE_DAY = datetime.timedelta(days=1)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _write(path, data, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _write_pair(base, cert, key):
    """Write ``base``.crt (0644) and ``base``.key (0600); return the two paths."""
    _write(base + ".crt", cert.public_bytes(serialization.Encoding.PEM), 0o644)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(base + ".key", key_pem, 0o600)
    return base + ".crt", base + ".key"


class CertificateAuthority:
    """A self-signed CA that issues leaf certificates."""

    def __init__(self, common_name="etcd-ca"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(_now() - ONE_DAY)
            .not_valid_after(_now() + 3650 * ONE_DAY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
            )
            .sign(self.key, hashes.SHA256())
        )

    def write(self, base):
        return _write_pair(base, self.cert, self.key)

    def issue(self, base, common_name, server=False, ips=(), dns=(), expired=False):
        """Issue a leaf certificate to ``base``.crt / .key; ``expired`` makes one that ended yesterday."""
        key = ec.generate_private_key(ec.SECP256R1())
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] + ([ExtendedKeyUsageOID.SERVER_AUTH] if server else [])
        not_before = _now() - (31 if expired else 1) * ONE_DAY
        not_after = _now() - ONE_DAY if expired else _now() + 365 * ONE_DAY
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        )
        sans = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips] + [x509.DNSName(d) for d in dns]
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return _write_pair(base, builder.sign(self.key, hashes.SHA256()), key)


class EtcdPKI:
    """The etcd CA and client certificates under ``root``, plus server / peer certificates per member."""

    def __init__(self, root):
        self.root = str(root)
        self.ca = CertificateAuthority("etcd-ca")
        etcd_dir = os.path.join(self.root, "pki", "etcd")
        self.ca_file = self.ca.write(os.path.join(etcd_dir, "ca"))[0]
        self.client_cert, self.client_key = self.ca.issue(
            os.path.join(etcd_dir, "healthcheck-client"), "kube-etcd-healthcheck-client"
        )
        self.apiserver_cert, self.apiserver_key = self.ca.issue(
            os.path.join(self.root, "pki", "apiserver-etcd-client"), "kube-apiserver-etcd-client"
        )

    def member(self, name, ip, directory):
        """Server and peer certificates for member ``name`` on ``ip`` under ``directory``: the four paths."""
        etcd_dir = os.path.join(str(directory), "pki", "etcd")
        paths = {}
        for kind in ("server", "peer"):
            cert, key = self.ca.issue(
                os.path.join(etcd_dir, kind), name, server=True, ips=(ip, "127.0.0.1", "::1"), dns=(name, "localhost")
            )
            paths[kind + "_cert"], paths[kind + "_key"] = cert, key
        return paths

    def expired_client(self):
        """A client certificate from the right CA that expired yesterday."""
        return self.ca.issue(os.path.join(self.root, "expired", "healthcheck-client"), "expired-client", expired=True)

    def foreign_ca_file(self):
        """A CA that signed nothing etcd knows: the wrong trust anchor."""
        return CertificateAuthority("some-other-ca").write(os.path.join(self.root, "foreign", "ca"))[0]
