# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API objects kubeadm creates, object by object. Pure, no I/O (kubeadm-reference.md §1.4, §1.5).

Each builder returns ``(api_version, resource, namespace, object)`` tuples in the order kubeadm's phases
create them; cluster.py applies them (create, or update when they exist).

* upload-config/kubeadm: ConfigMap ``kube-system/kubeadm-config`` (key ``ClusterConfiguration``) and
  Role/RoleBinding ``kubeadm:nodes-kubeadm-config`` (bootstrap-token group and system:nodes may read it);
  the CRB ``kubeadm:cluster-admins`` binds admin.conf's group to ``cluster-admin``.
* upload-config/kubelet: ConfigMap ``kube-system/kubelet-config`` (key ``kubelet``), Role/RoleBinding
  ``kubeadm:kubelet-config``.
* bootstrap-token: CRBs ``kubeadm:kubelet-bootstrap``, ``kubeadm:node-autoapprove-bootstrap``,
  ``kubeadm:node-autoapprove-certificate-rotation``, ClusterRole/CRB ``kubeadm:get-nodes``; ConfigMap
  ``kube-public/cluster-info`` (key ``kubeconfig``: server and CA only) readable by ``system:anonymous``
  through Role/RoleBinding ``kubeadm:bootstrap-signer-clusterinfo``.
* upload-certs: Role/RoleBinding ``kubeadm:kubeadm-certs``.
* addon/coredns and addon/kube-proxy: their ConfigMaps, ServiceAccounts, RBAC, Deployment / DaemonSet and
  the ``kube-dns`` Service (stored only: nothing runs them in the sandbox).
* Node metadata of a control plane: labels ``node-role.kubernetes.io/control-plane`` and
  ``node.kubernetes.io/exclude-from-external-load-balancers`` (empty values), the taints of
  nodeRegistration; every node: annotation ``kubeadm.alpha.kubernetes.io/cri-socket``.
"""

from __future__ import annotations

import base64

import yaml

from kcpsim.kubeadm import images
from kcpsim.kubeadm.kubeletconfig import CONFIGMAP_KEY, CONFIGMAP_NAME, cluster_dns_ip

RBAC = "rbac.authorization.k8s.io/v1"
NODES_GROUP = "system:nodes"
BOOTSTRAP_GROUP = "system:bootstrappers:kubeadm:default-node-token"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
EXCLUDE_LB_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"
CRI_SOCKET_ANNOTATION = "kubeadm.alpha.kubernetes.io/cri-socket"
KUBEADM_CONFIG = "kubeadm-config"
CLUSTER_CONFIGURATION_KEY = "ClusterConfiguration"


def _meta(name, namespace=None, labels=None):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return meta


def config_map(name, namespace, data):
    return ("v1", "configmaps", namespace,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name, namespace), "data": data})


def _role(name, namespace, rules):
    body = {"apiVersion": RBAC, "kind": "Role", "metadata": _meta(name, namespace), "rules": rules}
    return (RBAC, "roles", namespace, body)


def _role_binding(name, namespace, role, subjects):
    return (RBAC, "rolebindings", namespace, {
        "apiVersion": RBAC, "kind": "RoleBinding", "metadata": _meta(name, namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
        "subjects": subjects,
    })


def _cluster_role(name, rules):
    return (RBAC, "clusterroles", None, {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": _meta(name),
                                         "rules": rules})


def _cluster_role_binding(name, role, subjects):
    return (RBAC, "clusterrolebindings", None, {
        "apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": _meta(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })


def _group(name):
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def _read_rule(resource, name, group=""):
    return {"apiGroups": [group], "resources": [resource], "resourceNames": [name], "verbs": ["get"]}


def cluster_admins_binding():
    return _cluster_role_binding("kubeadm:cluster-admins", "cluster-admin", [_group("kubeadm:cluster-admins")])


def apiserver_kubelet_client_binding():
    """The API server's access to kubelets (May 2026 patches): its client user bound to system:kubelet-api-admin."""
    return [_cluster_role_binding("kubeadm:apiserver-kubelet-client", "system:kubelet-api-admin",
                                  [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                    "name": "kube-apiserver-kubelet-client"}])]


