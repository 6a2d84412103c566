# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole plan: the steps the flows would take one after the other, if each did what it says. Pure, no I/O.

``planner.plan`` answers for one observation: the next step. Check mode of the reconcile flow, and an operator
before a run, want the whole way there. :func:`project` asks the planner, applies the step's *expected* effect
to a copy of the snapshot (:func:`after_step`: what the act plays leave behind when they succeed), and asks
again, until the answer is ``none`` or ``wait`` (kept as the last entry), or ``limit`` steps have been
projected; then a last entry with action ``stopped`` says so and names the step that would come next.

It only re-plans. Every entry is what ``planner.plan`` returns for the projected snapshot, so preflight, the
quorum projections, the remediation limits and the kubeadm-config version are checked again before each step,
and the projection never shows progress where a pass would wait. It goes wrong only where the world does not do
what a step says (a join that fails, a Node that never gets Ready, a drain that does not finish): it is a
projection, not a promise, and each real pass observes again. The clock does not move: ``now`` stays the
snapshot's, so no timer (a health check timeout, a retry period, ``rollout.after``) runs out on the way, and a
step a timer holds back stays a ``wait``.

The expected effects, as the act plays produce them:

* ``scale_up``, and a ``rollout`` whose step is ``scale_up``: a machine appears. Its host is only picked when
  the step runs (the first free host of the failure domain, or one the machine provider creates), so the
  projection names it with a placeholder, ``new-1``, ``new-2``, ... It stands in the step's failure domain, runs
  the spec's version and, with managed etcd, the spec's etcd image tag (kubeadm renders it from the
  kubeadm-config), records the hash of the spec part its bootstrap reads (``init`` for the first machine, else
  ``join``), and is created one second after the newest machine (and after ``now``), so every choice by age sees
  it as the newest. It has a Ready Node and every control plane pod healthy, as ``machine_create`` waits for,
  and its certificates run for the spec's ``certificateValidityPeriod`` (kubeadm's one year when unset). With
  managed etcd it has a member named after its Node: voting (kubeadm promotes the learner before the join
  returns), answering, in the same cluster, and listed by every member that lists members. After ``kubeadm
  init`` the cluster is initialized, its endpoint answers and the kubeadm-config ConfigMap names the spec's
  version. A remediation waiting for its replacement ends here: the new machine carries its record (RM9).
* ``scale_down``, a ``rollout`` whose step is ``scale_down``, ``remediate`` and ``finish_delete``: the machine and
  its etcd member are gone, and no member lists that member any more; if it led, the step's leader candidate
  leads. ``remediate`` also records ``remediation_in_progress`` (the machine, ``now``, its retry count).
* ``remove_etcd_member``: that member is gone, the same way.
* ``update_kubeadm_config``: the ConfigMap's ClusterConfiguration is the spec's: its version and every field the
  update manages (``kubeadm_config.updated_cluster_configuration``).
* ``upgrade_in_place``: the machine runs the spec's version, and the step's etcd image tag when it ran an older
  one (kubeadm never downgrades etcd); its upgrade record says done (``ready``); its certificates are new (kubeadm
  upgrade renews them). Its spec hash stays: the planner
  upgrades in place only a machine whose reasons to be outdated are its version and its etcd
  (``rollout.split_by_strategy``).
* ``upgrade_workers``: each worker of the step runs the spec's version, Ready and schedulable again, its upgrade
  record done (the flow drains it, upgrades it and uncordons it).
* ``renew_certificates``: the machine's certificates are new (they expire a validity period from ``now``), no
  renewal is under way on it, and its pods are healthy.
* ``remediate_external``: the projection cannot know whether the user's remediation tasks heal the machine; it
  assumes they do, as it assumes every other step succeeds. The attempt is recorded (``attempts`` + 1, ``last``
  ``now``) and the machine is back: its Node Ready since ``now`` and nothing else reported, every pod healthy, no
  recorded failure, no remediation request (the flow serves it), its etcd member answering and listing every
  member; if it led, the step's leader candidate leads. The planner then clears the request. Where the tasks do
  not heal it, a real pass sees it unhealthy and waits out the attempt's timeout (RX3) before the next one. A
  worker's: the attempt recorded on it, its Node Ready since ``now``, no remediation request.
