# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which workers an in-place upgrade upgrades next (docs/rules.md IP6, IP7). Pure, no I/O.

A worker (docs/snapshot.md ``workers``) is outdated when its kubelet version differs from the spec's, or its
in-place upgrade to that version is not done (``rollout.upgrade_unfinished``). Workers
belong to groups, named by their Node's ``control-plane.kubeadm.io/worker-group`` label; a worker without it is
in the unnamed group. :func:`next_batch` picks the workers of one step:

* groups one after the other, in name order, the unnamed group last: a group is finished before the next starts;
* within the group, at most its ``max_unavailable`` workers down at once (``upgrade.workers.groups.<name>``, else
  ``upgrade.workers.max_unavailable``). A worker of the group already at the version that is not Ready or is
  cordoned counts against that number, as a MachineDeployment's unavailable machines do: when it uses it up the
  step waits (``workers_unavailable``);
* the outdated workers that are down already (not Ready, or cordoned: an upgrade that was interrupted) first,
  since upgrading them takes nothing more away, then the oldest first (Node creation, ties by name).

When workers go at all is the planner's: only once every control plane machine runs the spec's version, so no
kubelet is ever newer than an API server it may talk to (IP6).
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.kubeadm.control_plane.plugins.module_utils.preflight import blocker
from ansible_collections.kubeadm.control_plane.plugins.module_utils.rollout import upgrade_unfinished, version_differs
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

UNAVAILABLE = "workers_unavailable"

# group: the group of this step (None = the unnamed group); workers: this step's workers, in order; left: every
# outdated worker of the group, in the same order; limit: the group's max_unavailable; blocker: why none may go now.
Batch = namedtuple("Batch", "group workers left limit blocker")


def outdated(workers, version):
    """The workers whose kubelet does not run ``version`` (an unknown version differs), or whose in-place upgrade to
    it is not done (past its kubelet step, a worker runs the version and may still be cordoned)."""
    return [w for w in workers if version_differs(w.get("version"), version) or upgrade_unfinished(w, version)]


def is_unavailable(worker):
    """Whether a worker is down for its workloads: not Ready, or cordoned."""
    return not worker.get("ready") or bool(worker.get("unschedulable"))


def group_label(group):
    """How a group is named in reasons."""
    return "the unnamed worker group" if group is None else "worker group %s" % group


def max_unavailable(settings, group):
    """The group's ``max_unavailable``: its own in ``settings["groups"]``, else ``settings["max_unavailable"]``."""
    own = (settings.get("groups") or {}).get(group) if group is not None else None
    return (own or {}).get("max_unavailable") or settings["max_unavailable"]


def next_batch(workers, version, settings):
    """The ``Batch`` of the next step, or None when every worker runs ``version``. ``settings``: the spec's
    ``upgrade.workers``."""
    todo = outdated(workers, version)
    if not todo:
        return None
    group = min((w.get("group") for w in todo), key=lambda g: (g is None, g or ""))
    left = sorted((w for w in todo if w.get("group") == group), key=lambda w: (not is_unavailable(w), parse_time(w["created"]), w["name"]))
    names = [w["name"] for w in left]
    limit = max_unavailable(settings, group)
    down = sorted(w["name"] for w in workers if w.get("group") == group and w["name"] not in names and is_unavailable(w))
    room = limit - len(down)
    if room <= 0:
        refusal = blocker(
            UNAVAILABLE,
            "IP7: %s may have %d worker%s down at once, and %s, at %s already, %s not Ready or cordoned"
            % (group_label(group), limit, "" if limit == 1 else "s", ", ".join(down), version, "is" if len(down) == 1 else "are"),
            down,
        )
        return Batch(group, [], names, limit, refusal)
    return Batch(group, names[:room], names, limit, None)
