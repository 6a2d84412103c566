# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which worker the remediate and reconcile flows remediate next, and how (docs/health-check.md "Workers", docs/flows.md
"Remediation"). Pure, no I/O.

A worker is rebuilt where it stands: drained, ``kubeadm reset``, its Node deleted, joined again (the flow records the
remediation in the state ConfigMap before the drain, and clears it once the worker joined); with a machine provider
that makes hosts, the planner replaces it by a new host instead (worker_rollout, WR6). With its group's
``external_remediation`` set, an unhealthy worker is first handed to the user's remediation tasks, as a control plane
machine is (external_remediation, RX2-RX6). :func:`decide`:

1. a remediation begun and not finished (:func:`in_progress`: the record names a worker that has no Node, deleted by
   the run that was stopped) is finished first, whatever the health check says: the host is owed its join;
2. else a worker that carries external remediation attempts and that its group's health check no longer finds
   unhealthy or pending has its request cleared (RX6), first by name;
3. else, of the worker groups whose health check (``health_check.evaluate_workers``) lets them be remediated, by
   group name (the workers without a group last) and within a group by worker name, the first unhealthy worker that
   may be remediated now: rebuilt, or handed to the user's tasks (RX4), or rebuilt once those attempts are spent and
   ``escalate`` is on (RX5). One worker a step, so never more at once than the group's budget allows. A worker whose
   attempt's timeout still runs (RX3), or whose attempts are spent without ``escalate`` (RX5), is passed over, named
   in ``waiting``;
4. the groups whose budget blocks remediation (MHC8) are held back, each with its budget's reason: none of their
   workers is touched, while the other groups' are.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.kubeadm.control_plane.plugins.module_utils import external_remediation
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import worker_group_setting
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_upgrade import group_label

REBUILD = "remediate_worker"
REMEDIATE_EXTERNAL = external_remediation.REMEDIATE_EXTERNAL
CLEAR_EXTERNAL_REMEDIATION = "clear_external_remediation"
# The rule of a worker group whose health check's budget holds its unhealthy workers back (MHC8).
NOT_ALLOWED = "worker_remediation_not_allowed"
# action: REBUILD, REMEDIATE_EXTERNAL or CLEAR_EXTERNAL_REMEDIATION (None: nothing now); worker / group: the worker it
# acts on and its group; reason: why (for a rebuild not owed, what makes it unhealthy: the planner says how it goes);
# owed: the rebuild finishes one a stopped run began; attempt / timeout_seconds: an external remediation's; held:
# [{group, reason, workers}] of the groups held back; waiting: the external_remediation.Verdict of each worker passed
# over (RX3, RX5).
Decision = namedtuple("Decision", "action worker group reason owed attempt timeout_seconds held waiting")


def drain_timeout(spec, group):
    """Seconds the drain of a remediated worker of ``group`` may take: the group's own, else the workers'."""
    return worker_group_setting(spec, group, "drain_timeout")


def in_progress(record, workers):
    """The recorded worker remediation still owed its join, or None. A record whose worker has a Node is stale: the
    run that wrote it stopped before deleting the Node, or after the join and before clearing it."""
    if not record:
        return None
    return None if any(w["name"] == record.get("worker") for w in workers) else record


def _nothing(held, waiting):
    return Decision(None, None, None, None, False, None, None, held, waiting)


def decide(spec, checked, record, workers, now):
    """The Decision for this pass. ``checked``: ``health_check.evaluate_workers``' answer; ``record``: the
    snapshot's ``worker_remediation_in_progress``; ``workers``: the snapshot's workers; ``now``: the snapshot's time."""
    held = [{"group": group["group"], "reason": group["reason"], "workers": list(group["unhealthy"])}
            for group in checked if group["unhealthy"] and not group["remediation_allowed"]]
    owed = in_progress(record, workers)
    if owed is not None:
        return Decision(REBUILD, owed["worker"], owed.get("group"), "the remediation of worker %s of %s begun at %s was stopped after "
                        "its Node was deleted: join it again" % (owed["worker"], group_label(owed.get("group")), owed["timestamp"]),
                        True, None, None, held, [])
    not_healthy = {name for group in checked for name in group["unhealthy"] + group["pending"]}
    healed = sorted(w["name"] for w in workers if external_remediation.attempts_of(w)[0] > 0 and w["name"] not in not_healthy)
    if healed:
        worker = next(w for w in workers if w["name"] == healed[0])
        attempts = external_remediation.attempts_of(worker)[0]
        return Decision(CLEAR_EXTERNAL_REMEDIATION, worker["name"], worker.get("group"), "worker %s is healthy again after %d external "
                        "remediation attempt%s: clear its request" % (worker["name"], attempts, "" if attempts == 1 else "s"),
                        False, None, None, held, [])
    waiting = []
    for group in checked:
        if not group["remediation_allowed"]:
            continue
        settings = worker_group_setting(spec, group["group"], "external_remediation")
        for name in sorted(group["unhealthy"]):
            target = next(t for t in group["targets"] if t["machine"] == name)
            why = "worker %s of %s is unhealthy (%s)" % (name, group_label(group["group"]), target["reason"])
            if settings is None:
                return _rebuild(name, group["group"], why, held, waiting)
            found = external_remediation.verdict(next(w for w in workers if w["name"] == name), settings, now, why)
            if found.status == REMEDIATE_EXTERNAL:
                return Decision(REMEDIATE_EXTERNAL, name, group["group"], found.reason, False, found.attempt, found.timeout_seconds, held, waiting)
            if found.status == external_remediation.REMEDIATE:  # RX5 escalating: rebuilt after all
                return _rebuild(name, group["group"], found.reason, held, waiting)
            waiting.append(found)
    return _nothing(held, waiting)


def _rebuild(name, group, why, held, waiting):
    return Decision(REBUILD, name, group, why, False, None, None, held, waiting)


def held_back(held):
    """The words of a ``wait`` for the groups held back."""
    return "; ".join("%s: %s (unhealthy: %s)" % (group_label(group["group"]), group["reason"], ", ".join(group["workers"]))
                     for group in held)


def retry_after(decision):
    """Seconds until the first passed-over worker's attempt times out (RX3), or None."""
    times = [found.retry_after_seconds for found in (decision.waiting if decision else []) if found.retry_after_seconds is not None]
    return min(times) if times else None
