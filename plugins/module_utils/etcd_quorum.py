# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quorum arithmetic for etcd membership changes: may this transition happen without losing quorum?

Pure functions, no I/O. Every step that changes etcd membership (scale down, rollout, remediation, the
``etcd_member`` module) asks :func:`project` first, and again right before it acts.

The rules, as etcd applies them:

* Only voting members count. A learner neither votes nor counts towards quorum, so adding, promoting
  away or removing a learner never changes the quorum arithmetic of the voters.
* quorum(n) = n // 2 + 1 for n voting members.
* A membership change is itself a raft proposal: the cluster must have quorum *now* to make it.
* After the change, the voters that are healthy must still reach the new quorum. A voting member that is
  added counts as unhealthy until it has started and caught up (it cannot vote yet), which is why adding
  a voter to a cluster that is one failure from losing quorum is refused (KCP's "why delete and recreate").
* etcd admits one learner at a time by default, so a second learner is refused.
* kubeadm joins a control plane machine the learner way (learner mode, locked on since 1.32): the member is
  added as a learner, which changes no arithmetic, and promoted once it has caught up, when it votes and is
  healthy. :func:`project_join` projects exactly that, so one healthy member may grow to two.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def quorum(voters):
    """Votes needed for a majority of ``voters`` voting members (0 voters need 1: nothing can win)."""
    return voters // 2 + 1


@dataclass(frozen=True)
class Member:
    """What the projection needs to know about one etcd member."""

    id: str
    name: str = ""
    healthy: bool = True
    learner: bool = False


@dataclass(frozen=True)
class Verdict:
    """The answer of :func:`project`: ``ok`` and, whatever it is, the arithmetic behind it."""

    ok: bool
    voters_before: int
    healthy_before: int
    voters_after: int
    healthy_after: int
    quorum_after: int
    reasons: tuple = field(default_factory=tuple)

    @property
    def failures_tolerated_after(self):
        """How many more healthy voters may fail after the change before quorum is lost (negative = lost)."""
        return self.healthy_after - self.quorum_after

    def as_dict(self):
        return {
            "ok": self.ok,
            "voters_before": self.voters_before,
            "healthy_before": self.healthy_before,
            "voters_after": self.voters_after,
            "healthy_after": self.healthy_after,
            "quorum_after": self.quorum_after,
            "failures_tolerated_after": self.failures_tolerated_after,
            "reasons": list(self.reasons),
        }


def project(members, remove=(), add_voters=0, add_learners=0, promote=()):
    """Project a membership change and say whether it keeps a healthy quorum.

    ``members``: iterable of :class:`Member` (or dicts with the same keys).
    ``remove``: ids (or names) of members to remove.
    ``add_voters``: voting members to add; each counts as unhealthy until it has joined.
    ``add_learners``: learners to add; they do not change the arithmetic, but only one learner may exist.
    ``promote``: ids (or names) of learners to promote to voters; a promoted learner counts as healthy
    only if it is healthy now.
    """
    members = [m if isinstance(m, Member) else Member(**m) for m in members]
    remove = set(remove)
    promote = set(promote)
    reasons = []

    def named(m, keys):
        return m.id in keys or (m.name and m.name in keys)

    unknown = sorted(k for k in remove | promote if not any(named(m, {k}) for m in members))
    for key in unknown:
        reasons.append("member %s is not in the member list" % key)

    voters = [m for m in members if not m.learner]
    learners = [m for m in members if m.learner]
    healthy_before = sum(1 for m in voters if m.healthy)
    if healthy_before < quorum(len(voters)):
        reasons.append(
            "etcd has no quorum now: %d of %d voting members healthy, %d needed"
            % (healthy_before, len(voters), quorum(len(voters)))
        )

    for m in members:
        if named(m, promote) and not m.learner:
            reasons.append("member %s is not a learner, there is nothing to promote" % (m.name or m.id))

    kept_voters = [m for m in voters if not named(m, remove)]
    promoted = [m for m in learners if named(m, promote) and not named(m, remove)]
    kept_learners = [m for m in learners if not named(m, remove) and not named(m, promote)]

    voters_after = len(kept_voters) + len(promoted) + add_voters
    healthy_after = sum(1 for m in kept_voters if m.healthy) + sum(1 for m in promoted if m.healthy)
    quorum_after = quorum(voters_after)

    if add_learners and (kept_learners or add_learners > 1):
        reasons.append("etcd admits one learner at a time and %d would exist" % (len(kept_learners) + add_learners))
    if voters_after == 0:
        reasons.append("no voting member would remain")
    elif healthy_after < quorum_after:
        reasons.append(
            "after the change %d of %d voting members would be healthy, %d are needed for quorum"
            % (healthy_after, voters_after, quorum_after)
        )

    return Verdict(
        ok=not reasons,
        voters_before=len(voters),
        healthy_before=healthy_before,
        voters_after=voters_after,
        healthy_after=healthy_after,
        quorum_after=quorum_after,
        reasons=tuple(reasons),
    )


JOINING = "(joining)"


def project_join(members):
    """Project a kubeadm join: add a learner, then promote it once it has caught up (module docstring).

    Both steps must be allowed. The verdict is the one of the promotion, with the added member counted as a
    healthy voter, so ``voters_after`` says how many vote once the join is done.
    """
    members = [m if isinstance(m, Member) else Member(**m) for m in members]
    added = project(members, add_learners=1)
    promoted = project(members + [Member(id=JOINING, name=JOINING, learner=True)], promote=[JOINING])
    reasons = tuple(dict.fromkeys(added.reasons + promoted.reasons))
    return Verdict(
        ok=not reasons,
        voters_before=promoted.voters_before,
        healthy_before=promoted.healthy_before,
        voters_after=promoted.voters_after,
        healthy_after=promoted.healthy_after,
        quorum_after=promoted.quorum_after,
        reasons=reasons,
    )