def upload_kubeadm_config(stored_cluster_text):
    return [
        config_map(KUBEADM_CONFIG, "kube-system", {CLUSTER_CONFIGURATION_KEY: stored_cluster_text}),
        _role("kubeadm:nodes-kubeadm-config", "kube-system", [_read_rule("configmaps", KUBEADM_CONFIG)]),
        _role_binding("kubeadm:nodes-kubeadm-config", "kube-system", "kubeadm:nodes-kubeadm-config",
                      [_group(BOOTSTRAP_GROUP), _group(NODES_GROUP)]),
    ]


def upload_kubelet_config(kubelet_config_text):
    return [
        config_map(CONFIGMAP_NAME, "kube-system", {CONFIGMAP_KEY: kubelet_config_text}),
        _role("kubeadm:kubelet-config", "kube-system", [_read_rule("configmaps", CONFIGMAP_NAME)]),
        _role_binding("kubeadm:kubelet-config", "kube-system", "kubeadm:kubelet-config",
                      [_group(NODES_GROUP), _group(BOOTSTRAP_GROUP)]),
    ]


def cluster_info_kubeconfig(server, ca_pem):
    """cluster-info's kubeconfig: one nameless cluster, no users or contexts."""
    doc = {
        "apiVersion": "v1",
        "clusters": [{"cluster": {"certificate-authority-data": base64.b64encode(ca_pem).decode("ascii"),
                                  "server": server}, "name": ""}],
        "contexts": None,
        "current-context": "",
        "kind": "Config",
        "preferences": {},
        "users": None,
    }
    return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False)


def bootstrap_token_rbac(server, ca_pem):
    return [
        _cluster_role_binding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", [_group(BOOTSTRAP_GROUP)]),
        _cluster_role_binding("kubeadm:node-autoapprove-bootstrap",
                              "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
                              [_group(BOOTSTRAP_GROUP)]),
        _cluster_role_binding("kubeadm:node-autoapprove-certificate-rotation",
                              "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
                              [_group(NODES_GROUP)]),
        _cluster_role("kubeadm:get-nodes", [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]),
        _cluster_role_binding("kubeadm:get-nodes", "kubeadm:get-nodes", [_group(BOOTSTRAP_GROUP)]),
        config_map("cluster-info", "kube-public", {"kubeconfig": cluster_info_kubeconfig(server, ca_pem)}),
        _role("kubeadm:bootstrap-signer-clusterinfo", "kube-public", [_read_rule("configmaps", "cluster-info")]),
        _role_binding("kubeadm:bootstrap-signer-clusterinfo", "kube-public", "kubeadm:bootstrap-signer-clusterinfo",
                      [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:anonymous"}]),
    ]


def kubeadm_certs_rbac():
    return [
        _role("kubeadm:kubeadm-certs", "kube-system", [_read_rule("secrets", "kubeadm-certs")]),
        _role_binding("kubeadm:kubeadm-certs", "kube-system", "kubeadm:kubeadm-certs", [_group(BOOTSTRAP_GROUP)]),
    ]


def coredns_addon(cluster, release):
    domain = cluster["networking"]["dnsDomain"]
    corefile = (".:53 {\n    errors\n    health {\n       lameduck 5s\n    }\n    ready\n"
                "    kubernetes %s in-addr.arpa ip6.arpa {\n       pods insecure\n       fallthrough in-addr.arpa "
                "ip6.arpa\n       ttl 30\n    }\n    prometheus :9153\n    forward . /etc/resolv.conf {\n"
                "       max_concurrent 1000\n    }\n    cache 30\n    loop\n    reload\n    loadbalance\n}\n" % domain)
    labels = {"k8s-app": "kube-dns"}
    return [
        _cluster_role("system:coredns", [
            {"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"], "verbs": ["list", "watch"]},
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
        ]),
        _cluster_role_binding("system:coredns", "system:coredns",
                              [{"kind": "ServiceAccount", "name": "coredns", "namespace": "kube-system"}]),
        config_map("coredns", "kube-system", {"Corefile": corefile}),
        ("v1", "serviceaccounts", "kube-system",
         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("coredns", "kube-system")}),
        ("apps/v1", "deployments", "kube-system", {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": _meta("coredns", "kube-system", labels),
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "coredns",
                        "priorityClassName": "system-cluster-critical",
                        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
                        "containers": [{"name": "coredns", "image": images.coredns_image(cluster, release),
                                        "args": ["-conf", "/etc/coredns/Corefile"]}],
                    },
                },
            },
        }),
        ("v1", "services", "kube-system", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": _meta("kube-dns", "kube-system", dict(labels, **{"kubernetes.io/name": "CoreDNS"})),
            "spec": {
                "clusterIP": cluster_dns_ip(cluster["networking"]["serviceSubnet"]),
                "selector": labels,
                "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                          {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                          {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}],
            },
        }),
    ]


