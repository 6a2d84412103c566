# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's in-place upgrade: its steps, which of them remain, whether to drain it. Pure: no I/O.

The steps, in order (docs/in-place-upgrade.md), each recorded on the Node once done (annotation ANNOTATION, JSON
``{"version", "command", "step", "at", ...}``) so a run killed at any task is resumed by the next at the first step
not done:

    etcd-snapshot    the first control plane node only (kubeadm upgrade apply): an etcd snapshot first, through
                     the node's stacked etcd (none with external etcd, whose backups are its operator's)
    software         the new kubeadm, containerd and CNI plugins (never the kubelet: it must not run newer than
                     the API server it talks to, which kubeadm upgrade is about to move)
    kubeadm-upgrade  kubeadm upgrade apply <version> (the first control plane node) or kubeadm upgrade node
    drain            kubectl drain, or skipped when no other node can take the pods (the reason is recorded)
    kubelet          the new kubelet and kubectl, the kubelet restarted
    uncordon         kubectl uncordon, when the upgrade cordoned the node
    ready            the Node reports the new version and Ready (a control plane node: its static pods too)

What is observed on the host and the Node overrides the record where it can: a step whose result is missing is
done again (the record says the software is installed but kubeadm is not of the version), and a node already of
the version is not upgraded again.

An upgrade may also name the etcd image tag its kubeadm upgrade is to reach (``etcd_image_tag``, the plan's
``upgrade.etcd_image_tag``): on a control plane node with stacked etcd (an etcd static pod manifest), the
kubeadm upgrade is done only once that manifest's tag is the target or newer (kubeadm never downgrades etcd), so an
etcd-only upgrade at the same Kubernetes version is not taken for done. The record says the tag too, and is of
this upgrade only when its version and its tag are this upgrade's: an earlier upgrade to the same version recorded
its own steps and cordon, which say nothing of this one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_tag import behind

ANNOTATION = "control-plane.kubeadm.io/upgrade"
STEPS = ("etcd-snapshot", "software", "kubeadm-upgrade", "drain", "kubelet", "uncordon", "ready")
COMMANDS = ("apply", "node")
# The static pods whose image tag is the Kubernetes version (etcd's is etcd's own).
VERSIONED_COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
# Taints a pod may have to tolerate to run on a node; PreferNoSchedule does not keep it away.
KEEPING_AWAY = ("NoSchedule", "NoExecute")


def parse_version(text):
    """(major, minor, patch) of ``v1.37.1``; None for anything else."""
    match = VERSION.match(text or "")
    return tuple(int(part) for part in match.groups()) if match else None


def steps_of(command, etcd_snapshot=True):
    """The steps ``kubeadm upgrade <command>`` takes on a node, in order; ``etcd_snapshot`` false (external etcd):
    no snapshot through the node before ``apply``."""
    return STEPS if command == "apply" and etcd_snapshot else tuple(step for step in STEPS if step != "etcd-snapshot")


def read_record(text):
    """The annotation's record as a dict, or None when it is absent or not one (anything else reads as no record)."""
    try:
        record = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("step") not in STEPS or parse_version(record.get("version")) is None:
        return None
    return record


def progress(text):
    """What the snapshot says of a node's in-place upgrade (docs/snapshot.md ``upgrade``), from the annotation's
    text: ``{version, step, failed_step, error}`` (``step`` the last step done, null when none is; ``failed_step``
    and ``error`` the last step tried when it failed, else null), or None when there is no readable record."""
    try:
        record = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(record, dict) or parse_version(record.get("version")) is None:
        return None
    failed = record.get("failed") if isinstance(record.get("failed"), dict) else {}
    return {
        "version": record["version"],
        "step": record.get("step") if record.get("step") in STEPS else None,
        "failed_step": failed.get("step") if failed.get("step") in STEPS else None,
        "error": failed.get("error") if failed.get("step") in STEPS and isinstance(failed.get("error"), str) else None,
    }


def of_this_upgrade(record, version, etcd_image_tag=None):
    """Whether ``record`` is of the upgrade to ``version`` and ``etcd_image_tag`` (None: no etcd target)."""
    return bool(record) and record.get("version") == version and record.get("etcd_image_tag") == etcd_image_tag


def unfinished(progress_record):
    """Whether a node's upgrade (``progress``'s record, None for none) is under way or failed: a step done short of
    ``ready``, or a step that failed."""
    return bool(progress_record) and (progress_record.get("failed_step") is not None or progress_record.get("step") != "ready")


def record_step(record, version, command, step, at, etcd_image_tag=None, **extra):
    """The record once ``step`` of the upgrade to ``version`` (and ``etcd_image_tag``) is done: what an earlier step
    of the same upgrade recorded (``uncordon``, ``drain``) is kept, a record of another upgrade replaced."""
    kept = dict(record) if of_this_upgrade(record, version, etcd_image_tag) else {}
    kept.pop("failed", None)  # a step that went through clears the failure an earlier try recorded
    kept.update(extra, version=version, etcd_image_tag=etcd_image_tag, command=command, step=step, at=at)
    return kept


def etcd_reached(manifests, etcd_image_tag):
    """Whether the host's etcd static pod is at ``etcd_image_tag`` or newer; true without a target or without an
    etcd manifest (external etcd, a worker)."""
    return not behind((manifests or {}).get("etcd"), etcd_image_tag)


