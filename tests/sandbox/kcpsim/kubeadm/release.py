# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one kubeadm release does differently from the others (kubeadm-reference-1.32-plus.md §0.1). Pure, no I/O.

The rule, minor by minor (1.33 – 1.37):

* configuration APIs: v1beta3 (deprecated, with a warning) and v1beta4 up to 1.36; 1.37 reads v1beta4 only and
  refuses v1beta3 as an old API spec to migrate with kubeadm v1.36; ``kubeadm-config`` is stored as v1beta4;
* kubeadm's feature gates (a GA gate is locked to true, a removed gate is unknown):
  WaitForAllControlPlaneComponents beta (on) in 1.33, GA in 1.34, removed (always on) from 1.35;
  ControlPlaneKubeletLocalMode beta (on) in 1.33 – 1.34, GA in 1.35, removed from 1.36;
  NodeLocalCRISocket alpha (off) in 1.33, beta (on) in 1.34 – 1.35, GA in 1.36, removed from 1.37;
  PublicKeysECDSA deprecated (off) up to 1.36, removed in 1.37; RootlessControlPlane alpha (off) throughout;
* static pod probes use the named port ``probe-port`` from 1.34; etcd gets etcd 3.6's flag names when its image
  is 3.6 or newer, and always from 1.36;
* ``kubeadm-flags.env`` carries ``--pod-infra-container-image`` up to 1.34;
* the API server reaches kubelets through ClusterRoleBinding ``kubeadm:apiserver-kubelet-client`` (its client
  certificate without ``O=kubeadm:cluster-admins``) from the May 2026 patches: 1.33.12, 1.34.8, 1.35.5, 1.36.1 and
  all of 1.37; only ``init`` and ``upgrade apply`` create the binding, ``join`` does not;
* the upgrade health-check Job has 15 s up to 1.35 and 1 min from 1.36; from 1.37 the etcd health check of
  ``join`` and ``upgrade`` needs a quorum of healthy voters, not every member;
* images: etcd 3.5.24-0 / 3.6.5-0 / 3.6.6-0 / 3.6.8-0 / 3.7.0-0 for 1.33 – 1.37 (the tag of the bundled patch of
  each minor), kubeadm deploying for a control plane of its own minor or one of the two before it the etcd of that
  minor (a 1.37 kubeadm lists etcd 3.6.8-0 for v1.36), the nearest with a warning for any other; CoreDNS v1.12.0 /
  v1.12.1 / v1.13.1 / v1.14.2, and v1.14.4 for 1.37.0, v1.14.6 from 1.37.1; pause 3.10 (1.33), 3.10.1 (1.34, 1.35),
  3.10.2 (1.36, 1.37).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

V1BETA3 = "kubeadm.k8s.io/v1beta3"
V1BETA4 = "kubeadm.k8s.io/v1beta4"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")

# minor -> (etcd tag, pause tag, [(first patch, CoreDNS tag)] newest last)
_IMAGES = {
    33: ("3.5.24-0", "3.10", [(0, "v1.12.0")]),
    34: ("3.6.5-0", "3.10.1", [(0, "v1.12.1")]),
    35: ("3.6.6-0", "3.10.1", [(0, "v1.13.1")]),
    36: ("3.6.8-0", "3.10.2", [(0, "v1.14.2")]),
    37: ("3.7.0-0", "3.10.2", [(0, "v1.14.4"), (1, "v1.14.6")]),
}
SUPPORTED_MINORS = tuple(sorted(_IMAGES))

# gate -> {minor: (default, locked)}; a minor that is not listed does not know the gate.
_GATES = {
    "WaitForAllControlPlaneComponents": {33: (True, False), 34: (True, True)},
    "ControlPlaneKubeletLocalMode": {33: (True, False), 34: (True, False), 35: (True, True)},
    "NodeLocalCRISocket": {33: (False, False), 34: (True, False), 35: (True, False), 36: (True, True)},
    "PublicKeysECDSA": {33: (False, False), 34: (False, False), 35: (False, False), 36: (False, False)},
    "RootlessControlPlane": {minor: (False, False) for minor in SUPPORTED_MINORS},
}
# The gate's behaviour once it is removed (kubeadm removes a GA gate one release after it locked it).
_REMOVED_GATE_VALUE = {"WaitForAllControlPlaneComponents": True, "ControlPlaneKubeletLocalMode": True,
                       "NodeLocalCRISocket": True, "PublicKeysECDSA": False}
# minor -> first patch with the apiserver-kubelet-client ClusterRoleBinding (the May 2026 patches: 1.33.12, 1.34.8,
# 1.35.5, 1.36.1, as Cluster API's troubleshooting guide lists them).
_APISERVER_KUBELET_CLIENT_BINDING = {33: 12, 34: 8, 35: 5, 36: 1, 37: 0}


@dataclass(frozen=True, order=True)
class Version:
    """A Kubernetes release version. Orders by (major, minor, patch, release before pre-release)."""

    major: int
    minor: int
    patch: int
    final: bool = True  # False for a pre-release such as v1.31.0-rc.1
    pre: str = ""

    def __str__(self):
        text = "v%d.%d.%d" % (self.major, self.minor, self.patch)
        return text + ("-" + self.pre if self.pre else "")

    @property
    def series(self):
        return "v%d.%d" % (self.major, self.minor)


