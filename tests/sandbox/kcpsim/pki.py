# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm's X.509 PKI, made with python3-cryptography (kubeadm-reference.md §1.2).

Certificates look like kubeadm's: CAs are self-signed, CA:TRUE, key usages digitalSignature +
keyEncipherment + keyCertSign, 10 years; leaves carry CN, O (groups), DNS and IP SANs, the extended key
usages serverAuth and/or clientAuth, an authority key id, 1 year. Keys are RSA-2048/3072/4096 or ECDSA-P256/P384
(kubeadm's ``encryptionAlgorithm`` names), written as PKCS#1 / SEC1 PEM with mode 0600; certificates 0644.

Only APIs Debian 12's python3-cryptography 38.0.4 has are used: that is what runs inside sandbox hosts.
"""

import datetime
import hashlib
import ipaddress
import os
import tempfile

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ALGORITHMS = ("RSA-2048", "RSA-3072", "RSA-4096", "ECDSA-P256", "ECDSA-P384")
_CURVES = {"ECDSA-P256": ec.SECP256R1, "ECDSA-P384": ec.SECP384R1}
DEFAULT_ALGORITHM = "RSA-2048"
CA_VALIDITY = datetime.timedelta(days=3650)
LEAF_VALIDITY = datetime.timedelta(days=365)
# Certificates start slightly in the past so a host whose clock lags a little still accepts them.
BACKDATE = datetime.timedelta(minutes=5)

USAGES = {"server": ExtendedKeyUsageOID.SERVER_AUTH, "client": ExtendedKeyUsageOID.CLIENT_AUTH}
_USAGE_NAMES = {oid: name for name, oid in USAGES.items()}


class PKIError(Exception):
    """A file is missing or unreadable, or an argument breaks one of kubeadm's rules."""


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


# --- keys -------------------------------------------------------------------------------------------------

def new_key(algorithm=DEFAULT_ALGORITHM):
    """A private key for one of kubeadm's ``encryptionAlgorithm`` values."""
    if algorithm in _CURVES:
        return ec.generate_private_key(_CURVES[algorithm]())
    if algorithm in ALGORITHMS:
        return rsa.generate_private_key(public_exponent=65537, key_size=int(algorithm.split("-")[1]))
    raise PKIError("encryptionAlgorithm %r is not one of %s" % (algorithm, ", ".join(ALGORITHMS)))


def key_algorithm(key):
    """The ``encryptionAlgorithm`` name of a private or public key."""
    public = key.public_key() if hasattr(key, "public_key") else key
    if isinstance(public, rsa.RSAPublicKey):
        return "RSA-%d" % public.key_size
    if isinstance(public, ec.EllipticCurvePublicKey):
        named = [name for name, curve in _CURVES.items() if curve.name == public.curve.name]
        if named:
            return named[0]
    raise PKIError("unsupported key type %s" % type(public).__name__)


def key_pem(key):
    """PKCS#1 (``RSA PRIVATE KEY``) or SEC1 (``EC PRIVATE KEY``) PEM, as kubeadm writes keys."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def public_key_pem(key):
    """PKIX ``PUBLIC KEY`` PEM of a private key's public half (``sa.pub``)."""
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def load_key_pem(data):
    return serialization.load_pem_private_key(data, password=None)


def load_public_key_pem(data):
    return serialization.load_pem_public_key(data)


# --- certificates -----------------------------------------------------------------------------------------

def _name(common_name, organizations=()):
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _key_usage(public_key, ca):
    # kubeadm: keyEncipherment only makes sense for RSA keys; CAs also sign certificates.
    return x509.KeyUsage(digital_signature=True, content_commitment=False,
                         key_encipherment=isinstance(public_key, rsa.RSAPublicKey) or ca,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=False,
                         encipher_only=False, decipher_only=False)


def _san(dns_names, ip_addresses):
    names = [x509.DNSName(name) for name in dns_names]
    for address in ip_addresses:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(address)))
        except ValueError:
            raise PKIError("SAN %r is not an IP address" % (address,))
    return x509.SubjectAlternativeName(names)


def _validity(now, validity, not_after):
    now = now or utcnow()
    return now - BACKDATE, (not_after if not_after is not None else now + validity)


