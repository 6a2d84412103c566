# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The spec hash: was a machine built from the spec now in force?

Pure functions, no I/O. The hash covers what a machine is built from and nothing else (docs/spec.md):

* the kubeadm cluster, init and join configurations, without ``dns`` in the cluster configuration and
  without ``discovery`` in the join configuration (KCP ignores them too: CoreDNS is a cluster add-on, and
  discovery holds per-join tokens);
* ``machine_template``.

It leaves out ``replicas``, ``version`` (compared on its own, so an in-place upgrade changes the version and
keeps the hash), ``kubeadm.api_version``, ``rollout``, ``upgrade``, ``remediation`` and ``health_check``.
Extra arguments are compared as a list of ``{name, value}`` ordered by name, whichever way the config API
writes them (a v1beta3 map or a v1beta4 list): kubeadm renders them as flags sorted by name, so moving a spec
from v1beta3 to v1beta4 does not roll machines out.

The hash is the first 16 hex digits of the SHA-256 of the canonical JSON (sorted keys, no spaces).
"""

from __future__ import annotations

import hashlib
import json

_EXTRA_ARGS_KEYS = ("extraArgs", "kubeletExtraArgs")


def _canonical(value):
    """``value`` with every extraArgs / kubeletExtraArgs written as a name-ordered list of {name, value}."""
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, sub in value.items():
        if key in _EXTRA_ARGS_KEYS and isinstance(sub, dict):
            sub = [{"name": name, "value": arg} for name, arg in sorted(sub.items())]
        if key in _EXTRA_ARGS_KEYS and isinstance(sub, list):
            sub = sorted(sub, key=lambda arg: str(arg.get("name")) if isinstance(arg, dict) else "")
        out[key] = _canonical(sub)
    return out


def hashed_part(spec):
    """The part of a normalized spec the hash covers, as it is hashed."""
    kubeadm = spec["kubeadm"]
    cluster = {k: v for k, v in kubeadm["cluster_configuration"].items() if k != "dns"}
    join = {k: v for k, v in kubeadm["join_configuration"].items() if k != "discovery"}
    return _canonical(
        {
            "cluster_configuration": cluster,
            "init_configuration": kubeadm["init_configuration"],
            "join_configuration": join,
            "machine_template": spec["machine_template"],
        }
    )


def spec_hash(spec):
    """16 hex digits that change exactly when a machine built from ``spec`` would be built differently."""
    text = json.dumps(hashed_part(spec), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
