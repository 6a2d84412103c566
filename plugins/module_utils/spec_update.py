# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""May the spec in force change into a new one? (KCP's update webhook, docs/rules.md V9-V13.)

Pure functions, no I/O. Both specs are normalized (spec.normalize_spec). The rules:

* The changed fields are the leaf paths of a JSON merge patch from the old spec to the new one: mappings are
  compared key by key, a key that disappears is one path ending at that key (even if it held a mapping), a
  mapping that appears contributes each of its leaves, a list is a leaf.
* Every changed path must match the allow-list below: a pattern matches a path equal to it, or any longer
  path once a ``*`` segment is reached; a path shorter than the pattern, or longer than a pattern without
  ``*``, does not match. So ``cluster_name``, ``endpoint`` and, in the cluster configuration, ``networking``,
  ``certificatesDir``, ``clusterName`` and the removal of ``etcd.local`` are immutable.
* etcd may not switch between stacked (local) and external.
* The version may not skip a minor: from v1.29.x anything at or above v1.31.0 (pre-releases included) is
  refused. A downgrade is not refused by this rule.
* A CoreDNS image tag may not go down, unless either tag is empty or both read as the same version.
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import (
    coredns_tag_version,
    etcd_is_external,
    version_tuple,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import error

# KCP's mutable-path list, mapped to our field names (spec.kubeadmConfigSpec.clusterConfiguration ->
# kubeadm.cluster_configuration, and so on); the KCP paths with no counterpart here drop out.
MUTABLE_PATHS = tuple(
    tuple(pattern.split("."))
    for pattern in (
        "replicas",
        "version",
        "machine_template.*",
        "rollout.*",
        "upgrade.*",
        "remediation.*",
        "health_check.*",
        "kubeadm.api_version",
        "kubeadm.cluster_configuration.etcd.local.imageRepository",
        "kubeadm.cluster_configuration.etcd.local.imageTag",
        "kubeadm.cluster_configuration.etcd.local.extraArgs",
        "kubeadm.cluster_configuration.etcd.local.extraArgs.*",
        "kubeadm.cluster_configuration.etcd.local.dataDir",
        "kubeadm.cluster_configuration.etcd.local.peerCertSANs",
        "kubeadm.cluster_configuration.etcd.local.serverCertSANs",
        "kubeadm.cluster_configuration.etcd.external.endpoints",
        "kubeadm.cluster_configuration.etcd.external.caFile",
        "kubeadm.cluster_configuration.etcd.external.certFile",
        "kubeadm.cluster_configuration.etcd.external.keyFile",
        "kubeadm.cluster_configuration.dns.imageRepository",
        "kubeadm.cluster_configuration.dns.imageTag",
        "kubeadm.cluster_configuration.imageRepository",
        "kubeadm.cluster_configuration.featureGates",
        "kubeadm.cluster_configuration.featureGates.*",
        "kubeadm.cluster_configuration.apiServer",
        "kubeadm.cluster_configuration.apiServer.*",
        "kubeadm.cluster_configuration.controllerManager",
        "kubeadm.cluster_configuration.controllerManager.*",
        "kubeadm.cluster_configuration.scheduler",
        "kubeadm.cluster_configuration.scheduler.*",
        "kubeadm.init_configuration.nodeRegistration",
        "kubeadm.init_configuration.nodeRegistration.*",
        "kubeadm.init_configuration.patches.directory",
        "kubeadm.init_configuration.patches",
        "kubeadm.init_configuration.skipPhases",
        "kubeadm.init_configuration.bootstrapTokens",
        "kubeadm.init_configuration.localAPIEndpoint",
        "kubeadm.init_configuration.localAPIEndpoint.*",
        "kubeadm.join_configuration.nodeRegistration",
        "kubeadm.join_configuration.nodeRegistration.*",
        "kubeadm.join_configuration.patches.directory",
        "kubeadm.join_configuration.patches",
        "kubeadm.join_configuration.skipPhases",
        "kubeadm.join_configuration.caCertPath",
        "kubeadm.join_configuration.controlPlane",
        "kubeadm.join_configuration.controlPlane.*",
        "kubeadm.join_configuration.discovery",
        "kubeadm.join_configuration.discovery.*",
    )
)

_MISSING = object()


def changed_paths(old, new, prefix=()):
    """The leaf paths (tuples of keys) a JSON merge patch from ``old`` to ``new`` would touch, sorted."""
    paths = []
    for key in sorted(set(old) | set(new), key=str):
        before, after = old.get(key, _MISSING), new.get(key, _MISSING)
        if before == after:
            continue
        if after is _MISSING:
            paths.append(prefix + (key,))
        elif isinstance(after, dict):
            paths.extend(changed_paths(before if isinstance(before, dict) else {}, after, prefix + (key,)))
        else:
            paths.append(prefix + (key,))
    return paths


def path_allowed(path, pattern):
    """Whether a changed ``path`` matches an allow-list ``pattern`` (see the module docstring)."""
    for i, key in enumerate(path):
        if i >= len(pattern):
            return False
        if pattern[i] == "*":
            return True
        if key != pattern[i]:
            return False
    return len(path) == len(pattern)


def _value_at(spec, path):
    value = spec
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _coredns_tag(spec):
    dns = _value_at(spec, ("kubeadm", "cluster_configuration", "dns"))
    return dns.get("imageTag") if isinstance(dns, dict) else None


def check_update(previous, new):
    """Errors for every change from the normalized spec ``previous`` to ``new`` that KCP would refuse. ``new`` may
    be partly read (spec.normalize_spec with ``partial``): a field it could not read is left to its own error."""
    errors = []
    for path in changed_paths(previous, new):
        if not any(path_allowed(path, pattern) for pattern in MUTABLE_PATHS):
            errors.append(error(".".join(str(k) for k in path), "may not change once the control plane exists",
                                _value_at(new, path)))

    if etcd_is_external(previous) != etcd_is_external(new):
        errors.append(error("kubeadm.cluster_configuration.etcd", "may not switch between stacked (local) and "
                                                                  "external etcd", _value_at(new, ("kubeadm", "cluster_configuration", "etcd"))))

    old_version, new_version = version_tuple(previous["version"]), version_tuple(new["version"])
    if new_version is not None and new_version[:2] >= (old_version[0], old_version[1] + 2):
        errors.append(error("version", "may not skip a minor version: from %s upgrade to v%d.%d first"
                            % (previous["version"], old_version[0], old_version[1] + 1), new["version"]))

    old_tag, new_tag = _coredns_tag(previous), _coredns_tag(new)
    if old_tag and new_tag:
        old_dns, new_dns = coredns_tag_version(old_tag), coredns_tag_version(new_tag)
        if old_dns and new_dns and new_dns < old_dns:
            errors.append(error("kubeadm.cluster_configuration.dns.imageTag", "may not downgrade CoreDNS (from %s)"
                                % old_tag, new_tag))
    return errors
