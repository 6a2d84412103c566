# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a pod may run: the scheduler's filter, cut down to what a control plane needs. Pure, no I/O.

A node fits a pod when its Ready condition is True, it is not cordoned (``spec.unschedulable``) unless the pod
tolerates ``node.kubernetes.io/unschedulable``, every NoSchedule / NoExecute taint is tolerated, and it carries
every label of the pod's ``nodeSelector``. Among the nodes that fit, the one running the fewest pods wins,
ties broken by name. No resources, affinity or topology spread.

A toleration matches a taint when the effects match (an empty toleration effect matches all) and either the
operator is ``Exists`` (an empty key then matches every taint) or the keys and values are equal.
"""

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def tolerates(tolerations, taint):
    for toleration in tolerations or []:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        if toleration.get("operator") == "Exists":
            if not toleration.get("key") or toleration["key"] == taint.get("key"):
                return True
        elif toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def is_ready(node):
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def fits(node, pod_spec):
    """Whether a pod with ``pod_spec`` may be placed on ``node`` (see the module docstring)."""
    if not is_ready(node):
        return False
    spec = node.get("spec") or {}
    tolerations = pod_spec.get("tolerations") or []
    if spec.get("unschedulable") and not tolerates(tolerations, UNSCHEDULABLE_TAINT):
        return False
    for taint in spec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in (pod_spec.get("nodeSelector") or {}).items())


def choose(nodes, pod_spec, pods_per_node):
    """The name of the node to bind to, or None when no node fits."""
    candidates = [node["metadata"]["name"] for node in nodes if fits(node, pod_spec)]
    if not candidates:
        return None
    return min(candidates, key=lambda name: (pods_per_node.get(name, 0), name))
