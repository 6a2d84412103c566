# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Authorization as kubeadm configures it (``--authorization-mode=Node,RBAC``) and the NodeRestriction
admission plugin. Pure: the caller passes the RBAC objects and, for the node rules that need them, the pods.

Order, as the real server's union of authorizers: ``system:masters`` may do anything; then the Node
authorizer for kubelets (``system:node:<name>`` in ``system:nodes``); then RBAC. A request is allowed by the
first that allows it; otherwise it is 403 with the reasons the authorizers gave.

Node authorizer (Kubernetes 1.34+, where field selectors take part in authorization): a node may read its
own Node object only, list / watch pods only with ``spec.nodeName=<itself>``, get a pod bound to it, read a
Secret / ConfigMap / PVC only when a pod bound to it references it, use only its own Lease in
kube-node-lease; everything else it may do is what the ``system:node`` ClusterRole's rules allow.

RBAC: ClusterRoleBindings grant their ClusterRole everywhere, RoleBindings grant their Role or ClusterRole
in their namespace; subjects are users, groups and service accounts (``system:serviceaccount:<ns>:<name>``).
A rule matches by verb, API group, resource (``pods``, ``pods/status``, ``*``, ``*/scale``), resource name,
or non-resource URL (exact, or a prefix ending in ``*``).

NodeRestriction (writes by kubelets): a node may create only mirror pods bound to itself (owned by its own
Node at most, referencing no service account, secret, configmap or claim), delete, evict and write the status
of pods bound to itself only, create and modify only its own Node, and not set or change labels under
``kubernetes.io`` / ``k8s.io`` beyond the ones kubelets own.
"""

import collections

from kcpsim.apiserver import bootstrap_policy

MASTERS = "system:masters"
NODES = "system:nodes"
NODE_PREFIX = "system:node:"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
NODE_LEASE_NAMESPACE = "kube-node-lease"

# The attributes of one request (path is set for non-resource requests only; field_selector is the parsed
# ``(field, operator, value)`` list of a list / watch).
Attributes = collections.namedtuple("Attributes", "verb group resource subresource namespace name path field_selector")

# The RBAC objects in force: {name: rules}, {(namespace, name): rules}, [binding], [binding].
Policy = collections.namedtuple("Policy", "cluster_roles roles cluster_role_bindings role_bindings")


def node_name(user):
    """The node a kubelet's credentials name, or None for any other user."""
    if NODES in user.groups and user.name.startswith(NODE_PREFIX):
        return user.name[len(NODE_PREFIX):] or None
    return None


# --- RBAC -------------------------------------------------------------------------------------------------

def _url_matches(patterns, path):
    return any(pattern == "*" or pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1]))
               for pattern in patterns)


def rule_allows(rule, attrs):
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if attrs.path is not None:
        return _url_matches(rule.get("nonResourceURLs") or [], attrs.path)
    if rule.get("nonResourceURLs"):
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs.group not in groups:
        return False
    combined = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
    if not any(entry == "*" or entry == combined or (attrs.subresource and entry == "*/" + attrs.subresource)
               for entry in rule.get("resources") or []):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def rules_allow(rules, attrs):
    return any(rule_allows(rule, attrs) for rule in rules or [])


def _subject_applies(subject, user):
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == user.name
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        return user.name == "system:serviceaccount:%s:%s" % (subject.get("namespace"), subject.get("name"))
    return False


def applicable_rules(policy, user, namespace):
    """Every rule the bindings grant ``user`` (in ``namespace``, besides the cluster-wide ones)."""
    rules = []
    for binding in policy.cluster_role_bindings:
        if any(_subject_applies(subject, user) for subject in binding.get("subjects") or []):
            rules.extend(policy.cluster_roles.get((binding.get("roleRef") or {}).get("name"), []))
    if namespace:
        for binding in policy.role_bindings:
            if binding["metadata"].get("namespace") != namespace:
                continue
            if not any(_subject_applies(subject, user) for subject in binding.get("subjects") or []):
                continue
            ref = binding.get("roleRef") or {}
            if ref.get("kind") == "ClusterRole":
                rules.extend(policy.cluster_roles.get(ref.get("name"), []))
            else:
                rules.extend(policy.roles.get((namespace, ref.get("name")), []))
    return rules


