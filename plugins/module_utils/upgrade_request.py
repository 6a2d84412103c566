# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether an in-place upgrade may go ahead: the request as a whole, checked before a machine or a worker is
touched and again at every pass (docs/rules.md IP1-IP4). Pure, no I/O.

The request is what the spec asks of the cluster the snapshot shows, under ``upgrade.strategy: in_place``. Each
check returns the ``blocked_by`` entries (``preflight.blocker``) that refuse it, every one at once; the planner
turns them into a ``wait`` whose reason names the rules, and nothing is upgraded while any holds:

* IP1 / IP2, :func:`other_changes`: in place changes only the version and what comes with it (kubeadm's etcd,
  CoreDNS and kube-proxy for that version, the version's container runtime and CNI plugins from the node software
  bundle); a machine outdated for any other reason (its spec hash, ``rollout.after``, its certificates) is refused
  with ``upgrade.other_changes: refuse`` (``in_place_other_changes``), or left to the rollout with ``rolling``;
* IP3, :func:`version_path`: from what every control plane machine and worker runs to the spec's version, no
  downgrade (``in_place_downgrade``) and no minor skipped (``in_place_minor_skip``: kubeadm upgrades one minor at
  a time, and API servers are never more than one minor apart); a version not known cannot be checked
  (``in_place_version_unknown``);
* RO6, :func:`rolling_version_path`: a rolling rollout replaces machines rather than upgrading them, yet its new
  API servers join the old ones and read what they wrote: from every control plane machine's version and the one
  the cluster's kubeadm-config names, the spec's minor is at most one above the lowest (``rollout_minor_skip``)
  and not below the highest (``rollout_minor_downgrade``: Kubernetes does not go back a minor); a patch may go
  down, as Cluster API allows, to roll back a bad patch;
* IP4, :func:`etcd_path`: with stacked etcd, the etcd kubeadm deploys for the spec's version (its table, or
  ``etcd.local.imageTag``) is reached from every member's version one etcd minor at a time, and from the release
  etcd requires before its next minor (``in_place_etcd_path``).
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_tag import etcd_version
from ansible_collections.kubeadm.control_plane.plugins.module_utils.preflight import blocker
from ansible_collections.kubeadm.control_plane.plugins.module_utils.rollout import IN_PLACE_KINDS, wanted_etcd_tag
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import etcd_is_external, version_tuple, with_v

OTHER_CHANGES = "in_place_other_changes"
VERSION_UNKNOWN = "in_place_version_unknown"
DOWNGRADE = "in_place_downgrade"
MINOR_SKIP = "in_place_minor_skip"
ETCD_PATH = "in_place_etcd_path"
ROLLOUT_MINOR_SKIP = "rollout_minor_skip"
ROLLOUT_MINOR_DOWNGRADE = "rollout_minor_downgrade"

# The rule id (docs/rules.md) of each refusal, for the plan's reason.
RULE_IDS = {OTHER_CHANGES: "IP2", VERSION_UNKNOWN: "IP3", DOWNGRADE: "IP3", MINOR_SKIP: "IP3", ETCD_PATH: "IP4",
            ROLLOUT_MINOR_SKIP: "RO6", ROLLOUT_MINOR_DOWNGRADE: "RO6"}

# The release every member of an etcd minor must run before any member moves to the next minor: 3.5.20 (older 3.5
# members can fail a 3.6 upgrade with "too many learner member"), 3.6.11 (etcd's 3.7 upgrade guide).
ETCD_BEFORE_NEXT_MINOR = {(3, 5): (3, 5, 20), (3, 6): (3, 6, 11)}


def check(spec, snapshot, replace):
    """Every refusal of the in-place request (IP2-IP4), in rule order; empty when it may go ahead.

    ``replace``: the outdated machines ``rollout.split_by_strategy`` does not upgrade in place, with their reasons.
    """
    machines = [m for m in snapshot.get("machines") or [] if not m.get("deleting")]
    refusals = version_path(spec["version"], machines, snapshot.get("workers") or [])
    if not etcd_is_external(spec):
        refusals += etcd_path(wanted_etcd_tag(spec), (snapshot.get("etcd") or {}).get("members") or [])
    refused = other_changes(replace, spec["upgrade"]["other_changes"])
    return refusals + ([refused] if refused else [])


def other_changes(replace, setting):
    """IP2: the refusal of the machines outdated for more than their version, unless ``setting`` is ``rolling``."""
    if not replace or setting == "rolling":
        return None
    names = sorted(replace)
    what = "; ".join("%s %s" % (name, ", ".join(r.message for r in replace[name] if r.kind not in IN_PLACE_KINDS)) for name in names)
    return blocker(
        OTHER_CHANGES,
        "IP2: in place changes only the version and what comes with it, and upgrade.other_changes is refuse: %s (set "
        "upgrade.other_changes to rolling to replace these machines, or undo the change)" % what,
        names,
    )


