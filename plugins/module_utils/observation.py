# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The observed snapshot (docs/snapshot.md) put together from what the observe module fetched. Pure, no I/O.

:func:`assemble` maps raw API objects (Nodes, the control plane's mirror pods, ConfigMaps, as the Kubernetes
API returns them), the etcd section and the hosts' own records to the snapshot's fields, following
docs/state.md: which fact lives where, and which source wins when two disagree. The one judgement it
borrows, a pod's state, is ``component_health.classify_pod``'s.
"""

from __future__ import annotations

import json

from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_upgrade
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import classify_pod, ready_since, ready_status
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import CERTIFICATE_FIELDS
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import format_time, parse_time
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import whole_number

PREFIX = "control-plane.kubeadm.io/"
CREATED, SPEC_HASH, BOOTSTRAP = PREFIX + "created", PREFIX + "spec-hash", PREFIX + "bootstrap"
DELETE_MACHINE, REMEDIATE_MACHINE = PREFIX + "delete-machine", PREFIX + "remediate-machine"
# The user's request that a worker be replaced (a rolling replacement: docs/workers.md).
REPLACE_MACHINE = PREFIX + "replace-machine"
REMEDIATION, DELETING = PREFIX + "remediation", PREFIX + "deleting"
# The state ConfigMap's key of a worker's remediation under way (roles/flow/tasks/act/remediate_worker.yml).
WORKER_REMEDIATION_KEY = "worker-remediation"
# The state ConfigMap's key of a worker's rolling replacement under way (roles/flow/tasks/act/roll_worker.yml).
WORKER_ROLLOUT_KEY = "worker-rollout"
EXTERNAL_REMEDIATION = PREFIX + "external-remediation"
# The label that names a worker Node's group (the inventory's worker_group, set when the worker joins).
WORKER_GROUP_LABEL = PREFIX + "worker-group"
ZONE_LABEL = "topology.kubernetes.io/zone"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
STATE_OBJECT = "control-plane-kubeadm-io"  # the kube-system ConfigMap (and Lease) of cluster-level facts
HOST_RECORD_PATH = "/etc/kubernetes/control-plane-machine.json"
# The host record's steps; "deleting" makes the machine one whose removal a later run finishes.
HOST_STEPS = ("installing", "joining", "joined", "deleting")
# The mirror pods of a control plane node, by snapshot component (kubeadm names them <component>-<node name>).
MIRROR_PODS = {"api_server": "kube-apiserver", "controller_manager": "kube-controller-manager",
               "scheduler": "kube-scheduler", "etcd": "etcd"}


def started_not_finished(name, annotations, record):
    """Whether a control plane Node is a machine this collection started and did not finish: its host record (of
    the same name) says ``installing`` or ``joining`` and the Node lacks the ``created`` annotation the flow writes
    once kubeadm is done. kubeadm finished on its own after its run was killed; the next run finishes the machine
    from its record instead of taking it for an adopted one."""
    record = record or {}
    return CREATED not in annotations and record.get("name") == name and record.get("step") in ("installing", "joining")


def is_control_plane(node):
    return CONTROL_PLANE_LABEL in ((node.get("metadata") or {}).get("labels") or {})


def assemble(now, hosts, failure_domains, nodes=(), pods=(), kubeadm_config=None, state_config_map=None,
             etcd=None, endpoint_ready=False, initialized=None, external_etcd=False):
    """The snapshot.

    ``hosts``: the inventory's candidates, each ``{name, address, failure_domain, record}``, ``record`` being
    the parsed host record (None: the host has none). ``nodes`` / ``pods``: Nodes and kube-system Pods as the
    API returns them (dicts). ``kubeadm_config``: ``{"kubernetes_version": ..., "cluster_configuration": {...}}`` or None when not read.
    ``state_config_map``: the ``data`` of kube-system/control-plane-kubeadm-io, or None. ``etcd``: the etcd
    section as ``etcd_client`` gathers it, or None before the cluster exists. ``initialized``: kubeadm init has
    completed (kubeadm-config exists); None means "as kubeadm_config says". ``external_etcd``: the topology the
    spec declares, which says how etcd was read; the snapshot's ``etcd.external`` is the cluster's own word when its
    stored ClusterConfiguration has an etcd section (``external`` or ``local``), so that a spec that declares the
    other topology is seen to disagree (preflight ``etcd_topology``).
    """
    by_host = {h["name"]: h for h in hosts}
    control_plane_nodes = sorted((n for n in nodes if is_control_plane(n)), key=lambda n: n["metadata"]["name"])
    pods_by_name = {(p.get("metadata") or {}).get("name"): p for p in pods}
    machines = []
    for node in control_plane_nodes:
        name = node["metadata"]["name"]
        machines.append(_machine_from_node(node, by_host.get(name) or {}, pods_by_name))
    with_node = {m["name"] for m in machines}
    for host in sorted(hosts, key=lambda h: h["name"]):
        if host["name"] not in with_node and host.get("record"):
            machines.append(_machine_from_record(host))
    return {
        "now": now,
        "initialized": bool(kubeadm_config) if initialized is None else initialized,
        "kubeadm_config": kubeadm_config,
        "endpoint_ready": bool(endpoint_ready),
        "failure_domains": [{"name": fd, "control_plane": True} for fd in failure_domains],
        "remediation_in_progress": _remediation_in_progress(state_config_map),
        "worker_remediation_in_progress": _json_object((state_config_map or {}).get(WORKER_REMEDIATION_KEY)) or None,
        "worker_rollout_in_progress": _json_object((state_config_map or {}).get(WORKER_ROLLOUT_KEY)) or None,
        "machines": machines,
        "workers": workers(nodes),
        "etcd": _etcd_section(etcd, kubeadm_config, external_etcd),
    }


def _etcd_section(etcd, kubeadm_config, external_etcd):
    section = dict(etcd) if etcd is not None else {"external": external_etcd, "members": []}
    stored = stored_etcd_external(kubeadm_config)
    if stored is not None:
        section["external"] = stored
    return section


def stored_etcd_external(kubeadm_config):
    """Whether the cluster's stored ClusterConfiguration (the snapshot's ``kubeadm_config``) says its etcd is external
    (``etcd.external``), stacked (``etcd.local``), or None when it says neither or was not read."""
    stored = ((kubeadm_config or {}).get("cluster_configuration") or {}).get("etcd")
    if isinstance(stored, dict) and ("external" in stored or "local" in stored):
        return "external" in stored
    return None


def workers(nodes):
    """The snapshot's ``workers``: every Node that is not a control plane Node, by name, with its group (the
    ``control-plane.kubeadm.io/worker-group`` label; null without it), kubelet version, creation time, whether it
    is Ready, whether it is cordoned, its in-place upgrade's progress, and what the health check reads: its
    ``node`` (conditions, as a machine's) and ``remediation`` (the remediate-machine annotation, the last
    remediation's record); its external remediation's attempts (as a machine's); its Node's ``uid`` and whether the
    replace-machine annotation asks for its replacement."""
    found = []
    for node in sorted((n for n in nodes if not is_control_plane(n)), key=lambda n: n["metadata"]["name"]):
        meta, status = node["metadata"], node.get("status") or {}
        annotations = meta.get("annotations") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        found.append({
            "name": meta["name"],
            "group": (meta.get("labels") or {}).get(WORKER_GROUP_LABEL) or None,
            "created": _timestamp(meta["creationTimestamp"]),
            "version": (status.get("nodeInfo") or {}).get("kubeletVersion"),
            "ready": ready,
            "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
            "upgrade": node_upgrade.progress(annotations.get(node_upgrade.ANNOTATION)),
            "node": _snapshot_node(node),
            "remediation": _remediation(annotations, {}),
            "external_remediation": _external_remediation(annotations),
            "uid": meta.get("uid"),
            "replace_requested": REPLACE_MACHINE in annotations,
        })
    return found


def init_unconfirmed(record):
    """Whether a host record is that of a cluster's first machine whose kubeadm init was started and is not known to
    have finished (no ``initialized`` time yet): a failed or stopped init, which the next run finishes or redoes."""
    record = record or {}
    return record.get("bootstrap") == "init" and record.get("step") in ("installing", "joining") and not record.get("initialized")


def read_sources(names, answers):
    """The hosts to read the cluster and etcd through, best first: those that hold the admin kubeconfig.

    ``answers`` are the hosts' machine_info results, in the order of ``names``. kubeadm reset removes ``pki/``
    before ``admin.conf``, so a host torn down half way may still hold the kubeconfig: one that also holds the etcd
    client credentials comes first, and one whose machine is not being deleted before one that is. The inventory's
    order decides among equals. A host whose kubeadm init is not known to have finished (:func:`init_unconfirmed`)
    is no source: kubeadm writes admin.conf long before the cluster can be read with it."""
    def rank(index):
        answer = answers[index] or {}
        deleting = ((answer.get("record") or {}).get("step") == "deleting")
        return (not answer.get("etcd_client_credentials"), deleting, index)
    held = [i for i, answer in enumerate(answers)
            if (answer or {}).get("admin_kubeconfig") and not init_unconfirmed((answer or {}).get("record"))]
    return [names[i] for i in sorted(held, key=rank)]


def unrecorded(nodes, hosts):
    """What a flow records on control plane Nodes that carry nothing of this collection's (adopted machines,
    docs/state.md): ``[{name, created, failure_domain}]``, ``created`` the Node's creation time, ``failure_domain``
    the inventory's when the Node has no zone label (else None). Sorted by name."""
    by_host = {h["name"]: h for h in hosts}
    found = []
    for node in sorted((n for n in nodes if is_control_plane(n)), key=lambda n: n["metadata"]["name"]):
        meta = node["metadata"]
        annotations = meta.get("annotations") or {}
        if CREATED in annotations or started_not_finished(meta["name"], annotations, (by_host.get(meta["name"]) or {}).get("record")):
            continue
        labelled = ZONE_LABEL in (meta.get("labels") or {})
        found.append({"name": meta["name"], "created": _timestamp(meta["creationTimestamp"]),
                      "failure_domain": None if labelled else (by_host.get(meta["name"]) or {}).get("failure_domain")})
    return found


def _machine_from_node(node, host, pods_by_name):
    """A machine that has a Node: the Node wins for what it carries; the host record and the inventory fill in
    what it does not have yet (docs/state.md "When two sources disagree")."""
    meta = node["metadata"]
    name = meta["name"]
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    record = host.get("record") or {}
    snapshot_node = _snapshot_node(node)
    ready = ready_status(snapshot_node)
    components, components_since = {}, {}
    for component, prefix in MIRROR_PODS.items():
        pod = pods_by_name.get("%s-%s" % (prefix, name))
        components[component] = classify_pod(pod.get("status") if pod is not None else None, ready)[0]
        components_since[component] = ready_since(pod.get("status")) if pod is not None else None
    etcd_pod = pods_by_name.get("%s-%s" % (MIRROR_PODS["etcd"], name))
    return {
        "name": name,
        "host": host.get("address") or _internal_ip(node),
        "failure_domain": labels.get(ZONE_LABEL) or host.get("failure_domain"),
        "created": annotations.get(CREATED) or record.get("created") or _timestamp(meta["creationTimestamp"]),
        "version": ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion"),
        "etcd_image_tag": _image_tag(etcd_pod),
        "spec_hash": annotations.get(SPEC_HASH),
        "bootstrap": annotations.get(BOOTSTRAP) or record.get("bootstrap"),
        "provisioned": not started_not_finished(name, annotations, record),
        "deleting": DELETING in annotations or record.get("step") == "deleting",
        "delete_requested": DELETE_MACHINE in annotations,
        "failure": record.get("failure"),
        "remediation": _remediation(annotations, record),
        "external_remediation": _external_remediation(annotations),
        "node": snapshot_node,
        "components": components,
        "components_since": _drop_none(components_since),
        **certificates(host),
        "upgrade": node_upgrade.progress(annotations.get(node_upgrade.ANNOTATION)),
    }


def _snapshot_node(node):
    """A Node as the snapshot holds it: its name and conditions, each with its status and last transition."""
    conditions = [
        {"type": c["type"], "status": c["status"], "last_transition": c.get("lastTransitionTime")}
        for c in (node.get("status") or {}).get("conditions") or []
        if c.get("type") and c.get("status") in ("True", "False", "Unknown")
    ]
    return {"name": node["metadata"]["name"], "conditions": [_drop_none(c) for c in conditions]}


def _machine_from_record(host):
    """A machine known only by its host record: not registered yet, or its Node was lost (``joined`` then:
    provisioned with no node, which the decisions read as "node is gone")."""
    record = host["record"]
    return {
        "name": host["name"],
        "host": host.get("address"),
        "failure_domain": record.get("failure_domain") or host.get("failure_domain"),
        "created": record.get("created"),
        "version": record.get("version"),
        "etcd_image_tag": None,
        "spec_hash": record.get("spec_hash"),
        "bootstrap": record.get("bootstrap"),
        "provisioned": record.get("step") in ("joined", "deleting") and record.get("joined") is not None,
        "deleting": record.get("step") == "deleting",
        "failure": record.get("failure"),
        "remediation": _remediation({}, record),
        # the request is kept on the Node, and this machine has none
        "external_remediation": _external_remediation({}),
        "node": None,
        **certificates(host),
    }


def certificates(host):
    """What the host said of its certificates (machine_info): the machine's fields of the same names."""
    return {name: host.get(name) for name in CERTIFICATE_FIELDS}


def _image_tag(pod):
    """The tag of a mirror pod's (first) container image; None without the pod, or an image named by digest or by
    no tag (nothing to compare)."""
    containers = ((pod or {}).get("spec") or {}).get("containers") or []
    image = (containers[0].get("image") or "") if containers else ""
    name, separator, tag = image.rpartition(":")
    return tag if separator and "/" not in tag and "@" not in name else None


def _remediation(annotations, host_record):
    """The Node's remediation annotation; until the Node has it, what the host record carries (a replacement)."""
    record = _json_object(annotations.get(REMEDIATION)) or (host_record.get("remediation") or {})
    return {
        "requested": REMEDIATE_MACHINE in annotations,
        "retries": int(record.get("retries") or 0),
        "last": record.get("last"),
    }


def _external_remediation(annotations):
    """The Node's external remediation annotation (JSON ``{attempts, last}``); a field that is not what the flow
    writes (a count >= 0, an RFC 3339 time) reads as its default, like a record that is not a JSON object. A count
    written as a string of digits still counts: a template may render it so, and losing it would lift the bound."""
    record = _json_object(annotations.get(EXTERNAL_REMEDIATION))
    attempts, last = record.get("attempts"), record.get("last")
    attempts = whole_number(attempts)
    return {"attempts": attempts if attempts is not None and attempts >= 0 else 0, "last": last if _is_timestamp(last) else None}


def _is_timestamp(value):
    try:
        parse_time(value)
    except ValueError:
        return False
    return True


def _remediation_in_progress(data):
    record = _json_object((data or {}).get("remediation"))
    return record or None


def _json_object(text):
    """A JSON object written by a flow; anything else (absent, not JSON, not an object) reads as empty."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _timestamp(value):
    """An API timestamp in the snapshot's form (the Python client writes ``+00:00`` where the API wrote ``Z``)."""
    return format_time(parse_time(value))


def _internal_ip(node):
    return next((a["address"] for a in (node.get("status") or {}).get("addresses") or [] if a.get("type") == "InternalIP"), None)


def _drop_none(mapping):
    return {k: v for k, v in mapping.items() if v is not None}
