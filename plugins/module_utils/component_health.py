# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-machine component conditions (KCP's machine conditions), derived from one snapshot. Pure, no I/O.

The rule (docs/rules.md EH6 / EH7, docs/snapshot.md "What the decisions derive"), per machine, first match wins:

1. no node and never provisioned → every condition ``unknown`` (KCP sets nothing yet; absent and unknown
   behave the same in every decision: preflight fails, scale-down priority 3 ignores them);
2. provisioned but its node is gone → every condition ``false`` ("node is gone");
3. node Ready status ``Unknown`` or not reported → the pod conditions are ``unknown`` (stale: the kubelet
   stopped reporting, so what the API says about its pods is old);
4. otherwise each pod maps ``healthy`` → ``true``; ``provisioning``, ``unhealthy`` and ``missing`` →
   ``false`` (a pod that is not found is false); ``unknown`` → ``unknown``.

:func:`classify_pod` is how a pod's state is read from the Pod's raw ``status`` (KCP EH6), so that the
adapter that reads the cluster only fetches: it returns the state the snapshot records with the reason,
severity and message of KCP's pod condition.

The components are the API server, controller manager and scheduler pods and, only when etcd is managed
(stacked), the etcd pod and the etcd member. The etcd member condition is the one
``etcd_health.evaluate`` derives (EH3 / EH4).

:func:`quorum_members` turns the etcd member verdicts into what ``etcd_quorum.project`` counts (KCP RM7): a
member is healthy only if a machine's node carries its name and that machine's etcd member verdict is
``true``; a member with no machine (a stray, or one still joining with an empty name) is unhealthy.

