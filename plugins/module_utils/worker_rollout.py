# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which worker a rolling replacement replaces next, and its next step (docs/workers.md "Rolling replacement",
docs/rules.md WR1-WR5). Pure, no I/O.

WR1  A worker is replaced when its user asks (the replace-machine annotation on its Node) or, with
     ``upgrade.strategy: rolling``, when its kubelet does not run the spec's version (the in-place strategy
     upgrades it where it stands instead) and it has a group: a worker without the group label was joined outside
     the collection (an adopted cluster's), no inventory host is known to be of its kind, and it is replaced only
     when its user asks. The planner asks only once the control plane is as declared, so the new
     worker joins at the version every API server runs.
WR2  One worker at a time, one group after the other (by name, the workers without a group last), within the
     group the unavailable ones first (replacing them takes nothing more away), then the oldest. Each replacement is
     two steps, in the group's order: with ``max_surge`` 1, a new worker joins on a free host of its group
     (``join_worker``), then the old one is drained, reset and its Node deleted (``remove_worker``); with 0, the old
     one goes first and its own host joins again.
WR3  A replacement begun is finished before any other (the flow records it in the state ConfigMap before its first
     step: the worker it replaces, by name and Node uid, the host that joins, and the order): the recorded worker
     still there (the same Node) and the replacement joined, or not joined yet, say which step is next; the
     recorded worker gone and its replacement joined, the record is spent and the next replacement may begin.
WR4  A removal keeps the group's available workers (Ready and not cordoned) at least its size less
     ``max_unavailable``, the size being its workers less the one a surge added; otherwise it waits
     (``workers_unavailable``), naming the workers down.
WR5  A join needs a free host of the group: the flow picks it (roles/flow/tasks/pick.yml); when there is none, a
     machine provider that makes hosts (``kcp_provider: hook``) is asked for one of the group, else the step is
     refused, saying what to add. A worker without a group has no host known to be of its kind: with ``max_surge`` 1
     its replacement waits (``worker_without_group``), saying how to rebuild it where it stands or to label it.
WR6  With a machine provider that makes hosts, a removed worker's host is given back to it (its delete tasks), so a
     replacement never joins the old host again: with ``max_surge`` 0 a new host joins once the old one is gone. The
     health check's remediation of a worker (worker_remediation) is then such a replacement too, recorded the same way
     with ``remediation`` set: the unhealthy worker removed first, within its health check's budget rather than
     WR4's (it is unavailable already), then a new host of its group joins. A worker without a group is rebuilt on
     its own host all the same: the provider could not be asked for a host of its kind.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.kubeadm.control_plane.plugins.module_utils.observation import WORKER_GROUP_LABEL
from ansible_collections.kubeadm.control_plane.plugins.module_utils.preflight import blocker
from ansible_collections.kubeadm.control_plane.plugins.module_utils.rollout import version_differs
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import worker_group_setting
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_upgrade import UNAVAILABLE, group_label, is_unavailable

JOIN = "join_worker"
REMOVE = "remove_worker"
# The rule of a worker without a group whose replacement would join a new worker first (WR5).
WITHOUT_GROUP = "worker_without_group"

# step: JOIN or REMOVE (None: nothing to replace); worker / uid / group: the worker replaced, its Node's uid, its
# group; replacement: the host that joins (None: a free host of the group, the flow's pick, or the provider's); surge:
# the new worker joins first; timestamp: when the recorded replacement began (None: it begins with this step); reason:
# why; blocker: why the step must wait (None: it may go); remediation: the health check's remediation (WR6).
Decision = namedtuple("Decision", "step worker uid group replacement surge timestamp reason blocker remediation")
NOTHING = Decision(None, None, None, None, None, False, None, None, None, False)


def reasons(worker, spec):
    """Why ``worker`` is replaced (WR1), in words; empty when it is not."""
    found = []
    if worker.get("replace_requested"):
        found.append("its Node carries the replace-machine annotation")
    if spec["upgrade"]["strategy"] == "rolling" and worker.get("group") is not None and version_differs(worker.get("version"), spec["version"]):
        found.append("its kubelet runs %s, the spec says %s (upgrade.strategy rolling)" % (worker.get("version") or "an unknown version", spec["version"]))
    return found


def _same_node(workers, name, uid):
    return any(w["name"] == name and w.get("uid") == uid for w in workers)


def _joined(workers, record):
    return any(w["name"] == record["replacement"] and w.get("uid") != record["uid"] for w in workers)


def in_progress(record, workers):
    """WR3: the recorded replacement still under way, or None when there is none or it is done."""
    if not record:
        return None
    if _joined(workers, record) and not _same_node(workers, record["worker"], record["uid"]):
        return None
    return record


def record_of(decision):
    """The record of the replacement ``decision`` steps through, as the flow writes it to the state ConfigMap (with
    its timestamp, and the replacement once known) and the plan hands it over (``worker_rollout``)."""
    return {"worker": decision.worker, "uid": decision.uid, "group": decision.group, "replacement": decision.replacement,
            "surge": decision.surge, "timestamp": decision.timestamp, "remediation": decision.remediation}


def record_to_write(record, step, host, now):
    """The record of the replacement ``record`` (the plan's ``worker_rollout``) that ``step`` on ``host`` writes to
    the state ConfigMap before it acts, begun ``now`` (RFC 3339), or None when the ConfigMap holds it already: written
    when the replacement begins (no timestamp yet), and again when its join takes a host not yet recorded (WR6: the
    new host is known only once picked), so that a run stopped in the join finds the host it began on."""
    joins = step == JOIN and not record.get("replacement")
    if record.get("timestamp") and not joins:
        return None
    return dict(record, replacement=host if joins else record.get("replacement"), timestamp=record.get("timestamp") or now)


def remediation(worker, group, reason):
    """WR6: the first step of the replacement of unhealthy ``worker`` (a snapshot worker) of ``group``: its removal."""
    return Decision(REMOVE, worker["name"], worker.get("uid"), group, None, False, None, reason, None, True)


def _removal(spec, workers, worker, group, surge, reason, fields):
    """WR4: the removal of ``worker``, or its wait (never for a remediation's, WR6)."""
    if fields.get("remediation"):
        return Decision(REMOVE, worker, fields["uid"], group, fields["replacement"], surge, fields["timestamp"], reason, None, True)
    members = [w for w in workers if w.get("group") == group]
    size = len(members) - (1 if surge else 0)
    limit = worker_group_setting(spec, group, "max_unavailable")
    down = sorted(w["name"] for w in members if w["name"] != worker and is_unavailable(w))
    available = len(members) - 1 - len(down)
    if available < size - limit:
        refusal = blocker(UNAVAILABLE, "WR4: %s keeps at least %d of its %d workers available (max_unavailable %d); without %s %d would be, "
                          "as %s %s not Ready or cordoned" % (group_label(group), size - limit, size, limit, worker, available, ", ".join(down),
                                                              "is" if len(down) == 1 else "are"), down)
        return Decision(REMOVE, worker, fields["uid"], group, fields["replacement"], surge, fields["timestamp"],
                        reason + ", once enough of its group is available", refusal, False)
    return Decision(REMOVE, worker, fields["uid"], group, fields["replacement"], surge, fields["timestamp"], reason, None, False)


def decide(spec, workers, record, provider_makes_hosts=False):
    """The Decision for this pass (module docstring). ``workers``: the snapshot's; ``record``: its
    ``worker_rollout_in_progress``; ``provider_makes_hosts``: the flow's machine provider is a hook (WR6)."""
    owed = in_progress(record, workers)
    if owed is not None:
        group, name, surge, remedy = owed.get("group"), owed["worker"], bool(owed.get("surge")), bool(owed.get("remediation"))
        fields = {"uid": owed["uid"], "replacement": owed["replacement"], "timestamp": owed["timestamp"], "remediation": remedy}
        begun = "the %s of worker %s of %s by %s begun at %s" % (
            "remediation" if remedy else "replacement", name, group_label(group), owed["replacement"] or "a new host", owed["timestamp"])
        if _same_node(workers, name, owed["uid"]) and (_joined(workers, owed) or not surge):
            return _removal(spec, workers, name, group, surge, begun + ": drain it, kubeadm reset, delete its Node", fields)
        joins = owed["replacement"] or ("a new host of the group" if provider_makes_hosts else "a free host of the group")
        return Decision(JOIN, name, owed["uid"], group, owed["replacement"], surge, owed["timestamp"], begun + ": join %s" % joins, None, remedy)
    due = [(w, reasons(w, spec)) for w in workers]
    due = [(w, why) for w, why in due if why]
    if not due:
        return NOTHING
    group = min((w.get("group") for w, _why in due), key=lambda g: (g is None, g or ""))
    worker, why = min(((w, why) for w, why in due if w.get("group") == group),
                      key=lambda pair: (not is_unavailable(pair[0]), parse_time(pair[0]["created"]), pair[0]["name"]))
    surge = worker_group_setting(spec, group, "max_surge") == 1
    left = sum(1 for w, _why in due if w.get("group") == group)
    reason = "replace worker %s of %s (%s; %d of its workers to replace)" % (worker["name"], group_label(group), "; ".join(why), left)
    if surge and group is None:
        refusal = blocker(WITHOUT_GROUP, "WR5: worker %s has no worker group label, so no host is known to be of its kind for a new worker to join "
                                         "first: set workers.max_surge to 0 (and workers.max_unavailable to 1) to rebuild it where it stands, or "
                                         "label its Node %s=<group> and list a free host of that group" % (worker["name"], WORKER_GROUP_LABEL),
                          [worker["name"]])
        return Decision(JOIN, worker["name"], worker.get("uid"), None, None, True, None, reason, refusal, False)
    if surge:
        where = "a free host of the group, or a new one from the machine provider," if provider_makes_hosts else "a free host of the group"
        return Decision(JOIN, worker["name"], worker.get("uid"), group, None, True, None,
                        reason + ": a new worker joins on %s first (max_surge 1)" % where, None, False)
    if provider_makes_hosts and group is not None:
        return _removal(spec, workers, worker["name"], group, False, reason + ": drain it, kubeadm reset, delete its Node and give its "
                        "host back to the machine provider, then a new host of the group joins (max_surge 0)",
                        {"uid": worker.get("uid"), "replacement": None, "timestamp": None})
    return _removal(spec, workers, worker["name"], group, False, reason + ": drain it, kubeadm reset, delete its Node and join its host again "
                    "(max_surge 0)", {"uid": worker.get("uid"), "replacement": worker["name"], "timestamp": None})
