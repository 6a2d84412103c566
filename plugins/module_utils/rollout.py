# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which machines are outdated and why, and the next step of a rolling update. Pure, no I/O.

Outdated (docs/rules.md RO1 mapped to the snapshot, docs/snapshot.md "What the decisions derive"). A machine
needs rollout if any of these holds; every reason that holds is reported, in this order:

a. ``certificates``: ``rollout.before.certificates_expiry_days`` is set, the machine's certificate expiry is
   known, and now + days is strictly after that expiry;
b. ``rollout_after``: ``rollout.after`` is set, it is strictly before now, and the machine was created
   strictly before it;
c. ``version``: the machine's version differs from the spec's (an unknown version counts as different);
d. ``etcd``: with stacked etcd, the etcd image tag the machine runs is behind the one the spec wants (the version's
   default, or ``etcd.local.imageTag``; ``etcd_tag.behind``: compared as etcd versions, a newer tag is not behind
   since kubeadm never downgrades etcd, and a tag not observed is not either). The spec hash leaves that tag out:
   like the version, it is what an in-place upgrade changes;
e. ``upgrade``: the machine's Node records an in-place upgrade to the spec's version that is not done (a step
   done short of ``ready``, or a step that failed: :func:`upgrade_unfinished`). Past its kubelet step the machine
   runs the spec's version already, yet may still be cordoned or not Ready: it is not up to date until the
   upgrade's last step is done, and the in-place upgrade takes it first (docs/rules.md IP5);
f. ``renewal``: the machine's host records a certificate renewal in place that is not done
   (``certificate_renewal``): its certificate files are new, and some of its static pods may still run with the
   old ones, or be stopped (docs/certificates.md);
g. ``spec``: the machine's recorded spec hash differs from the hash of the part of the spec that built it
   (``spec_hash``: ``init`` for the machine whose ``bootstrap`` is ``init``, ``join`` for the others). A
   machine whose ``bootstrap`` is not known is outdated only when its hash matches neither part. A machine
   with no recorded hash (adopted, or built before hashes were recorded) never rolls out for this reason,
   only for ``rollout_after`` — KCP does the same with machines that carry no recorded configuration.

A machine being deleted is never outdated (RO2), though it still counts as a machine.