def parse_version(text):
    """A :class:`Version` for ``v1.30.6`` (the leading ``v`` is optional), or ValueError naming the rule."""
    match = _VERSION.match(str(text or "").strip())
    if not match:
        raise ValueError("%r is not a Kubernetes version of the form v<major>.<minor>.<patch>" % (text,))
    major, minor, patch, pre = match.groups()
    return Version(int(major), int(minor), int(patch), final=not pre, pre=pre or "")


@dataclass(frozen=True)
class Release:
    """The version-dependent behaviour of kubeadm ``version``."""

    version: Version

    @classmethod
    def of(cls, text):
        version = parse_version(text)
        if version.major != 1 or version.minor not in _IMAGES:
            raise ValueError("the kubeadm emulation covers v1.%d - v1.%d, not %s"
                             % (SUPPORTED_MINORS[0], SUPPORTED_MINORS[-1], version))
        return cls(version)

    @property
    def minor(self):
        return self.version.minor

    @property
    def accepted_config_versions(self):
        return (V1BETA4,) if self.minor >= 37 else (V1BETA3, V1BETA4)

    @property
    def deprecated_config_versions(self):
        return () if self.minor >= 37 else (V1BETA3,)

    def migrate_with(self, api_version):
        """The kubeadm release to migrate a refused old ``api_version`` with, or "" if it is not an old one."""
        group, version = api_version.partition("/")[::2]
        if group != "kubeadm.k8s.io":
            return ""
        if version in ("v1alpha1", "v1alpha2", "v1alpha3", "v1beta1", "v1beta2"):
            return "v1.22"
        return "v1.36" if version == "v1beta3" and self.minor >= 37 else ""

    @property
    def feature_gates(self):
        """kubeadm's own feature gates this release knows: ``{name: (default, locked)}``."""
        return {name: by_minor[self.minor] for name, by_minor in _GATES.items() if self.minor in by_minor}

    def gate(self, name, gates=None):
        """Whether gate ``name`` is on, given the ClusterConfiguration's ``featureGates``."""
        known = self.feature_gates
        if name not in known:
            return _REMOVED_GATE_VALUE.get(name, False)
        default, locked = known[name]
        return default if locked else bool((gates or {}).get(name, default))

    @property
    def encryption_algorithms(self):
        """The ``encryptionAlgorithm`` values this release accepts: ECDSA-P384 from 1.34."""
        return ("RSA-2048", "RSA-3072", "RSA-4096", "ECDSA-P256") + (("ECDSA-P384",) if self.minor >= 34 else ())

    @property
    def probes_use_named_port(self):
        return self.minor >= 34

    def etcd_uses_36_flags(self, etcd_tag):
        """Whether the etcd manifest carries etcd 3.6's flag names (1.34+ for a 3.6+ image, always from 1.36)."""
        if self.minor >= 36:
            return True
        numbers = tuple(int(p) for p in re.findall(r"\d+", etcd_tag)[:2]) or (0, 0)
        return self.minor >= 34 and numbers >= (3, 6)

    @property
    def writes_pod_infra_container_image(self):
        return self.minor <= 34

    @property
    def binds_apiserver_kubelet_client(self):
        first = _APISERVER_KUBELET_CLIENT_BINDING.get(self.minor)
        return first is not None and self.version.patch >= first

    @property
    def health_job_timeout(self):
        return 60.0 if self.minor >= 36 else 15.0

    def etcd_unhealthy(self, endpoints, unanswered):
        """Whether join's check-etcd and upgrade refuse: up to 1.36 when any member does not answer, from 1.37
        only when the answering members are no quorum of ``endpoints``."""
        if self.minor >= 37:
            return len(endpoints) - len(unanswered) < len(endpoints) // 2 + 1
        return bool(unanswered)

    def etcd_image_tag_for(self, kubernetes_version):
        """(tag, nearest) of the etcd image kubeadm deploys for a control plane of ``kubernetes_version``: its table
        (constants.SupportedEtcdVersion) holds its own minor and the two before it, each with the etcd that minor's
        kubeadm ships; a minor outside the table gets the nearest entry's, and ``nearest`` is True (kubeadm warns)."""
        table = {minor: _IMAGES[minor][0] for minor in range(self.minor - 2, self.minor + 1) if minor in _IMAGES}
        wanted = parse_version(kubernetes_version).minor
        if wanted in table:
            return table[wanted], False
        return table[min(table) if wanted < min(table) else max(table)], True

    @property
    def coredns_image_tag(self):
        return [tag for first, tag in _IMAGES[self.minor][2] if self.version.patch >= first][-1]

    @property
    def pause_image_tag(self):
        return _IMAGES[self.minor][1]

    @property
    def oldest_control_plane(self):
        """kubeadm vX.Y deploys and upgrades control planes from vX.(Y-1).0 up to its own version."""
        return Version(1, self.minor - 1, 0)

    @property
    def kubelet_skew_minors(self):
        """Kubelets may lag the control plane by up to three minors."""
        return 3
