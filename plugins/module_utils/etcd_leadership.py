# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who takes etcd leadership over from a member that leaves: one rule for the planner, remediation and the
``etcd_member`` module. Pure, no I/O.

The rule (docs/decisions.md "etcd leadership"): a member can lead only when it

* is not the one leaving,
* belongs to a machine that is not being deleted and not flagged for remediation,
* is a voting member (a learner cannot lead), and
* is healthy (its machine's etcd member condition is true; for ``etcd_member``, which sees no machines, it
  answered without error).

Among those, the newest machine wins, as in KCP (SD4, RM5.8); where the machines' ages are not known (the
``etcd_member`` module sees only members) or equal, the member furthest ahead in the raft log, then the
largest name, so the choice is always the same for the same input. KCP picks the newest machine whatever
its member's state; this rule is stricter on purpose: handing leadership to a member that cannot lead only
moves the problem.
"""

from __future__ import annotations

from collections import namedtuple
from datetime import datetime, timezone

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import node_name
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

# One possible leader: ``key`` is what the caller gets back (a machine name or a member id).
Seat = namedtuple("Seat", "key name created raft_index leaving deleting flagged learner healthy")

_UNKNOWN_AGE = datetime.min.replace(tzinfo=timezone.utc)


def can_lead(seat):
    """The rule's filter (module docstring)."""
    return seat.healthy and not (seat.leaving or seat.deleting or seat.flagged or seat.learner)


def choose(seats):
    """The ``key`` of the seat the rule picks, or None when no seat can lead."""
    able = [s for s in seats if can_lead(s)]
    if not able:
        return None
    best = max(able, key=lambda s: (parse_time(s.created) if s.created else _UNKNOWN_AGE, s.raft_index or 0, s.name))
    return best.key


def among_machines(machines, members, leaving=None, flagged=()):
    """The machine whose member takes the lead, or None: the planner's and remediation's question.

    ``members``: ``etcd_quorum.Member`` values healthy per RM7 (``component_health.quorum_members``); a
    machine's member is the one named after its node. ``leaving``: the machine that leaves (or None).
    """
    by_name = {m.name: m for m in members if m.name}
    seats = []
    for machine in machines:
        member = by_name.get(node_name(machine))
        seats.append(
            Seat(
                key=machine["name"],
                name=machine["name"],
                created=machine["created"],
                raft_index=None,
                leaving=machine["name"] == leaving,
                deleting=bool(machine.get("deleting")),
                flagged=machine["name"] in flagged,
                learner=member is not None and member.learner,
                healthy=member is not None and member.healthy,
            )
        )
    return choose(seats)


def among_members(members, leaving_id):
    """The id of the member that takes the lead from member ``leaving_id``, or None: ``etcd_member``'s question.

    ``members``: the snapshot's etcd members (docs/snapshot.md) as ``etcd_info`` reports them.
    """
    seats = [
        Seat(
            key=m["id"],
            name=m.get("name") or "",
            created=None,
            raft_index=m.get("raft_index"),
            leaving=m["id"] == leaving_id,
            deleting=False,
            flagged=False,
            learner=bool(m.get("learner")),
            healthy=bool(m.get("responsive")) and not m.get("error"),
        )
        for m in members
    ]
    return choose(seats)
