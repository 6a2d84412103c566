# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The observed snapshot: validation and defaults of what the info modules saw (docs/snapshot.md).

Pure functions, no I/O. :func:`normalize_snapshot` reads a snapshot as the decisions accept it, every error
at once, each naming its path (``machines[2].created``) and the rule:

* ``now`` and ``machines`` are required, and each machine needs ``name`` (unique) and ``created``;
* every documented field has its type checked; timestamps are RFC 3339; component states are healthy,
  provisioning, unhealthy, missing or unknown; node condition statuses are True, False or Unknown; etcd ids are hex;
* keys the contract does not document are errors, at the top level and inside machines, nodes, members and
  the other records: the contract grows only by documented optional fields, so an unknown key is a typo or
  a producer ahead of its reader;
* failure domain names, machine names, worker names and etcd member ids are unique;
* an etcd member's id may be empty only for the nameless, unresponsive member ``etcd_info`` reports for an
  endpoint when no endpoint answers (docs/snapshot.md);
* everything else takes the documented default: false, null, an empty list, ``unknown`` for components,
  ``{requested: false, retries: 0, last: null}`` for a machine's remediation record, ``{attempts: 0, last: null}``
  for its external remediation record; a worker's ``ready`` and ``unschedulable`` are false, its ``node`` null and
  its remediation record as a machine's. Two defaults follow
  from other fields: ``provisioned`` is whether a ``node`` is given, and a node's ``name`` is the machine's.

etcd ids are returned in lower case and ``member_ids_seen`` sorted, so lists compare as sets of ids.
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import POD_STATES
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_renewal import STEPS as RENEWAL_STEPS
from ansible_collections.kubeadm.control_plane.plugins.module_utils.node_upgrade import STEPS as UPGRADE_STEPS
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import (
    REQUIRED,
    Field,
    any_mapping,
    boolean,
    error,
    integer,
    item,
    list_of,
    mapping,
    one_of,
    read_mapping,
    string,
    timestamp,
    under,
)

COMPONENT_STATES = POD_STATES
ALARMS = ("NOSPACE", "CORRUPT")

_optional_string = string(non_empty=False)
_hex = string(r"[0-9a-fA-F]{1,16}", "must be an etcd id: 1 to 16 hex digits, as etcdctl prints it")


def _etcd_id(value, path, errors):
    text = _hex(value, path, errors)
    return text.lower() if text is not None else None


def _member_id(value, path, errors):
    """An etcd id, or "" (checked against the rest of the member in :func:`_member`)."""
    return "" if value == "" else _etcd_id(value, path, errors)


def _ids_seen(value, path, errors):
    ids = list_of(_etcd_id)(value, path, errors)
    return sorted(ids, key=str) if ids is not None else None


_COMPONENT = Field(one_of(*COMPONENT_STATES), "unknown")

_CONDITION = {
    "type": Field(string(), REQUIRED),
    "status": Field(one_of("True", "False", "Unknown"), REQUIRED),
    "last_transition": Field(timestamp),
}

_NODE = {
    "name": Field(string()),
    "conditions": Field(list_of(mapping(_CONDITION)), []),
}

# A Node's in-place upgrade as far as it went (node_upgrade.progress): null when the Node carries no record.
_UPGRADE = {
    "version": Field(string(), REQUIRED),
    "step": Field(one_of(*UPGRADE_STEPS)),
    "failed_step": Field(one_of(*UPGRADE_STEPS)),
    "error": Field(string(non_empty=False)),
}

# A certificate renewal in place under way on a machine's host (certificate_renewal.progress): null when none is.
_RENEWAL = {
    "started": Field(timestamp),
    "step": Field(one_of(*RENEWAL_STEPS)),
    "failed_step": Field(one_of(*RENEWAL_STEPS)),
    "error": Field(string(non_empty=False)),
    "expired": Field(boolean, False),
}

