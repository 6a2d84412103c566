# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The spec hash: was a machine built from the spec now in force?

Pure functions, no I/O. A machine is built either by ``kubeadm init`` (the first one) or by ``kubeadm join``
(all the others), and each reads only its own part of the kubeadm configuration, so there are two hashes,
one per part (KCP too compares each machine with the configuration that built it). Each covers what such a
machine is built from and nothing else (docs/spec.md):

* the kubeadm cluster configuration, without ``dns`` (CoreDNS is a cluster add-on, KCP ignores it too) and
  without ``etcd.local.imageTag`` (like the version, what an in-place upgrade changes: ``rollout`` compares the
  etcd each machine runs with the one wanted, reason ``etcd``);
* ``init``: the init configuration; ``join``: the join configuration without ``discovery`` (per-join tokens);
* ``machine_template``.

So a change to the init configuration rolls out only the machine that ran ``kubeadm init``, and a change to
the join configuration only the machines that joined.

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


INIT, JOIN = "init", "join"


def hashed_part(spec, part):
    """What a normalized spec's ``part`` hash (``init`` or ``join``) covers, as it is hashed."""
    kubeadm = spec["kubeadm"]
    covered = {
        "cluster_configuration": _without_version_tied(kubeadm["cluster_configuration"]),
        "machine_template": spec["machine_template"],
    }
    if part == INIT:
        covered["init_configuration"] = kubeadm["init_configuration"]
    else:
        covered["join_configuration"] = {k: v for k, v in kubeadm["join_configuration"].items() if k != "discovery"}
    return _canonical(covered)


def _without_version_tied(cluster_configuration):
    """The cluster configuration without what is compared on its own: ``dns`` and ``etcd.local.imageTag``. An
    ``etcd.local`` (then an ``etcd``) left empty goes too, so writing a tag where there was none moves no hash."""
    covered = {k: v for k, v in cluster_configuration.items() if k != "dns"}
    etcd = covered.get("etcd")
    if not isinstance(etcd, dict) or not isinstance(etcd.get("local"), dict):
        return covered
    local = {k: v for k, v in etcd["local"].items() if k != "imageTag"}
    etcd = dict(etcd, local=local) if local else {k: v for k, v in etcd.items() if k != "local"}
    if etcd:
        covered["etcd"] = etcd
    else:
        del covered["etcd"]
    return covered


def spec_hash(spec, part):
    """16 hex digits that change exactly when a machine ``part`` builds from ``spec`` would be built differently."""
    text = json.dumps(hashed_part(spec, part), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def spec_hashes(spec):
    """``{"init": ..., "join": ...}``: the hash of each part of ``spec``."""
    return {INIT: spec_hash(spec, INIT), JOIN: spec_hash(spec, JOIN)}
