# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The machine health check: which control plane machines are unhealthy, and may they be remediated?

Cluster API's MachineHealthCheck (v1.7.9, with v1.12's machine conditions; docs/rules.md MHC1-MHC9) as one pure
function of the normalized ``health_check`` rules (docs/spec.md) and the observed snapshot (docs/snapshot.md). No
I/O, no clock: every timeout is measured against the snapshot's ``now``.

Targets (MHC1) are all control plane machines of the snapshot; :func:`evaluate_workers` judges each worker group
with a health check of its own (``workers`` in the spec) the same way, its workers the targets, its budget its own.
Each target is judged by the first rule that matches (MHC2):

1. ``remediation.requested`` -> unhealthy;
2. ``failure`` set -> unhealthy;
3. machine conditions (``unhealthy_machine_conditions``, Cluster API v1.12+), any of them (OR): the machine's
   condition (``component_health.machine_conditions``) has exactly that status, and its ``since`` + timeout is
   strictly before ``now`` -> unhealthy; matched but not that old -> pending; a ``since`` that is not known is
   not judged (no history of machine conditions is kept);
4. ``provisioned`` but no ``node`` (the Node it had is gone) -> unhealthy;
5. no Node yet: with ``node_startup_timeout`` 0 -> not evaluated; unhealthy when ``created`` + timeout is
   strictly before ``now``, else pending until then;
6. node conditions, any of them (OR): the node has a condition of that type with exactly that status, and
   ``last_transition`` + timeout strictly before ``now`` (or no ``last_transition``, which Cluster API reads as
   the zero time) -> unhealthy; matched but not that old -> pending.

A machine that matches none has no problem. It counts as **healthy** only when it has no problem, is not
pending, is not being deleted and has a Node (MHC3). A pending machine's next check is the time left
until it would turn unhealthy, plus a 1 s margin (MHC4).

