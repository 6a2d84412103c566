# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RBAC objects the real API server creates at start (its rbac/bootstrap-roles hook), as far as the
emulated components and the flows use them. Pure data.

Every object carries the label ``kubernetes.io/bootstrapping: rbac-defaults`` and the annotation
``rbac.authorization.kubernetes.io/autoupdate: "true"``, as the real ones do. The node rules (NODE_RULES) are
the ``system:node`` ClusterRole's, which the Node authorizer applies to kubelets; nothing binds the role.

The emulated kube-controller-manager has no service-account tokens, so it cannot act as the
``system:serviceaccount:kube-system:<controller>`` accounts the real one uses with
``--use-service-account-credentials``; CONTROLLER_ACCOUNTS lists, per emulated controller, the account whose
``system:controller:*`` role (bound here as in the real policy) the API server also grants to requests of
``system:kube-controller-manager`` (see authz.py).
"""

RBAC_API = "rbac.authorization.k8s.io/v1"
KCM = "system:kube-controller-manager"


def rule(verbs, resources=(), groups=("",), names=(), urls=()):
    body = {"verbs": list(verbs)}
    if urls:
        body["nonResourceURLs"] = list(urls)
        return body
    body["apiGroups"] = list(groups)
    body["resources"] = list(resources)
    if names:
        body["resourceNames"] = list(names)
    return body


READ = ("get", "list", "watch")
EVENTS = [rule(("create", "patch", "update"), ("events",)),
          rule(("create", "patch", "update"), ("events",), ("events.k8s.io",))]

NODE_RULES = [
    rule(("create",), ("tokenreviews",), ("authentication.k8s.io",)),
    rule(("create",), ("subjectaccessreviews", "localsubjectaccessreviews"), ("authorization.k8s.io",)),
    rule(READ, ("services",)),
    rule(("create", "get", "list", "watch"), ("nodes",)),
    rule(("patch", "update"), ("nodes/status",)),
    rule(("patch", "update"), ("nodes",)),
    *EVENTS,
    rule(READ, ("pods",)),
    rule(("create", "delete"), ("pods",)),
    rule(("patch", "update"), ("pods/status",)),
    rule(("create",), ("pods/eviction",)),
    rule(READ, ("secrets", "configmaps")),
    rule(("get",), ("persistentvolumeclaims", "persistentvolumes")),
    rule(("get",), ("endpoints",)),
    rule(("create", "get", "list", "watch"), ("certificatesigningrequests",), ("certificates.k8s.io",)),
    rule(("get", "create", "update", "patch", "delete"), ("leases",), ("coordination.k8s.io",)),
    rule(("create",), ("serviceaccounts/token",)),
]

CLUSTER_ROLES = {
    "cluster-admin": [rule(("*",), ("*",), ("*",)), rule(("*",), urls=("*",))],
    "system:discovery": [rule(("get",), urls=("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                              "/openapi", "/openapi/*", "/readyz", "/version", "/version/"))],
    "system:public-info-viewer": [rule(("get",), urls=("/healthz", "/livez", "/readyz", "/version",
                                                       "/version/"))],
    "system:basic-user": [rule(("create",), ("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
                               ("authorization.k8s.io",)),
                          rule(("create",), ("selfsubjectreviews",), ("authentication.k8s.io",))],
    "system:node": NODE_RULES,
    # what kubeadm binds the API server's kubelet client to (kubeadm:apiserver-kubelet-client)
    "system:kubelet-api-admin": [rule(("get", "list", "watch", "proxy"), ("nodes",)),
                                 rule(("*",), ("nodes/proxy", "nodes/log", "nodes/stats", "nodes/metrics", "nodes/spec",
                                               "nodes/configz", "nodes/healthz", "nodes/pods"))],
    "system:node-bootstrapper": [rule(("create", "get", "list", "watch"), ("certificatesigningrequests",),
                                      ("certificates.k8s.io",))],
    "system:certificates.k8s.io:certificatesigningrequests:nodeclient": [
        rule(("create",), ("certificatesigningrequests/nodeclient",), ("certificates.k8s.io",))],
    "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient": [
        rule(("create",), ("certificatesigningrequests/selfnodeclient",), ("certificates.k8s.io",))],
    "system:node-proxier": [rule(READ, ("endpoints", "services")), rule(("get", "list", "watch"), ("nodes",)),
                            *EVENTS,
                            rule(READ, ("endpointslices",), ("discovery.k8s.io",))],
    KCM: [
        *EVENTS,
        rule(("create",), ("leases",), ("coordination.k8s.io",)),
        rule(("get", "update"), ("leases",), ("coordination.k8s.io",), names=("kube-controller-manager",)),
        rule(("create",), ("endpoints",)),
        rule(("get", "update"), ("endpoints",), names=("kube-controller-manager",)),
        rule(("create",), ("secrets", "serviceaccounts")),
        rule(("delete",), ("secrets",)),
        rule(READ, ("*",), ("*",)),
        rule(("create",), ("serviceaccounts/token",)),
        rule(("create",), ("tokenreviews",), ("authentication.k8s.io",)),
        rule(("create",), ("subjectaccessreviews",), ("authorization.k8s.io",)),
    ],
    "system:kube-scheduler": [
        *EVENTS,
        rule(("create",), ("leases",), ("coordination.k8s.io",)),
        rule(("get", "update"), ("leases",), ("coordination.k8s.io",), names=("kube-scheduler",)),
        rule(("create",), ("endpoints",)),
        rule(("get", "update"), ("endpoints",), names=("kube-scheduler",)),
        rule(READ, ("nodes",)),
        rule(("delete", "get", "list", "watch"), ("pods",)),
        rule(("create",), ("bindings", "pods/binding")),
        rule(("patch", "update"), ("pods/status",)),
        rule(READ, ("replicationcontrollers", "services")),
        rule(READ, ("replicasets", "statefulsets"), ("apps",)),
        rule(READ, ("poddisruptionbudgets",), ("policy",)),
        rule(READ, ("persistentvolumeclaims", "persistentvolumes")),
        rule(("create",), ("tokenreviews",), ("authentication.k8s.io",)),
        rule(("create",), ("subjectaccessreviews",), ("authorization.k8s.io",)),
        rule(READ, ("csinodes", "csidrivers", "csistoragecapacities"), ("storage.k8s.io",)),
        rule(READ, ("namespaces",)),
    ],
    # The controllers' own roles (the real manager acts as kube-system/<controller> service accounts).
    "system:controller:node-controller": [
        rule(("delete", "get", "list", "patch", "update"), ("nodes",)),
        rule(("patch", "update"), ("nodes/status",)),
        rule(("patch", "update"), ("pods/status",)),
        rule(("delete", "list"), ("pods",)), *EVENTS],
    "system:controller:certificate-controller": [
        rule(("delete", "get", "list", "watch"), ("certificatesigningrequests",), ("certificates.k8s.io",)),
        rule(("update",), ("certificatesigningrequests/approval", "certificatesigningrequests/status"),
             ("certificates.k8s.io",)),
        rule(("approve",), ("signers",), ("certificates.k8s.io",), names=("kubernetes.io/kube-apiserver-client-kubelet",)),
        rule(("sign",), ("signers",), ("certificates.k8s.io",),
             names=("kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kube-apiserver-client",
                    "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown")),
        rule(("create",), ("tokenreviews",), ("authentication.k8s.io",)),
        rule(("create",), ("subjectaccessreviews",), ("authorization.k8s.io",)), *EVENTS],
    "system:controller:generic-garbage-collector": [rule(("delete", "get", "list", "patch", "update", "watch"),
                                                         ("*",), ("*",)), *EVENTS],
    "system:controller:pod-garbage-collector": [rule(("delete", "list", "watch"), ("pods",)),
                                                rule(("get", "list", "watch"), ("nodes",)),
                                                rule(("patch",), ("pods/status",))],
    "system:controller:job-controller": [
        rule(("get", "list", "patch", "update", "watch"), ("jobs",), ("batch",)),
        rule(("update",), ("jobs/status", "jobs/finalizers"), ("batch",)),
        rule(("create", "delete", "list", "patch", "watch"), ("pods",)), *EVENTS],
    "system:controller:ttl-after-finished-controller": [rule(("delete", "get", "list", "watch"), ("jobs",),
                                                             ("batch",)), *EVENTS],
    "system:controller:disruption-controller": [
        rule(READ, ("deployments", "replicasets", "statefulsets"), ("apps",)),
        rule(READ, ("replicationcontrollers",)),
        rule(READ, ("poddisruptionbudgets",), ("policy",)),
        rule(("update",), ("poddisruptionbudgets/status",), ("policy",)),
        rule(("get",), ("pods",)),
        rule(("patch", "update"), ("pods/status",)),
        rule(("get",), ("*/scale",), ("*",)), *EVENTS],
    "system:controller:replicaset-controller": [
        rule(("get", "list", "update", "watch"), ("replicasets",), ("apps", "extensions")),
        rule(("update",), ("replicasets/status",), ("apps", "extensions")),
        rule(("update",), ("replicasets/finalizers",), ("apps", "extensions")),
        rule(("create", "delete", "list", "patch", "watch"), ("pods",)), *EVENTS],
    "system:controller:deployment-controller": [
        rule(("get", "list", "update", "watch"), ("deployments",), ("apps", "extensions")),
        rule(("update",), ("deployments/status",), ("apps", "extensions")),
        rule(("update",), ("deployments/finalizers",), ("apps", "extensions")),
        rule(("create", "delete", "get", "list", "patch", "update", "watch"), ("replicasets",), ("apps", "extensions")),
        rule(("get", "list", "update", "watch"), ("pods",)), *EVENTS],
}

# Roles in one namespace: {(namespace, name): rules}.
ROLES = {
    ("kube-public", "system:controller:bootstrap-signer"): [
        rule(READ, ("configmaps",)),
        rule(("update",), ("configmaps",), names=("cluster-info",)), *EVENTS[:1]],
    ("kube-system", "system:controller:bootstrap-signer"): [rule(READ, ("secrets",))],
    ("kube-system", "system:controller:token-cleaner"): [rule(("delete", "get", "list", "watch"), ("secrets",)),
                                                         *EVENTS[:1]],
    ("kube-system", "system::leader-locking-kube-controller-manager"): [
        rule(("watch",), ("configmaps",)),
        rule(("get", "update"), ("configmaps",), names=("kube-controller-manager",))],
    ("kube-system", "system::leader-locking-kube-scheduler"): [
        rule(("watch",), ("configmaps",)),
        rule(("get", "update"), ("configmaps",), names=("kube-scheduler",))],
}

# The service account each emulated controller acts as: {--controllers name: service account in kube-system}.
CONTROLLER_ACCOUNTS = {
    "nodelifecycle": "node-controller",
    "csrapproving": "certificate-controller",
    "csrsigning": "certificate-controller",
    "bootstrapsigner": "bootstrap-signer",
    "tokencleaner": "token-cleaner",
    "garbagecollector": "generic-garbage-collector",
    "podgc": "pod-garbage-collector",
    "job": "job-controller",
    "ttl-after-finished": "ttl-after-finished-controller",
    "disruption": "disruption-controller",
    "replicaset": "replicaset-controller",
    "deployment": "deployment-controller",
}


def _group(name):
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def _user(name):
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


def _account(name):
    return {"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}


CLUSTER_ROLE_BINDINGS = {
    "cluster-admin": ("cluster-admin", [_group("system:masters")]),
    "system:discovery": ("system:discovery", [_group("system:authenticated")]),
    "system:basic-user": ("system:basic-user", [_group("system:authenticated")]),
    "system:public-info-viewer": ("system:public-info-viewer", [_group("system:authenticated"),
                                                                _group("system:unauthenticated")]),
    "system:node-proxier": ("system:node-proxier", [_user("system:kube-proxy")]),
    KCM: (KCM, [_user(KCM)]),
    "system:kube-scheduler": ("system:kube-scheduler", [_user("system:kube-scheduler")]),
}
CLUSTER_ROLE_BINDINGS.update({
    "system:controller:" + account: ("system:controller:" + account, [_account(account)])
    for account in sorted(set(CONTROLLER_ACCOUNTS.values())) if "system:controller:" + account in CLUSTER_ROLES})
ROLE_BINDINGS = {
    ("kube-public", "system:controller:bootstrap-signer"): ("system:controller:bootstrap-signer",
                                                            [_account("bootstrap-signer")]),
    ("kube-system", "system:controller:bootstrap-signer"): ("system:controller:bootstrap-signer",
                                                            [_account("bootstrap-signer")]),
    ("kube-system", "system:controller:token-cleaner"): ("system:controller:token-cleaner",
                                                         [_account("token-cleaner")]),
    ("kube-system", "system::leader-locking-kube-controller-manager"): (
        "system::leader-locking-kube-controller-manager", [_user(KCM), _account("kube-controller-manager")]),
    ("kube-system", "system::leader-locking-kube-scheduler"): (
        "system::leader-locking-kube-scheduler", [_user("system:kube-scheduler"), _account("kube-scheduler")]),
}


def _metadata(name, namespace=None):
    metadata = {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}
    if namespace:
        metadata["namespace"] = namespace
    return metadata


def objects():
    """``(plural, namespace, object)`` of every bootstrap RBAC object, roles before their bindings."""
    found = []
    for name, rules in CLUSTER_ROLES.items():
        found.append(("clusterroles", None, {"apiVersion": RBAC_API, "kind": "ClusterRole",
                                             "metadata": _metadata(name), "rules": rules}))
    for (namespace, name), rules in ROLES.items():
        found.append(("roles", namespace, {"apiVersion": RBAC_API, "kind": "Role",
                                           "metadata": _metadata(name, namespace), "rules": rules}))
    for name, (role, subjects) in CLUSTER_ROLE_BINDINGS.items():
        found.append(("clusterrolebindings", None, {
            "apiVersion": RBAC_API, "kind": "ClusterRoleBinding", "metadata": _metadata(name), "subjects": subjects,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}}))
    for (namespace, name), (role, subjects) in ROLE_BINDINGS.items():
        found.append(("rolebindings", namespace, {
            "apiVersion": RBAC_API, "kind": "RoleBinding", "metadata": _metadata(name, namespace),
            "subjects": subjects, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                              "name": role}}))
    return found
