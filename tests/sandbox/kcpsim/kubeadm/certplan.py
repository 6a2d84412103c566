# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which certificates and kubeconfigs a control plane node holds, with which subjects, SANs and servers.
Pure, no I/O (kubeadm-reference.md §1.2).

The rules:

* CAs: ``ca`` (CN kubernetes), ``front-proxy-ca``, ``etcd/ca`` (CN etcd-ca; only with local etcd);
  ``sa.key`` / ``sa.pub`` is the service-account key pair.
* Leaves, in kubeadm's order: ``apiserver`` (serverAuth; SANs node name, ``kubernetes``,
  ``kubernetes.default``, ``kubernetes.default.svc``, ``kubernetes.default.svc.<dnsDomain>``, the first
  service IP, the advertise address, the controlPlaneEndpoint host, ``apiServer.certSANs``),
  ``apiserver-kubelet-client`` (O kubeadm:cluster-admins before the May 2026 patches, no O since),
  ``front-proxy-client``; with local etcd
  ``etcd/server`` and ``etcd/peer`` (CN = node name; SANs node name, ``localhost``, advertise address,
  127.0.0.1, ::1, plus serverCertSANs / peerCertSANs; server and client auth),
  ``etcd/healthcheck-client`` and ``apiserver-etcd-client`` (client auth).
* kubeconfigs: admin.conf (``kubernetes-admin`` / ``kubeadm:cluster-admins``), super-admin.conf
  (``kubernetes-super-admin`` / ``system:masters``), kubelet.conf (``system:node:<name>`` /
  ``system:nodes``) point at the controlPlaneEndpoint, else the advertise address and bind port;
  controller-manager.conf and scheduler.conf always at the local advertise address.
* The key algorithm is the v1beta4 ``encryptionAlgorithm`` (RSA-2048 when unset; v1beta3 asks for
  ECDSA-P256 with the ``PublicKeysECDSA`` feature gate); the
  sandbox's ``KCPSIM_KEY_ALGORITHM=ECDSA-P256`` turns RSA-2048 into ECDSA-P256 (a sandbox speed-up, not a
  kubeadm feature).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from kcpsim.kubeadm import config as kubeadm_config


@dataclass(frozen=True)
class CA:
    name: str          # kubeadm's name in check-expiration: ca, front-proxy-ca, etcd-ca
    base: str          # path under the certificates dir, without .crt / .key
    common_name: str


@dataclass(frozen=True)
class Leaf:
    name: str          # kubeadm's name: apiserver, etcd-server, ...
    base: str
    ca: str            # base of the signing CA
    common_name: str
    organizations: tuple = ()
    usages: tuple = ("server",)
    dns_names: tuple = ()
    ip_addresses: tuple = ()


@dataclass(frozen=True)
class Kubeconfig:
    name: str          # admin.conf, ...
    user: str
    organizations: tuple
    server: str
    local: bool = field(default=False)   # points at this node's own API server


CA_ROOT = CA("ca", "ca", "kubernetes")
CA_FRONT_PROXY = CA("front-proxy-ca", "front-proxy-ca", "front-proxy-ca")
CA_ETCD = CA("etcd-ca", "etcd/ca", "etcd-ca")
CLUSTER_ADMINS_GROUP = "kubeadm:cluster-admins"


def cas(cluster):
    """The CAs of this cluster, in kubeadm's order."""
    return [CA_ROOT, CA_FRONT_PROXY] + ([] if is_external_etcd(cluster) else [CA_ETCD])


def is_external_etcd(cluster):
    return bool((cluster.get("etcd") or {}).get("external"))


def first_service_ip(service_subnet):
    network = ipaddress.ip_network(service_subnet.split(",")[0].strip(), strict=False)
    return str(network.network_address + 1)


def _split_sans(names):
    dns, ips = [], []
    for name in names:
        try:
            ips.append(str(ipaddress.ip_address(name)))
        except ValueError:
            dns.append(name)
    return dns, ips


def _unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return tuple(out)


def endpoint_host(cluster):
    endpoint = cluster.get("controlPlaneEndpoint")
    if not endpoint:
        return None
    return kubeadm_config.split_host_port(endpoint, kubeadm_config.DEFAULT_BIND_PORT)[0]