* ``clear_external_remediation``: the machine's (or worker's) request is gone (``attempts`` 0, ``last`` null).
* ``remediate_worker``: the worker joined again - a new Node of its name and group, at the kubeadm-config's
  version, Ready since ``now``, no remediation asked - and the record of its remediation cleared; with a ``step``
  (a replacement by a new host, WR6), as ``roll_workers``.
* ``roll_workers``: ``join_worker``: the replacement joined so, on the host the plan names or, when the flow is to
  pick it, a placeholder ``new-worker-N``; ``remove_worker``: the replaced worker's Node gone. The replacement's
  record is kept while its other step is owed and cleared once both are done.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
from datetime import timedelta

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_tag
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import node_name
from ansible_collections.kubeadm.control_plane.plugins.module_utils.kubeadm_config import updated_cluster_configuration
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import (
    CLEAR_EXTERNAL_REMEDIATION,
    FINISH_DELETE,
    NONE,
    REMEDIATE,
    REMEDIATE_EXTERNAL,
    REMEDIATE_WORKER,
    REMOVE_ETCD_MEMBER,
    ROLL_WORKERS,
    ROLLOUT,
    SCALE_DOWN,
    SCALE_UP,
    RENEW_CERTIFICATES,
    UPDATE_KUBEADM_CONFIG,
    UPGRADE_IN_PLACE,
    UPGRADE_WORKERS,
    WAIT,
    plan,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.rollout import wanted_etcd_tag
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import certificate_validity, etcd_is_external, with_v
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import format_time, parse_time
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_rollout import JOIN

STOPPED = "stopped"
# What a person reads of each step; the rest of the planner's result explains a single decision.
KEYS = ("action", "step", "machine", "workers", "failure_domain", "init", "member", "reason", "blocked_by")
PLACEHOLDER = "new-%d"
# A worker a rolling replacement joins on a host the flow picks when it runs.
WORKER_PLACEHOLDER = "new-worker-%d"
# Actions that remove a machine; a rollout only with step scale_down, since after_step tries creation first.
_REMOVES_A_MACHINE = (SCALE_DOWN, ROLLOUT, REMEDIATE, FINISH_DELETE)


def project(spec, snapshot, limit=16, remediate_workers=False, provider_makes_hosts=False):
    """The steps from ``snapshot`` on (module docstring), each trimmed by :func:`summary`; the last one is
    ``none``, ``wait`` or ``stopped``. ``spec`` and ``snapshot`` are normalized, as ``planner.plan`` takes them;
    ``snapshot`` is not changed. ``limit``: how many acting steps to project at most; ``remediate_workers`` and
    ``provider_makes_hosts`` as ``planner.plan``'s."""
    placeholders = free_placeholders(snapshot)
    steps = []
    current = snapshot
    while True:
        result = plan(spec, current, remediate_workers=remediate_workers, provider_makes_hosts=provider_makes_hosts)
        if result["action"] in (NONE, WAIT):
            return steps + [summary(result)]
        if len(steps) >= limit:
            return steps + [_stopped(len(steps), result)]
        steps.append(summary(result))
        current = after_step(spec, current, result, next(placeholders) if creates_machine(result) else None)


def free_placeholders(snapshot):
    """``new-1``, ``new-2``, ... skipping the names of the snapshot's machines."""
    taken = {m["name"] for m in snapshot.get("machines") or []}
    return (name for name in (PLACEHOLDER % n for n in itertools.count(1)) if name not in taken)


def creates_machine(result):
    """Whether the planner's ``result`` adds a machine: a scale up, alone or as a rollout's step."""
    return result["action"] == SCALE_UP or (result["action"] == ROLLOUT and result["step"] == SCALE_UP)


def summary(result):
    """The planner's ``result`` trimmed to :data:`KEYS`."""
    return {key: copy.deepcopy(result.get(key)) for key in KEYS}


def after_step(spec, snapshot, result, new_machine=None):
    """A copy of ``snapshot`` with the expected effect of the planner's ``result`` (module docstring).

    ``new_machine``: the placeholder name of the machine the step creates (:func:`creates_machine`). Raises
    ValueError for ``none`` and ``wait``, which change nothing.
    """
    after = copy.deepcopy(snapshot)
    action = result["action"]
    managed = not etcd_is_external(spec)
    if creates_machine(result):
        _add_machine(spec, after, result, new_machine, managed)
    elif action in _REMOVES_A_MACHINE:
        _remove_machine(after, result, managed)
    elif action == REMOVE_ETCD_MEMBER:
        _remove_members(after, {result["member"]["id"]}, result["leader_candidate"])
    elif action == UPDATE_KUBEADM_CONFIG:
        stored = (after.get("kubeadm_config") or {}).get("cluster_configuration")
        after["kubeadm_config"] = {"kubernetes_version": with_v(spec["version"]),
                                   "cluster_configuration": None if stored is None else updated_cluster_configuration(spec, stored)}
    elif action == UPGRADE_IN_PLACE:
        machine = _machine(after, result["machine"])
        # kubeadm upgrade renews the machine's certificates (its --certificate-renewal, on by default)
        machine.update(version=with_v(spec["version"]), upgrade=_upgraded(spec), certificates_expire=_renewed(spec, after))
        etcd = result["upgrade"]["etcd_image_tag"]
        if etcd_tag.behind(machine.get("etcd_image_tag"), etcd):
            machine["etcd_image_tag"] = etcd
    elif action == RENEW_CERTIFICATES:
        machine = _machine(after, result["machine"])
        machine.update(certificates_expire=_renewed(spec, after), certificate_renewal=None, components=_healthy_components(managed))
    elif action == UPGRADE_WORKERS:
        for worker in after["workers"]:
            if worker["name"] in result["workers"]:
                worker.update(version=with_v(spec["version"]), ready=True, unschedulable=False, upgrade=_upgraded(spec))
    elif action == ROLL_WORKERS or (action == REMEDIATE_WORKER and result.get("step")):
        _roll_worker(after, result)
    elif action == REMEDIATE_WORKER:
        _join_worker(after, result["workers"][0], result["worker_group"])
        after["worker_remediation_in_progress"] = None
    elif action == REMEDIATE_EXTERNAL and result.get("workers"):
        _heal_worker(after, result)
    elif action == REMEDIATE_EXTERNAL:
        _heal(after, result, managed)
    elif action == CLEAR_EXTERNAL_REMEDIATION:
        target = _worker(after, result["machine"]) if result.get("workers") else _machine(after, result["machine"])
        target["external_remediation"] = {"attempts": 0, "last": None}
    else:
        raise ValueError("%s changes nothing in the cluster: there is no effect to project" % action)
    return after


def _join_worker(snapshot, name, group):
    """A worker joined: a new Node of ``name`` (another uid than any before it), in ``group``, at the cluster's version,
    Ready since ``now``, no remediation asked."""
    uid = hashlib.sha256(("%s#%s#%d" % (name, snapshot["now"], len(snapshot["workers"]))).encode("utf-8")).hexdigest()[:32]
    snapshot["workers"] = [w for w in snapshot["workers"] if w["name"] != name] + [{
        "name": name, "group": group, "created": snapshot["now"], "uid": uid, "replace_requested": False,
        "version": (snapshot.get("kubeadm_config") or {}).get("kubernetes_version"), "ready": True, "unschedulable": False,
        "upgrade": None, "node": {"name": name, "conditions": [{"type": "Ready", "status": "True", "last_transition": snapshot["now"]}]},
        "remediation": {"requested": False, "retries": 0, "last": None}}]
    snapshot["workers"].sort(key=lambda w: w["name"])


def _roll_worker(snapshot, result):
    """A step of a rolling replacement: the replacement joined (on a placeholder host when the flow is to pick one), or
    the replaced worker gone; the record kept while the other step is owed, cleared once both are done."""
    record = dict(result["worker_rollout"])
    record["timestamp"] = record["timestamp"] or snapshot["now"]
    if result["step"] == JOIN:
        if not record["replacement"]:
            taken = {w["name"] for w in snapshot["workers"]}
            record["replacement"] = next(WORKER_PLACEHOLDER % n for n in itertools.count(1) if WORKER_PLACEHOLDER % n not in taken)
        _join_worker(snapshot, record["replacement"], record["group"])
        done = not record["surge"]
    else:
        snapshot["workers"] = [w for w in snapshot["workers"] if w["name"] != record["worker"]]
        done = record["surge"]
    snapshot["worker_rollout_in_progress"] = None if done else record


def _add_machine(spec, snapshot, result, name, managed):
    created = _after_newest(snapshot)
    bootstrap = "init" if result["init"] else "join"
    replaces = result.get("remediation_for")
    snapshot["machines"].append(
        {
            "name": name,
            "host": None,
            "failure_domain": result["failure_domain"],
            "created": format_time(created),
            "version": with_v(spec["version"]),
            "etcd_image_tag": wanted_etcd_tag(spec),
            "spec_hash": result["spec_hashes"][bootstrap],
            "bootstrap": bootstrap,
            "provisioned": True,
            "deleting": False,
            "delete_requested": False,
            "failure": None,
            "remediation": {
                "requested": False,
                "retries": (replaces or {}).get("retry_count") or 0,
                "last": (replaces or {}).get("timestamp"),
            },
            "external_remediation": {"attempts": 0, "last": None},
            "node": {"name": name, "conditions": [{"type": "Ready", "status": "True", "last_transition": format_time(created)}]},
            "components": _healthy_components(managed),
            "components_since": {name: format_time(created) if state == "healthy" else None
                                 for name, state in _healthy_components(managed).items()},
            "certificates_expire": format_time(created + certificate_validity(spec)),
            # what the new host will say of its CAs and its kubelet is not known before it is observed
            "certificate_authorities_expire": None,
            "kubelet_certificate_expire": None,
            "kubelet_certificate_rotates": None,
            "certificate_renewal": None,
            "upgrade": None,
        }
    )
    snapshot["remediation_in_progress"] = None
    if managed:
        _add_member(snapshot, name)
    if result["init"]:
        snapshot.update(initialized=True, endpoint_ready=True, kubeadm_config={"kubernetes_version": with_v(spec["version"]), "cluster_configuration": None})


def _healthy_components(managed):
    """Every control plane pod healthy; with external etcd there is no etcd pod, which observation reports as missing."""
    return {
        "api_server": "healthy",
        "controller_manager": "healthy",
        "scheduler": "healthy",
        "etcd": "healthy" if managed else "missing",
    }


def _add_member(snapshot, name):
    members = snapshot["etcd"]["members"]
    member_id = _new_member_id(name, {m.get("id") for m in members})
    for member in members:
        if member.get("member_ids_seen"):
            member["member_ids_seen"] = sorted(member["member_ids_seen"] + [member_id])
    members.append(
        {
            "name": name,
            "id": member_id,
            "peer_urls": [],
            "client_urls": [],
            "responsive": True,
            "error": None,
            "leader": not members,
            "learner": False,
            "alarms": [],
            "member_ids_seen": sorted([m["id"] for m in members] + [member_id]),
            "cluster_id": next((m["cluster_id"] for m in members if m.get("cluster_id")), None),
            "version": None,
            "db_size": None,
            "raft_term": None,
            "raft_index": None,
        }
    )


def _new_member_id(name, taken):
    """A stable etcd id for a placeholder member (etcd's own is random), unlike any id in ``taken``."""
    candidates = (hashlib.sha256(("%s#%d" % (name, n)).encode("utf-8")).hexdigest()[:16] for n in itertools.count())
    return next(c for c in candidates if c not in taken)


def _remove_machine(snapshot, result, managed):
    leaving = _machine(snapshot, result["machine"])
    snapshot["machines"] = [m for m in snapshot["machines"] if m is not leaving]
    node = node_name(leaving)
    if managed and node is not None:
        members = snapshot["etcd"]["members"]
        _remove_members(snapshot, {m["id"] for m in members if m.get("name") == node}, result["leader_candidate"])
    if result["action"] == REMEDIATE:
        snapshot["remediation_in_progress"] = {"machine": leaving["name"], "timestamp": snapshot["now"], "retry_count": result["retry_count"]}


def _worker(snapshot, name):
    return next(w for w in snapshot["workers"] if w["name"] == name)


def _attempted(target, now):
    """One more external remediation attempt recorded on ``target`` (a machine or a worker), begun ``now``."""
    record = target.get("external_remediation") or {}
    target["external_remediation"] = {"attempts": (record.get("attempts") or 0) + 1, "last": now}


def _heal_worker(snapshot, result):
    """A worker's ``remediate_external`` as the projection assumes it ends: the attempt recorded, its Node Ready."""
    worker = _worker(snapshot, result["machine"])
    _attempted(worker, snapshot["now"])
    worker.update(ready=True, remediation=dict(worker.get("remediation") or {}, requested=False),
                  node={"name": worker["name"], "conditions": [{"type": "Ready", "status": "True", "last_transition": snapshot["now"]}]})


def _heal(snapshot, result, managed):
    """``remediate_external`` as the projection assumes it ends: the attempt recorded, the machine healthy again."""
    now = snapshot["now"]
    machine = _machine(snapshot, result["machine"])
    _attempted(machine, now)
    machine["failure"] = None
    machine["remediation"] = dict(machine.get("remediation") or {}, requested=False)
    machine["node"]["conditions"] = [{"type": "Ready", "status": "True", "last_transition": now}]
    machine["components"] = _healthy_components(managed)
    if not managed:
        return
    members = snapshot["etcd"]["members"]
    own = [m for m in members if m.get("name") == node_name(machine)]
    every_id = sorted(m["id"] for m in members)
    for member in own:
        # etcd serves no member list to a learner
        member.update(responsive=True, error=None, member_ids_seen=[] if member.get("learner") else every_id)
    # a leader that went down lost its leadership to the candidate the step names
    if any(m.get("leader") for m in own) and result["leader_candidate"]:
        heir = node_name(_machine(snapshot, result["leader_candidate"]))
        for member in members:
            member["leader"] = member.get("name") == heir


def _remove_members(snapshot, ids, leader_candidate):
    """Members ``ids`` leave; the others stop listing them, and leadership moves as the flows move it first."""
    members = snapshot["etcd"]["members"]
    led = any(m.get("leader") for m in members if m["id"] in ids)
    heir = node_name(_machine(snapshot, leader_candidate)) if led and leader_candidate else None
    kept = [m for m in members if m["id"] not in ids]
    for member in kept:
        member["member_ids_seen"] = [i for i in member.get("member_ids_seen") or [] if i not in ids]
        if heir is not None:
            member["leader"] = member.get("name") == heir
    snapshot["etcd"]["members"] = kept


def _upgraded(spec):
    """A node's upgrade record once its in-place upgrade to the spec's version is done."""
    return {"version": with_v(spec["version"]), "step": "ready", "failed_step": None, "error": None}


def _machine(snapshot, name):
    return next(m for m in snapshot["machines"] if m["name"] == name)


def _renewed(spec, snapshot):
    """When certificates renewed now expire."""
    return format_time(parse_time(snapshot["now"]) + certificate_validity(spec))


def _after_newest(snapshot):
    """One second after the newest machine's creation, and after ``now``."""
    moments = [parse_time(snapshot["now"])] + [parse_time(m["created"]) for m in snapshot["machines"]]
    return max(moments) + timedelta(seconds=1)


def _stopped(count, upcoming):
    """The last entry when the projection reached its limit: it names the step that would come next."""
    label = upcoming["action"] + (" " + upcoming["step"] if upcoming.get("step") else "")
    return {
        "action": STOPPED,
        "step": None,
        "machine": None,
        "workers": [],
        "failure_domain": None,
        "init": False,
        "member": None,
        "reason": "the projection stops after %d steps; the next would be %s: %s" % (count, label, upcoming["reason"]),
        "blocked_by": [],
    }
