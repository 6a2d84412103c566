# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What etcd maintenance decides (docs/disaster-recovery.md "etcd maintenance"): whether the members are fit for it,
the order they are defragmented in, the space quota, and whether a NOSPACE alarm may be cleared. Pure, over the
``etcd`` section's members (docs/snapshot.md)."""

from __future__ import annotations

import re

# etcd's --quota-backend-bytes when the manifest does not set it (2 GiB).
DEFAULT_QUOTA_BYTES = 2 * 1024 ** 3
NOSPACE = "NOSPACE"
_QUOTA_FLAG = re.compile(r"--quota-backend-bytes=(\d+)")


def _name(member):
    return member.get("name") or member.get("id") or "?"


def maintenance_refusal(members):
    """Why the members may not be maintained now (text), or None. Every member answers without error, votes, and
    reports the same member list, its own id in it; an alarm other than NOSPACE (CORRUPT) refuses, since
    defragmenting a member whose data is corrupt can only spread the damage; NOSPACE is what maintenance clears."""
    if not members:
        return "no etcd member"
    problems = []
    for member in members:
        if not member.get("responsive"):
            problems.append("%s does not answer (%s)" % (_name(member), member.get("error") or "no answer"))
        elif member.get("error"):
            problems.append("%s: %s" % (_name(member), member["error"]))
        elif member.get("learner"):
            problems.append("%s is a learner, not promoted yet" % _name(member))
        other = [alarm for alarm in member.get("alarms") or [] if alarm != NOSPACE]
        if other:
            problems.append("%s has alarm %s" % (_name(member), ", ".join(other)))
    lists = {tuple(m.get("member_ids_seen") or ()) for m in members if m.get("responsive") and not m.get("learner")}
    if len(lists) > 1:
        problems.append("the members disagree on the member list")
    problems += ["%s is not in the member list it reports" % _name(m) for m in members
                 if m.get("responsive") and not m.get("learner") and m.get("id") not in (m.get("member_ids_seen") or ())]
    return "; ".join(problems) or None


def defrag_order(members):
    """The members in the order they are defragmented: the followers by name, the leader last (a defragmenting
    member answers nothing; the leader's turn comes once the others are back)."""
    return sorted(members, key=lambda member: (bool(member.get("leader")), _name(member)))


def quota_bytes(manifest):
    """The space quota of the etcd a static pod manifest (text) runs: its --quota-backend-bytes, else etcd's default."""
    found = _QUOTA_FLAG.search(manifest or "")
    return int(found.group(1)) if found else DEFAULT_QUOTA_BYTES


def disarm_limit(quota):
    """The database size under which a NOSPACE alarm may be cleared: four fifths of the quota. etcd raises the alarm
    when a write would take the database past the quota, so a database just under it would raise it again within a
    few writes (measured on real etcd: 27 values of 32 KiB fill a 1 MiB quota, and compaction and defragmentation
    of them leave 940 KiB)."""
    return quota * 4 // 5


def disarm_refusal(members, quota):
    """Why a NOSPACE alarm must stay (text), or None: a member's database still holds disarm_limit(quota) bytes or
    more, so etcd would raise the alarm again within a few writes."""
    limit = disarm_limit(quota)
    full = ["%s holds %d bytes" % (_name(m), m.get("db_size") or 0) for m in members if (m.get("db_size") or 0) >= limit]
    if full:
        return ("the space is not back under the quota of %d bytes (a fifth of it free: under %d bytes): %s; delete what "
                "fills it and run again" % (quota, limit, ", ".join(full)))
    return None
