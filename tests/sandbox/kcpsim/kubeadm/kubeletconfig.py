# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's configuration as kubeadm writes it: the cluster-wide KubeletConfiguration (ConfigMap
``kube-system/kubelet-config`` and /var/lib/kubelet/config.yaml) and the per-node
/var/lib/kubelet/kubeadm-flags.env. Pure, no I/O (kubeadm-reference.md §1.2, §2.5).

The rules:

* KubeletConfiguration: kubeadm's defaults (client CA = the cluster CA, webhook authn/authz, cgroup driver
  systemd, ``clusterDNS`` = the tenth service IP, ``clusterDomain`` = dnsDomain, healthz on
  127.0.0.1:10248, ``rotateCertificates``, ``staticPodPath`` /etc/kubernetes/manifests), then every field
  of a user's KubeletConfiguration document on top (maps merged, other values replaced).
* kubeadm-flags.env is one line ``KUBELET_KUBEADM_ARGS="..."``: ``--container-runtime-endpoint`` (only
  without NodeLocalCRISocket), ``--pod-infra-container-image`` (up to 1.34), ``--hostname-override`` when the
  node name is not the hostname, then nodeRegistration.kubeletExtraArgs (replacing a default of the same
  name), sorted by name.
* With NodeLocalCRISocket the node's CRI socket is /var/lib/kubelet/instance-config.yaml's
  ``containerRuntimeEndpoint``, applied to config.yaml as well; an upgrade strips the flag and the Node's
  ``kubeadm.alpha.kubernetes.io/cri-socket`` annotation (and from 1.35 ``--pod-infra-container-image``).
"""

from __future__ import annotations

import ipaddress
import re

import yaml

from kcpsim.kubeadm.manifests import MANIFEST_DIR

KUBELET_DIR = "/var/lib/kubelet"
CONFIG_PATH = KUBELET_DIR + "/config.yaml"
FLAGS_PATH = KUBELET_DIR + "/kubeadm-flags.env"
INSTANCE_CONFIG_PATH = KUBELET_DIR + "/instance-config.yaml"
CONFIGMAP_NAME = "kubelet-config"
CONFIGMAP_KEY = "kubelet"


def cluster_dns_ip(service_subnet):
    network = ipaddress.ip_network(service_subnet.split(",")[0].strip(), strict=False)
    return str(network.network_address + 10)


def kubelet_configuration(cluster, user_document=None):
    """The KubeletConfiguration dict for this cluster, a user's document merged on top."""
    doc = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"cacheTTL": "0s", "enabled": True},
            "x509": {"clientCAFile": cluster["certificatesDir"] + "/ca.crt"},
        },
        "authorization": {
            "mode": "Webhook",
            "webhook": {"cacheAuthorizedTTL": "0s", "cacheUnauthorizedTTL": "0s"},
        },
        "cgroupDriver": "systemd",
        "clusterDNS": [cluster_dns_ip(cluster["networking"]["serviceSubnet"])],
        "clusterDomain": cluster["networking"]["dnsDomain"],
        "containerRuntimeEndpoint": "",
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": 10248,
        "nodeStatusReportFrequency": "0s",
        "nodeStatusUpdateFrequency": "0s",
        "resolvConf": "/run/systemd/resolve/resolv.conf",
        "rotateCertificates": True,
        "staticPodPath": MANIFEST_DIR,
        "syncFrequency": "0s",
    }
    return _merge(doc, user_document or {})


def _merge(base, override):
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def render(document):
    return yaml.safe_dump(document, sort_keys=True, default_flow_style=False)


def instance_config(cri_socket):
    """instance-config.yaml (NodeLocalCRISocket): the node's own KubeletConfiguration field, its CRI socket."""
    return render({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                   "containerRuntimeEndpoint": cri_endpoint(cri_socket)})


def flags_without(text, names):
    """kubeadm-flags.env's ``text`` with the flags ``names`` taken out (what an upgrade strips)."""
    match = re.match(r'^KUBELET_KUBEADM_ARGS="(.*)"\s*$', text.strip())
    if not match:
        return text
    kept = [word for word in match.group(1).split() if word.lstrip("-").split("=", 1)[0] not in names]
    return 'KUBELET_KUBEADM_ARGS="%s"\n' % " ".join(kept)


def flag_value(text, name):
    """The value of ``--name`` in kubeadm-flags.env's ``text``, or None."""
    for word in text.replace('"', " ").split():
        if word.startswith("--%s=" % name):
            return word.split("=", 1)[1]
    return None


def parse(text):
    """The KubeletConfiguration dict of a config.yaml / ConfigMap value (ValueError when it is not one)."""
    try:
        doc = yaml.safe_load(text or "")
    except yaml.YAMLError as exc:
        raise ValueError("the kubelet configuration is not YAML: %s" % exc)
    if not isinstance(doc, dict) or doc.get("kind") != "KubeletConfiguration":
        raise ValueError("the kubelet configuration is not a KubeletConfiguration document")
    return doc


def cri_endpoint(cri_socket):
    return cri_socket if cri_socket.startswith("unix://") else "unix://" + cri_socket


def flags_env(node_registration, hostname, pause_image, cri_socket_in_flags):
    """The content of kubeadm-flags.env: ``--container-runtime-endpoint`` unless the socket lives in
    instance-config.yaml (NodeLocalCRISocket), ``--pod-infra-container-image`` unless ``pause_image`` is None
    (1.35+)."""
    defaults = {}
    if cri_socket_in_flags:
        defaults["container-runtime-endpoint"] = cri_endpoint(node_registration["criSocket"])
    if pause_image:
        defaults["pod-infra-container-image"] = pause_image
    if node_registration["name"] != hostname.lower():
        defaults["hostname-override"] = node_registration["name"]
    extra = node_registration.get("kubeletExtraArgs") or []
    overridden = {arg["name"] for arg in extra}
    args = [(k, v) for k, v in defaults.items() if k not in overridden]
    args += [(arg["name"], arg["value"]) for arg in extra]
    args.sort(key=lambda pair: pair[0])
    return 'KUBELET_KUBEADM_ARGS="%s"\n' % " ".join("--%s=%s" % pair for pair in args)