def observed_facts(observed, version, etcd_image_tag=None):
    """What the host and the Node say is already of ``version`` (and of ``etcd_image_tag``)."""
    node = observed.get("node") or {}
    tags = observed.get("manifests") or {}
    control_plane = bool(observed.get("control_plane"))
    return {
        "kubeadm": observed.get("kubeadm") == version,
        "manifests": control_plane and all(tags.get(component) == version for component in VERSIONED_COMPONENTS)
        and etcd_reached(tags, etcd_image_tag),
        "kubelet": observed.get("kubelet") == version,
        "node": node.get("kubelet_version") == version and node.get("ready") is True,
    }


def upgraded(observed, version, etcd_image_tag=None):
    """Whether the node is of ``version`` already: kubeadm, the kubelet (binary and running), its control plane
    (with its etcd at ``etcd_image_tag`` or newer)."""
    facts = observed_facts(observed, version, etcd_image_tag)
    return facts["kubeadm"] and facts["kubelet"] and facts["node"] and (facts["manifests"] or not observed.get("control_plane"))


def remaining_steps(observed, version, command, etcd_image_tag=None, etcd_snapshot=True):
    """The steps still to take, in order. ``observed``: ``control_plane`` (bool), ``kubeadm`` and ``kubelet`` (the
    binaries' versions), ``manifests`` ({component: image tag}), ``node`` ({kubelet_version, ready}) and
    ``record`` (read_record's); ``etcd_snapshot`` as :func:`steps_of`."""
    steps = steps_of(command, etcd_snapshot)
    record = observed.get("record")
    this = of_this_upgrade(record, version, etcd_image_tag) and record["step"] in steps
    position = steps.index(record["step"]) if this else -1
    facts = observed_facts(observed, version, etcd_image_tag)
    # a step whose result is not there is done again, and everything after it
    for step, fact in (("software", facts["kubeadm"]),
                       ("kubeadm-upgrade", facts["manifests"] or not observed.get("control_plane")),
                       ("kubelet", facts["kubelet"])):
        if position >= steps.index(step) and not fact:
            position = steps.index(step) - 1
    remaining = list(steps[position + 1:])
    if upgraded(observed, version, etcd_image_tag):
        # of the version already: what remains is to undo the upgrade's own cordon and to confirm an upgrade it began
        began = position >= 0
        remaining = [step for step in remaining
                     if (step == "uncordon" and position >= steps.index("drain")) or (step == "ready" and began)]
    return remaining


def refusals(observed, version, command):
    """Why the node cannot be upgraded to ``version`` with ``kubeadm upgrade <command>``; empty when it can."""
    found = []
    target = parse_version(version)
    if target is None:
        found.append("version: %r is not a release version like v1.37.1" % (version,))
    if command not in COMMANDS:
        found.append("command: %r is neither apply nor node" % (command,))
    if found:
        return found
    node = observed.get("node")
    if not node:
        found.append("the host has no Node: an in-place upgrade upgrades a machine that runs (a machine without a Node "
                     "is replaced, not upgraded)")
        return found
    if command == "apply" and not observed.get("control_plane"):
        found.append("kubeadm upgrade apply runs on a control plane node; this host has no static pod manifest of the "
                     "API server (a worker is upgraded with kubeadm upgrade node)")
    running = parse_version(node.get("kubelet_version"))
    if running is not None and running > target:
        found.append("the Node's kubelet is %s, newer than %s: an in-place upgrade never downgrades"
                     % (node["kubelet_version"], version))
    current = parse_version((observed.get("manifests") or {}).get("kube-apiserver"))
    if observed.get("control_plane") and current is not None and (target[0], target[1]) > (current[0], current[1] + 1):
        found.append("the control plane runs %s: kubeadm upgrades a control plane one minor at a time, so %s is "
                     "reached through v%d.%d first" % (observed["manifests"]["kube-apiserver"], version, current[0], current[1] + 1))
    return found


def _ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (node.get("status") or {}).get("conditions") or [])


def _keeping_away(node):
    return set((taint.get("key"), taint.get("effect")) for taint in (node.get("spec") or {}).get("taints") or []
               if taint.get("effect") in KEEPING_AWAY)


def drain_decision(name, nodes):
    """``{"drain": bool, "reason": str}`` for the Node ``name`` among ``nodes`` (Node objects): drained only when
    another node can take its pods - Ready, schedulable, and with no taint that keeps pods away which this node
    lacks (the pods running here tolerate this node's taints, no more). Otherwise the drain only adds downtime:
    the pods would have nowhere to go."""
    this = next((node for node in nodes if node["metadata"]["name"] == name), None)
    others = [node for node in nodes if node["metadata"]["name"] != name]
    if this is None:
        return {"drain": False, "reason": "the Node %s is not there" % name}
    if not others:
        return {"drain": False, "reason": "a single-node cluster: the pods have nowhere to go"}
    tolerated = _keeping_away(this)
    able = sorted(node["metadata"]["name"] for node in others
                  if _ready(node) and not (node.get("spec") or {}).get("unschedulable") and _keeping_away(node) <= tolerated)
    if not able:
        return {"drain": False, "reason": "no other node can take the pods (none is Ready, schedulable and tainted no more "
                                          "than %s)" % name}
    return {"drain": True, "reason": "%s can take the pods" % ", ".join(able)}


def uncordon_after(record, version, node, etcd_image_tag=None):
    """Whether the upgrade is to uncordon the node once done: true unless the node was cordoned before the upgrade
    cordoned it (someone else's cordon stays). The first answer is recorded and kept for the whole upgrade."""
    if of_this_upgrade(record, version, etcd_image_tag) and isinstance(record.get("uncordon"), bool):
        return record["uncordon"]
    return not node.get("unschedulable")
