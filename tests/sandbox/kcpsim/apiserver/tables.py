# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server-side printing: the ``meta.k8s.io/v1`` Table that ``kubectl get`` asks for. Pure, no I/O.

Columns follow the real server's for the kinds an operator looks at (nodes, pods, namespaces, configmaps,
secrets, leases, CSRs, jobs); every other kind gets Name and Age. Columns of priority 1 show with ``-o wide``.
"""

from kcpsim.apiserver import auth

_NODE_ROLE = "node-role.kubernetes.io/"


def human_duration(seconds):
    """kubectl's AGE format (apimachinery's HumanDuration): ``45s``, ``3m12s``, ``5h``, ``12d``, ``2y30d``."""
    seconds = int(seconds)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return "%ds" % seconds
    minutes = seconds // 60
    if minutes < 10:
        return "%dm%ds" % (minutes, seconds % 60) if seconds % 60 else "%dm" % minutes
    if minutes < 180:
        return "%dm" % minutes
    hours = seconds // 3600
    if hours < 8:
        return "%dh%dm" % (hours, minutes % 60) if minutes % 60 else "%dh" % hours
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        return "%dd%dh" % (hours // 24, hours % 24) if hours % 24 else "%dd" % (hours // 24)
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, hours // 24 % 365
        return "%dy%dd" % (years, days) if days else "%dy" % years
    return "%dy" % (hours // 24 // 365)


def _age(obj, now):
    created = auth.parse_time((obj.get("metadata") or {}).get("creationTimestamp") or "")
    return human_duration((now - created).total_seconds()) if created else "<unknown>"


def _condition(obj, kind):
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return {}


def node_roles(node):
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(key[len(_NODE_ROLE):] for key in labels if key.startswith(_NODE_ROLE) and key[len(_NODE_ROLE):])
    return ",".join(roles) or "<none>"


def _node_status(node):
    ready = _condition(node, "Ready").get("status")
    # Ready False and Ready Unknown both print NotReady; no Ready condition at all prints Unknown.
    status = "Ready" if ready == "True" else ("NotReady" if ready else "Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    return status


def _node_address(node, kind):
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == kind:
            return address.get("address")
    return "<none>"


def _node_row(node, now):
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return [node["metadata"]["name"], _node_status(node), node_roles(node), _age(node, now),
            info.get("kubeletVersion", ""), _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            info.get("osImage", "<unknown>"), info.get("kernelVersion", "<unknown>"),
            info.get("containerRuntimeVersion", "<unknown>")]


def _pod_row(pod, now):
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for container in statuses if container.get("ready"))
    restarts = sum(int(container.get("restartCount") or 0) for container in statuses)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for container in statuses:
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            reason = waiting["reason"]
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [pod["metadata"]["name"], "%d/%d" % (ready, len(spec.get("containers") or [])), reason, restarts,
            _age(pod, now), status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", "%d/%d" % (0, len(gates)) if gates else "<none>"]


def _csr_row(csr, now):
    spec = csr.get("spec") or {}
    conditions = [c.get("type") for c in (csr.get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    if (csr.get("status") or {}).get("certificate"):
        conditions.append("Issued")
    duration = spec.get("expirationSeconds")
    return [csr["metadata"]["name"], _age(csr, now), spec.get("signerName", ""), spec.get("username", ""),
            human_duration(duration) if duration else "<none>", ",".join(conditions) or "Pending"]


def _job_row(job, now):
    spec, status = job.get("spec") or {}, job.get("status") or {}
    state = "Running"
    for kind in ("Complete", "Failed", "Suspended"):
        if _condition(job, kind).get("status") == "True":
            state = kind
    started = auth.parse_time(status.get("startTime") or "")
    finished = auth.parse_time(status.get("completionTime") or "") or now
    duration = human_duration((finished - started).total_seconds()) if started else ""
    return [job["metadata"]["name"], state, "%d/%d" % (status.get("succeeded") or 0, spec.get("completions") or 1),
            duration, _age(job, now)]


def _column(name, description, priority=0, kind="string", fmt=""):
    return {"name": name, "type": kind, "format": fmt, "description": description, "priority": priority}


_NAME = _column("Name", "Name must be unique within a namespace.", fmt="name")
_AGE = _column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created.")

COLUMNS = {
    "nodes": ([_NAME, _column("Status", "The status of the node"), _column("Roles", "The roles of the node"), _AGE,
               _column("Version", "Kubelet Version reported by the node."),
               _column("Internal-IP", "List of internal IPs.", 1), _column("External-IP", "List of external IPs.", 1),
               _column("OS-Image", "OS Image reported by the node.", 1),
               _column("Kernel-Version", "Kernel Version reported by the node.", 1),
               _column("Container-Runtime", "Container Runtime Version reported by the node.", 1)], _node_row),
    "pods": ([_NAME, _column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
              _column("Status", "The aggregate status of the containers in this pod."),
              _column("Restarts", "The number of times the containers in this pod have been restarted.",
                      kind="string"), _AGE,
              _column("IP", "IP address allocated to the pod.", 1), _column("Node", "Name of the node.", 1),
              _column("Nominated Node", "Name of the nominated node.", 1),
              _column("Readiness Gates", "Pod readiness gates.", 1)], _pod_row),
    "namespaces": ([_NAME, _column("Status", "The status of the namespace"), _AGE],
                   lambda ns, now: [ns["metadata"]["name"], (ns.get("status") or {}).get("phase", "Active"),
                                    _age(ns, now)]),
    "configmaps": ([_NAME, _column("Data", "Number of data entries.", kind="integer"), _AGE],
                   lambda cm, now: [cm["metadata"]["name"], len(cm.get("data") or {}) + len(cm.get("binaryData") or {}),
                                    _age(cm, now)]),
    "secrets": ([_NAME, _column("Type", "The type of the secret"), _column("Data", "Number of data.", kind="integer"),
                 _AGE],
                lambda s, now: [s["metadata"]["name"], s.get("type", "Opaque"), len(s.get("data") or {}), _age(s, now)]),
    "leases": ([_NAME, _column("Holder", "The holder of the lease."), _AGE],
               lambda lease, now: [lease["metadata"]["name"], (lease.get("spec") or {}).get("holderIdentity", ""),
                                   _age(lease, now)]),
    "certificatesigningrequests": ([_NAME, _AGE, _column("SignerName", "The signer."),
                                    _column("Requestor", "The requesting user."),
                                    _column("RequestedDuration", "The requested validity."),
                                    _column("Condition", "The CSR's conditions.")], _csr_row),
    "jobs": ([_NAME, _column("Status", "Status of the job."), _column("Completions", "Desired/succeeded pods."),
              _column("Duration", "Time the job took."), _AGE], _job_row),
}


def _default_row(obj, now):
    return [obj["metadata"]["name"], _age(obj, now)]


def table(resource, objects, revision, now, include_object="PartialObjectMetadata"):
    """The Table of ``objects`` (already filtered) for ``kubectl get``; rows carry the object as asked."""
    columns, row = COLUMNS.get(resource.plural, ([_NAME, _AGE], _default_row))
    rows = []
    for obj in objects:
        entry = {"cells": row(obj, now)}
        if include_object == "Object":
            entry["object"] = obj
        elif include_object != "None":
            entry["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                               "metadata": obj.get("metadata") or {}}
        rows.append(entry)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": str(revision)},
            "columnDefinitions": columns, "rows": rows}
