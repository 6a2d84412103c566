# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which machine a scale down (or a rollout's scale-down step) removes. Pure, no I/O.

The rule (docs/rules.md SD1, SD2, SD5 then FD4–FD6). The eligible set is the first non-empty of, in order:

1. outdated machines the user marked for deletion (``delete_requested``, KCP's delete-machine annotation);
2. machines marked for deletion;
3. outdated machines with at least one component condition explicitly ``false`` (unknown never counts; the
   etcd pod and member count only when etcd is managed — ``component_health`` already leaves them out
   otherwise);
4. outdated machines;
5. all machines.

Then the failure-domain bucket and the oldest machine in it (``failure_domains.scale_down_choice``). So a
marked up-to-date machine beats any unmarked outdated one, failing components on an up-to-date machine do not
prioritise it, and balance across failure domains beats age (SD2). A plain scale down passes no outdated
machines, so only priorities 2 and 5 can apply (SD5). Machines already deleting are never chosen: the planner
finishes them before anything else.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import FALSE, failing
from ansible_collections.kubeadm.control_plane.plugins.module_utils.failure_domains import scale_down_choice

Selection = namedtuple("Selection", "machine priority eligible domain detail")

PRIORITIES = {
    1: "outdated and marked for deletion",
    2: "marked for deletion",
    3: "outdated with a failing component",
    4: "outdated",
    5: "any machine",
}


def eligible_machines(machines, outdated, conditions):
    """SD1: ``(priority, machines)`` — the first non-empty priority level (module docstring).

    ``outdated``: names of outdated machines; ``conditions``: ``{name: component_health conditions}``.
    """
    live = [m for m in machines if not m.get("deleting")]
    marked = [m for m in live if m.get("delete_requested")]
    stale = [m for m in live if m["name"] in outdated]
    if any(m["name"] in outdated for m in marked):
        return 1, [m for m in marked if m["name"] in outdated]
    if marked:
        return 2, marked
    failing_stale = [m for m in stale if failing(conditions.get(m["name"], {}), statuses=(FALSE,))]
    if failing_stale:
        return 3, failing_stale
    if stale:
        return 4, stale
    return 5, live


def select_machine(failure_domains, machines, outdated, conditions):
    """The machine to remove, as a ``Selection`` (machine name, SD1 priority, eligible names, bucket, detail)."""
    priority, eligible = eligible_machines(machines, outdated, conditions)
    choice = scale_down_choice(failure_domains, machines, eligible)
    detail = "SD1 priority %d (%s): %s; %s" % (
        priority,
        PRIORITIES[priority],
        ", ".join(sorted(m["name"] for m in eligible)) or "none",
        "%s: %s" % (choice.rule, choice.detail) if choice.rule else choice.detail,
    )
    return Selection(choice.machine, priority, sorted(m["name"] for m in eligible), choice.domain, detail)