def kube_proxy_addon(cluster, server, user_document=None):
    config = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "bindAddress": "0.0.0.0",
        "clientConnection": {"kubeconfig": "/var/lib/kube-proxy/kubeconfig.conf"},
        "clusterCIDR": cluster["networking"].get("podSubnet") or "",
        "mode": "",
    }
    config.update(user_document or {})
    kubeconfig = yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"cluster": {"certificate-authority": "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
                                  "server": server}, "name": "default"}],
        "contexts": [{"context": {"cluster": "default", "namespace": "default", "user": "default"},
                      "name": "default"}],
        "current-context": "default",
        "users": [{"name": "default",
                   "user": {"tokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}}],
    }, sort_keys=True, default_flow_style=False)
    labels = {"k8s-app": "kube-proxy"}
    return [
        ("v1", "serviceaccounts", "kube-system",
         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("kube-proxy", "kube-system")}),
        _cluster_role_binding("kubeadm:node-proxier", "system:node-proxier",
                              [{"kind": "ServiceAccount", "name": "kube-proxy", "namespace": "kube-system"}]),
        _role("kube-proxy", "kube-system", [_read_rule("configmaps", "kube-proxy")]),
        _role_binding("kube-proxy", "kube-system", "kube-proxy", [_group(BOOTSTRAP_GROUP)]),
        config_map("kube-proxy", "kube-system", {
            "config.conf": yaml.safe_dump(config, sort_keys=True, default_flow_style=False),
            "kubeconfig.conf": kubeconfig,
        }),
        ("apps/v1", "daemonsets", "kube-system", {
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": _meta("kube-proxy", "kube-system", labels),
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "kube-proxy",
                        "hostNetwork": True,
                        "priorityClassName": "system-node-critical",
                        "tolerations": [{"operator": "Exists"}],
                        "containers": [{"name": "kube-proxy",
                                        "image": images.component_image(cluster, "kube-proxy"),
                                        "command": ["/usr/local/bin/kube-proxy",
                                                    "--config=/var/lib/kube-proxy/config.conf",
                                                    "--hostname-override=$(NODE_NAME)"]}],
                    },
                },
            },
        }),
    ]


def control_plane_node_patch(existing_taints, wanted_taints):
    """The merge patch ``mark-control-plane`` applies: the two labels, and the wanted taints added to the
    node's own (taints already there are kept)."""
    taints = list(existing_taints or [])
    for taint in wanted_taints:
        if not any(t.get("key") == taint.get("key") and t.get("effect") == taint.get("effect") for t in taints):
            taints.append({k: v for k, v in taint.items() if k in ("key", "value", "effect") and v is not None})
    return {
        "metadata": {"labels": {CONTROL_PLANE_LABEL: "", EXCLUDE_LB_LABEL: ""}},
        "spec": {"taints": taints},
    }


def cri_socket_patch(cri_socket):
    return {"metadata": {"annotations": {CRI_SOCKET_ANNOTATION: cri_socket}}}