The budget (MHC5): ``expected`` = number of targets, unhealthy count = ``expected`` - healthy, so pending and
not-yet-started machines use budget too. ``unhealthy_range`` "[min-max]", when set, wins (MHC6): allowed
iff min <= count <= max, remediations allowed = max - count. Otherwise ``max_unhealthy`` (MHC7): an int as
is, a percentage as floor(pct x expected / 100); allowed iff count <= it, remediations allowed = it - count.
When not allowed, remediations allowed is 0 and the unhealthy machines are reported but must not be
remediated (MHC8); when allowed, they are handed to remediation (MHC9).
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import (
    CONDITION_STATUS,
    CONDITION_TYPES,
    all_conditions,
    node_condition,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import worker_group_setting
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import (
    PAST_BOUNDARY_SECONDS,
    add_seconds,
    format_time,
    parse_duration,
    parse_time,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.unhealthy_limit import max_unhealthy_value, parse_unhealthy_range

_COMPONENT_OF_TYPE = {condition_type: component for component, condition_type in CONDITION_TYPES.items()}
HEALTHY = "healthy"
UNHEALTHY = "unhealthy"
PENDING = "pending"
NOT_EVALUATED = "not_evaluated"


def span(seconds):
    """A duration for people: 300 -> '5m', 5400 -> '1h30m', 0 -> '0s' (whole seconds)."""
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join("%d%s" % (n, unit) for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


def _target(machine, state, reason, next_check=None):
    return {
        "machine": machine["name"],
        "state": state,
        "reason": reason,
        "next_check_seconds": None if next_check is None else round(next_check, 3),
    }


def _until_unhealthy(since, timeout, now):
    """(unhealthy, seconds until the next check) for a problem seen ``since`` with ``timeout`` seconds of grace.

    Unhealthy only when since + timeout is strictly before now: exactly at the boundary it is still pending.
    An unknown ``since`` (None) has timed out, as Cluster API reads a missing time as the zero time.
    """
    if since is None or add_seconds(since, timeout) < now:
        return True, None
    elapsed = (now - parse_time(since)).total_seconds()
    return False, timeout - elapsed + PAST_BOUNDARY_SECONDS


def _judge(machine, now, kind, matched):
    """The conditions of one ``kind`` (node or machine) that hold their listed status, OR semantics: ``matched`` is
    ``[(rule, since, cause)]`` in the rules' order. Unhealthy when one has held longer than its timeout, pending while
    one holds for less (the soonest to time out named), else None."""
    pending = []
    for rule, since, cause in matched:
        timeout = parse_duration(rule["timeout"])
        unhealthy, next_check = _until_unhealthy(since, timeout, now)
        if unhealthy:
            since_text = "an unknown time" if since is None else format_time(parse_time(since))
            return _target(
                machine,
                UNHEALTHY,
                "%s condition %s has been %s since %s, longer than %s%s"
                % (kind, rule["type"], rule["status"], since_text, span(timeout), cause),
            )
        pending.append((next_check, rule, timeout, cause))
    if pending:
        next_check, rule, timeout, cause = min(pending, key=lambda item: item[0])
        return _target(
            machine,
            PENDING,
            "%s condition %s is %s%s; unhealthy if it stays so for %s (check again in %s)"
            % (kind, rule["type"], rule["status"], cause, span(timeout), span(next_check)),
            next_check,
        )
    return None


def _check_conditions(rules, machine, now):
    """MHC2.8: the node conditions, OR semantics. A target dict, or None when no condition matches. A matching
    condition without ``last_transition`` has timed out (Cluster API reads a missing time as the zero time)."""
    matched = []
    for rule in rules["unhealthy_conditions"]:
        condition = node_condition(machine["node"], rule["type"])
        if condition is not None and condition.get("status") == rule["status"]:
            matched.append((rule, condition.get("last_transition"), ""))
    return _judge(machine, now, "node", matched)


def _check_machine_conditions(rules, machine, conditions, now):
    """MHC (Cluster API v1.12+) machine conditions, OR semantics, before the Node's: a target dict, or None when no
    condition matches. A condition whose start is unknown (``since`` None) is not judged by this rule: no history of
    machine conditions is kept, and nothing is concluded from not knowing how long a problem has lasted."""
    matched = []
    for rule in rules.get("unhealthy_machine_conditions") or ():
        entry = conditions.get(_COMPONENT_OF_TYPE[rule["type"]])
        if entry is not None and CONDITION_STATUS[entry["status"]] == rule["status"] and entry.get("since") is not None:
            matched.append((rule, entry["since"], " (%s)" % entry["reason"] if entry.get("reason") else ""))
    return _judge(machine, now, "machine", matched)


def _check_without_node(rules, machine, now):
    """MHC2.7: a machine whose Node has not appeared yet, timed from its creation."""
    timeout = parse_duration(rules["node_startup_timeout"])
    if timeout == 0:
        return _target(machine, NOT_EVALUATED, "no Node yet, and node_startup_timeout 0 disables the startup check")
    unhealthy, next_check = _until_unhealthy(machine["created"], timeout, now)
    if unhealthy:
        return _target(
            machine,
            UNHEALTHY,
            "no Node within node_startup_timeout %s of its creation at %s"
            % (span(timeout), format_time(parse_time(machine["created"]))),
        )
    return _target(
        machine,
        PENDING,
        "no Node yet; unhealthy if none appears within %s of creation (check again in %s)"
        % (span(timeout), span(next_check)),
        next_check,
    )


def check_machine(rules, machine, now, conditions=None):
    """One target's verdict, first matching rule wins (MHC2, MHC3). ``now`` is an aware datetime; ``conditions`` the
    machine's component conditions (``component_health.machine_conditions``), needed only when the rules name
    machine conditions.

    Returns {machine, state, reason, next_check_seconds}; state is healthy, unhealthy, pending or
    not_evaluated (no problem found, yet not healthy: no Node with the startup check off, or being deleted).
    """
    if (machine.get("remediation") or {}).get("requested"):
        return _target(machine, UNHEALTHY, "remediation was requested (remediation.requested)")
    if machine.get("failure"):
        return _target(machine, UNHEALTHY, "the machine failed: %s" % machine["failure"])
    problem = _check_machine_conditions(rules, machine, conditions or {}, now)
    if problem is not None:
        return problem
    if machine.get("node") is None:
        if machine.get("provisioned"):
            return _target(machine, UNHEALTHY, "the machine had a Node, and that Node no longer exists")
        return _check_without_node(rules, machine, now)
    problem = _check_conditions(rules, machine, now)
    if problem is not None:
        return problem
    if machine.get("deleting"):
        return _target(machine, NOT_EVALUATED, "being deleted, so it does not count as healthy")
    return _target(machine, HEALTHY, "has a Node and no unhealthy condition")


def budget(rules, expected, healthy):
    """MHC5-MHC8: may unhealthy targets be remediated, and how many more?

    Returns {unhealthy_count, max_allowed, remediation_allowed, remediations_allowed, reason}.
    """
    count = expected - healthy
    tally = "%d of %d machines not healthy" % (count, expected)
    unhealthy_range = rules.get("unhealthy_range")
    if unhealthy_range is not None:
        max_allowed = unhealthy_range
        try:
            low, high = parse_unhealthy_range(unhealthy_range)
        except ValueError as error:
            allowed, remaining, reason = False, 0, "Remediation is blocked: unhealthy_range %s." % error
        else:
            allowed = low <= count <= high
            remaining = high - count if allowed else 0
            reason = "Remediation is %s: %s, %s unhealthy_range %s." % (
                "allowed" if allowed else "blocked",
                tally,
                "within" if allowed else "outside",
                unhealthy_range,
            )
    else:
        max_unhealthy = rules.get("max_unhealthy")
        try:
            max_allowed = max_unhealthy_value(max_unhealthy, expected)
        except ValueError as error:
            max_allowed, allowed, remaining = max_unhealthy, False, 0
            reason = "Remediation is blocked: max_unhealthy %s." % error
        else:
            allowed = count <= max_allowed
            remaining = max_allowed - count if allowed else 0
            if allowed:
                reason = "Remediation is allowed: %s, and max_unhealthy %s allows %d." % (
                    tally,
                    max_unhealthy,
                    max_allowed,
                )
            else:
                reason = "Remediation is blocked: %s, more than the %d that max_unhealthy %s allows." % (
                    tally,
                    max_allowed,
                    max_unhealthy,
                )
    return {
        "unhealthy_count": count,
        "max_allowed": max_allowed,
        "remediation_allowed": allowed,
        "remediations_allowed": remaining,
        "reason": reason,
    }


def evaluate(rules, snapshot):
    """The health check over every control plane machine of ``snapshot`` with ``rules`` (normalized).

    Returns {targets, unhealthy, pending, expected, healthy, unhealthy_count, max_allowed,
    remediation_allowed, remediations_allowed, reason, next_check_seconds}; ``next_check_seconds`` is the
    soonest next check of a pending target, or None when nothing is pending.
    """
    now = parse_time(snapshot["now"])
    conditions = {}
    if rules.get("unhealthy_machine_conditions"):
        etcd_section = snapshot.get("etcd") or {}
        members = etcd_health.evaluate(etcd_section, snapshot["machines"])["members_by_machine"]
        conditions = all_conditions(snapshot["machines"], not etcd_section.get("external"), members)
    return _evaluate_targets(rules, snapshot["machines"], now, conditions)


def worker_rules(spec, group):
    """The health check of worker group ``group`` (None: the workers without a group): the group's own
    (``workers.groups.<name>.health_check``), else the workers' (``workers.health_check``); None when that group's
    workers are not checked, as machines no MachineHealthCheck selects."""
    return worker_group_setting(spec, group, "health_check")


def as_target(worker):
    """A worker (the snapshot's ``workers``) as a target of the machine health check: it has its Node, it is
    provisioned, and it has no failure or deletion mark of its own (its Node is the machine)."""
    return {"name": worker["name"], "created": worker["created"], "provisioned": True, "deleting": False, "failure": None,
            "node": worker.get("node") or {"name": worker["name"], "conditions": []},
            "remediation": worker.get("remediation") or {}}


def evaluate_workers(spec, snapshot):
    """The health check of each worker group that has one (:func:`worker_rules`), as :func:`evaluate` judges the
    control plane: the group's workers are its targets and it has a budget of its own, as one MachineHealthCheck per
    MachineDeployment. A list, by group name, the workers without a group last: each :func:`evaluate`'s answer
    with ``group`` (None for those without)."""
    now = parse_time(snapshot["now"])
    by_group = {}
    for worker in snapshot.get("workers") or []:
        by_group.setdefault(worker.get("group"), []).append(worker)
    checked = []
    for group in sorted(by_group, key=lambda name: (name is None, name or "")):
        rules = worker_rules(spec, group)
        if rules is not None:
            checked.append(dict(_evaluate_targets(rules, [as_target(w) for w in by_group[group]], now), group=group))
    return checked


def _evaluate_targets(rules, machines, now, conditions=None):
    """:func:`evaluate`'s answer for ``machines``, the targets, with their component ``conditions`` by name."""
    conditions = conditions or {}
    targets = [check_machine(rules, machine, now, conditions.get(machine["name"])) for machine in machines]
    healthy = sum(1 for target in targets if target["state"] == HEALTHY)
    pending = [target for target in targets if target["state"] == PENDING]
    result = {
        "targets": targets,
        "unhealthy": [target["machine"] for target in targets if target["state"] == UNHEALTHY],
        "pending": [target["machine"] for target in pending],
        "expected": len(targets),
        "healthy": healthy,
        "next_check_seconds": min((t["next_check_seconds"] for t in pending), default=None),
    }
    result.update(budget(rules, len(targets), healthy))
    return result