def version_path(target, machines, workers):
    """IP3: the refusals of going from what each machine and worker runs to ``target``."""
    wanted = version_tuple(target)
    running = [(m["name"], m.get("version")) for m in machines] + [(w["name"], w.get("version")) for w in workers]
    unknown = [name for name, version in running if version_tuple(version) is None]
    down = [(name, version) for name, version in running if name not in unknown and is_downgrade(version_tuple(version), wanted)]
    skip = [(name, version) for name, version in running if name not in unknown and skips_a_minor(version_tuple(version), wanted)]
    refusals = []
    if unknown:
        refusals.append(blocker(VERSION_UNKNOWN, "IP3: the version %s runs is not known, so the way to %s cannot be checked"
                                % (_names(unknown), with_v(target)), unknown))
    if down:
        refusals.append(blocker(DOWNGRADE, "IP3: an in-place upgrade never goes down: %s newer than %s"
                                % (_running(down), with_v(target)), [name for name, unused in down]))
    if skip:
        refusals.append(blocker(MINOR_SKIP, "IP3: kubeadm upgrades one minor at a time, and %s would skip a minor to %s: "
                                "upgrade %s to v%d.%d first" % (_running(skip), with_v(target), "them" if len(skip) > 1 else "it",
                                                                wanted[0], wanted[1] - 1), [name for name, unused in skip]))
    return refusals


def rolling_version_path(target, machines, config_version):
    """RO6: the refusals of rolling the control plane out to ``target`` from what each machine (not deleting) runs and
    from the version the kubeadm-config ConfigMap names (None: not known); a version not known is left out."""
    wanted = version_tuple(target)
    running = [(m["name"], m.get("version")) for m in machines] + [("the kubeadm-config ConfigMap", config_version)]
    known = [(name, version) for name, version in running if version_tuple(version) is not None]
    skip = [(name, version) for name, version in known if skips_a_minor(version_tuple(version), wanted)]
    down = [(name, version) for name, version in known if version_tuple(version)[:2] > wanted[:2]]
    refusals = []
    if skip:
        refusals.append(blocker(ROLLOUT_MINOR_SKIP, "RO6: API servers stay within one minor of each other, and %s would skip a "
                                "minor to %s: roll out to v%d.%d first" % (_running(skip), with_v(target), wanted[0], wanted[1] - 1),
                                [name for name, unused in skip if name in {m["name"] for m in machines}]))
    if down:
        refusals.append(blocker(ROLLOUT_MINOR_DOWNGRADE, "RO6: Kubernetes does not go back a minor (the new API servers would "
                                "read what newer ones wrote to etcd): %s newer than %s; a patch of the same minor may go down"
                                % (_running(down), with_v(target)), [name for name, unused in down if name in {m["name"] for m in machines}]))
    return refusals


def etcd_path(target_tag, members):
    """IP4: the refusals of moving each etcd member to the etcd of image tag ``target_tag``; none when the tag does
    not read as a version (kubeadm then has no version to compare either)."""
    target = etcd_version(target_tag)
    if target is None:
        return []
    problems = {}
    for member in members:
        current = etcd_version(member.get("version"))
        problem = etcd_step_problem(current, target) if current is not None else None
        if problem:
            problems.setdefault(problem, []).append("%s (%s)" % (member.get("name") or member["id"], member["version"]))
    return [
        blocker(ETCD_PATH, "IP4: the etcd of the new version is %s, and %s: %s" % (target_tag, problem, ", ".join(sorted(found))), [])
        for problem, found in sorted(problems.items())
    ]


def is_downgrade(current, target):
    """Whether going from ``current`` to ``target`` ((major, minor, patch)) goes down."""
    return target < current


def skips_a_minor(current, target):
    """Whether going from ``current`` to ``target`` ((major, minor, patch)) passes over a whole minor."""
    return target[0] > current[0] or (target[0] == current[0] and target[1] > current[1] + 1)


def etcd_step_problem(current, target):
    """Why etcd may not go from ``current`` to ``target`` ((major, minor, patch)), or None. A target at the same minor
    or lower is no problem: kubeadm does not downgrade etcd and leaves a newer member as it is."""
    if target[:2] <= current[:2]:
        return None
    if skips_a_minor(current, target):
        return "etcd upgrades one minor at a time; it would skip one from"
    floor = ETCD_BEFORE_NEXT_MINOR.get(current[:2])
    if floor is not None and current < floor:
        # the image tag kubeadm names each etcd release by: <version>-0
        return ("etcd moves to v%d.%d only from %d.%d.%d or later: first set kubeadm.cluster_configuration.etcd.local.imageTag "
                "to %d.%d.%d-0 and keep version at the one the control plane runs (etcd alone is then upgraded in place), "
                "then set the new version; now at" % (target[:2] + floor + floor))
    return None


def _names(names):
    return ", ".join(names)


def _running(pairs):
    return ", ".join("%s (%s)" % (name, version) for name, version in pairs)
