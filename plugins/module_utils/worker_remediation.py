# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which worker the remediate and reconcile flows rebuild next (docs/health-check.md "Workers", docs/flows.md
"Remediation"). Pure, no I/O.

A worker is remediated where it stands: drained, ``kubeadm reset``, its Node deleted, joined again (the flow records
the remediation in the state ConfigMap before the drain, and clears it once the worker joined). :func:`decide`:

1. a remediation begun and not finished (:func:`in_progress`: the record names a worker that has no Node, deleted by
   the run that was stopped) is finished first, whatever the health check says: the host is owed its join;
2. else, of the worker groups whose health check (``health_check.evaluate_workers``) lets them be remediated, the
   first group by name (the workers without a group last) with an unhealthy worker, and its first unhealthy worker
   by name: one worker a step, so never more at once than the group's budget allows;
3. the groups whose budget blocks remediation (MHC8) are held back, each with its budget's reason: none of their
   workers is touched, while the other groups' are.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import worker_group_setting
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_upgrade import group_label

# The rule of a worker group whose health check's budget holds its unhealthy workers back (MHC8).
NOT_ALLOWED = "worker_remediation_not_allowed"
# worker / group: the worker to remediate now and its group (None: none now); reason: why; held: [{group, reason,
# workers}] of the groups held back.
Decision = namedtuple("Decision", "worker group reason held")


def drain_timeout(spec, group):
    """Seconds the drain of a remediated worker of ``group`` may take: the group's own, else the workers'."""
    return worker_group_setting(spec, group, "drain_timeout")


def in_progress(record, workers):
    """The recorded worker remediation still owed its join, or None. A record whose worker has a Node is stale: the
    run that wrote it stopped before deleting the Node, or after the join and before clearing it."""
    if not record:
        return None
    return None if any(w["name"] == record.get("worker") for w in workers) else record


def decide(checked, record, workers):
    """The Decision for this pass. ``checked``: ``health_check.evaluate_workers``' answer; ``record``: the
    snapshot's ``worker_remediation_in_progress``; ``workers``: the snapshot's workers."""
    held = [{"group": group["group"], "reason": group["reason"], "workers": list(group["unhealthy"])}
            for group in checked if group["unhealthy"] and not group["remediation_allowed"]]
    owed = in_progress(record, workers)
    if owed is not None:
        return Decision(owed["worker"], owed.get("group"), "the remediation of worker %s of %s begun at %s was stopped after its "
                        "Node was deleted: join it again" % (owed["worker"], group_label(owed.get("group")), owed["timestamp"]), held)
    for group in checked:
        if group["unhealthy"] and group["remediation_allowed"]:
            name = sorted(group["unhealthy"])[0]
            target = next(t for t in group["targets"] if t["machine"] == name)
            reason = "worker %s of %s is unhealthy (%s): drain it, kubeadm reset, delete its Node and join it again" % (
                name, group_label(group["group"]), target["reason"])
            return Decision(name, group["group"], reason, held)
    return Decision(None, None, None, held)


def held_back(held):
    """The words of a ``wait`` for the groups held back."""
    return "; ".join("%s: %s (unhealthy: %s)" % (group_label(group["group"]), group["reason"], ", ".join(group["workers"]))
                     for group in held)