With ``upgrade.strategy: in_place`` a machine whose only reasons are ``version``, ``etcd`` and ``upgrade`` (IN_PLACE_KINDS) is
upgraded where it stands rather than replaced (:func:`split_by_strategy`); any other reason still replaces it. With
``certificates.renewal: in_place`` the ``certificates`` reason is met where the machine stands too: by a renewal in
place when it is the machine's only reason, by the in-place upgrade when it comes with the upgrade's (kubeadm upgrade
renews the machine's certificates). A renewal under way (``renewal``) is always finished in place, whatever the spec
now says: it is the shortest way back to a machine whose pods run with the files on its disk.

Next step (RO3): with ``max = replicas + max_surge`` (max_surge 0 or 1), fewer machines than ``max`` → scale
up (the new machine is placed by FD2), otherwise → scale down choosing among the outdated machines (SD1).
So max_surge 1 adds then removes, and max_surge 0 removes then adds.

:func:`seconds_until_outdated` says when a machine up to date now turns outdated with no change in the cluster
(``rollout.after`` passing, certificates entering ``rollout.before``): what a waiting reconcile loop polls for.
"""

from __future__ import annotations

from collections import namedtuple
from datetime import timedelta

from ansible_collections.kubeadm.control_plane.plugins.module_utils import certificate_renewal, etcd_tag, node_upgrade
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import default_images, etcd_is_external, with_v
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import PAST_BOUNDARY_SECONDS, format_time, parse_time

CERTIFICATES, ROLLOUT_AFTER, VERSION, ETCD, UPGRADE, RENEWAL, SPEC = (
    "certificates", "rollout_after", "version", "etcd", "upgrade", "renewal", "spec")
# The reasons an in-place upgrade removes: the version, the etcd kubeadm deploys with it (docs/rules.md IP1), and
# an in-place upgrade to the spec's version not done yet.
IN_PLACE_KINDS = (VERSION, ETCD, UPGRADE)
SCALE_UP, SCALE_DOWN = "scale_up", "scale_down"

Reason = namedtuple("Reason", "kind message")


def outdated_reasons(machine, spec, desired_hashes, now):
    """RO1 / RO2: the ``Reason`` list for one machine (empty = up to date). ``now``: an aware datetime.

    ``desired_hashes``: ``spec_hash.spec_hashes(spec)``, the hash of each part.
    """
    if machine.get("deleting"):
        return []
    reasons = []
    rollout = spec.get("rollout") or {}
    days = (rollout.get("before") or {}).get("certificates_expiry_days")
    expiry = machine.get("certificates_expire")
    if days is not None and expiry is not None and now + timedelta(days=days) > parse_time(expiry):
        reasons.append(Reason(CERTIFICATES, "certificates expire at %s, within %d days" % (expiry, days)))
    after = rollout.get("after")
    if after is not None:
        after_time = parse_time(after)
        if after_time < now and parse_time(machine["created"]) < after_time:
            reasons.append(Reason(ROLLOUT_AFTER, "created before rollout.after %s" % format_time(after_time)))
    if version_differs(machine.get("version"), spec["version"]):
        wanted = with_v(spec["version"])
        reasons.append(Reason(VERSION, "runs %s, the spec wants %s" % (machine.get("version") or "an unknown version", wanted)))
    etcd = wanted_etcd_tag(spec)
    if etcd_tag.behind(machine.get("etcd_image_tag"), etcd):
        reasons.append(Reason(ETCD, "runs etcd %s, the spec wants %s" % (machine["etcd_image_tag"], etcd)))
    if upgrade_unfinished(machine, spec["version"]):
        reasons.append(Reason(UPGRADE, upgrade_left(machine["upgrade"])))
    if machine.get("certificate_renewal") is not None:
        reasons.append(Reason(RENEWAL, certificate_renewal.left(machine["certificate_renewal"])))
    recorded = machine.get("spec_hash")
    wanted_hashes = [desired_hashes[machine["bootstrap"]]] if machine.get("bootstrap") else sorted(set(desired_hashes.values()))
    if recorded and recorded not in wanted_hashes:  # an empty annotation records no hash, as a missing one
        reasons.append(
            Reason(SPEC, "built from spec %s, the spec is now %s" % (_short(recorded), " or ".join(_short(h) for h in wanted_hashes)))
        )
    return reasons


def upgrade_unfinished(node, version):
    """Whether a machine or a worker (its snapshot entry) records an in-place upgrade to ``version`` that is not done:
    a step done short of ``ready``, or a step that failed (``node_upgrade.unfinished``). One of an earlier version is
    not this upgrade's."""
    record = node.get("upgrade")
    return node_upgrade.unfinished(record) and not version_differs(record.get("version"), version)


def upgrade_left(record):
    """What an unfinished upgrade's ``record`` (the snapshot's ``upgrade``) says of where it stopped."""
    if record.get("failed_step") is not None:
        return "its in-place upgrade to %s failed at step %s: %s" % (record["version"], record["failed_step"], record.get("error") or "no error recorded")
    return "its in-place upgrade to %s stopped after step %s" % (record["version"], record.get("step") or "(none)")


def seconds_until_outdated(machines, spec, now):
    """Seconds until the first machine turns outdated by time alone (rules a and b), or None when none will.

    Both rules need the boundary strictly passed, hence the margin.
    """
    rollout = spec.get("rollout") or {}
    days = (rollout.get("before") or {}).get("certificates_expiry_days")
    after = parse_time(rollout["after"]) if rollout.get("after") is not None else None
    moments = []
    for machine in machines:
        if machine.get("deleting"):
            continue
        if days is not None and machine.get("certificates_expire") is not None:
            moments.append(parse_time(machine["certificates_expire"]) - timedelta(days=days))
        if after is not None and parse_time(machine["created"]) < after:
            moments.append(after)
    ahead = [(moment - now).total_seconds() + PAST_BOUNDARY_SECONDS for moment in moments if moment >= now]
    return min(ahead, default=None)


def outdated_machines(machines, spec, desired_hashes, now):
    """``{machine name: [Reason, ...]}`` for every outdated machine."""
    out = {}
    for machine in machines:
        reasons = outdated_reasons(machine, spec, desired_hashes, now)
        if reasons:
            out[machine["name"]] = reasons
    return out


def split_by_strategy(outdated, upgrade_strategy, renewal="rollout"):
    """``(replace, in_place, renew)``: which outdated machines are replaced, which are upgraded where they stand and
    which have their certificates renewed where they stand (module docstring).

    ``upgrade_strategy``: ``rolling`` or ``in_place``; ``renewal``: ``certificates.renewal``, ``rollout`` or ``in_place``.
    """
    renewable = {RENEWAL, CERTIFICATES} if renewal == "in_place" else {RENEWAL}
    upgradable = set(IN_PLACE_KINDS) | renewable if upgrade_strategy == "in_place" else set()
    replace, in_place, renew = {}, {}, {}
    for name, reasons in outdated.items():
        kinds = {r.kind for r in reasons}
        if kinds <= renewable:
            renew[name] = reasons
        elif kinds <= upgradable:
            in_place[name] = reasons
        else:
            replace[name] = reasons
    return replace, in_place, renew


def next_step(machine_count, replicas, max_surge):
    """RO3: ``scale_up`` while fewer than replicas + max_surge machines exist, else ``scale_down``."""
    return SCALE_UP if machine_count < replicas + max_surge else SCALE_DOWN


def messages(outdated):
    """``{name: [message, ...]}``: the reasons as plain text, for results and logs."""
    return {name: [r.message for r in reasons] for name, reasons in outdated.items()}


def wanted_etcd_tag(spec):
    """The etcd image tag the machines are to run: the spec's (``spec.default_images``), None with external etcd."""
    return None if etcd_is_external(spec) else default_images(spec)["etcd"]


def version_differs(observed, wanted):
    """Whether an observed Kubernetes version (None = unknown, which differs) is not ``wanted``, with or without v."""
    return observed is None or with_v(observed) != with_v(wanted)


def _short(spec_hash):
    return spec_hash[:12]