:func:`oldest_first` is the machine order every decision shares (KCP's machine collection): oldest = earliest
``created``, ties broken by the smallest name; the newest is the last of that order.
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import Member
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

TRUE, FALSE, UNKNOWN = "true", "false", "unknown"
# The condition statuses as Kubernetes writes them, for the vocabulary decided in here.
CONDITION_STATUS = {TRUE: "True", FALSE: "False", UNKNOWN: "Unknown"}
POD_COMPONENTS = ("api_server", "controller_manager", "scheduler")
ETCD_POD, ETCD_MEMBER = "etcd_pod", "etcd_member"
HEALTHY, PROVISIONING, UNHEALTHY, MISSING, UNKNOWN_STATE = "healthy", "provisioning", "unhealthy", "missing", "unknown"
POD_STATES = (HEALTHY, PROVISIONING, UNHEALTHY, MISSING, UNKNOWN_STATE)
_POD_STATE = {HEALTHY: TRUE, PROVISIONING: FALSE, UNHEALTHY: FALSE, MISSING: FALSE, UNKNOWN_STATE: UNKNOWN}
# The KCP reason and severity of a pod condition in each state (EH6); a true condition has neither.
POD_REASONS = {
    HEALTHY: ("", None),
    PROVISIONING: ("PodProvisioning", "Info"),
    UNHEALTHY: ("PodFailed", "Error"),
    MISSING: ("PodMissing", "Error"),
    UNKNOWN_STATE: ("PodInspectionFailed", None),
}
_SNAPSHOT_KEY = {"api_server": "api_server", "controller_manager": "controller_manager", "scheduler": "scheduler", ETCD_POD: "etcd"}
# KCP's machine condition for each component.
CONDITION_TYPES = {
    "api_server": "APIServerPodHealthy",
    "controller_manager": "ControllerManagerPodHealthy",
    "scheduler": "SchedulerPodHealthy",
    ETCD_POD: "EtcdPodHealthy",
    ETCD_MEMBER: "EtcdMemberHealthy",
}


def component_names(etcd_managed):
    """The conditions every machine must have true: 3 pods, plus the etcd pod and member when etcd is managed."""
    return POD_COMPONENTS + (ETCD_POD, ETCD_MEMBER) if etcd_managed else POD_COMPONENTS


def node_name(machine):
    """The name of the machine's Node, or None when it has none."""
    node = machine.get("node")
    return node.get("name") if node else None


def oldest_first(machines):
    """``machines`` sorted oldest first: by creation time, ties by name (the newest is the last one)."""
    return sorted(machines, key=lambda m: (parse_time(m["created"]), m["name"]))


def machine_conditions(machine, etcd_managed, etcd_member=None):
    """``{component: {"status": true|false|unknown, "reason": str, "since": time or None}}`` for one machine (see
    module docstring).

    ``etcd_member`` is the machine's entry of ``etcd_health.evaluate(...)["members_by_machine"]`` (or None).
    ``since`` is when the condition took its status, as far as the cluster records it: a pod condition's is its
    pod's Ready transition (``components_since``, the kubelet's record); the etcd member's, while it is not true and
    its pod is false, is the pod's (a member whose pod is down has been down since then); otherwise None, unknown (no
    history is kept of conditions).
    """
    names = component_names(etcd_managed)
    if machine.get("node") is None:
        if machine.get("provisioned"):
            return {c: {"status": FALSE, "reason": "node is gone", "since": None} for c in names}
        return {c: {"status": UNKNOWN, "reason": "no node yet", "since": None} for c in names}
    node_stale = stale(ready_status(machine["node"]))
    components = machine.get("components") or {}
    since = machine.get("components_since") or {}
    conditions = {}
    for name in names:
        if name == ETCD_MEMBER:
            entry = etcd_member or {"status": UNKNOWN, "reason": "etcd member health not observed"}
            conditions[name] = {"status": entry["status"], "reason": entry.get("reason", ""), "since": None}
        elif node_stale:
            conditions[name] = {"status": UNKNOWN, "reason": "node status is stale (Ready is Unknown or not reported)", "since": None}
        else:
            state = components.get(_SNAPSHOT_KEY[name], "unknown")
            status = _POD_STATE.get(state, UNKNOWN)
            conditions[name] = {"status": status, "reason": "" if status == TRUE else "pod %s" % state,
                                "since": since.get(_SNAPSHOT_KEY[name]) if state != MISSING else None}
    member, pod = conditions.get(ETCD_MEMBER), conditions.get(ETCD_POD)
    if member is not None and member["status"] != TRUE and pod["status"] == FALSE:
        member["since"] = pod["since"]
    return conditions


def all_conditions(machines, etcd_managed, members_by_machine):
    """``{machine name: machine_conditions(...)}`` for every machine."""
    return {m["name"]: machine_conditions(m, etcd_managed, members_by_machine.get(m["name"])) for m in machines}


def all_healthy(conditions):
    """Whether one machine's component conditions (``machine_conditions``) are all true; none known is not."""
    return bool(conditions) and all(entry["status"] == TRUE for entry in conditions.values())


def failing(conditions, statuses=(FALSE, UNKNOWN)):
    """The components of one machine whose status is in ``statuses``, in component order."""
    return [name for name, entry in conditions.items() if entry["status"] in statuses]


def quorum_members(etcd_members, machines, members_by_machine):
    """The snapshot's etcd members as ``etcd_quorum.Member`` values, healthy per KCP RM7 (module docstring).

    ``members_by_machine``: ``etcd_health.evaluate(...)["members_by_machine"]``.
    """
    machine_by_node = {node_name(m): m["name"] for m in machines if node_name(m) is not None}
    out = []
    for member in etcd_members:
        owner = machine_by_node.get(member.get("name") or None)
        healthy = owner is not None and (members_by_machine.get(owner) or {}).get("status") == TRUE
        out.append(Member(id=member["id"], name=member.get("name") or "", healthy=healthy, learner=bool(member.get("learner"))))
    return out


def classify_pod(pod_status, node_ready):
    """``(state, message)`` of a control plane pod from the Pod's raw ``status`` (KCP EH6, first match wins).

    ``pod_status`` is the Pod's ``status`` as the API returns it (``phase``, ``conditions``,
    ``containerStatuses`` with ``state`` and ``lastState``); None means the pod was not found. ``node_ready``
    is the status of its Node's Ready condition (``True``, ``False``, ``Unknown``, or None when the Node was
    not read). ``state`` is one the snapshot records (docs/snapshot.md).
    """
    if stale(node_ready):
        return UNKNOWN_STATE, "the node's status is stale (Ready is %s): the pod's status cannot be trusted" % node_ready
    if pod_status is None:
        return MISSING, "the pod is not found"
    phase = pod_status.get("phase")
    containers = pod_status.get("containerStatuses") or []
    if phase == "Pending":
        if not _pod_condition_true(pod_status, "PodScheduled"):
            return PROVISIONING, "the pod is waiting to be scheduled"
        if not _pod_condition_true(pod_status, "Initialized"):
            return PROVISIONING, "the pod is running its init containers"
        return PROVISIONING, "the pod is pending" + _waiting_suffix(containers)
    if phase == "Running":
        if _pod_condition_true(pod_status, "Ready"):
            return HEALTHY, "the pod is running and ready"
        crashed = [c["name"] for c in containers if _exit_code((c.get("lastState") or {}).get("terminated")) not in (None, 0)]
        waiting = [c for c in containers if (c.get("state") or {}).get("waiting") is not None]
        if waiting:
            if crashed:
                return UNHEALTHY, "container %s exited with an error%s" % (", ".join(crashed), _waiting_suffix(containers))
            return PROVISIONING, "the pod is starting" + _waiting_suffix(containers)
        terminated = [c["name"] for c in containers if (c.get("state") or {}).get("terminated") is not None]
        if terminated:
            return UNHEALTHY, "container %s terminated" % ", ".join(terminated)
        return PROVISIONING, "the pod is waiting for its startup or readiness probes"
    if phase in ("Succeeded", "Failed"):
        return UNHEALTHY, "the pod has stopped (phase %s)" % phase
    return UNKNOWN_STATE, "the pod's phase is %s" % (phase or "not reported")


def ready_since(pod_status):
    """When the pod's Ready condition last changed status (its ``lastTransitionTime``), or None when the pod or that
    time is not known: since when it has been ready, or not."""
    ready = next((c for c in (pod_status or {}).get("conditions") or () if c.get("type") == "Ready"), None)
    return (ready or {}).get("lastTransitionTime")


def _pod_condition_true(pod_status, condition_type):
    return any(c.get("type") == condition_type and c.get("status") == "True" for c in pod_status.get("conditions") or [])


def _exit_code(terminated):
    return None if terminated is None else terminated.get("exitCode")


def _waiting_suffix(containers):
    """``: kube-apiserver waiting (CrashLoopBackOff)`` for the containers that wait, with kubelet's reason."""
    waiting = ["%s waiting (%s)" % (c["name"], c["state"]["waiting"].get("reason") or "no reason given")
               for c in containers if (c.get("state") or {}).get("waiting") is not None]
    return ": " + ", ".join(waiting) if waiting else ""


def stale(ready):
    """A Node whose Ready status is Unknown or missing: its kubelet is not reporting (EH6)."""
    return ready in ("Unknown", None)


def node_condition(node, condition_type):
    """The Node's first condition of that type, or None."""
    return next((c for c in node.get("conditions") or () if c.get("type") == condition_type), None)


def ready_status(node):
    """The status of a Node's Ready condition (``True``, ``False``, ``Unknown``), or None when it has none."""
    return (node_condition(node, "Ready") or {}).get("status")
