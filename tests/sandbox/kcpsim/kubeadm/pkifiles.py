# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm's certificates and kubeconfigs on disk: make what is missing, reuse what is valid.
Adapter: turns certplan's specs into files through kcpsim.pki / kcpsim.kubeconfig.

Reuse rules (kubeadm-reference.md §1.1): an existing CA (cert + key) is used as is; a CA certificate
without its key is an external CA (usable for checks, not for signing); an existing leaf is kept when its
CA signed it and it carries every wanted SAN, otherwise kubeadm refuses ("certificate ... is not signed by
corresponding CA" / "...does not contain the SANs"); an existing kubeconfig is kept when it trusts the
same CA, else refused.
"""

from __future__ import annotations

import datetime
import os

from kcpsim import kubeconfig, pki


class PKIFileError(Exception):
    """An existing file does not fit the cluster (kubeadm refuses rather than overwrite it)."""


class Files:
    """Certificates under ``cert_dir`` and kubeconfigs under ``kubernetes_dir`` on ``host``."""

    def __init__(self, host, cert_dir, out, algorithm, cert_validity, ca_validity, kubernetes_dir="/etc/kubernetes"):
        self.host = host
        self.cert_dir = cert_dir
        self.kubernetes_dir = kubernetes_dir
        self.out = out
        self.algorithm = algorithm
        self.cert_validity = datetime.timedelta(seconds=cert_validity)
        self.ca_validity = datetime.timedelta(seconds=ca_validity)

    def _cert_path(self, base, ext):
        return self.host.path("%s/%s.%s" % (self.cert_dir, base, ext))

    def has(self, relative):
        return self.host.exists("%s/%s" % (self.cert_dir, relative))

    # --- CAs ----------------------------------------------------------------------------------------

    def load_ca(self, base):
        """``(cert, key or None)``; PKIError when the certificate is missing."""
        cert = pki.load_cert(self._cert_path(base, "crt"))
        key_path = self._cert_path(base, "key")
        key = pki.load_key(key_path) if os.path.exists(key_path) else None
        return cert, key

    def ensure_ca(self, ca):
        if os.path.exists(self._cert_path(ca.base, "crt")):
            cert, key = self.load_ca(ca.base)
            if key is None:
                self.out("[certs] Using existing %s certificate authority (external: its key is not on disk)" % ca.name)
            else:
                self.out("[certs] Using existing %s certificate authority" % ca.name)
            return cert, key
        self.out('[certs] Generating "%s" certificate and key' % ca.name)
        cert, key = pki.new_ca(ca.common_name, algorithm=self.algorithm, validity=self.ca_validity)
        pki.write_pair(self.host.path(self.cert_dir), ca.base, cert, key)
        return cert, key

    # --- leaves -------------------------------------------------------------------------------------

    def ensure_leaf(self, leaf, ca_cert, ca_key):
        crt = self._cert_path(leaf.base, "crt")
        if os.path.exists(crt) and os.path.exists(self._cert_path(leaf.base, "key")):
            cert = pki.load_cert(crt)
            if not pki.signed_by(cert, ca_cert):
                raise PKIFileError('certificate %s is not signed by corresponding CA' % leaf.name)
            dns, ips = pki.sans(cert)
            missing = [n for n in leaf.dns_names if n not in dns] + [i for i in leaf.ip_addresses if i not in ips]
            if missing:
                raise PKIFileError('certificate %s is invalid: it does not contain the SANs %s'
                                   % (leaf.name, ", ".join(missing)))
            self.out("[certs] Using existing %s certificate and key on disk" % leaf.name)
            return cert
        if ca_key is None:
            raise PKIFileError('could not create the "%s" certificate: the key of its CA (%s.key) is not on disk'
                               % (leaf.name, leaf.ca))
        self.out('[certs] Generating "%s" certificate and key' % leaf.name)
        cert, key = pki.new_leaf(ca_cert, ca_key, leaf.common_name, organizations=leaf.organizations,
                                 dns_names=leaf.dns_names, ip_addresses=leaf.ip_addresses, usages=leaf.usages,
                                 algorithm=self.algorithm, validity=self.cert_validity)
        if leaf.dns_names or leaf.ip_addresses:
            self.out("[certs] %s serving cert is signed for DNS names [%s] and IPs [%s]"
                     % (leaf.name, " ".join(leaf.dns_names), " ".join(leaf.ip_addresses)))
        pki.write_pair(self.host.path(self.cert_dir), leaf.base, cert, key)
        return cert

    def renew_leaf(self, base, ca_cert, ca_key):
        """Re-sign an existing leaf with the same subject, SANs and key (``certs renew``, upgrades)."""
        return pki.resign_file(self._cert_path(base, "crt"), ca_cert, ca_key, validity=self.cert_validity)

    def ensure_sa(self):
        if os.path.exists(self._cert_path("sa", "key")):
            self.out('[certs] Using the existing "sa" key')
            return
        self.out('[certs] Generating "sa" key and public key')
        pki.write_sa_pair(self.host.path(self.cert_dir), pki.new_key(self.algorithm))

    # --- kubeconfigs --------------------------------------------------------------------------------

    def kubeconfig_path(self, name):
        return "%s/%s" % (self.kubernetes_dir, name)

    def ensure_kubeconfig(self, spec, cluster_name, ca_cert, ca_key):
        path = self.kubeconfig_path(spec.name)
        ca_pem = pki.cert_pem(ca_cert)
        if self.host.exists(path):
            creds = kubeconfig.load_credentials(self.host.path(path))
            if creds.ca_pem and creds.ca_pem.strip() != ca_pem.strip():
                raise PKIFileError('a kubeconfig file "%s" exists already but has got the wrong CA cert' % path)
            if creds.server != spec.server:
                self.out('[kubeconfig] WARNING: a kubeconfig file "%s" exists already but has an unexpected API '
                         'Server URL: expected: %s, got: %s' % (path, spec.server, creds.server))
            self.out('[kubeconfig] Using existing kubeconfig file: "%s"' % path)
            return
        if ca_key is None:
            raise PKIFileError('could not create the kubeconfig "%s": the CA key is not on disk' % spec.name)
        self.out('[kubeconfig] Writing "%s" kubeconfig file' % spec.name)
        self.write_kubeconfig(spec, cluster_name, ca_cert, ca_key)

    def write_kubeconfig(self, spec, cluster_name, ca_cert, ca_key):
        cert, key = pki.new_leaf(ca_cert, ca_key, spec.user, organizations=spec.organizations, usages=("client",),
                                 algorithm=self.algorithm, validity=self.cert_validity)
        config = kubeconfig.build(spec.server, pki.cert_pem(ca_cert), spec.user, cluster_name=cluster_name,
                                  client_cert_pem=pki.cert_pem(cert), client_key_pem=pki.key_pem(key))
        kubeconfig.write(self.host.path(self.kubeconfig_path(spec.name)), config)

    def renew_kubeconfig(self, name, ca_cert, ca_key):
        """Re-sign a kubeconfig's embedded client certificate; None when it references a file instead."""
        return kubeconfig.resign_embedded(self.host.path(self.kubeconfig_path(name)), ca_cert, ca_key,
                                          validity=self.cert_validity)
