# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one kubeadm release does differently from the others (kubeadm-reference.md §0). Pure, no I/O.

The rule, minor by minor:

* configuration APIs: 1.29 and 1.30 read ``kubeadm.k8s.io/v1beta3`` only; 1.31 reads v1beta3 (deprecated,
  with a warning) and v1beta4; v1beta2 and older are refused by all three;
* ``kubeadm-config`` is stored as v1beta3 up to 1.30 and as v1beta4 from 1.31;
* ``super-admin.conf`` is written by ``init``; only 1.29's ``upgrade apply`` also creates it when missing;
* EtcdLearnerMode is on (beta) in 1.29 – 1.31: a joining stacked member is added as a learner, unless the
  ClusterConfiguration's ``featureGates`` turn it off; each release knows its own set of kubeadm gates;
* etcd probes: up to 1.30 liveness ``/health?exclude=NOSPACE&serializable=true`` and startup
  ``/health?serializable=false``; from 1.31 liveness ``/livez``, readiness and startup ``/readyz``;
* ``certs check-expiration -o json|yaml`` exists from 1.30;
* 1.29 stores ``apiServer.extraArgs.authorization-mode: Node,RBAC`` in the ClusterConfiguration;
* images: the x.0 releases target etcd 3.5.10-0 / 3.5.12-0 / 3.5.15-0 and CoreDNS v1.11.1 / v1.11.1 /
  v1.11.3; later 1.29 and 1.30 patches target etcd 3.5.15-0 and CoreDNS v1.11.3 (the patch where each
  moved is an approximation: 1.29.8 and 1.30.4); pause is 3.9 up to 1.30 and 3.10 from 1.31.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

V1BETA3 = "kubeadm.k8s.io/v1beta3"
V1BETA4 = "kubeadm.k8s.io/v1beta4"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")

# minor -> (first patch on the 3.5.15-0 / v1.11.3 line, etcd tag before it, CoreDNS tag before it)
_IMAGE_LINES = {
    29: (8, "3.5.10-0", "v1.11.1"),
    30: (4, "3.5.12-0", "v1.11.1"),
    31: (0, "3.5.15-0", "v1.11.3"),
}
SUPPORTED_MINORS = tuple(sorted(_IMAGE_LINES))


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
        if version.major != 1 or version.minor not in _IMAGE_LINES:
            raise ValueError("the kubeadm emulation covers v1.29 - v1.31, not %s" % version)
        return cls(version)

    @property
    def minor(self):
        return self.version.minor

    @property
    def accepted_config_versions(self):
        return (V1BETA3, V1BETA4) if self.minor >= 31 else (V1BETA3,)

    @property
    def deprecated_config_versions(self):
        return (V1BETA3,) if self.minor >= 31 else ()

    @property
    def stored_config_version(self):
        return V1BETA4 if self.minor >= 31 else V1BETA3

    @property
    def upgrade_apply_creates_super_admin(self):
        return self.minor == 29

    @property
    def feature_gates(self):
        """kubeadm's own feature gates this release knows, with their defaults."""
        gates = {"PublicKeysECDSA": False, "RootlessControlPlane": False, "EtcdLearnerMode": True}
        if self.minor <= 30:
            gates["UpgradeAddonsBeforeControlPlane"] = False
        if self.minor >= 30:
            gates["WaitForAllControlPlaneComponents"] = False
        if self.minor >= 31:
            gates["ControlPlaneKubeletLocalMode"] = False
        return gates

    def etcd_learner_mode(self, gates=None):
        """Whether a joining stacked etcd member starts as a learner (EtcdLearnerMode, on by default)."""
        return bool(dict(self.feature_gates, **(gates or {}))["EtcdLearnerMode"])

    @property
    def etcd_probes_use_readyz(self):
        return self.minor >= 31

    @property
    def check_expiration_structured_output(self):
        return self.minor >= 30

    @property
    def stores_authorization_mode(self):
        return self.minor == 29

    @property
    def has_reset_and_upgrade_configuration(self):
        return self.minor >= 31

    @property
    def has_join_update_status_phase(self):
        return self.minor <= 30

    @property
    def renews_etcd_certs_with_apiserver(self):
        return self.minor >= 31

    @property
    def logs_api_check(self):
        return self.minor >= 30

    @property
    def kubelet_finalize_phase(self):
        return "enable-client-cert-rotation" if self.minor >= 31 else "experimental-cert-rotation"

    @property
    def etcd_image_tag(self):
        first_new, old_tag = _IMAGE_LINES[self.minor][:2]
        return "3.5.15-0" if self.version.patch >= first_new else old_tag

    @property
    def coredns_image_tag(self):
        first_new, old_tag = _IMAGE_LINES[self.minor][::2]
        return "v1.11.3" if self.version.patch >= first_new else old_tag

    @property
    def pause_image_tag(self):
        return "3.10" if self.minor >= 31 else "3.9"

    @property
    def oldest_control_plane(self):
        """kubeadm vX.Y deploys and upgrades control planes from vX.(Y-1).0 up to its own version."""
        return Version(1, self.minor - 1, 0)

    @property
    def kubelet_skew_minors(self):
        """Kubelets may lag the control plane by up to three minors (1.29+)."""
        return 3