def _sign(builder, signing_key):
    """Signed with the hash Go's x509 picks for the key: SHA-384 for a P-384 key, SHA-256 otherwise."""
    p384 = isinstance(signing_key, ec.EllipticCurvePrivateKey) and signing_key.curve.name == ec.SECP384R1.name
    return builder.sign(signing_key, hashes.SHA384() if p384 else hashes.SHA256())


def new_ca(common_name, algorithm=DEFAULT_ALGORITHM, validity=CA_VALIDITY, now=None, key=None):
    """A self-signed CA ``(cert, key)``, e.g. ``new_ca("kubernetes")``, ``new_ca("etcd-ca")``."""
    key = key or new_key(algorithm)
    not_before, not_after = _validity(now, validity, None)
    public = key.public_key()
    builder = (x509.CertificateBuilder()
               .subject_name(_name(common_name)).issuer_name(_name(common_name))
               .public_key(public).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(_key_usage(public, ca=True), critical=True)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False))
    return _sign(builder, key), key


def _leaf_builder(ca_cert, subject, public, not_before, not_after, usages, dns_names, ip_addresses):
    unknown = sorted(set(usages) - set(USAGES))
    if unknown or not usages:
        raise PKIError("certificate usages must be a non-empty subset of %s, got %s" % (sorted(USAGES), list(usages)))
    builder = (x509.CertificateBuilder()
               .subject_name(subject).issuer_name(ca_cert.subject)
               .public_key(public).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(_key_usage(public, ca=False), critical=True)
               .add_extension(x509.ExtendedKeyUsage([USAGES[u] for u in usages]), critical=False)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),
                              critical=False))
    if dns_names or ip_addresses:
        builder = builder.add_extension(_san(dns_names, ip_addresses), critical=False)
    return builder


def new_leaf(ca_cert, ca_key, common_name, organizations=(), dns_names=(), ip_addresses=(), usages=("server",),
             algorithm=DEFAULT_ALGORITHM, validity=LEAF_VALIDITY, now=None, key=None):
    """A leaf ``(cert, key)`` signed by the CA: ``usages`` ⊆ {"server", "client"}, SANs as strings."""
    key = key or new_key(algorithm)
    not_before, not_after = _validity(now, validity, None)
    builder = _leaf_builder(ca_cert, _name(common_name, organizations), key.public_key(), not_before, not_after,
                            usages, dns_names, ip_addresses)
    return _sign(builder, ca_key), key


def resign(cert, ca_cert, ca_key, validity=LEAF_VALIDITY, not_after=None, now=None):
    """The same leaf (subject, public key, SANs, usages) signed again with a new expiry.

    ``not_after`` wins over ``validity``; the certs-expire-soon fault passes a date a few days away,
    ``kubeadm certs renew`` the default year.
    """
    not_before, not_after = _validity(now, validity, not_after)
    dns_names, ip_addresses = sans(cert)
    builder = _leaf_builder(ca_cert, cert.subject, cert.public_key(), not_before, not_after,
                            sorted(ext_key_usages(cert)), dns_names, ip_addresses)
    return _sign(builder, ca_key)


def new_csr(key, common_name, organizations=()):
    """A PEM CertificateSigningRequest, as the kubelet sends for ``system:node:<name>`` / ``system:nodes``."""
    builder = x509.CertificateSigningRequestBuilder().subject_name(_name(common_name, organizations))
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def sign_csr(csr_pem, ca_cert, ca_key, usages=("client",), validity=LEAF_VALIDITY, now=None):
    """A certificate for a PEM CSR (the controller-manager's CSR signer); the CSR's own signature is checked."""
    try:
        csr = x509.load_pem_x509_csr(csr_pem)
    except ValueError as exc:
        raise PKIError("the certificate request is not a PEM CSR: %s" % exc)
    if not csr.is_signature_valid:
        raise PKIError("the certificate request's signature does not match its public key")
    not_before, not_after = _validity(now, validity, None)
    try:
        san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns_names = san.get_values_for_type(x509.DNSName)
        ip_addresses = [str(ip) for ip in san.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        dns_names, ip_addresses = [], []
    builder = _leaf_builder(ca_cert, csr.subject, csr.public_key(), not_before, not_after, usages,
                            dns_names, ip_addresses)
    return _sign(builder, ca_key)


# --- reading certificates ---------------------------------------------------------------------------------

def cert_pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def load_cert_pem(data):
    return x509.load_pem_x509_certificate(data)


def load_cert_pems(data):
    """Every certificate in a PEM bundle, in order (a CA bundle, or kubelet-client-current.pem)."""
    marker = b"-----BEGIN CERTIFICATE-----"
    return [x509.load_pem_x509_certificate(marker + chunk) for chunk in data.split(marker)[1:]]


def _aware(value):
    return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)


