# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node lifecycle controller's decisions: when a node has gone silent, and which taints its Ready condition
calls for. Pure, no I/O (controller_manager.py reads and writes).

Silence: a node's last sign of life is the later of its Ready condition's ``lastHeartbeatTime`` and its
``kube-node-lease`` Lease's ``renewTime``. Older than ``--node-monitor-grace-period`` (default 50 s), every
condition Ready / MemoryPressure / DiskPressure / PIDPressure that is not already Unknown becomes Unknown with
reason ``NodeStatusUnknown`` ("Kubelet stopped posting node status.") and ``lastTransitionTime`` now; its
heartbeat time is kept. A node that never posted a Ready condition is judged from its creation (or Lease)
against ``--node-startup-grace-period`` (default 1 m) and gets the missing conditions as Unknown with reason
``NodeStatusNeverUpdated``.

Taints: Ready False → ``node.kubernetes.io/not-ready``, Ready Unknown → ``node.kubernetes.io/unreachable``, each
with effects NoSchedule and NoExecute (the latter stamped ``timeAdded``); Ready True → neither. Other taints
are kept as they are. A node without a Ready condition keeps its taints (the kubelet registers new nodes with
their own ``not-ready`` taint).
"""

import copy

from kcpsim.apiserver import auth

CONDITION_TYPES = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
STOPPED = ("NodeStatusUnknown", "Kubelet stopped posting node status.")
NEVER = ("NodeStatusNeverUpdated", "Kubelet never posted node status.")


def _conditions(node):
    return (node.get("status") or {}).get("conditions") or []


def ready_status(node):
    """``"True"``, ``"False"``, ``"Unknown"`` or None (no Ready condition)."""
    for condition in _conditions(node):
        if condition.get("type") == "Ready":
            return condition.get("status")
    return None


def last_sign_of_life(node, lease):
    """The later of the Ready heartbeat and the Lease renewal, or None when there is neither."""
    times = []
    for condition in _conditions(node):
        if condition.get("type") == "Ready":
            times.append(auth.parse_time(condition.get("lastHeartbeatTime") or ""))
    if lease:
        times.append(auth.parse_time((lease.get("spec") or {}).get("renewTime") or ""))
    times = [moment for moment in times if moment is not None]
    return max(times) if times else None


def silenced_conditions(node, lease, now, grace, startup_grace, stamp):
    """The node's conditions with the silent ones set Unknown, or None when nothing changes.

    ``grace`` / ``startup_grace`` are timedeltas; ``stamp`` is ``now`` as the RFC 3339 text to write.
    """
    since = last_sign_of_life(node, lease)
    limit = grace
    if ready_status(node) is None:
        created = auth.parse_time((node.get("metadata") or {}).get("creationTimestamp") or "")
        since = max([moment for moment in (created, since) if moment is not None], default=None)
        limit = startup_grace
    if since is not None and now - since <= limit:
        return None
    conditions = copy.deepcopy(_conditions(node))
    changed = False
    for kind in CONDITION_TYPES:
        current = next((c for c in conditions if c.get("type") == kind), None)
        if current is None:
            reason, message = NEVER
            conditions.append({"type": kind, "status": "Unknown", "reason": reason, "message": message,
                               "lastHeartbeatTime": (node.get("metadata") or {}).get("creationTimestamp"),
                               "lastTransitionTime": stamp})
            changed = True
        elif current.get("status") != "Unknown":
            reason, message = STOPPED
            current.update({"status": "Unknown", "reason": reason, "message": message, "lastTransitionTime": stamp})
            changed = True
    return conditions if changed else None


def wanted_taints(node, stamp):
    """The node's taints as its Ready condition calls for them, or None when they are already right."""
    ready = ready_status(node)
    if ready is None:
        return None
    current = (node.get("spec") or {}).get("taints") or []
    owned = (NOT_READY, UNREACHABLE)
    key = {"False": NOT_READY, "Unknown": UNREACHABLE}.get(ready)
    kept = [taint for taint in current if taint.get("key") not in owned]
    wanted = kept[:]
    if key:
        for effect in ("NoSchedule", "NoExecute"):
            existing = next((t for t in current if t.get("key") == key and t.get("effect") == effect), None)
            taint = existing or {"key": key, "effect": effect}
            if effect == "NoExecute" and existing is None:
                taint["timeAdded"] = stamp
            wanted.append(taint)
    return None if _keys(current) == _keys(wanted) else wanted


def _keys(taints):
    return sorted((taint.get("key"), taint.get("effect")) for taint in taints)


def pods_to_mark_not_ready(pods, stamp):
    """``(pod, new status)`` for every pod whose Ready condition is True: what happens to the pods of a node
    that just went Unknown (the kubelet can no longer say)."""
    marked = []
    for pod in pods:
        status = copy.deepcopy(pod.get("status") or {})
        changed = False
        for condition in status.get("conditions") or []:
            if condition.get("type") == "Ready" and condition.get("status") == "True":
                condition["status"] = "False"
                condition["lastTransitionTime"] = stamp
                changed = True
        if changed:
            marked.append((pod, status))
    return marked
