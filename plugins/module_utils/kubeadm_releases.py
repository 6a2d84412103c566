# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each supported kubeadm release accepts and defaults to: the one table the spec's checks read
(docs/kubernetes-versions.md).

Pure data and look-ups, no I/O. The supported Kubernetes versions are v1.33 to v1.37: 1.35, 1.36 and 1.37 are
the minors upstream still supports; 1.33 and 1.34 are accepted so that clusters still on them can be upgraded
one minor at a time. Per minor the table holds:

* the kubeadm config API versions kubeadm reads (v1beta3 until 1.36; kubeadm 1.37 removed it);
* the etcd, CoreDNS and pause images kubeadm deploys when the configuration names no tag (the newest patch
  release of that minor that docs/kubernetes-versions.md records);
* the kubeadm feature gates that are locked on (GA: setting them to false is refused) and those that are gone
  (kubeadm refuses an unrecognised gate), each with the minor it changed in.
"""

from __future__ import annotations

from collections import namedtuple

V1BETA3 = "kubeadm.k8s.io/v1beta3"
V1BETA4 = "kubeadm.k8s.io/v1beta4"

Release = namedtuple("Release", "config_apis etcd_image coredns_image pause_image")

KUBEADM_RELEASES = {
    (1, 33): Release((V1BETA4, V1BETA3), "3.5.24-0", "v1.12.0", "3.10"),
    (1, 34): Release((V1BETA4, V1BETA3), "3.6.5-0", "v1.12.1", "3.10.1"),
    (1, 35): Release((V1BETA4, V1BETA3), "3.6.6-0", "v1.13.1", "3.10.1"),
    (1, 36): Release((V1BETA4, V1BETA3), "3.6.8-0", "v1.14.2", "3.10.2"),
    (1, 37): Release((V1BETA4,), "3.7.0-0", "v1.14.6", "3.10.2"),
}

OLDEST, NEWEST = min(KUBEADM_RELEASES), max(KUBEADM_RELEASES)
SUPPORTED_RANGE = "v%d.%d to v%d.%d" % (OLDEST + NEWEST)

# Feature gate -> (minor it was locked on in, minor kubeadm removed it in; None = still there).
# PublicKeysECDSA was never locked on: encryptionAlgorithm replaced it.
FEATURE_GATES = {
    "EtcdLearnerMode": ((1, 32), (1, 33)),
    "WaitForAllControlPlaneComponents": ((1, 34), (1, 35)),
    "ControlPlaneKubeletLocalMode": ((1, 35), (1, 36)),
    "NodeLocalCRISocket": ((1, 36), (1, 37)),
    "PublicKeysECDSA": (None, (1, 37)),
}


def release(minor):
    """The table's entry for a (major, minor) pair, or None outside the supported range."""
    return KUBEADM_RELEASES.get(tuple(minor[:2]))


def feature_gate_problem(gate, value, minor):
    """Why kubeadm of this (major, minor) refuses ``featureGates: {gate: value}``, or None if it accepts it.

    Gates this table does not list are left to kubeadm (they may be newer than the table)."""
    if gate not in FEATURE_GATES:
        return None
    locked, removed = FEATURE_GATES[gate]
    if removed is not None and minor[:2] >= removed:
        instead = "set encryptionAlgorithm instead" if locked is None else "it is always on"
        return "kubeadm v%d.%d no longer knows this feature gate (removed in v%d.%d; %s): leave it out" % (
            minor[0], minor[1], removed[0], removed[1], instead)
    if locked is not None and minor[:2] >= locked and value is not True:
        return "is locked to true from v%d.%d (the feature is GA): leave it out or set it to true" % locked
    return None
