# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether to remediate (delete and recreate) an unhealthy control plane machine now, and which one.

Pure, no I/O. The rules (docs/rules.md RM1–RM10 after Cluster API v1.7.9, RM4 after v1.10, RM12 of its own):

RM1  A machine is flagged when the health check finds it unhealthy *and* allows remediation (the budget of
     ``max_unhealthy`` / ``unhealthy_range``); that verdict comes from ``health_check``. Unhealthy machines
     the budget does not allow to remediate are a skip (``remediation_not_allowed``, MHC8).
RM3  No flagged machine → nothing to do.
RM12 A flagged machine whose in-place upgrade to the spec's version is under way (``upgrading``: its Node
     records a step done short of ``ready``, or a failed step), or whose certificate renewal in place is
     (``renewing``: its host's record), is not selected, unless remediation was asked for it by hand (the
     ``remediate-machine`` annotation): half done, it may be unhealthy until its remaining steps are taken, and
     the flow finishes it first (IP5, CR3) rather than a replacement undoing the in-place promise. With no
     other flagged machine → skip (``upgrade_in_progress``).
RM4  Selection, the most broken first (Cluster API v1.10+, ``pickMachineToBeRemediated``): the machine
     remediation was asked for by hand (the ``remediate-machine`` annotation), then one without a Node, then
     the first that holds, in order, of: its etcd member, its etcd pod, its API server, its controller manager,
     its scheduler not healthy (a condition false or unknown); then the oldest, ties by name.
RM5  Preconditions, in this order, the first failure wins:
     1. the selected machine is already deleting → stop (``already_deleting``);
     2. an earlier remediation's replacement is not created yet → skip (``remediation_in_progress``; see
        ``in_progress`` for when a record no longer counts);
     3. retry limits (RM6) → skip (``retry_period`` / ``max_retries``);
     — only once the control plane is initialized —
     4. one machine or fewer → skip (``too_few_machines``; actual machines, not replicas);
     5. a machine that is *not* flagged has no node yet → skip (``machine_provisioning``);
     6. any machine is deleting → skip (``machine_deleting``);
     6a. no other machine has every component healthy → skip (``no_healthy_machine``; Cluster API v1.13+,
        ``canSafelyRemediateMachine``);
     6b. managed etcd: a learner is among the members → skip (``etcd_learner``; v1.13+: a join is under way);
     7. managed etcd: removing the machine's member must keep quorum (RM7) → else skip (``etcd_quorum``);
     8. managed etcd: a leadership candidate must exist (``etcd_leadership.among_machines``: the newest
        other machine, not flagged, whose voting member is healthy) → else fail (``no_leader_candidate``).
     Before the control plane is initialized, 4–8 do not apply: the machine is deleted directly (first
     machine recovery).
RM6  Retry limits apply only to a machine that carries a remediation record (it replaced a machine an earlier
     remediation deleted): if record time + ``min_healthy_period`` is not strictly after now, a new sequence
     starts (retry count 0, no limits; a record without a time counts as expired). Otherwise, if record
     time + ``retry_period`` is strictly after now → skip; else if ``max_retry`` is set and the recorded
     retries ≥ ``max_retry`` → skip; else retry count = recorded + 1. Retry period is checked first.
     A skip for either limit says when it ends (``retry_after_seconds``): the end of the retry period, or,
     for ``max_retry``, the end of ``min_healthy_period``, when a new sequence starts.
RM7  Quorum (``etcd_quorum.project``): members come from etcd, not from machines; the selected machine's
     member (named after its node) is removed if it is in the list; a member is healthy only if its machine's
     etcd member condition is true (strays and still-joining members are unhealthy). The projection also
     refuses when etcd has no quorum now, since removing a member is itself a raft proposal.
RM8  One machine per pass. RM9: the replacement inherits ``{machine, timestamp, retry_count}`` (the flow
     records it as ``remediation_in_progress`` and on the new machine).
RM10 Skips leave the machine waiting; the planner goes on with rollout and scaling (G2).

