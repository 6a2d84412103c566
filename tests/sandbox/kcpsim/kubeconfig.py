# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeconfig files as kubeadm and the kubelet write them, and reading them back into credentials.

kubeadm embeds everything (``certificate-authority-data``, ``client-certificate-data``,
``client-key-data``); the kubelet, after TLS bootstrap, points ``client-certificate`` and ``client-key`` at
``/var/lib/kubelet/pki/kubelet-client-current.pem``. Relative file references are relative to the
kubeconfig's own directory, as kubectl resolves them. Files are written 0600: they hold private keys.
"""

import base64
import os

import yaml

from kcpsim import pki


class KubeconfigError(Exception):
    """The kubeconfig is missing, not YAML, or lacks what a client needs; the message names the field."""


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def build(server, ca_pem, user, cluster_name="kubernetes", context_name=None, client_cert_pem=None,
          client_key_pem=None, client_cert_file=None, client_key_file=None, token=None, namespace=None):
    """A kubeconfig dict with one cluster, one user and one current context.

    Credentials: embedded PEMs (``client_cert_pem`` / ``client_key_pem``), file references
    (``client_cert_file`` / ``client_key_file``), a bearer ``token``, or none (anonymous, e.g. cluster-info).
    """
    user_entry = {}
    if client_cert_pem is not None:
        user_entry["client-certificate-data"] = _b64(client_cert_pem)
    if client_key_pem is not None:
        user_entry["client-key-data"] = _b64(client_key_pem)
    if client_cert_file:
        user_entry["client-certificate"] = client_cert_file
    if client_key_file:
        user_entry["client-key"] = client_key_file
    if token:
        user_entry["token"] = token
    context_name = context_name or "%s@%s" % (user, cluster_name)
    context = {"cluster": cluster_name, "user": user}
    if namespace:
        context["namespace"] = namespace
    cluster = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "contexts": [{"name": context_name, "context": context}],
        "current-context": context_name,
        "preferences": {},
        "users": [{"name": user, "user": user_entry}],
    }


def dumps(config):
    return yaml.safe_dump(config, default_flow_style=False, sort_keys=True)


def loads(text, source="kubeconfig"):
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KubeconfigError("%s is not YAML: %s" % (source, exc))
    if not isinstance(config, dict):
        raise KubeconfigError("%s is not a kubeconfig (expected a mapping)" % source)
    return config


def write(path, config, mode=0o600):
    pki.write_file(path, dumps(config).encode("utf-8"), mode)


def load(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise KubeconfigError("cannot read %s: %s" % (path, exc.strerror))
    return loads(text, source=path)


class Credentials:
    """What a client needs from the current context: server URL, CA PEM, client cert/key PEMs or a token."""

    def __init__(self, server, ca_pem=None, client_cert_pem=None, client_key_pem=None, token=None,
                 insecure_skip_tls_verify=False, cluster_name=None, user_name=None):
        self.server = server
        self.ca_pem = ca_pem
        self.client_cert_pem = client_cert_pem
        self.client_key_pem = client_key_pem
        self.token = token
        self.insecure_skip_tls_verify = insecure_skip_tls_verify
        self.cluster_name = cluster_name
        self.user_name = user_name

    def __repr__(self):
        # Never shows key material or the token.
        return "Credentials(server=%r, user=%r)" % (self.server, self.user_name)


def _named(config, section, name, source):
    for entry in config.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry.get(section[:-1]) or {}
    raise KubeconfigError("%s: %s has no entry named %r" % (source, section, name))


def _data_or_file(entry, data_key, file_key, base_dir, source):
    if entry.get(data_key):
        try:
            return base64.b64decode(entry[data_key], validate=True)
        except ValueError:
            raise KubeconfigError("%s: %s is not base64" % (source, data_key))
    if entry.get(file_key):
        path = entry[file_key]
        if not os.path.isabs(path):
            path = os.path.join(base_dir, path)
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise KubeconfigError("%s: %s %s: %s" % (source, file_key, path, exc.strerror))
    return None


def credentials(config, base_dir=".", source="kubeconfig"):
    """Resolve the current context of a kubeconfig dict into ``Credentials`` (file references read now)."""
    context_name = config.get("current-context")
    if not context_name:
        raise KubeconfigError("%s: current-context is not set" % source)
    context = _named(config, "contexts", context_name, source)
    cluster = _named(config, "clusters", context.get("cluster"), source)
    user = _named(config, "users", context.get("user"), source) if context.get("user") else {}
    if not cluster.get("server"):
        raise KubeconfigError("%s: cluster %r has no server" % (source, context.get("cluster")))
    return Credentials(
        server=cluster["server"],
        ca_pem=_data_or_file(cluster, "certificate-authority-data", "certificate-authority", base_dir, source),
        client_cert_pem=_data_or_file(user, "client-certificate-data", "client-certificate", base_dir, source),
        client_key_pem=_data_or_file(user, "client-key-data", "client-key", base_dir, source),
        token=user.get("token"),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
        cluster_name=context.get("cluster"),
        user_name=context.get("user"),
    )


def load_credentials(path):
    """``credentials(load(path))`` with file references resolved against the kubeconfig's directory."""
    return credentials(load(path), base_dir=os.path.dirname(os.path.abspath(path)), source=path)


def client_certificate(path):
    """The client certificate a kubeconfig authenticates with (embedded or referenced), or None."""
    pem = load_credentials(path).client_cert_pem
    return pki.load_cert_pems(pem)[0] if pem else None


def embedded_client_certificate(path):
    """The client certificate a kubeconfig embeds, or None when it has none or references a file (kubelet.conf
    after the kubelet's TLS bootstrap points at the certificate the kubelet rotates itself)."""
    config = load(path)
    context = _named(config, "contexts", config.get("current-context"), path)
    data = _named(config, "users", context.get("user"), path).get("client-certificate-data")
    return pki.load_cert_pems(base64.b64decode(data))[0] if data else None


def resign_embedded(path, ca_cert, ca_key, validity=pki.LEAF_VALIDITY, not_after=None, now=None):
    """Re-sign the embedded client certificate of a kubeconfig in place (``kubeadm certs renew``, faults).

    Returns the new certificate, or None when the kubeconfig references its certificate by file instead.
    """
    config = load(path)
    context = _named(config, "contexts", config.get("current-context"), path)
    user = _named(config, "users", context.get("user"), path)
    if not user.get("client-certificate-data"):
        return None
    old = pki.load_cert_pems(base64.b64decode(user["client-certificate-data"]))[0]
    cert = pki.resign(old, ca_cert, ca_key, validity=validity, not_after=not_after, now=now)
    user["client-certificate-data"] = _b64(pki.cert_pem(cert))
    write(path, config)
    return cert
