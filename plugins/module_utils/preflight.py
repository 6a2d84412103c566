# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight gate before a machine is created or removed: a report of what is unsafe, not a boolean.

Pure, no I/O. The rules (docs/rules.md PF1–PF5, G1's endpoint wait, and the seed's etcd checks), each failure
named by its rule:

* PF1 — no machines at all: pass (creating the first machine runs no preflight, PF5).
* ``etcd_topology`` — the snapshot's etcd (stacked or external) must be the topology the spec declares;
  otherwise the observation and the spec disagree and nothing is safe to decide.
* ``endpoint_not_ready`` — once the cluster is initialized, the stable API endpoint must answer (G1).
* ``machines_deleting`` (PF2) — no machine may be deleting; the exclusion does not apply here.
* ``machines_without_node`` (PF3) — every machine not excluded must have a node.
* ``components_not_healthy`` (PF3) — on every such machine the API server, controller manager and scheduler
  pods (and the etcd pod with managed etcd) must be ``true``; false and unknown both fail.
* ``etcd_members_not_healthy`` (PF3, managed etcd) — every such machine's etcd member condition must be
  ``true`` (``etcd_health``'s EH3 / EH4 verdict).
* ``etcd_cluster`` — the seed's stacked-etcd checks (as many members as machines, every member answers and
  reports the same member list, no alarm), or, for external etcd, that an endpoint answers.

Every failure is listed (PF4), with the machines it concerns. A scale down excludes the machine it removes
(PF5): the checks then look at the cluster as it will be without that machine and its etcd member. The scale up
that creates a remediation's replacement excludes the machines flagged for remediation (RM11, docs/rules.md).
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import (
    ETCD_MEMBER,
    TRUE,
    all_conditions,
    node_name,
)


def check(snapshot, etcd_managed, excluded=()):
    """The preflight report ``{ok, excluded, failures: [{rule, message, machines}]}`` for ``snapshot``.

    ``excluded``: the names of the machines the checks leave out, with their etcd members (PF5, RM11).
    """
    machines = snapshot.get("machines") or []
    failures = []
    if not machines:
        return _report(failures, excluded)
    etcd = snapshot.get("etcd") or {}
    if bool(etcd.get("external")) == etcd_managed:
        failures.append(
            blocker(
                "etcd_topology",
                topology_disagreement(not etcd_managed, bool(etcd.get("external"))),
            )
        )
    if snapshot.get("initialized") and not snapshot.get("endpoint_ready"):
        failures.append(blocker("endpoint_not_ready", "the stable API endpoint does not answer"))

    deleting = [m["name"] for m in machines if m.get("deleting")]
    if deleting:
        failures.append(blocker("machines_deleting", "%s being deleted; wait until that finishes" % _is_are(deleting), deleting))

    kept = [m for m in machines if m["name"] not in excluded]
    excluded_nodes = {node_name(m) for m in machines if m["name"] in excluded} - {None}
    members = [mb for mb in etcd.get("members") or [] if mb.get("name") not in excluded_nodes]
    health = etcd_health.evaluate(dict(etcd, members=members), kept)
    conditions = all_conditions(kept, etcd_managed, health["members_by_machine"])

    without_node = [m["name"] for m in kept if m.get("node") is None]
    if without_node:
        failures.append(blocker("machines_without_node", "%s no node yet" % _has_have(without_node), without_node))
    with_node = [m["name"] for m in kept if m.get("node") is not None]
    pods = _not_true(conditions, with_node, lambda c: c != ETCD_MEMBER)
    if pods:
        failures.append(blocker("components_not_healthy", _describe(pods), sorted(pods)))
    if etcd_managed:
        members_down = _not_true(conditions, with_node, lambda c: c == ETCD_MEMBER)
        if members_down:
            failures.append(blocker("etcd_members_not_healthy", _describe(members_down), sorted(members_down)))
    if health["problems"]:
        failures.append(blocker("etcd_cluster", "; ".join(health["problems"])))
    return _report(failures, excluded)


def _not_true(conditions, names, wanted):
    """``{machine: [(component, entry), ...]}`` for the machines with a selected condition not ``true``."""
    out = {}
    for name in names:
        bad = [(c, e) for c, e in conditions[name].items() if wanted(c) and e["status"] != TRUE]
        if bad:
            out[name] = bad
    return out


def _describe(bad):
    return "; ".join(
        "%s: %s" % (name, ", ".join("%s %s (%s)" % (c, e["status"], e["reason"]) for c, e in entries))
        for name, entries in sorted(bad.items())
    )


def blocker(rule, message, machines=()):
    """What holds a step back: the rule, what was seen, and the machines concerned (the plan's blocked_by)."""
    return {"rule": rule, "message": message, "machines": list(machines)}


def _report(failures, excluded):
    return {"ok": not failures, "excluded": sorted(excluded), "failures": failures}


def topology_disagreement(declared_external, observed_external):
    """Rule ``etcd_topology``'s words for a spec that declares one etcd topology over a cluster of the other."""
    return "the spec declares %s etcd but the observed cluster uses %s etcd" % (_topology(declared_external), _topology(observed_external))


def _topology(external):
    return "external" if external else "stacked"


def _is_are(names):
    return "%s %s" % (", ".join(names), "is" if len(names) == 1 else "are")


def _has_have(names):
    return "%s %s" % (", ".join(names), "has" if len(names) == 1 else "have")