# --- Node authorizer --------------------------------------------------------------------------------------

def _selected(attrs, field):
    return next((value for name, operator, value in attrs.field_selector or [] if name == field
                 and operator in ("=", "==")), None)


def referenced_names(pod, resource):
    """The Secrets / ConfigMaps / PVCs a pod references by name (volumes, projected volumes, env, envFrom,
    image pull secrets)."""
    spec = pod.get("spec") or {}
    key_ref, env_ref, volume_key, name_key = {
        "secrets": ("secretKeyRef", "secretRef", "secret", "secretName"),
        "configmaps": ("configMapKeyRef", "configMapRef", "configMap", "name"),
        "persistentvolumeclaims": (None, None, "persistentVolumeClaim", "claimName")}[resource]
    names = set()
    if resource == "secrets":
        names.update(ref.get("name") for ref in spec.get("imagePullSecrets") or [])
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if key_ref:
            names.update(((env.get("valueFrom") or {}).get(key_ref) or {}).get("name")
                         for env in container.get("env") or [])
            names.update((source.get(env_ref) or {}).get("name") for source in container.get("envFrom") or [])
    for volume in spec.get("volumes") or []:
        names.add((volume.get(volume_key) or {}).get(name_key))
        if key_ref:
            names.update((projected.get(volume_key) or {}).get("name")
                         for projected in (volume.get("projected") or {}).get("sources") or [])
    names.discard(None)
    return names


def node_decision(node, attrs, pods_on_node):
    """``(allowed, reason)`` of the Node authorizer for a kubelet's request; ``pods_on_node()`` gives the pods
    bound to it (called only when the decision needs them)."""
    if attrs.path is not None:
        return False, ""
    resource, verb = (attrs.group, attrs.resource), attrs.verb
    if resource in (("", "secrets"), ("", "configmaps"), ("", "persistentvolumeclaims")):
        if verb not in ("get", "list", "watch"):
            return False, "can only read resources of this type"
        name = attrs.name or _selected(attrs, "metadata.name")
        if not name:
            return False, "can only read individual resources of this type"
        if attrs.subresource:
            return False, "cannot read subresource"
        if any(pod["metadata"].get("namespace") == attrs.namespace and name in referenced_names(pod, attrs.resource)
               for pod in pods_on_node()):
            return True, ""
        return False, "no relationship found between node '%s' and this object" % node
    if resource == ("", "nodes") and not attrs.subresource and verb in ("get", "list", "watch"):
        wanted = attrs.name or _selected(attrs, "metadata.name")
        if wanted == node:
            return True, ""
        if verb == "get":
            return False, "node '%s' cannot read '%s', only its own Node object" % (node, attrs.name)
        return False, "node '%s' cannot read all nodes, only its own Node object" % node
    if resource == ("", "pods") and not attrs.subresource and verb in ("get", "list", "watch"):
        if verb != "get" and _selected(attrs, "spec.nodeName") == node:
            return True, ""
        if attrs.name and any(pod["metadata"].get("namespace") == attrs.namespace
                              and pod["metadata"]["name"] == attrs.name for pod in pods_on_node()):
            return True, ""
        return False, "" if verb == "get" else "can only list/watch pods with spec.nodeName field selector"
    if resource == ("coordination.k8s.io", "leases"):
        if verb not in ("get", "create", "update", "patch", "delete"):
            return False, "can only get, create, update, patch, or delete a node lease"
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return False, 'can only access leases in the "%s" system namespace' % NODE_LEASE_NAMESPACE
        if verb != "create" and attrs.name != node:
            return False, "can only access node lease with the same name as the requesting node"
        return True, ""
    return rules_allow(bootstrap_policy.NODE_RULES, attrs), ""


# --- the union -------------------------------------------------------------------------------------------

