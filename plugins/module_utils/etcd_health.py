# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd health as the control plane sees it: per machine, strays, and the preflight gate.

Pure function over the ``etcd`` section and the ``machines`` list of a snapshot (docs/snapshot.md); no I/O.

Per machine with a node (KCP EH3 / EH4), the first failing check wins:

1. the machine is deleting → ``false`` ("deleting");
2. no member is named after the machine's node → ``false`` ("missing member"). Checked only once some
   member answered: with nobody answering, nothing is known about the member list (EH4);
3. the member did not answer → ``unknown``;
4. the member answered but its status or member-list call failed (``error`` set) → ``false``;
5. the member is a learner, not promoted yet → ``false`` (etcd serves a learner no member list, so KCP's
   list check would fail it too; this says why);
6. the member list it reports differs from the reference list → ``false``. The reference is the list of the
   first machine, in the order given, whose voting member passed checks 1–5 ("first seen", so order matters);
7. its own id is not in the list it reports → ``false``;
8. it has an alarm → ``false``;
9. its cluster id differs from the reference member's → ``false``;
10. otherwise ``true``.

Machines without a node get no entry. A member whose non-empty name matches no machine's node is a stray
(EH4 / EH11); members with an empty name (added, not started yet) are never strays.

Preflight for stacked etcd (the seed's "Etcd (stacked)" checks, plus the two per-member checks that
reveal a second cluster or a sick member): as many members as machines; every member answers; every
answering voting member reports the same member list and the same cluster id; no status error; no alarm;
no learner waiting for promotion. ``ok`` is true when no check fails.

