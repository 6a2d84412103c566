# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resources the emulated API server serves, and where each is kept in etcd. Pure data.

Every object lives at ``/registry/<plural>/<namespace>/<name>`` (cluster-scoped: ``/registry/<plural>/<name>``),
as JSON. The real server keeps a few under other prefixes (nodes under ``minions``); nothing outside the
API server reads these keys, so the uniform rule is kept.

``status``: the resource has a ``/status`` subresource, so a write to the main resource leaves ``status``
alone and a write to ``/status`` changes nothing else. ``generation``: ``metadata.generation`` starts at 1
and grows with every change of ``spec``. ``dropped``: accepted and answered, never stored (events).
"""

import collections

Resource = collections.namedtuple("Resource", [
    "group", "version", "plural", "singular", "kind", "namespaced", "short_names", "subresources",
    "status", "generation", "dropped", "categories", "verbs"])

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _resource(group, version, plural, kind, namespaced=True, short_names=(), subresources=(), generation=False,
              dropped=False, categories=(), verbs=VERBS):
    return Resource(group, version, plural, kind.lower(), kind, namespaced, tuple(short_names), tuple(subresources),
                    "status" in subresources, generation, dropped, tuple(categories), tuple(verbs))


RESOURCES = (
    _resource("", "v1", "namespaces", "Namespace", namespaced=False, short_names=("ns",),
              subresources=("status", "finalize")),
    _resource("", "v1", "nodes", "Node", namespaced=False, short_names=("no",), subresources=("status",)),
    _resource("", "v1", "pods", "Pod", short_names=("po",), subresources=("status", "eviction", "binding", "log"),
              categories=("all",)),
    _resource("", "v1", "configmaps", "ConfigMap", short_names=("cm",)),
    _resource("", "v1", "secrets", "Secret"),
    _resource("", "v1", "serviceaccounts", "ServiceAccount", short_names=("sa",)),
    _resource("", "v1", "services", "Service", short_names=("svc",), subresources=("status",), categories=("all",)),
    _resource("", "v1", "endpoints", "Endpoints", short_names=("ep",)),
    _resource("", "v1", "events", "Event", short_names=("ev",), dropped=True),
    _resource("coordination.k8s.io", "v1", "leases", "Lease"),
    _resource("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest",
              namespaced=False, short_names=("csr",), subresources=("status", "approval")),
    _resource("batch", "v1", "jobs", "Job", subresources=("status",), generation=True, categories=("all",)),
    _resource("apps", "v1", "deployments", "Deployment", short_names=("deploy",), subresources=("status",),
              generation=True, categories=("all",)),
    _resource("apps", "v1", "daemonsets", "DaemonSet", short_names=("ds",), subresources=("status",),
              generation=True, categories=("all",)),
    _resource("apps", "v1", "replicasets", "ReplicaSet", short_names=("rs",), subresources=("status",),
              generation=True, categories=("all",)),
    _resource("apps", "v1", "statefulsets", "StatefulSet", short_names=("sts",), subresources=("status",),
              generation=True, categories=("all",)),
    _resource("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False),
    _resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short_names=("pdb",),
              subresources=("status",), generation=True),
    _resource("events.k8s.io", "v1", "events", "Event", short_names=("ev",), dropped=True),
    # asked, answered and never stored (what the kubelet's webhook authorizer sends)
    _resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False,
              verbs=("create",)),
)

# Subresources answered by a different kind than the parent (for discovery).
SUBRESOURCE_KINDS = {"eviction": ("policy", "v1", "Eviction", ("create",)),
                     "binding": ("", "v1", "Binding", ("create",)),
                     "log": (None, None, "Pod", ("get",)),
                     "approval": (None, None, None, ("get", "patch", "update")),
                     "status": (None, None, None, ("get", "patch", "update")),
                     "finalize": (None, None, None, ("update",))}

# Namespaces the server makes at start if they are missing (the real server's system namespaces).
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def group_version(resource):
    return "%s/%s" % (resource.group, resource.version) if resource.group else resource.version


def lookup(group, version, plural):
    """The resource served at ``group/version/plural``, or None."""
    for resource in RESOURCES:
        if (resource.group, resource.version, resource.plural) == (group, version, plural):
            return resource
    return None


def by_kind(api_version, kind):
    """The resource whose objects are ``apiVersion``/``kind`` (owner references name owners this way), or None."""
    group, version = api_version.rpartition("/")[::2]
    for resource in RESOURCES:
        if (resource.group, resource.version, resource.kind) == (group, version, kind):
            return resource
    return None


def groups():
    """``{group: [version, ...]}`` in serving order, the core group ("") first."""
    result = collections.OrderedDict()
    for resource in RESOURCES:
        versions = result.setdefault(resource.group, [])
        if resource.version not in versions:
            versions.append(resource.version)
    return result


def in_group_version(group, version):
    return [resource for resource in RESOURCES if (resource.group, resource.version) == (group, version)]


def key(resource, namespace, name):
    """The etcd key of one object."""
    if resource.namespaced:
        return "/registry/%s/%s/%s" % (resource.plural, namespace, name)
    return "/registry/%s/%s" % (resource.plural, name)


def prefix(resource, namespace=None):
    """The etcd key prefix of a list: one namespace, or every namespace when ``namespace`` is None."""
    if resource.namespaced and namespace:
        return "/registry/%s/%s/" % (resource.plural, namespace)
    return "/registry/%s/" % resource.plural