def not_after(cert):
    """Expiry as an aware UTC datetime (cryptography 38 has only the naive attribute, 42+ the aware one)."""
    return _aware(getattr(cert, "not_valid_after_utc", None) or cert.not_valid_after)


def not_before(cert):
    return _aware(getattr(cert, "not_valid_before_utc", None) or cert.not_valid_before)


def common_name(cert):
    return cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def organizations(cert):
    return [attr.value for attr in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def sans(cert):
    """``(dns_names, ip_addresses)`` of a certificate, IPs as strings; empty lists without the extension."""
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return [], []
    return san.get_values_for_type(x509.DNSName), [str(ip) for ip in san.get_values_for_type(x509.IPAddress)]


def ext_key_usages(cert):
    """The subset of {"server", "client"} the certificate is good for."""
    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return set()
    return {_USAGE_NAMES[oid] for oid in eku if oid in _USAGE_NAMES}


def is_ca(cert):
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def signed_by(cert, ca_cert):
    """Whether ``ca_cert`` issued ``cert``: issuer name matches and the signature verifies with its key."""
    if cert.issuer != ca_cert.subject:
        return False
    public = ca_cert.public_key()
    try:
        if isinstance(public, rsa.RSAPublicKey):
            public.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm)
        else:
            public.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
    except InvalidSignature:
        return False
    return True


def matches_key(cert, key):
    """Whether ``key`` is the private half of the certificate's public key."""
    der = serialization.Encoding.DER
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    return cert.public_key().public_bytes(der, spki) == key.public_key().public_bytes(der, spki)


def ca_cert_hash(cert):
    """``sha256:<hex>`` of the CA's DER SubjectPublicKeyInfo, for ``--discovery-token-ca-cert-hash``."""
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(spki).hexdigest()


# --- files ------------------------------------------------------------------------------------------------

def write_file(path, data, mode):
    """Write atomically (temp file + rename in the same directory) with ``mode`` from the first byte on."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=0o755, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".%s." % os.path.basename(path))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise PKIError("cannot read %s: %s" % (path, exc.strerror))


def write_cert(path, cert):
    write_file(path, cert_pem(cert), 0o644)


def write_key(path, key):
    write_file(path, key_pem(key), 0o600)


def write_public_key(path, key):
    write_file(path, public_key_pem(key), 0o600)


def load_cert(path):
    try:
        return load_cert_pem(_read(path))
    except ValueError as exc:
        raise PKIError("%s is not a PEM certificate: %s" % (path, exc))


def load_key(path):
    try:
        return load_key_pem(_read(path))
    except (ValueError, TypeError) as exc:
        raise PKIError("%s is not an unencrypted PEM private key: %s" % (path, exc))


def load_public_key(path):
    try:
        return load_public_key_pem(_read(path))
    except ValueError as exc:
        raise PKIError("%s is not a PEM public key: %s" % (path, exc))


def write_pair(pki_dir, name, cert, key):
    """``<pki_dir>/<name>.crt`` (0644) and ``<name>.key`` (0600); ``name`` may hold a subdir (``etcd/ca``)."""
    write_key(os.path.join(pki_dir, name + ".key"), key)
    write_cert(os.path.join(pki_dir, name + ".crt"), cert)


def load_pair(pki_dir, name):
    return load_cert(os.path.join(pki_dir, name + ".crt")), load_key(os.path.join(pki_dir, name + ".key"))


def write_sa_pair(pki_dir, key):
    """The service-account signing key pair ``sa.key`` / ``sa.pub`` (both 0600, as kubeadm writes them)."""
    write_key(os.path.join(pki_dir, "sa.key"), key)
    write_public_key(os.path.join(pki_dir, "sa.pub"), key)


def resign_file(cert_path, ca_cert, ca_key, validity=LEAF_VALIDITY, not_after=None, now=None):
    """Re-sign the leaf at ``cert_path`` in place (its key file is untouched); returns the new certificate."""
    cert = resign(load_cert(cert_path), ca_cert, ca_key, validity=validity, not_after=not_after, now=now)
    write_cert(cert_path, cert)
    return cert
