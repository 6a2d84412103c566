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
* kubeadm-flags.env is one line ``KUBELET_KUBEADM_ARGS="..."``: ``--container-runtime-endpoint``,
  ``--pod-infra-container-image``, ``--hostname-override`` when the node name is not the hostname, then
  nodeRegistration.kubeletExtraArgs (replacing a default of the same name), sorted by name.
"""

from __future__ import annotations

import ipaddress

import yaml

from kcpsim.kubeadm.manifests import MANIFEST_DIR

KUBELET_DIR = "/var/lib/kubelet"
CONFIG_PATH = KUBELET_DIR + "/config.yaml"
FLAGS_PATH = KUBELET_DIR + "/kubeadm-flags.env"
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


def parse(text):
    """The KubeletConfiguration dict of a config.yaml / ConfigMap value (ValueError when it is not one)."""
    try:
        doc = yaml.safe_load(text or "")
    except yaml.YAMLError as exc:
        raise ValueError("the kubelet configuration is not YAML: %s" % exc)
    if not isinstance(doc, dict) or doc.get("kind") != "KubeletConfiguration":
        raise ValueError("the kubelet configuration is not a KubeletConfiguration document")
    return doc


def flags_env(node_registration, hostname, pause_image):
    """The content of kubeadm-flags.env."""
    defaults = {
        "container-runtime-endpoint": node_registration["criSocket"]
        if node_registration["criSocket"].startswith("unix://") else "unix://" + node_registration["criSocket"],
        "pod-infra-container-image": pause_image,
    }
    if node_registration["name"] != hostname.lower():
        defaults["hostname-override"] = node_registration["name"]
    extra = node_registration.get("kubeletExtraArgs") or []
    overridden = {arg["name"] for arg in extra}
    args = [(k, v) for k, v in defaults.items() if k not in overridden]
    args += [(arg["name"], arg["value"]) for arg in extra]
    args.sort(key=lambda pair: pair[0])
    return 'KUBELET_KUBEADM_ARGS="%s"\n' % " ".join("--%s=%s" % pair for pair in args)