# What a machine's host says of its certificates (machine_info), kept under the same names in the snapshot.
CERTIFICATE_FIELDS = ("certificates_expire", "certificate_authorities_expire", "kubelet_certificate_expire",
                      "kubelet_certificate_rotates", "certificate_renewal")

# The remediate-machine annotation, and the last remediation's record (a machine's, a worker's).
_REMEDIATION = {
    "requested": Field(boolean, False),
    "retries": Field(integer(minimum=0), 0),
    "last": Field(timestamp),
}

# an external remediation's attempts so far, and when the last began (docs/flows.md "External remediation")
_EXTERNAL_REMEDIATION = {"attempts": Field(integer(minimum=0), 0), "last": Field(timestamp)}

_MACHINE = {
    "name": Field(string(), REQUIRED),
    "host": Field(string()),
    "failure_domain": Field(string()),
    "created": Field(timestamp, REQUIRED),
    "version": Field(string()),
    "etcd_image_tag": Field(string()),
    "spec_hash": Field(string()),
    "bootstrap": Field(one_of("init", "join")),
    "provisioned": Field(boolean),
    "deleting": Field(boolean, False),
    "delete_requested": Field(boolean, False),
    "failure": Field(string()),
    "remediation": Field(mapping(_REMEDIATION), {}),
    "external_remediation": Field(mapping(_EXTERNAL_REMEDIATION), {}),
    "node": Field(mapping(_NODE)),
    "components": Field(
        mapping({"api_server": _COMPONENT, "controller_manager": _COMPONENT, "scheduler": _COMPONENT, "etcd": _COMPONENT}),
        {},
    ),
    "components_since": Field(
        mapping({"api_server": Field(timestamp), "controller_manager": Field(timestamp), "scheduler": Field(timestamp),
                 "etcd": Field(timestamp)}),
        {},
    ),
    "certificates_expire": Field(timestamp),
    "certificate_authorities_expire": Field(timestamp),
    "kubelet_certificate_expire": Field(timestamp),
    "kubelet_certificate_rotates": Field(boolean),
    "certificate_renewal": Field(mapping(_RENEWAL)),
    "upgrade": Field(mapping(_UPGRADE)),
}

_MEMBER = {
    "name": Field(_optional_string, ""),
    "id": Field(_member_id, REQUIRED),
    "peer_urls": Field(list_of(string()), []),
    "client_urls": Field(list_of(string()), []),
    "responsive": Field(boolean, False),
    "error": Field(string()),
    "leader": Field(boolean, False),
    "learner": Field(boolean, False),
    "alarms": Field(list_of(one_of(*ALARMS)), []),
    "member_ids_seen": Field(_ids_seen, []),
    "cluster_id": Field(_etcd_id),
    "version": Field(string()),
    "db_size": Field(integer(minimum=0)),
    "raft_term": Field(integer(minimum=0)),
    "raft_index": Field(integer(minimum=0)),
}


# A Node that is not a control plane Node: what an in-place upgrade of the workers and their health check need to
# know of it.
_WORKER = {
    "name": Field(string(), REQUIRED),
    "group": Field(string()),
    "created": Field(timestamp, REQUIRED),
    "version": Field(string()),
    "ready": Field(boolean, False),
    "unschedulable": Field(boolean, False),
    "upgrade": Field(mapping(_UPGRADE)),
    "node": Field(mapping(_NODE)),
    "remediation": Field(mapping(_REMEDIATION), {}),
    "external_remediation": Field(mapping(_EXTERNAL_REMEDIATION), {}),
    # its Node's uid: a record of its replacement names the Node it replaces, not another of the same name later
    "uid": Field(string()),
    # the replace-machine annotation: the user asks for the worker to be replaced (docs/workers.md)
    "replace_requested": Field(boolean, False),
}


