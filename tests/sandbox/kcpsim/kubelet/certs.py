# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's client credentials: the certificate store and TLS bootstrap.

- ``--kubeconfig`` exists: use it. If it embeds a client certificate and the store is empty, the pair is
  copied into the store (``kubelet-client-<timestamp>.pem`` + ``kubelet-client-current.pem``), as the real
  certificate manager seeds its store, which is what kubeadm's kubelet-finalize phase then points at.
- Only ``--bootstrap-kubeconfig`` exists: create a CertificateSigningRequest (signer
  kubernetes.io/kube-apiserver-client-kubelet, CN ``system:node:<node>``, O ``system:nodes``, a fresh
  ECDSA-P256 key) with the bootstrap token, wait (bounded) until the controller manager approves and signs
  it, store the pair, then write ``--kubeconfig`` pointing at ``kubelet-client-current.pem``.
- Neither: the kubelet cannot run (it exits; systemd restarts it).
Store files are 0600: they hold the private key.
"""

import base64
import datetime
import os
import secrets
import string
import time

from kcpsim import kubeclient, kubeconfig, pki
from kcpsim.kubelet import objects

CURRENT = "kubelet-client-current.pem"
POLL = 0.5


class CredentialsError(Exception):
    """No usable kubeconfig, or TLS bootstrap failed; the message says which file or which answer."""


def _csr_name():
    return "csr-" + "".join(map(secrets.choice, [string.ascii_lowercase + string.digits] * 5))


class ClientCredentials:
    def __init__(self, kubeconfig_path, bootstrap_path, cert_dir, node_name):
        self.kubeconfig_path = kubeconfig_path
        self.bootstrap_path = bootstrap_path
        self.cert_dir = cert_dir
        self.node_name = node_name

    @property
    def current_path(self):
        return os.path.join(self.cert_dir, CURRENT)

    def store(self, cert_pem, key_pem, now=None):
        """Write a new ``kubelet-client-<ts>.pem`` and point ``kubelet-client-current.pem`` at it."""
        now = now or datetime.datetime.now(datetime.timezone.utc)
        path = os.path.join(self.cert_dir, "kubelet-client-%s.pem" % now.strftime("%Y-%m-%d-%H-%M-%S"))
        pki.write_file(path, cert_pem + key_pem, 0o600)
        link = self.current_path + ".tmp"
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(path, link)
        os.replace(link, self.current_path)
        return path

    def available(self):
        return os.path.exists(self.kubeconfig_path) or os.path.exists(self.bootstrap_path)

    def client(self, stop, bootstrap_timeout, **client_options):
        """A KubeClient for this node's identity, bootstrapping first if needed (bounded by ``bootstrap_timeout``)."""
        if os.path.exists(self.kubeconfig_path):
            self._seed_store()
            return kubeclient.KubeClient.from_kubeconfig(self.kubeconfig_path, **client_options)
        if not os.path.exists(self.bootstrap_path):
            raise CredentialsError("unable to load bootstrap kubeconfig: stat %s: no such file or directory"
                                   % self.bootstrap_path)
        self.bootstrap(stop, bootstrap_timeout, **client_options)
        return kubeclient.KubeClient.from_kubeconfig(self.kubeconfig_path, **client_options)

    def _seed_store(self):
        if os.path.exists(self.current_path):
            return
        try:
            creds = kubeconfig.load_credentials(self.kubeconfig_path)
        except kubeconfig.KubeconfigError as exc:
            raise CredentialsError(str(exc))
        if creds.client_cert_pem and creds.client_key_pem:
            self.store(creds.client_cert_pem, creds.client_key_pem)

    def bootstrap(self, stop, bootstrap_timeout, **client_options):
        """TLS bootstrap through the CSR API; writes the store and ``--kubeconfig``."""
        try:
            creds = kubeconfig.load_credentials(self.bootstrap_path)
        except kubeconfig.KubeconfigError as exc:
            raise CredentialsError("unable to load bootstrap kubeconfig: %s" % exc)
        api = kubeclient.KubeClient.from_credentials(creds, **client_options)
        key = pki.new_key("ECDSA-P256")
        request = pki.new_csr(key, "system:node:" + self.node_name, ["system:nodes"])
        name = _csr_name()
        deadline = time.monotonic() + bootstrap_timeout
        created = False
        while True:
            try:
                if not created:
                    api.create("certificates.k8s.io/v1", "certificatesigningrequests",
                               objects.csr(name, request, ["digital signature", "client auth"]))
                    created = True
                cert_pem = self._issued(api.get("certificates.k8s.io/v1", "certificatesigningrequests", name))
                if cert_pem:
                    break
            except (kubeclient.ApiUnavailable, kubeclient.ServerError):
                pass  # the API may not be up yet: keep trying until the deadline
            except kubeclient.ApiError as exc:
                raise CredentialsError("TLS bootstrap: certificate signing request %s: %s" % (name, exc))
            if time.monotonic() >= deadline or stop.wait(POLL):
                raise CredentialsError("TLS bootstrap: no certificate for %s within %ds" % (name, bootstrap_timeout))
        self.store(cert_pem, pki.key_pem(key))
        kubeconfig.write(self.kubeconfig_path, kubeconfig.build(
            creds.server, creds.ca_pem, "default-auth", cluster_name="default-cluster",
            context_name="default-context", namespace="default",
            client_cert_file=self.current_path, client_key_file=self.current_path))

    @staticmethod
    def _issued(csr):
        status = csr.get("status") or {}
        for condition in status.get("conditions") or []:
            if condition.get("type") in ("Denied", "Failed") and condition.get("status", "True") == "True":
                raise CredentialsError("TLS bootstrap: certificate signing request %s was %s: %s" % (
                    csr["metadata"]["name"], condition["type"].lower(), condition.get("message", "")))
        certificate = status.get("certificate")
        return base64.b64decode(certificate) if certificate else None
