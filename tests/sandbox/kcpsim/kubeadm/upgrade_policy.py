# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""May ``kubeadm upgrade`` take this cluster to that version? Pure, no I/O (kubeadm-reference.md §4.1).

The rules, checked in this order; *fatal* ones cannot be bypassed, *forceable* ones yield to ``--force``:

1. target below kubeadm's oldest supported control plane (vX.(Y-1).0) — fatal;
2. target more than one minor above the cluster — fatal for a release, forceable for a pre-release
   ("too high; kubeadm can upgrade only 1 minor version at a time");
3. target more than one minor below the cluster — same severity ("too low");
4. target newer than kubeadm: a higher minor is fatal for a release, forceable for a pre-release ("at least
   one minor release higher than the kubeadm minor release"); only a higher patch is forceable ("higher than
   the kubeadm version ... Upgrade kubeadm first");
5. target minor below kubeadm's minor — forceable ("can only be used to upgrade to Kubernetes version X.Y");
6. a pre-release target without --allow-experimental-upgrades (any pre-release) or
   --allow-release-candidate-upgrades (an rc) — forceable ("an unstable version");
7. kubelets more than three minors behind the target — forceable ("There are kubelets in this cluster that
   are too old").

The messages are real kubeadm's (phases/upgrade/policy.go), including its quirk of naming the cluster's
version as "the minimum supported version" in rule 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Verdict:
    fatal: list = field(default_factory=list)
    forceable: list = field(default_factory=list)

    def blocking(self, force):
        """The messages that stop the upgrade given ``--force``."""
        return self.fatal + ([] if force else self.forceable)


def check(kubeadm, cluster, target, kubelets=(), allow_experimental=False, allow_rc=False, kubelet_skew=3):
    """A :class:`Verdict` for upgrading a ``cluster`` version to ``target`` with ``kubeadm`` (Versions)."""
    verdict = Verdict()
    release_target = target.final
    minimum = (kubeadm.major, kubeadm.minor - 1)
    if (target.major, target.minor) < minimum:
        verdict.fatal.append('Specified version to upgrade to "%s" is equal to or lower than the minimum supported '
                             'version "%s". Please specify a higher version to upgrade to' % (target, cluster))
    if target.minor > cluster.minor + 1:
        message = ('Specified version to upgrade to "%s" is too high; kubeadm can upgrade only 1 minor version at '
                   'a time' % target)
        (verdict.fatal if release_target else verdict.forceable).append(message)
    if target.minor < cluster.minor - 1:
        message = ('Specified version to downgrade to "%s" is too low; kubeadm can downgrade only 1 minor version '
                   'at a time' % target)
        (verdict.fatal if release_target else verdict.forceable).append(message)
    if (kubeadm.major, kubeadm.minor, kubeadm.patch) < (target.major, target.minor, target.patch):
        if target.minor > kubeadm.minor:
            message = ('Specified version to upgrade to "%s" is at least one minor release higher than the '
                       'kubeadm minor release (%d > %d). Such an upgrade is not supported'
                       % (target, target.minor, kubeadm.minor))
            (verdict.fatal if release_target else verdict.forceable).append(message)
        else:
            verdict.forceable.append('Specified version to upgrade to "%s" is higher than the kubeadm version "%s". '
                                     'Upgrade kubeadm first using the tool you used to install kubeadm'
                                     % (target, kubeadm))
    if target.minor < kubeadm.minor:
        verdict.forceable.append("Kubeadm version %s can only be used to upgrade to Kubernetes version %d.%d"
                                 % (kubeadm, kubeadm.major, kubeadm.minor))
    if not release_target:
        is_rc = target.pre.startswith("rc")
        if not allow_experimental and not (is_rc and allow_rc):
            verdict.forceable.append('Specified version to upgrade to "%s" is an unstable version and such upgrades '
                                     "weren't allowed via setting the --allow-*-upgrades flags" % target)
    too_old = sorted({str(v) for v in kubelets if v.minor < target.minor - kubelet_skew})
    if too_old:
        verdict.forceable.append("There are kubelets in this cluster that are too old that have these versions %s"
                                 % ("[%s]" % " ".join(too_old)))
    return verdict