def leaves(cluster, node_name, advertise_address, release):
    """Every leaf certificate of a control plane node, in kubeadm's order, as kubeadm ``release`` issues them."""
    domain = cluster["networking"]["dnsDomain"]
    extra_dns, extra_ips = _split_sans(cluster["apiServer"].get("certSANs") or [])
    host = endpoint_host(cluster)
    host_dns, host_ips = _split_sans([host] if host else [])
    out = [
        Leaf("apiserver", "apiserver", "ca", "kube-apiserver", usages=("server",),
             dns_names=_unique([node_name, "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                                "kubernetes.default.svc." + domain] + host_dns + extra_dns),
             ip_addresses=_unique([first_service_ip(cluster["networking"]["serviceSubnet"]), advertise_address]
                                  + host_ips + extra_ips)),
        # From the May 2026 patches the API server reaches kubelets through a ClusterRoleBinding of its user,
        # no longer as a member of kubeadm:cluster-admins.
        Leaf("apiserver-kubelet-client", "apiserver-kubelet-client", "ca", "kube-apiserver-kubelet-client",
             organizations=() if release.binds_apiserver_kubelet_client else (CLUSTER_ADMINS_GROUP,),
             usages=("client",)),
        Leaf("front-proxy-client", "front-proxy-client", "front-proxy-ca", "front-proxy-client", usages=("client",)),
    ]
    if is_external_etcd(cluster):
        return out
    local = cluster["etcd"]["local"]
    for name, extra in (("server", local.get("serverCertSANs")), ("peer", local.get("peerCertSANs"))):
        dns, ips = _split_sans(extra or [])
        out.append(Leaf("etcd-" + name, "etcd/" + name, "etcd/ca", node_name, usages=("server", "client"),
                        dns_names=_unique([node_name, "localhost"] + dns),
                        ip_addresses=_unique([advertise_address, "127.0.0.1", "::1"] + ips)))
    out.append(Leaf("etcd-healthcheck-client", "etcd/healthcheck-client", "etcd/ca", "kube-etcd-healthcheck-client",
                    usages=("client",)))
    out.append(Leaf("apiserver-etcd-client", "apiserver-etcd-client", "etcd/ca", "kube-apiserver-etcd-client",
                    usages=("client",)))
    return out


def leaf_by_name(cluster, node_name, advertise_address, release, name):
    for leaf in leaves(cluster, node_name, advertise_address, release):
        if leaf.name == name:
            return leaf
    return None


def cluster_server(cluster, advertise_address, bind_port):
    """``https://<controlPlaneEndpoint>`` (port defaulting to the bind port), else the local API server."""
    endpoint = cluster.get("controlPlaneEndpoint")
    if endpoint:
        host, port = kubeadm_config.split_host_port(endpoint, bind_port)
        return "https://%s:%d" % (_bracket(host), port)
    return local_server(advertise_address, bind_port)


def local_server(advertise_address, bind_port):
    return "https://%s:%d" % (_bracket(advertise_address), bind_port)


def _bracket(host):
    return "[%s]" % host if ":" in host else host


def kubeconfigs(cluster, node_name, advertise_address, bind_port, with_super_admin, with_kubelet,
                kubelet_local=False):
    """The kubeconfigs ``init`` (super-admin and kubelet included) or ``join --control-plane`` writes;
    ``kubelet_local``: kubelet.conf names this instance's API server (ControlPlaneKubeletLocalMode)."""
    server = cluster_server(cluster, advertise_address, bind_port)
    local = local_server(advertise_address, bind_port)
    out = [Kubeconfig("admin.conf", "kubernetes-admin", (CLUSTER_ADMINS_GROUP,), server)]
    if with_super_admin:
        out.append(Kubeconfig("super-admin.conf", "kubernetes-super-admin", ("system:masters",), server))
    if with_kubelet:
        out.append(Kubeconfig("kubelet.conf", "system:node:" + node_name, ("system:nodes",),
                              local if kubelet_local else server))
    out.append(Kubeconfig("controller-manager.conf", "system:kube-controller-manager", (), local, local=True))
    out.append(Kubeconfig("scheduler.conf", "system:kube-scheduler", (), local, local=True))
    return out


def cluster_key_algorithm(cluster, environment_algorithm):
    """The algorithm of the keys kubeadm makes for ``cluster`` (its encryptionAlgorithm and feature gates)."""
    configured = cluster.get("encryptionAlgorithm") or ""
    if not configured and (cluster.get("featureGates") or {}).get("PublicKeysECDSA"):
        configured = "ECDSA-P256"  # v1beta3's way to ask for ECDSA keys
    return key_algorithm(configured, environment_algorithm)


def key_algorithm(configured_algorithm, environment_algorithm):
    """The configured ``encryptionAlgorithm`` (RSA-2048 when unset); the sandbox speed-up turns RSA-2048 only
    into ECDSA-P256. kubeadm-config keeps the configured value either way."""
    configured = configured_algorithm or "RSA-2048"
    if configured == "RSA-2048" and environment_algorithm == "ECDSA-P256":
        return "ECDSA-P256"
    return configured


# Files a control plane join needs when no certificate key is given (kubeadm-reference.md §2.3).
SHARED_CERT_FILES = ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key")
SHARED_ETCD_CERT_FILES = ("etcd/ca.crt", "etcd/ca.key")
# The CA keys whose absence only warns ("external CA" mode).
OPTIONAL_SHARED_FILES = ("ca.key", "front-proxy-ca.key", "etcd/ca.key")


def shared_files(cluster):
    return SHARED_CERT_FILES + (() if is_external_etcd(cluster) else SHARED_ETCD_CERT_FILES)