External etcd (EH5, the seed's "Etcd (external)"): members are not inspected per machine and there are no
strays. **Here** the gate is more than connectivity, because a control plane step writes through the API server
to that cluster: ``ok`` only when a member answered, a quorum of the voting members it lists answered without an
error, and no member reports an alarm (NOSPACE stops every write, a join's too). A minority of members down is
not the control plane's to refuse: it is reported in ``degraded`` (for status) and nothing waits on it.

:func:`change_verdict` says whether a membership change may happen now: ``etcd_quorum.project`` over the
members, a member counting as healthy when it answered without error; and, beyond the arithmetic, no change
while an alarm is active, no promotion of a learner that does not answer, and leadership only to a healthy voter.
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import FALSE, TRUE, UNKNOWN, node_name
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import Member, project, quorum


def evaluate(etcd_section, machines):
    """Return ``{ok, problems, members_by_machine, strays}`` for one snapshot (see the module docstring), and with
    external etcd ``degraded``, what is wrong with that cluster without blocking a step."""
    members = list((etcd_section or {}).get("members") or [])
    if (etcd_section or {}).get("external"):
        return _evaluate_external(members)
    return _evaluate_stacked(members, list(machines or []))


def nothing_answered(members):
    """The problem to report when no member answered: what was tried, and why each failed."""
    errors = "; ".join("%s: %s" % (_label(m), m.get("error") or "no answer") for m in members)
    return "no etcd endpoint answered" + (" (%s)" % errors if errors else "")


def _evaluate_external(members):
    """The external cluster's gate (``problems``) and what is wrong with it that does not block (``degraded``)."""
    if not any(m.get("responsive") for m in members):
        return {"ok": False, "problems": [nothing_answered(members)], "degraded": [], "members_by_machine": {}, "strays": []}
    voters = [m for m in members if not m.get("learner")]
    healthy = [m for m in voters if _answered_cleanly(m)]
    problems = []
    if len(healthy) < quorum(len(voters)):
        problems.append("the external etcd cluster has no quorum: %d of its %d voting members answered without an error, %d are needed"
                        % (len(healthy), len(voters), quorum(len(voters))))
    problems += ["member %s has alarms: %s" % (_label(m), ", ".join(m["alarms"])) for m in members if m.get("alarms")]
    degraded = ["member %s did not answer: %s" % (_label(m), m.get("error") or "no answer") for m in members if not m.get("responsive")]
    degraded += ["member %s answered with an error: %s" % (_label(m), m["error"]) for m in members if m.get("responsive") and m.get("error")]
    return {"ok": not problems, "problems": problems, "degraded": degraded, "members_by_machine": {}, "strays": []}


def _evaluate_stacked(members, machines):
    by_name = {}
    for member in members:
        if member.get("name"):
            by_name.setdefault(member["name"], member)
    any_answered = any(m.get("responsive") for m in members)

    members_by_machine = {}
    reference = None
    for machine in machines:
        name = node_name(machine)
        if name is None:
            continue
        member = by_name.get(name)
        if reference is None and member is not None and not machine.get("deleting") and _voter_answered_cleanly(member):
            reference = member
        status, reason = _member_status(machine, member, reference, any_answered)
        members_by_machine[machine["name"]] = {"status": status, "reason": reason}

    node_names = {n for n in (node_name(m) for m in machines) if n is not None}
    strays = [dict(m) for m in members if m.get("name") and m["name"] not in node_names]
    problems = _preflight_problems(members, machines, strays)
    return {"ok": not problems, "problems": problems, "members_by_machine": members_by_machine, "strays": strays}


def _member_status(machine, member, reference, any_answered):
    """One machine's member health: EH3 / EH4, first failing check wins."""
    if machine.get("deleting"):
        return FALSE, "machine is deleting"
    if member is None:
        if not any_answered:
            return UNKNOWN, "no etcd member answered, the member list is unknown"
        return FALSE, "missing member: no etcd member is named %s" % node_name(machine)
    if not member.get("responsive"):
        return UNKNOWN, "member %s did not answer: %s" % (_label(member), member.get("error") or "no answer")
    if member.get("error"):
        return FALSE, "member %s answered with an error: %s" % (_label(member), member["error"])
    if member.get("learner"):
        return FALSE, "member %s is a learner, not promoted yet" % _label(member)
    seen = sorted(member.get("member_ids_seen") or [])
    if reference is not None:
        expected = sorted(reference.get("member_ids_seen") or [])
        if seen != expected:
            return FALSE, "member %s reports members [%s], but %s reports [%s]" % (
                _label(member),
                ", ".join(seen),
                _label(reference),
                ", ".join(expected),
            )
    if member.get("id") not in seen:
        return FALSE, "member %s does not list itself (%s) among its members" % (_label(member), member.get("id"))
    if member.get("alarms"):
        return FALSE, "member %s has alarms: %s" % (_label(member), ", ".join(member["alarms"]))
    if reference is not None and _cluster_id(member) != _cluster_id(reference):
        return FALSE, "member %s belongs to cluster %s, but %s belongs to cluster %s" % (
            _label(member),
            _cluster_id(member),
            _label(reference),
            _cluster_id(reference),
        )
    return TRUE, ""


def _preflight_problems(members, machines, strays):
    if members and not any(m.get("responsive") for m in members):
        # nothing is known about the member list: counting the endpoints tried as members would mislead
        return [nothing_answered(members)]
    problems = []
    if len(members) != len(machines):
        problems.append("etcd has %d members but there are %d control plane machines" % (len(members), len(machines)))
    for stray in strays:
        problems.append("member %s (%s) belongs to no machine" % (stray["name"], stray.get("id")))
    answered = [m for m in members if m.get("responsive") and not m.get("learner")]
    for member in members:
        if member.get("learner"):
            problems.append("member %s is a learner, not promoted yet" % _label(member))
        if not member.get("responsive"):
            problems.append("member %s did not answer: %s" % (_label(member), member.get("error") or "no answer"))
        elif member.get("error"):
            problems.append("member %s answered with an error: %s" % (_label(member), member["error"]))
    lists = {tuple(sorted(m.get("member_ids_seen") or [])) for m in answered}
    if len(lists) > 1:
        problems.append(
            "members disagree on the member list: %s"
            % "; ".join("%s sees [%s]" % (_label(m), ", ".join(sorted(m.get("member_ids_seen") or []))) for m in answered)
        )
    cluster_ids = {_cluster_id(m) for m in answered if _cluster_id(m)}
    if len(cluster_ids) > 1:
        problems.append(
            "members belong to different clusters: %s"
            % "; ".join("%s in %s" % (_label(m), _cluster_id(m)) for m in answered if _cluster_id(m))
        )
    for member in answered:
        if member.get("alarms"):
            problems.append("member %s has alarms: %s" % (_label(member), ", ".join(member["alarms"])))
    return problems


def _answered_cleanly(member):
    return bool(member.get("responsive")) and not member.get("error")


def _voter_answered_cleanly(member):
    return _answered_cleanly(member) and not member.get("learner")


def _cluster_id(member):
    return member.get("cluster_id") or ""


def _label(member):
    """How a member is named in messages: its name, else its id, else its first client URL."""
    return member.get("name") or member.get("id") or ", ".join(member.get("client_urls") or []) or "?"


def change_verdict(etcd_section, remove=(), add_voters=0, add_learners=0, promote=(), lead_to=None):
    """The verdict on one membership change (``etcd_quorum.Verdict.as_dict()`` plus this module's own reasons).

    ``remove`` / ``promote``: member ids; ``add_voters`` / ``add_learners``: counts; ``lead_to``: the id of the
    member that should take the lead.
    """
    members = list((etcd_section or {}).get("members") or [])
    by_id = {m.get("id"): m for m in members}
    quorum_members = [
        Member(id=m.get("id", ""), name=m.get("name", ""), healthy=_answered_cleanly(m), learner=bool(m.get("learner")))
        for m in members
    ]
    verdict = project(quorum_members, remove=remove, add_voters=add_voters, add_learners=add_learners, promote=promote)
    result = verdict.as_dict()
    alarms = sorted({alarm for m in members for alarm in m.get("alarms") or []})
    # Removing a member that does not answer is how an operator recovers from NOSPACE, and etcd accepts it.
    silent_removal = bool(remove) and not (add_voters or add_learners or promote or lead_to) and all(
        not by_id.get(member_id, {}).get("responsive") for member_id in remove
    )
    if alarms and not silent_removal:
        result["reasons"].append("etcd has active alarms (%s): clear them before changing the membership" % ", ".join(alarms))
    for member_id in promote:
        learner = by_id.get(member_id)
        if learner is not None and learner.get("learner") and not _answered_cleanly(learner):
            result["reasons"].append("learner %s does not answer: start it before promoting it" % _label(learner))
    if lead_to is not None:
        target = by_id.get(lead_to)
        if target is None:
            result["reasons"].append("member %s is not in the member list" % lead_to)
        elif target.get("learner") or not _answered_cleanly(target):
            result["reasons"].append("member %s cannot lead: only a healthy voting member can" % _label(target))
    result["ok"] = not result["reasons"]
    return result


def membership_confirmed(etcd_section):
    """Whether the member list is known from a voting member in touch with a quorum (it answered its status,
    member list and health read through quorum without error). Only then may a member's absence be concluded."""
    return any(
        _voter_answered_cleanly(m) and m.get("member_ids_seen") for m in (etcd_section or {}).get("members") or []
    )


def summary(etcd_section, endpoints=()):
    """What an operator reads first: leader, quorum, voters, failures tolerated, learners, alarms, versions.

    ``endpoints``: the endpoint reports of ``etcd_client.endpoint_report`` (answer times, applied index, db size
    in use, versions). ``quorum`` and the counts are None when no voting member answered: nothing is concluded
    from no answer.
    """
    members = list((etcd_section or {}).get("members") or [])
    voters = [m for m in members if not m.get("learner")]
    heard = any(m.get("responsive") for m in voters)
    healthy = sum(1 for m in voters if _answered_cleanly(m))
    needed = quorum(len(voters))
    leader = next((m for m in members if m.get("leader") and _answered_cleanly(m)), None)
    by_member = {}
    for report in endpoints:
        if report.get("answered") and report.get("member"):
            by_member.setdefault(report["member"], report)
    versions = [r for r in by_member.values() if r.get("cluster_version")]
    storage = [r for r in by_member.values() if r.get("storage_version")]
    return {
        "answered": any(m.get("responsive") for m in members),
        "membership_confirmed": membership_confirmed(etcd_section),
        "leader": _label(leader) if leader else None,
        "quorum": (healthy >= needed) if heard else None,
        "voters": len(voters) if heard else None,
        "healthy_voters": healthy if heard else None,
        "quorum_size": needed if heard else None,
        "failures_tolerated": max(healthy - needed, 0) if heard else None,
        "learners": [_label(m) for m in members if m.get("learner")],
        "alarms": sorted({a for m in members for a in m.get("alarms") or []}),
        "cluster_version": versions[0]["cluster_version"] if versions else None,
        "storage_version": storage[0]["storage_version"] if storage else None,
        "members": [_member_summary(m, by_member.get(m.get("name")) or by_member.get(m.get("id"))) for m in members],
    }


def _member_summary(member, report):
    report = report or {}
    return {
        "name": member.get("name", ""),
        "id": member.get("id", ""),
        "healthy": _answered_cleanly(member),
        "reason": None if _answered_cleanly(member) else (member.get("error") or "no answer"),
        "leader": bool(member.get("leader")),
        "learner": bool(member.get("learner")),
        "answer_seconds": report.get("seconds"),
        "raft_applied_index": report.get("raft_applied_index"),
        "db_size": member.get("db_size"),
        "db_size_in_use": report.get("db_size_in_use"),
        "version": member.get("version"),
    }