def _machine(value, path, errors):
    machine = read_mapping(value, path, errors, _MACHINE)
    if machine is None:
        return None
    if machine["provisioned"] is None:
        machine["provisioned"] = machine["node"] is not None
    if machine["node"] is not None and machine["node"]["name"] is None:
        machine["node"]["name"] = machine["name"]
    return machine


def _member(value, path, errors):
    member = read_mapping(value, path, errors, _MEMBER)
    if member is None:
        return None
    if member["id"] == "" and (member["name"] or member["responsive"]):
        errors.append(
            error(path + ".id", "must not be empty: only a nameless member that did not answer has no id", "")
        )
    return member


_SNAPSHOT = {
    "now": Field(timestamp, REQUIRED),
    "initialized": Field(boolean, False),
    "kubeadm_config": Field(mapping({"kubernetes_version": Field(string()), "cluster_configuration": Field(any_mapping)})),
    "endpoint_ready": Field(boolean, False),
    "failure_domains": Field(
        list_of(mapping({"name": Field(string(), REQUIRED), "control_plane": Field(boolean, False)})), []
    ),
    "remediation_in_progress": Field(
        mapping(
            {
                "machine": Field(string(), REQUIRED),
                "timestamp": Field(timestamp, REQUIRED),
                "retry_count": Field(integer(minimum=0), 0),
            }
        )
    ),
    # a worker's remediation begun: its Node may be deleted already, the worker owed a join
    "worker_remediation_in_progress": Field(
        mapping({"worker": Field(string(), REQUIRED), "group": Field(string()), "timestamp": Field(timestamp, REQUIRED)})
    ),
    # a worker's rolling replacement begun (the state ConfigMap's worker-rollout): the worker it replaces (by name and
    # Node uid), the host its replacement joins on, and whether that one joins first (max_surge 1)
    "worker_rollout_in_progress": Field(
        mapping({"worker": Field(string(), REQUIRED), "uid": Field(string(), REQUIRED), "group": Field(string()),
                 # null until the join takes a new host (rules.md WR6); remediation: the health check's, by a new host
                 "replacement": Field(string()), "surge": Field(boolean, False), "timestamp": Field(timestamp, REQUIRED),
                 "remediation": Field(boolean, False)})
    ),
    "machines": Field(list_of(_machine), REQUIRED),
    "workers": Field(list_of(mapping(_WORKER)), []),
    "etcd": Field(mapping({"external": Field(boolean, False), "members": Field(list_of(_member), [])}), {}),
}


def _check_unique(records, key, path, errors):
    seen = set()
    for i, record in enumerate(records or ()):
        value = record.get(key) if record else None
        if not value:  # missing, or a nameless member's empty id: nothing to compare
            continue
        if value in seen:
            errors.append(error(item(path, i) + "." + key, "must be unique: another entry already has it", value))
        seen.add(value)


def normalize_snapshot(raw):
    """(snapshot with defaults, errors): every error at once; the snapshot is None when there is any."""
    errors = []
    snapshot = read_mapping(raw, "", errors, _SNAPSHOT)
    if snapshot is None:
        return None, errors
    _check_unique(snapshot["failure_domains"], "name", "failure_domains", errors)
    _check_unique(snapshot["machines"], "name", "machines", errors)
    _check_unique(snapshot["workers"], "name", "workers", errors)
    if snapshot["etcd"]:
        _check_unique(snapshot["etcd"]["members"], "id", "etcd.members", errors)
    return (snapshot if not errors else None), errors


def normalize_spec_and_snapshot(raw_spec, raw_observed):
    """(spec, snapshot, errors) for a decision module's ``spec`` and ``observed`` options: both normalized, or
    both None and every error of either, each under the option's name."""
    spec, spec_errors = normalize_spec(raw_spec)
    snapshot, snapshot_errors = normalize_snapshot(raw_observed)
    errors = under("spec", spec_errors) + under("observed", snapshot_errors)
    if errors:
        return None, None, errors
    return spec, snapshot, []