A decision to remediate is what ``external_remediation.decide`` (RX1–RX5) starts from when the spec asks for the
user's own remediation tasks first.
"""

from __future__ import annotations

from collections import namedtuple
from datetime import timedelta

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import ETCD_MEMBER, ETCD_POD, TRUE, all_healthy, node_name, oldest_first
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_leadership import among_machines
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import project
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import format_time, parse_duration, parse_time

REMEDIATE, SKIP, FAIL, NONE = "remediate", "skip", "fail", "none"
# RM4: the components whose failure marks a machine more broken, the worst first.
BROKEN_FIRST = (ETCD_MEMBER, ETCD_POD, "api_server", "controller_manager", "scheduler")
DEFAULT_MIN_HEALTHY_PERIOD = 3600.0
# Rules that end by themselves as flows go on: a limit's time passes, a replacement or a deletion finishes, an
# external remediation attempt's timeout runs out (external_remediation.IN_PROGRESS).
LIFTED_BY_TIME = (
    "retry_period",
    "upgrade_in_progress",
    "remediation_in_progress",
    "machine_provisioning",
    "machine_deleting",
    "already_deleting",
    "external_remediation_in_progress",
    "etcd_learner",
)

# ``attempt`` and ``timeout_seconds``: set only by ``external_remediation.decide``, for the attempt it hands over.
Decision = namedtuple(
    "Decision",
    "status machine rule reason retry_count leader_candidate quorum retry_after_seconds attempt timeout_seconds",
    defaults=(None, None),
)
# ``retry_after_seconds``: for a refusal, the seconds until the limit that refuses ends.
Retry = namedtuple("Retry", "allowed retry_count rule reason retry_after_seconds")


def select_machine(flagged_machines, conditions=None):
    """RM4 (Cluster API v1.10+): the most broken flagged machine (None if none). ``conditions``: the machines'
    component conditions (``component_health.all_conditions``); a component a machine does not have (etcd, when it
    is external) is no sign."""
    conditions = conditions or {}

    def healthier(machine):
        own = conditions.get(machine["name"]) or {}
        return ((machine.get("remediation") or {}).get("requested") is not True, machine.get("node") is not None) + tuple(
            (own.get(component) or {"status": TRUE})["status"] == TRUE for component in BROKEN_FIRST)

    return (sorted(oldest_first(flagged_machines), key=healthier) or [None])[0]


def retry_verdict(machine, strategy, now):
    """RM6: may ``machine`` be remediated again, and with which retry count (a ``Retry``)."""
    record = machine.get("remediation") or {}
    if record.get("last") is None:
        return Retry(True, 0, None, "no earlier remediation is recorded", None)
    last = parse_time(record["last"])
    min_healthy = parse_duration(_or(strategy.get("min_healthy_period"), DEFAULT_MIN_HEALTHY_PERIOD))
    retry_period = parse_duration(_or(strategy.get("retry_period"), 0))
    retries = record.get("retries") or 0
    sequence_ends = last + timedelta(seconds=min_healthy)
    if not sequence_ends > now:
        return Retry(True, 0, None, "the last remediation (%s) is older than min_healthy_period: a new sequence" % format_time(last), None)
    retry_from = last + timedelta(seconds=retry_period)
    if retry_from > now:
        return Retry(
            False,
            retries,
            "retry_period",
            "the last remediation (%s) is within retry_period; retry after %s" % (format_time(last), format_time(retry_from)),
            (retry_from - now).total_seconds(),
        )
    max_retry = strategy.get("max_retry")
    if max_retry is not None and retries >= max_retry:
        return Retry(
            False,
            retries,
            "max_retries",
            "already remediated %d times, max_retry is %d; a new sequence may start at %s"
            % (retries, max_retry, format_time(sequence_ends)),
            (sequence_ends - now).total_seconds(),
        )
    return Retry(True, retries + 1, None, "retry %d of the sequence that started before %s" % (retries + 1, format_time(last)), None)


def in_progress(record, machines):
    """RM5.2: the remediation still waiting for its replacement, or None.

    The flow records a remediation before it deletes the machine, and the replacement clears the record when it
    is created. A record whose machine still runs (it has a Node and is not being deleted) is stale: the run that
    wrote it was stopped before the delete began, or the replacement took the same host name and is running; it
    holds nothing back, and the next decision starts afresh.
    """
    if not record:
        return None
    named = next((m for m in machines if m["name"] == record.get("machine")), None)
    if named is not None and named.get("node") is not None and not named.get("deleting"):
        return None
    return record


def flagged_names(health):
    """RM1: the machines flagged for remediation — unhealthy per the health check, when it allows remediation."""
    return set(health.get("unhealthy") or []) if health.get("remediation_allowed") else set()


def decide(machines, health, members, strategy, now, initialized, etcd_managed, waiting, upgrading=(), conditions=None, renewing=()):
    """RM1–RM8 as one if-chain (module docstring): a ``Decision`` for this pass.

    ``health``: the health check's verdict (``health_check.evaluate``); ``members``: the etcd members as
    ``etcd_quorum.Member`` values, healthy per RM7 (``component_health.quorum_members``); ``strategy``: the
    spec's ``remediation`` section; ``waiting``: the remediation still waiting for its replacement
    (``in_progress`` of the snapshot's ``remediation_in_progress``); ``upgrading``: the names of the machines whose
    in-place upgrade to the spec's version is under way, ``renewing`` those whose certificate renewal in place is
    (RM12); ``conditions``: the machines' component conditions (``component_health.all_conditions``), for RM4.
    """
    flagged = flagged_names(health)
    if health.get("unhealthy") and not flagged:
        unhealthy = ", ".join(sorted(health["unhealthy"]))
        return _decision(SKIP, None, "remediation_not_allowed", "%s unhealthy: %s" % (unhealthy, health.get("reason", "")))
    held = sorted(m["name"] for m in machines
                  if m["name"] in flagged and (m["name"] in upgrading or m["name"] in renewing)
                  and not (m.get("remediation") or {}).get("requested"))
    target = select_machine([m for m in machines if m["name"] in flagged and m["name"] not in held], conditions)
    if target is None and held:
        kinds = {"in-place upgrade" if name in upgrading else "certificate renewal in place" for name in held}
        if len(held) == 1:
            upgrades = "its %s is under way, and is finished rather than undone by a replacement" % kinds.pop()
        elif kinds == {"in-place upgrade"}:
            upgrades = "their in-place upgrades are under way, and are finished rather than undone by replacements"
        else:
            upgrades = "their work in place (upgrades, certificate renewals) is under way, and is finished rather than undone by replacements"
        return _decision(SKIP, held[0], "upgrade_in_progress", "%s: %s (RM12)" % (_plural(held, "is unhealthy", "are unhealthy"), upgrades))
    if target is None:
        return _decision(NONE, None, None, "no machine is flagged for remediation")
    name = target["name"]
    if target.get("deleting"):
        return _decision(SKIP, name, "already_deleting", "%s is already being deleted" % name)
    if waiting:
        return _decision(
            SKIP,
            name,
            "remediation_in_progress",
            "the replacement of %s, remediated earlier, is not created yet" % waiting.get("machine"),
        )
    retry = retry_verdict(target, strategy, now)
    if not retry.allowed:
        return _decision(SKIP, name, retry.rule, "%s: %s" % (name, retry.reason), retry.retry_count, retry_after=retry.retry_after_seconds)
    if not initialized:
        return _decision(REMEDIATE, name, None, "the control plane is not initialized: %s is deleted directly" % name, retry.retry_count)
    if len(machines) <= 1:
        return _decision(SKIP, name, "too_few_machines", "%s is the only control plane machine" % name, retry.retry_count)
    provisioning = sorted(m["name"] for m in machines if m["name"] not in flagged and m.get("node") is None)
    if provisioning:
        return _decision(SKIP, name, "machine_provisioning", "%s still provisioning" % _plural(provisioning, "is", "are"), retry.retry_count)
    deleting = sorted(m["name"] for m in machines if m.get("deleting"))
    if deleting:
        return _decision(SKIP, name, "machine_deleting", "%s being deleted" % _plural(deleting, "is", "are"), retry.retry_count)
    healthy_others = [m["name"] for m in machines if m["name"] != name and all_healthy((conditions or {}).get(m["name"]))]
    if not healthy_others:
        reason = "no control plane machine but %s has every component healthy: removing it would leave none that works" % name
        return _decision(SKIP, name, "no_healthy_machine", reason, retry.retry_count)
    if not etcd_managed:
        return _decision(REMEDIATE, name, None, "%s is unhealthy and may be replaced" % name, retry.retry_count)
    learners = sorted(m.name or m.id for m in members if m.learner)
    if learners:
        one = len(learners) == 1
        reason = "etcd %s %s, still joining: no member is removed until %s promoted or gone" % (
            "member" if one else "members", _plural(learners, "is a learner", "are learners"), "it is" if one else "they are")
        return _decision(SKIP, name, "etcd_learner", reason, retry.retry_count)
    verdict = _project_removal(members, node_name(target))
    if not verdict.ok:
        reason = "removing %s would lose etcd quorum: %s" % (name, "; ".join(verdict.reasons))
        return _decision(SKIP, name, "etcd_quorum", reason, retry.retry_count, quorum=verdict)
    candidate = among_machines(machines, members, leaving=name, flagged=flagged)
    if candidate is None:
        reason = "no machine can take over etcd leadership from %s: none other is unflagged with a healthy voting member" % name
        return _decision(FAIL, name, "no_leader_candidate", reason, retry.retry_count, quorum=verdict)
    reason = "%s is unhealthy and etcd keeps quorum without it" % name
    return _decision(REMEDIATE, name, None, reason, retry.retry_count, candidate, verdict)


def held_back(decision):
    """What an operator reads when a remediation is held back: whether time alone lifts the rule, or a person must act."""
    if decision.rule in LIFTED_BY_TIME:
        return "remediation waits: %s" % decision.reason
    return "manual intervention needed (%s): %s" % (decision.rule, decision.reason)


def _project_removal(members, member_name):
    """RM7 through ``etcd_quorum.project``: remove the member named ``member_name`` if it is in the list."""
    present = member_name is not None and any(m.name == member_name for m in members)
    return project(members, remove=[member_name] if present else [])


def _decision(status, machine, rule, reason, retry_count=0, leader_candidate=None, quorum=None, retry_after=None):
    return Decision(status, machine, rule, reason, retry_count, leader_candidate, quorum, retry_after)


def _or(value, default):
    return default if value is None else value


def _plural(names, one, many):
    return "%s %s" % (", ".join(names), one if len(names) == 1 else many)
