# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""External remediation: whether an unhealthy machine is first handed to the user's own remediation tasks (a
power cycle through IPMI or Redfish, say), how many times, what follows the last attempt, and when its request
is cleared. Pure, no I/O. The health-check seed's external remediation (stories 3-5), with a bounded number of
attempts and an optional escalation that the seed leaves to the external controller.

The request lives on the machine's Node (annotation ``control-plane.kubeadm.io/external-remediation``, JSON
``{attempts, last}``; docs/state.md), written by the remediate flow before each attempt; the snapshot carries it
as ``external_remediation`` (docs/snapshot.md). The rules (docs/rules.md RX1-RX6):

RX1  Only with the spec's ``remediation.external`` set, and only for the machine ``remediation.decide`` would
     remediate now: every precondition of RM5, RM6's retry limits among them, holds for it. The same
     preconditions as a deletion on purpose: a power cycle takes the machine's etcd member down as surely as a
     deletion does, so etcd must keep quorum without it (RM7) and leadership must have somewhere to go (RM5.8),
     and it is one disruption at a time (RM5.2, RM5.5, RM5.6). A held-back remediation stays held back.
RX2  A machine without a Node has nowhere to count its attempts, so they could not be bounded: with
     ``escalate`` it is deleted and recreated at once; without, it waits for a person
     (``external_remediation_no_node``).
RX3  While the last attempt's timeout runs (``last`` + ``timeout`` strictly after now), nothing more is tried:
     the machine may still be coming back (``external_remediation_in_progress``, lifted by time; it says when).
     This holds an escalation back too, and keeps a run that stopped in the middle of an attempt from starting
     the next one at once.
RX4  Fewer attempts recorded than ``attempts``: hand the machine over (``remediate_external``), attempt =
     recorded + 1, with the timeout.
RX5  Attempts used up: with ``escalate``, the deletion RM8 makes (``remediate``); without, the machine waits for
     a person (``external_remediation_exhausted``).
RX6  A machine that carries attempts and that the health check finds healthy (neither unhealthy nor pending, a
     Node, not being deleted) has its request cleared (``clear_external_remediation``), oldest first; a machine
     still unhealthy keeps its count, whether or not the budget allows remediating it.
"""

from __future__ import annotations

from collections import namedtuple
from datetime import timedelta

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import oldest_first
from ansible_collections.kubeadm.control_plane.plugins.module_utils.health_check import span
from ansible_collections.kubeadm.control_plane.plugins.module_utils.remediation import REMEDIATE, SKIP
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import format_time, parse_time

REMEDIATE_EXTERNAL = "remediate_external"
NO_NODE = "external_remediation_no_node"
IN_PROGRESS = "external_remediation_in_progress"
EXHAUSTED = "external_remediation_exhausted"


def attempts_of(machine):
    """(attempts, last) of a machine's external remediation record; a machine without one has made none."""
    record = machine.get("external_remediation") or {}
    return record.get("attempts") or 0, record.get("last")


# What RX2-RX5 make of one machine that remediation would take now. machine: its name; status: REMEDIATE_EXTERNAL (attempt and
# timeout_seconds set), REMEDIATE (a deletion: RX2 or RX5 escalating) or SKIP (rule, and retry_after_seconds when time
# lifts it); reason: why, in words.
Verdict = namedtuple("Verdict", "machine status rule reason attempt timeout_seconds retry_after_seconds")


def verdict(machine, settings, now, why):
    """RX2-RX5 for ``machine`` (a snapshot machine or worker, with ``node`` and ``external_remediation``), which
    remediation would take now for ``why``, under ``settings`` (the spec's external remediation, set)."""
    name = machine["name"]
    limit, timeout = settings["attempts"], settings["timeout"]
    if machine.get("node") is None:
        if settings["escalate"]:
            return _verdict(name, REMEDIATE, "%s has no Node to count external remediation attempts on: escalate to delete and recreate (%s)" % (name, why))
        return _verdict(name, SKIP, "%s has no Node to count external remediation attempts on, and escalate is off" % name, NO_NODE)
    attempts, last = attempts_of(machine)
    if attempts and last is not None:
        ends = parse_time(last) + timedelta(seconds=timeout)
        if ends > now:
            reason = "%s: external remediation attempt %d of %d began at %s; its timeout of %s runs out at %s" % (
                name, attempts, limit, format_time(parse_time(last)), span(timeout), format_time(ends))
            return _verdict(name, SKIP, reason, IN_PROGRESS, retry_after=(ends - now).total_seconds())
    if attempts < limit:
        return _verdict(name, REMEDIATE_EXTERNAL, "%s is unhealthy: external remediation, attempt %d of %d" % (name, attempts + 1, limit),
                        attempt=attempts + 1, timeout=timeout)
    if settings["escalate"]:
        return _verdict(name, REMEDIATE, "%s is still unhealthy after %d external remediation attempts: escalate to delete and recreate (%s)"
                        % (name, attempts, why))
    return _verdict(name, SKIP, "%s is still unhealthy after %d external remediation attempts (%d allowed), and escalate is off"
                    % (name, attempts, limit), EXHAUSTED)


def _verdict(name, status, reason, rule=None, attempt=None, timeout=None, retry_after=None):
    return Verdict(name, status, rule, reason, attempt, timeout, retry_after)


def decide(decision, machines, settings, now):
    """RX1-RX5: ``decision`` (``remediation.decide``'s) once external remediation ``settings`` (the spec's
    ``remediation.external``; None = off) have had their say, as a ``remediation.Decision``.

    Its status is ``remediate_external`` with ``attempt`` and ``timeout_seconds`` (RX4), ``remediate`` (no
    external remediation, or RX2 / RX5 escalating) or ``skip`` naming its rule (RX2, RX3, RX5).
    """
    if settings is None or decision.status != REMEDIATE:
        return decision
    machine = next(m for m in machines if m["name"] == decision.machine)
    found = verdict(machine, settings, now, decision.reason)
    if found.status == REMEDIATE_EXTERNAL:
        return decision._replace(status=found.status, reason=found.reason, attempt=found.attempt, timeout_seconds=found.timeout_seconds)
    if found.status == REMEDIATE:
        return decision._replace(reason=found.reason)
    return decision._replace(status=SKIP, rule=found.rule, reason=found.reason, leader_candidate=None,
                             retry_after_seconds=found.retry_after_seconds)


def requests_to_clear(machines, health):
    """RX6: the machines whose external remediation request is cleared, oldest first.

    ``health``: the health check's verdict (``health_check.evaluate``); healthy here is what it counts as
    healthy (MHC3), which also keeps the machines without a Node to write to, or being deleted, out.
    """
    not_healthy = set(health.get("unhealthy") or []) | set(health.get("pending") or [])
    return oldest_first(
        [
            m
            for m in machines
            if attempts_of(m)[0] > 0 and m["name"] not in not_healthy and m.get("node") is not None and not m.get("deleting")
        ]
    )