def decide(user, attrs, policy, pods_on_node, identities=()):
    """``(allowed, reason)`` for ``user``'s request. ``identities`` are further users whose RBAC grants also
    count for this one (the emulated controller manager's controller accounts)."""
    if MASTERS in user.groups:
        return True, ""
    reasons = []
    node = node_name(user)
    if node is not None:
        allowed, reason = node_decision(node, attrs, pods_on_node)
        if allowed:
            return True, ""
        if reason:
            reasons.append(reason)
    for identity in (user,) + tuple(identities):
        if rules_allow(applicable_rules(policy, identity, attrs.namespace), attrs):
            return True, ""
    return False, ", ".join(reasons)


# --- NodeRestriction --------------------------------------------------------------------------------------

# Labels a kubelet may set on its Node under the kubernetes.io / k8s.io domains.
KUBELET_LABELS = {"kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/arch",
                  "beta.kubernetes.io/os", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
                  "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
                  "topology.kubernetes.io/region", "topology.kubernetes.io/zone"}
KUBELET_LABEL_DOMAINS = ("kubelet.kubernetes.io", "node.kubernetes.io")


def kubelet_may_set_label(key):
    domain = key.partition("/")[0] if "/" in key else ""
    if key in KUBELET_LABELS:
        return True
    if domain == "node-restriction.kubernetes.io" or domain.endswith(".node-restriction.kubernetes.io"):
        return False
    if any(domain == allowed or domain.endswith("." + allowed) for allowed in KUBELET_LABEL_DOMAINS):
        return True
    return not any(domain == restricted or domain.endswith("." + restricted)
                   for restricted in ("kubernetes.io", "k8s.io"))


def _changed_labels(old, new):
    before = ((old or {}).get("metadata") or {}).get("labels") or {}
    after = (new.get("metadata") or {}).get("labels") or {}
    return sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))


def node_restriction(node, verb, resource, subresource, name, old, new):
    """Why NodeRestriction refuses this write by the kubelet of ``node`` (None: admitted). ``old`` is the object
    as stored (None on create or when absent), ``new`` as it would be stored (None for delete / eviction)."""
    if resource == "pods":
        pod = old or {}
        if verb == "create" and not subresource:
            metadata, spec = new.get("metadata") or {}, new.get("spec") or {}
            if MIRROR_ANNOTATION not in (metadata.get("annotations") or {}):
                return 'pod does not have "%s" annotation, node "%s" can only create mirror pods' % (
                    MIRROR_ANNOTATION, node)
            if spec.get("nodeName") != node:
                return 'node "%s" can only create pods with spec.nodeName set to itself' % node
            owners = metadata.get("ownerReferences") or []
            if len(owners) > 1:
                return 'node "%s" can only create pods with a single owner reference set to itself' % node
            if owners and (owners[0].get("kind"), owners[0].get("name"), owners[0].get("apiVersion")) != (
                    "Node", node, "v1"):
                return 'node "%s" can only create pods with an owner reference set to itself' % node
            if spec.get("serviceAccountName"):
                return 'node "%s" can not create pods that reference a service account' % node
            for kind in ("secrets", "configmaps", "persistentvolumeclaims"):
                if referenced_names(new, kind):
                    return 'node "%s" can not create pods that reference %s' % (node, kind)
            return None
        if old is None:
            return None
        on_node = (pod.get("spec") or {}).get("nodeName") == node
        if verb == "delete" and not subresource and not on_node:
            return 'node "%s" can only delete pods with spec.nodeName set to itself' % node
        if subresource == "status" and not on_node:
            return 'node "%s" can only update pod status for pods with spec.nodeName set to itself' % node
        if subresource == "eviction" and not on_node:
            return 'node "%s" can only evict pods with spec.nodeName set to itself' % node
        return None
    if resource == "nodes" and verb in ("create", "update", "patch"):
        if name != node:
            return 'node "%s" is not allowed to modify node "%s"' % (node, name)
        refused = [key for key in _changed_labels(old, new) if not kubelet_may_set_label(key)]
        if refused:
            return 'node "%s" is not allowed to %s labels: %s' % (node, "set the following" if old is None
                                                                  else "modify", ", ".join(refused))
        return None
    if resource == "leases" and verb == "create" and name != node:
        return "can only access node lease with the same name as the requesting node"
    return None
