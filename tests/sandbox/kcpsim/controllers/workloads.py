# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ReplicaSet and Deployment controllers' decisions. Pure, no I/O.

ReplicaSet (the real one's ``manageReplicas``): the pods it controls are those of its namespace whose controller
``ownerReference`` names its uid; the active ones are neither terminating nor finished. Fewer active than
``spec.replicas``: that many pods are made from its template (``generateName`` ``<name>-``, the template's labels
and annotations, a controller reference to the ReplicaSet); more: the surplus is deleted, the least useful first
(unscheduled before scheduled, Pending before Running, not Ready before Ready, the newest first). Its status
counts them (``replicas``, ``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas``: Ready, as with
``minReadySeconds`` 0).

Deployment: one ReplicaSet per pod template, named ``<name>-<pod-template-hash>`` (the hash: FNV-1a 32 of the
template, in the API's safe alphabet, as ``ComputeHash`` renders it), the hash added to its selector and its pods'
labels. ``RollingUpdate`` (the default; ``maxSurge`` and ``maxUnavailable`` 25 %, a percentage of the replicas
rounded up for the surge and down for the unavailable, both 0 reading as 1 unavailable): the new ReplicaSet grows
while all of them together stay within replicas + maxSurge, the old ones shrink, oldest first, while the available
pods stay at least replicas - maxUnavailable. ``Recreate``: the old ones go to 0, and the new one grows once no old
pod is left. Its status: ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
``unavailableReplicas`` and the condition ``Available``. Not emulated: ``minReadySeconds``, ``paused``,
``progressDeadlineSeconds``, revision history limits (an old ReplicaSet at 0 stays), rollbacks.
"""

import json

REPLICA_SET_KIND = ("apps/v1", "ReplicaSet")
HASH_LABEL = "pod-template-hash"
# k8s.io/apimachinery/pkg/util/rand SafeEncodeString's alphabet: no vowels, no look-alike characters
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def controller_uid(obj):
    return next((ref.get("uid") for ref in (obj.get("metadata") or {}).get("ownerReferences") or [] if ref.get("controller")), None)


def _ready(pod):
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def is_active(pod):
    """Neither terminating nor finished."""
    return not (pod.get("metadata") or {}).get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def controlled(owner, objects):
    """The objects of ``owner``'s namespace that it controls (its pods, a Deployment's ReplicaSets)."""
    metadata = owner["metadata"]
    return [obj for obj in objects
            if obj["metadata"].get("namespace") == metadata.get("namespace") and controller_uid(obj) == metadata.get("uid")]


def new_pod(replica_set):
    """The pod a ReplicaSet makes from its template."""
    metadata, template = replica_set["metadata"], (replica_set.get("spec") or {}).get("template") or {}
    pod_meta = {"generateName": metadata["name"] + "-", "namespace": metadata["namespace"],
                "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                "ownerReferences": [{"apiVersion": REPLICA_SET_KIND[0], "kind": REPLICA_SET_KIND[1], "name": metadata["name"],
                                     "uid": metadata["uid"], "controller": True, "blockOwnerDeletion": True}]}
    annotations = (template.get("metadata") or {}).get("annotations")
    if annotations:
        pod_meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": json.loads(json.dumps(template.get("spec") or {}))}


def _least_useful_first(pods):
    """Unscheduled before scheduled, Pending before Unknown before Running, not Ready before Ready, then the newest."""
    newest_first = sorted(pods, key=lambda pod: pod["metadata"].get("creationTimestamp") or "", reverse=True)
    return sorted(newest_first, key=lambda pod: (bool((pod.get("spec") or {}).get("nodeName")),
                                                 {"Pending": 0, "Unknown": 1, "Running": 2}.get((pod.get("status") or {}).get("phase"), 0),
                                                 _ready(pod)))


def replica_changes(replica_set, pods):
    """``(to_create, to_delete)``: how many pods to make, and which to delete, for ``spec.replicas``."""
    active = [pod for pod in controlled(replica_set, pods) if is_active(pod)]
    wanted = int((replica_set.get("spec") or {}).get("replicas", 1))
    if len(active) < wanted:
        return wanted - len(active), []
    return 0, _least_useful_first(active)[:len(active) - wanted]


def replica_set_status(replica_set, pods):
    active = [pod for pod in controlled(replica_set, pods) if is_active(pod)]
    ready = sum(1 for pod in active if _ready(pod))
    status = dict(replica_set.get("status") or {})
    status.update({"replicas": len(active), "fullyLabeledReplicas": len(active), "readyReplicas": ready, "availableReplicas": ready,
                   "observedGeneration": replica_set["metadata"].get("generation", 1)})
    return status


def template_hash(template):
    """The pod-template-hash of a pod template: FNV-1a 32 of its JSON, its decimal digits in the safe alphabet."""
    value = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(SAFE_ALPHABET[ord(digit) % len(SAFE_ALPHABET)] for digit in str(value))


def _scaled(value, replicas, round_up):
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * replicas
        return -(-share // 100) if round_up else share // 100
    return int(value)


def rolling_limits(deployment):
    """``(max_surge, max_unavailable)`` of a RollingUpdate Deployment, as numbers of pods."""
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    rolling = ((spec.get("strategy") or {}).get("rollingUpdate")) or {}
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def new_replica_set(deployment, pod_hash):
    """The ReplicaSet a Deployment runs its current template with, at 0 replicas (the rollout scales it)."""
    metadata, spec = deployment["metadata"], deployment.get("spec") or {}
    template = json.loads(json.dumps(spec.get("template") or {}))
    template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = pod_hash
    selector = json.loads(json.dumps(spec.get("selector") or {}))
    selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "%s-%s" % (metadata["name"], pod_hash), "namespace": metadata["namespace"],
                         "labels": dict(template["metadata"]["labels"]),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": metadata["name"],
                                              "uid": metadata["uid"], "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": 0, "selector": selector, "template": template}}


def _replicas(replica_set):
    return int((replica_set.get("spec") or {}).get("replicas", 0))


def _available(replica_set):
    return int((replica_set.get("status") or {}).get("availableReplicas", 0))


def rollout_scales(deployment, new, olds, pods):
    """``{replica set name: replicas}`` the rollout asks for now (only those that change). ``new``: the ReplicaSet of
    the current template; ``olds``: the Deployment's others, any order."""
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    olds = sorted(olds, key=lambda rs: (rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"]))
    wanted = {rs["metadata"]["name"]: _replicas(rs) for rs in [new] + olds}
    if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") == "Recreate":
        for rs in olds:
            wanted[rs["metadata"]["name"]] = 0
        old_pods = [pod for rs in olds for pod in controlled(rs, pods) if is_active(pod)]
        if not old_pods and all(_replicas(rs) == 0 for rs in olds):
            wanted[new["metadata"]["name"]] = replicas
    else:
        surge, unavailable = rolling_limits(deployment)
        total = sum(wanted.values())
        room = replicas + surge - total
        grown = min(replicas, _replicas(new) + max(0, room)) if _replicas(new) < replicas else replicas
        wanted[new["metadata"]["name"]] = grown
        available = _available(new) + sum(_available(rs) for rs in olds)
        removable = max(0, available - (replicas - unavailable))
        # pods of an old ReplicaSet that are not available cost nothing to remove
        for rs in olds:
            idle = max(0, _replicas(rs) - _available(rs))
            cut = min(_replicas(rs), idle + removable)
            removable -= max(0, cut - idle)
            wanted[rs["metadata"]["name"]] = _replicas(rs) - cut
    current = {rs["metadata"]["name"]: _replicas(rs) for rs in [new] + olds}
    return {name: count for name, count in wanted.items() if count != current[name]}


def deployment_status(deployment, new, olds):
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    every = [new] + list(olds)
    status_of = [rs.get("status") or {} for rs in every]
    total = sum(int(s.get("replicas", 0)) for s in status_of)
    available = sum(int(s.get("availableReplicas", 0)) for s in status_of)
    _surge, unavailable = rolling_limits(deployment)
    minimum = replicas - (unavailable if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") != "Recreate" else 0)
    previous = {c.get("type"): c for c in (deployment.get("status") or {}).get("conditions") or []}
    is_available = available >= minimum
    condition = {"type": "Available", "status": "True" if is_available else "False",
                 "reason": "MinimumReplicasAvailable" if is_available else "MinimumReplicasUnavailable",
                 "message": "Deployment has minimum availability." if is_available else "Deployment does not have minimum availability."}
    if previous.get("Available", {}).get("status") == condition["status"]:
        condition = previous["Available"]
    return {"observedGeneration": deployment["metadata"].get("generation", 1), "replicas": total,
            "updatedReplicas": int((new.get("status") or {}).get("replicas", 0)),
            "readyReplicas": sum(int(s.get("readyReplicas", 0)) for s in status_of), "availableReplicas": available,
            "unavailableReplicas": max(0, replicas - available), "conditions": [condition]}
