# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which upgrades kubeadm refuses, and which yield to --force (kubeadm-reference.md §4.1)."""

import pytest

from kcpsim.kubeadm.release import parse_version as v
from kcpsim.kubeadm.upgrade_policy import check

CASES = [
    ("v1.37.1", "v1.36.4", "v1.37.1", [], {}, [], []),
    ("v1.36.4", "v1.36.3", "v1.36.4", [], {}, [], []),
    ("v1.37.1", "v1.37.1", "v1.37.1", [], {}, [], []),
    ("v1.37.1", "v1.35.9", "v1.37.1", [], {},
     ['Specified version to upgrade to "v1.37.1" is too high; kubeadm can upgrade only 1 minor'], []),
    ("v1.37.1", "v1.36.4", "v1.35.9", [], {}, ['equal to or lower than the minimum supported version "v1.36.4"'],
     ["can only be used to upgrade to Kubernetes version 1.37"]),
    ("v1.36.4", "v1.35.9", "v1.37.1", [], {}, ["too high", "at least one minor release higher"], []),
    ("v1.36.4", "v1.36.4", "v1.37.0", [], {}, ["at least one minor release higher"], []),
    ("v1.37.1", "v1.36.4", "v1.37.5", [], {}, [],
     ['"v1.37.5" is higher than the kubeadm version "v1.37.1". Upgrade kubeadm first']),
    ("v1.37.1", "v1.37.1", "v1.36.4", [], {}, [],
     ["Kubeadm version v1.37.1 can only be used to upgrade to Kubernetes version 1.37"]),
    ("v1.37.1", "v1.36.4", "v1.37.0-rc.1", [], {}, [], ["is an unstable version"]),
    ("v1.37.1", "v1.36.4", "v1.37.0-rc.1", [], {"allow_rc": True}, [], []),
    ("v1.37.1", "v1.36.4", "v1.37.0-alpha.1", [], {"allow_rc": True}, [], ["is an unstable version"]),
    ("v1.37.1", "v1.36.4", "v1.37.0-alpha.1", [], {"allow_experimental": True}, [], []),
    ("v1.37.1", "v1.36.4", "v1.37.1", ["v1.33.4", "v1.36.4"], {}, [], ["kubelets in this cluster that are too old"]),
    ("v1.37.1", "v1.36.4", "v1.37.1", ["v1.34.0"], {}, [], []),
]
IDS = [
    "one minor up with a matching kubeadm is allowed",
    "a patch upgrade is allowed",
    "re-applying the current version is allowed (recovery)",
    "skipping a minor is fatal",
    "a target below kubeadm's oldest control plane is fatal",
    "a target newer than kubeadm's minor is fatal",
    "a target one minor above kubeadm is fatal even from the same cluster minor",
    "a target patch above kubeadm's needs --force",
    "a one-minor downgrade needs --force",
    "a release candidate needs --force without --allow-release-candidate-upgrades",
    "--allow-release-candidate-upgrades admits an rc",
    "an alpha is not a release candidate",
    "--allow-experimental-upgrades admits any pre-release",
    "kubelets more than three minors behind need --force",
    "kubelets three minors behind are fine",
]


@pytest.mark.parametrize("kubeadm, cluster, target, kubelets, allow, fatal, forceable", CASES, ids=IDS)
def test_upgrade_policy(kubeadm, cluster, target, kubelets, allow, fatal, forceable):
    verdict = check(v(kubeadm), v(cluster), v(target), kubelets=[v(k) for k in kubelets], **allow)
    assert len(verdict.fatal) == len(fatal)
    for fragment in fatal:
        assert any(fragment in message for message in verdict.fatal), (fragment, verdict.fatal)
    assert len(verdict.forceable) == len(forceable)
    for fragment in forceable:
        assert any(fragment in message for message in verdict.forceable), (fragment, verdict.forceable)


def test_force_bypasses_only_the_forceable():
    verdict = check(v("v1.37.1"), v("v1.35.9"), v("v1.37.1"))
    assert verdict.blocking(force=True) == verdict.fatal
    forceable_only = check(v("v1.37.1"), v("v1.37.1"), v("v1.36.4"))
    assert forceable_only.blocking(force=True) == []
    assert forceable_only.blocking(force=False) == forceable_only.forceable
