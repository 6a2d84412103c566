# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane spec: defaults and validation of a spec as the user declares it (docs/spec.md).

Pure functions, no I/O. :func:`normalize_spec` returns the spec with every default filled in and every
error at once, as KubeadmControlPlane's and MachineHealthCheck's defaulting and validating webhooks do:

* ``cluster_name`` is a DNS-1123 label; ``version`` is ``v<major>.<minor>.<patch>`` with an optional ``-`` or
  ``+`` suffix, a missing leading ``v`` is added, and its minor is one of the supported ones (v1.33 to v1.37,
  the table in kubeadm_releases);
* ``replicas`` (default 1) is a positive integer, odd when etcd is stacked (an even count of etcd members
  tolerates no more failures than the odd count below it);
* ``endpoint.host`` is an IP or a DNS name, ``endpoint.port`` (default 6443) is 1–65535;
* ``kubeadm.api_version`` defaults to v1beta4; v1beta3 is accepted only by the versions whose kubeadm still
  reads it (up to v1.36); ``extraArgs`` is a string map with v1beta3 and a list of ``{name, value}`` with
  v1beta4; fields of one API version are refused under the other;
* ``featureGates`` may not set a gate the version's kubeadm removed, nor turn off one it locked on;
* the cluster configuration may repeat ``kubernetesVersion``, ``clusterName`` and ``controlPlaneEndpoint``
  only if they agree with ``version``, ``cluster_name`` and ``endpoint`` (they are then dropped: the roles
  set them from those fields); ``etcd.local`` and ``etcd.external`` exclude each other, external etcd
  needs ``endpoints``, ``caFile``, ``certFile`` and ``keyFile``; CoreDNS and etcd image tags hold only
  ``[-a-zA-Z0-9_.]`` and a CoreDNS tag reads as a version;
* secrets (bootstrap tokens, certificate keys) are refused: the collection makes them per run, and what is
  in the spec is returned and logged;
* ``rollout``: strategy RollingUpdate only, ``max_surge`` 0 or 1 (also as the string "0"/"1"), 0 only with
  replicas >= 3; ``after`` is RFC 3339; ``before.certificates_expiry_days`` >= 7;
* ``upgrade.strategy`` is ``rolling`` or ``in_place``; ``upgrade.other_changes`` is ``refuse`` (the default: in
  place or stop) or ``rolling`` (what in place cannot change is rolled out); ``upgrade.workers.max_unavailable``
  (1) is an integer >= 1, ``upgrade.workers.groups`` maps a worker group's name to its own ``max_unavailable``;
* ``certificates.renewal`` is ``rollout`` (the default: a machine whose certificates enter ``rollout.before`` is
  replaced) or ``in_place`` (they are renewed where it stands), which needs ``rollout.before.certificates_expiry_days``;
  that window must be shorter than the certificates' validity (``certificateValidityPeriod``, 8760h by default), or
  new certificates would be inside it already;
* ``remediation``: ``max_retry`` >= 0 or null (unlimited), periods are durations >= 0; ``external`` null (off)
  or ``{attempts >= 1 (3), timeout > 0 (10m), escalate (false)}``;
* ``health_check``: at least one unhealthy condition ``{type, status: True|False|Unknown, timeout}``;
  ``unhealthy_machine_conditions`` the same of the machine conditions the collection sets (EtcdMemberHealthy, ...),
  ``node_startup_timeout`` 0 (off) or >= 30s, ``max_unhealthy`` an integer >= 0 or ``"N%"`` (a bare "10"
  is refused), ``unhealthy_range`` ``[a-b]`` with a <= b;
* ``workers``: ``health_check`` (null: the workers are not checked), ``drain_timeout`` (5m: how long the drain of a
  remediated or replaced worker may take), ``max_surge`` (1; 0 or 1) and ``max_unavailable`` (0; >= 0, >= 1 with
  max_surge 0) of a rolling replacement, ``external_remediation`` (null: off; as ``remediation.external``), and
  ``groups`` mapping a worker group's name to its own ``{health_check, drain_timeout, max_surge, max_unavailable,
  external_remediation}``, each health check as ``health_check`` above without ``unhealthy_machine_conditions``.

Durations come back as float seconds, ``max_unhealthy`` as given (int or ``"N%"``), timestamps as given.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import timedelta

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import CONDITION_TYPES
from ansible_collections.kubeadm.control_plane.plugins.module_utils.kubeadm_releases import (
    SUPPORTED_RANGE,
    V1BETA3,
    V1BETA4,
    feature_gate_problem,
    release,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import (
    REQUIRED,
    Field,
    any_mapping,
    boolean,
    child,
    duration,
    error,
    integer,
    item,
    list_of,
    mapping,
    one_of,
    parsed_by,
    read_mapping,
    string,
    timestamp,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_duration
from ansible_collections.kubeadm.control_plane.plugins.module_utils.unhealthy_limit import parse_max_unhealthy, parse_unhealthy_range

DEFAULT_PORT = 6443

_VERSION = re.compile(r"v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][-0-9A-Za-z_.+]+)?")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_HOST_LABEL = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?")
_IMAGE_TAG = r"[-a-zA-Z0-9_.]+"
_LABEL_VALUE = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_COREDNS_TAG = re.compile(r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?([-0-9a-zA-Z_.]*)")
_CONDITION_STATUSES = ("True", "False", "Unknown")


def with_v(version):
    """A version string with its leading ``v`` (kubeadm and the spec write it; kubelet reports drop it)."""
    return version if version.startswith("v") else "v" + version


def version_tuple(version):
    """(major, minor, patch) of a valid version string (leading ``v`` optional), or None."""
    if not isinstance(version, str):
        return None
    match = _VERSION.fullmatch(with_v(version))
    return tuple(int(match.group(i)) for i in (1, 2, 3)) if match else None


def coredns_tag_version(tag):
    """(major, minor, patch) of a CoreDNS image tag read tolerantly (``v1.11.3``, ``1.11``), or None."""
    match = _COREDNS_TAG.fullmatch(tag) if isinstance(tag, str) else None
    return (int(match.group(1)), int(match.group(2)), int(match.group(4) or 0)) if match else None


def etcd_is_external(spec):
    """True iff the cluster configuration sets ``etcd.external`` (the way KCP tells external from stacked)."""
    kubeadm = spec.get("kubeadm") if isinstance(spec, dict) else None
    config = kubeadm.get("cluster_configuration") if isinstance(kubeadm, dict) else None
    etcd = config.get("etcd") if isinstance(config, dict) else None
    return isinstance(etcd, dict) and etcd.get("external") is not None


def default_images(spec):
    """The etcd, CoreDNS and pause image tags kubeadm deploys for a normalized spec: the version's defaults
    (kubeadm_releases), overridden by the tags the cluster configuration names. A version the table does not hold
    (which normalize_spec refuses) has no defaults: None."""
    defaults = release(version_tuple(spec["version"]) or ())
    config = spec["kubeadm"]["cluster_configuration"]
    etcd = config.get("etcd") or {}
    return {
        "etcd": (etcd.get("local") or {}).get("imageTag") or (defaults.etcd_image if defaults else None),
        "coredns": (config.get("dns") or {}).get("imageTag") or (defaults.coredns_image if defaults else None),
        "pause": defaults.pause_image if defaults else None,
    }


def endpoint_address(endpoint):
    """``host:port`` as kubeadm's controlPlaneEndpoint writes it (an IPv6 host in brackets)."""
    host = endpoint["host"]
    if ":" in host:
        host = "[%s]" % host
    return "%s:%d" % (host, endpoint["port"])


# --- field readers -------------------------------------------------------------------------------------


def _version(value, path, errors):
    if not isinstance(value, str):
        errors.append(error(path, "must be a string such as v1.36.4 (quote it in YAML)", value))
        return None
    text = with_v(value)
    if not _VERSION.fullmatch(text):
        errors.append(error(path, "must be v<major>.<minor>.<patch> with an optional -/+ suffix", value))
        return None
    if release(version_tuple(text)) is None:
        errors.append(error(path, "must be a supported Kubernetes version: %s" % SUPPORTED_RANGE, value))
        return None
    return text


def _host(value, path, errors):
    if not isinstance(value, str) or not value:
        errors.append(error(path, "must be an IP address or a DNS name", value))
        return None
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    labels = value[:-1].split(".") if value.endswith(".") else value.split(".")
    if len(value) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        errors.append(error(path, "must be an IP address or a DNS name", value))
        return None
    return value


def _max_surge(value, path, errors):
    # KCP's maxSurge is an int-or-string that must resolve to 0 or 1.
    if value in ("0", "1"):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    errors.append(error(path, "must be 0 or 1", value))
    return None


def _node_startup_timeout(value, path, errors):
    seconds = duration()(value, path, errors)
    if seconds is not None and 0 < seconds < 30:
        errors.append(error(path, "must be 0 (off) or at least 30s", value))
        return None
    return seconds


def _positive_duration(value, path, errors):
    seconds = duration()(value, path, errors)
    if seconds is not None and seconds <= 0:
        errors.append(error(path, "must be longer than 0s", value))
        return None
    return seconds


def _condition_status(value, path, errors):
    if value not in _CONDITION_STATUSES or isinstance(value, bool):
        errors.append(error(path, "must be the string True, False or Unknown (quote it in YAML)", value))
        return None
    return value


_CONDITION = {
    "type": Field(string(), REQUIRED),
    "status": Field(_condition_status, REQUIRED),
    "timeout": Field(duration(), REQUIRED),
}

# Machine conditions a health check may not name (Cluster API v1.12+): its own verdicts and summaries.
_RESERVED_MACHINE_CONDITIONS = ("Ready", "Available", "HealthCheckSucceeded", "OwnerRemediated", "ExternallyRemediated")
_MACHINE_CONDITION_TYPES = tuple(CONDITION_TYPES.values())


def _machine_condition_type(value, path, errors):
    if value in _RESERVED_MACHINE_CONDITIONS:
        errors.append(error(path, "must not be %s: the health check does not judge a machine by its own verdicts or summaries"
                            % ", ".join(_RESERVED_MACHINE_CONDITIONS), value))
        return None
    if value not in _MACHINE_CONDITION_TYPES:
        errors.append(error(path, "must be a machine condition the collection sets: %s" % ", ".join(_MACHINE_CONDITION_TYPES), value))
        return None
    return value


_MACHINE_CONDITION = dict(_CONDITION, type=Field(_machine_condition_type, REQUIRED))

_HEALTH_CHECK = {
    "unhealthy_conditions": Field(
        list_of(mapping(_CONDITION)),
        [{"type": "Ready", "status": "Unknown", "timeout": "5m"}, {"type": "Ready", "status": "False", "timeout": "5m"}],
    ),
    "unhealthy_machine_conditions": Field(list_of(mapping(_MACHINE_CONDITION)), []),
    "node_startup_timeout": Field(_node_startup_timeout, "10m"),
    "max_unhealthy": Field(parsed_by(parse_max_unhealthy), "100%"),
    "unhealthy_range": Field(parsed_by(parse_unhealthy_range)),
}

# The user's own remediation tasks (a power cycle, say), tried before a deletion; null leaves it off.
_EXTERNAL_REMEDIATION = {
    "attempts": Field(integer(minimum=1), 3),
    "timeout": Field(_positive_duration, "10m"),
    "escalate": Field(boolean, False),
}


WORKER_GROUP_RULE = ("must be a worker group name: a Kubernetes label value (at most 63 characters a-z, A-Z, 0-9, '-', "
                     "'_' and '.', starting and ending with a letter or digit)")


def is_worker_group_name(name):
    """Whether ``name`` may name a worker group: the value of its Nodes' worker-group label (docs/snapshot.md)."""
    return isinstance(name, str) and re.fullmatch(_LABEL_VALUE, name) is not None


def worker_group_errors(workers, path="workers"):
    """The errors of ``workers``, a mapping of inventory host -> the worker group it joins (its ``worker_group``),
    each at ``<path>.<host>``; an empty list when every name may name a group."""
    if not isinstance(workers, dict):
        return [error(path, "must be a mapping of inventory hosts to their worker group", workers)]
    return [error(child(path, str(host)), WORKER_GROUP_RULE, group)
            for host, group in sorted(workers.items(), key=lambda pair: str(pair[0])) if not is_worker_group_name(group)]


def worker_groups_of(fields):
    """A converter for a mapping of worker group names (their Node label, docs/snapshot.md) to each group's own
    settings, read with ``fields``."""
    def convert(value, path, errors):
        if not isinstance(value, dict):
            errors.append(error(path, "must be a mapping of worker group names to their settings", value))
            return None
        groups = {}
        for name, settings in sorted(value.items(), key=lambda pair: str(pair[0])):
            here = child(path, str(name))
            if not is_worker_group_name(name):
                errors.append(error(here, WORKER_GROUP_RULE, name))
                continue
            groups[name] = read_mapping({} if settings is None else settings, here, errors, fields)
        return groups
    return convert


# How many workers of one group are upgraded at a time (and may be unavailable together) during an in-place upgrade.
_WORKER_GROUP = {"max_unavailable": Field(integer(minimum=1), 1)}

_UPGRADE = {
    "strategy": Field(one_of("rolling", "in_place"), "rolling"),
    # What an in-place upgrade does with a change it cannot make: refuse it (in place or stop), or roll it out.
    "other_changes": Field(one_of("refuse", "rolling"), "refuse"),
    "workers": Field(mapping({"max_unavailable": Field(integer(minimum=1), 1), "groups": Field(worker_groups_of(_WORKER_GROUP), {})}), {}),
}

_REMEDIATION = {
    "max_retry": Field(integer(minimum=0)),
    "retry_period": Field(duration(), "0s"),
    "min_healthy_period": Field(duration(), "1h"),
    "external": Field(mapping(_EXTERNAL_REMEDIATION)),
}

_SPEC = {
    "cluster_name": Field(string(_DNS_LABEL, "must be a DNS-1123 label: at most 63 characters a-z, 0-9 and '-', "
                                             "starting and ending with a letter or digit"), REQUIRED),
    "replicas": Field(integer(minimum=1), 1),
    "version": Field(_version, REQUIRED),
    "endpoint": Field(mapping({"host": Field(_host, REQUIRED), "port": Field(integer(1, 65535), DEFAULT_PORT)}), REQUIRED),
    "kubeadm": Field(
        mapping(
            {
                "api_version": Field(one_of(V1BETA3, V1BETA4)),
                "cluster_configuration": Field(any_mapping, {}),
                "init_configuration": Field(any_mapping, {}),
                "join_configuration": Field(any_mapping, {}),
            }
        ),
        {},
    ),
    "machine_template": Field(any_mapping, {}),
    "rollout": Field(
        mapping(
            {
                "strategy": Field(one_of("RollingUpdate"), "RollingUpdate"),
                "max_surge": Field(_max_surge, 1),
                "after": Field(timestamp),
                "before": Field(mapping({"certificates_expiry_days": Field(integer(minimum=7))}), {}),
            }
        ),
        {},
    ),
    "upgrade": Field(mapping(_UPGRADE), {}),
    # What a machine whose certificates enter rollout.before gets: a new machine, or its certificates renewed.
    "certificates": Field(mapping({"renewal": Field(one_of("rollout", "in_place"), "rollout")}), {}),
    "remediation": Field(mapping(_REMEDIATION), {}),
    "health_check": Field(mapping(_HEALTH_CHECK), {}),
    # The workers' machine health check, per worker group as one MachineHealthCheck per MachineDeployment: the
    # default for every group, and a group's own; null (the default) checks no worker of that group.
    # How a group's workers are replaced (a rolling upgrade, a worker marked for replacement), as a MachineDeployment's
    # rolling update: max_surge 1 joins the new worker before the old one is drained, 0 replaces it where it stands.
    # A group's unhealthy worker handed to the user's remediation tasks first, as the control plane's remediation.external.
    "workers": Field(mapping({"health_check": Field(mapping(_HEALTH_CHECK)), "drain_timeout": Field(duration(), "5m"),
                              "max_surge": Field(_max_surge, 1), "max_unavailable": Field(integer(minimum=0), 0),
                              "external_remediation": Field(mapping(_EXTERNAL_REMEDIATION)),
                              "groups": Field(worker_groups_of({"health_check": Field(mapping(_HEALTH_CHECK)),
                                                                "drain_timeout": Field(duration()), "max_surge": Field(_max_surge),
                                                                "max_unavailable": Field(integer(minimum=0)),
                                                                "external_remediation": Field(mapping(_EXTERNAL_REMEDIATION))}), {})}), {}),
}


# --- the kubeadm configurations ------------------------------------------------------------------------

# Where kubeadm takes extra command line arguments: a string map in v1beta3, a list of {name, value} in v1beta4.
_EXTRA_ARGS = {
    "cluster_configuration": (
        ("apiServer", "extraArgs"),
        ("controllerManager", "extraArgs"),
        ("scheduler", "extraArgs"),
        ("etcd", "local", "extraArgs"),
    ),
    "init_configuration": (("nodeRegistration", "kubeletExtraArgs"),),
    "join_configuration": (("nodeRegistration", "kubeletExtraArgs"),),
}

# Sections that kubeadm reads as mappings, in either config API version.
_SECTIONS = {
    "cluster_configuration": ("apiServer", "controllerManager", "scheduler", "etcd", "dns", "networking", "featureGates"),
    "init_configuration": ("nodeRegistration", "localAPIEndpoint", "patches"),
    "join_configuration": ("nodeRegistration", "discovery", "controlPlane", "patches"),
}

# Fields only one kubeadm config API version has (docs/spec.md lists them).
_ONLY_IN = {
    V1BETA4: {
        "cluster_configuration": (
            ("encryptionAlgorithm",),
            ("certificateValidityPeriod",),
            ("caCertificateValidityPeriod",),
            ("proxy",),
            ("dns", "disabled"),
            ("apiServer", "extraEnvs"),
            ("controllerManager", "extraEnvs"),
            ("scheduler", "extraEnvs"),
            ("etcd", "local", "extraEnvs"),
        ),
        "init_configuration": (("dryRun",), ("timeouts",), ("nodeRegistration", "imagePullSerial")),
        "join_configuration": (("dryRun",), ("timeouts",), ("nodeRegistration", "imagePullSerial")),
    },
    V1BETA3: {
        "cluster_configuration": (("apiServer", "timeoutForControlPlane"),),
        "join_configuration": (("discovery", "timeout"),),
    },
}

# Secrets the collection makes for each run; in the spec they would be returned, logged and stored in git.
_SECRETS = {
    "init_configuration": (("certificateKey",), ("bootstrapTokens", "*", "token")),
    "join_configuration": (
        ("controlPlane", "certificateKey"),
        ("discovery", "bootstrapToken", "token"),
        ("discovery", "tlsBootstrapToken"),
    ),
}

_ENCRYPTION_ALGORITHMS = ("RSA-2048", "RSA-3072", "RSA-4096", "ECDSA-P256")


def _lookup(config, keys, path):
    """(path, value) pairs found at ``keys`` inside ``config``; ``*`` walks every item of a list."""
    if not keys:
        return [(path, config)]
    head, rest = keys[0], keys[1:]
    if head == "*":
        items = config if isinstance(config, list) else []
        return [found for i, value in enumerate(items) for found in _lookup(value, rest, item(path, i))]
    if not isinstance(config, dict) or head not in config:
        return []
    return _lookup(config[head], rest, child(path, head))


def _check_extra_args(value, path, api_version, errors):
    if api_version == V1BETA4:
        ok = isinstance(value, list) and all(
            isinstance(arg, dict)
            and set(arg) == {"name", "value"}
            and isinstance(arg["name"], str)
            and arg["name"]
            and isinstance(arg["value"], str)
            for arg in value
        )
        if not ok:
            errors.append(error(path, "with %s must be a list of {name, value} strings (or set kubeadm.api_version "
                                      "to %s to write a map)" % (V1BETA4, V1BETA3), value))
    elif not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        errors.append(error(path, "with %s must be a map of strings (a list of {name, value} needs %s)"
                            % (V1BETA3, V1BETA4), value))


def _check_kubelet_serving_certificates(value, path, errors):
    """A kubelet told to request its serving certificate (``rotate-server-certificates``, what KubeletConfiguration's
    serverTLSBootstrap sets) asks for it through a certificate signing request that the controller manager does not
    approve and this collection has no approver for: the kubelet would serve no certificate, and ``kubectl logs`` and
    ``exec`` on its Node would fail."""
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        pairs = [(arg.get("name"), arg.get("value")) for arg in value if isinstance(arg, dict)]
    else:
        pairs = []
    for name, flag in pairs:
        if name == "rotate-server-certificates" and str(flag).lower() != "false":
            errors.append(error(path, "rotate-server-certificates: the kubelet would request its serving certificate through a "
                                      "certificate signing request nothing approves (kube-controller-manager does not approve "
                                      "kubelet-serving requests): leave it out, as kubeadm does (docs/certificates.md)", flag))


def _check_etcd(etcd, path, errors):
    local, external = etcd.get("local"), etcd.get("external")
    if local is not None and external is not None:
        errors.append(error(path, "local and external exclude each other: set one of them", sorted(etcd)))
    if local is not None:
        if not isinstance(local, dict):
            errors.append(error(child(path, "local"), "must be a mapping", local))
        elif "imageTag" in local:
            string(_IMAGE_TAG, "may hold only a-z, A-Z, 0-9, '-', '_' and '.'")(
                local["imageTag"], child(child(path, "local"), "imageTag"), errors)
    if external is not None:
        ext = child(path, "external")
        if not isinstance(external, dict):
            errors.append(error(ext, "must be a mapping", external))
            return
        endpoints = external.get("endpoints")
        url = string(r"https?://[^/\s]+/?", "must be a URL such as https://10.0.0.5:2379")
        if not isinstance(endpoints, list) or not endpoints:
            errors.append(error(child(ext, "endpoints"), "external etcd needs at least one endpoint URL", endpoints))
        else:
            for i, endpoint in enumerate(endpoints):
                url(endpoint, item(child(ext, "endpoints"), i), errors)
        for key in ("caFile", "certFile", "keyFile"):
            if external.get(key) is None:
                errors.append(error(child(ext, key), "external etcd needs %s (a path on the machines)" % key))
            else:
                string()(external[key], child(ext, key), errors)


def _check_dns(dns, path, errors):
    tag = dns.get("imageTag")
    if tag is None:
        return
    if string(_IMAGE_TAG, "may hold only a-z, A-Z, 0-9, '-', '_' and '.'")(tag, child(path, "imageTag"), errors) is None:
        return
    if coredns_tag_version(tag) is None:
        errors.append(error(child(path, "imageTag"), "must read as a CoreDNS version such as v1.11.3", tag))


def _check_same(config, key, expected, accepted, path, errors, field):
    """A field the collection sets itself may be repeated only with the value it will get; it is then dropped."""
    if key not in config:
        return
    value = config.pop(key)
    if value not in accepted:
        errors.append(error(child(path, key), "must agree with %s (%s) or be left out" % (field, expected), value))


def _check_kubeadm(spec, errors):
    """Checks the kubeadm configurations against the rest of the spec; fills in ``api_version``."""
    kubeadm = spec["kubeadm"]
    version = spec["version"]
    if kubeadm["api_version"] is None:
        kubeadm["api_version"] = V1BETA4
    elif version and kubeadm["api_version"] not in release(version_tuple(version)).config_apis:
        errors.append(error("kubeadm.api_version", "kubeadm %s no longer reads %s: convert the configuration with "
                                                   "`kubeadm config migrate` (kubeadm v1.36 reads both) and set "
                                                   "kubeadm.api_version to %s" % (version, kubeadm["api_version"], V1BETA4),
                            kubeadm["api_version"]))
    api_version = kubeadm["api_version"]

    for name in ("cluster_configuration", "init_configuration", "join_configuration"):
        config = kubeadm[name]
        if config is None:
            continue
        path = "kubeadm." + name
        for key in ("apiVersion", "kind"):
            if key in config:
                errors.append(error(child(path, key), "is set by the collection from kubeadm.api_version: leave it out",
                                    config[key]))
        for key in _SECTIONS[name]:
            if key in config and not isinstance(config[key], dict):
                errors.append(error(child(path, key), "must be a mapping", config[key]))
        for keys in _SECRETS.get(name, ()):
            for found, _secret in _lookup(config, keys, path):
                errors.append(error(found, "is a secret: leave it out, the collection makes tokens and certificate "
                                           "keys for each run"))
        for other, fields in _ONLY_IN.items():
            if other == api_version:
                continue
            for keys in fields.get(name, ()):
                for found, value in _lookup(config, keys, path):
                    errors.append(error(found, "needs kubeadm.api_version %s (this spec uses %s)" % (other, api_version),
                                        value))
        for keys in _EXTRA_ARGS[name]:
            for found, value in _lookup(config, keys, path):
                _check_extra_args(value, found, api_version, errors)
                if keys[-1] == "kubeletExtraArgs":
                    _check_kubelet_serving_certificates(value, found, errors)

    config = kubeadm["cluster_configuration"]
    if config is None:
        return
    path = "kubeadm.cluster_configuration"
    if version:
        _check_same(config, "kubernetesVersion", version, (version, version[1:]), path, errors, "version")
    if spec["cluster_name"]:
        _check_same(config, "clusterName", spec["cluster_name"], (spec["cluster_name"],), path, errors, "cluster_name")
    endpoint = spec["endpoint"]
    if endpoint and endpoint["host"] and endpoint["port"]:
        address = endpoint_address(endpoint)
        accepted = (address, endpoint["host"]) if endpoint["port"] == DEFAULT_PORT else (address,)
        _check_same(config, "controlPlaneEndpoint", address, accepted, path, errors, "endpoint")
    if isinstance(config.get("etcd"), dict):
        _check_etcd(config["etcd"], child(path, "etcd"), errors)
    if isinstance(config.get("dns"), dict):
        _check_dns(config["dns"], child(path, "dns"), errors)
    if version and isinstance(config.get("featureGates"), dict):
        for gate, value in sorted(config["featureGates"].items()):
            problem = feature_gate_problem(gate, value, version_tuple(version))
            if problem:
                errors.append(error(child(child(path, "featureGates"), gate), problem, value))
    if "encryptionAlgorithm" in config and api_version == V1BETA4:
        one_of(*_ENCRYPTION_ALGORITHMS)(config["encryptionAlgorithm"], child(path, "encryptionAlgorithm"), errors)


# kubeadm signs a machine's certificates for a year unless certificateValidityPeriod says otherwise.
DEFAULT_CERTIFICATE_VALIDITY = timedelta(days=365)


def certificate_validity(spec):
    """How long kubeadm signs a machine's certificates for (``certificateValidityPeriod``); ValueError for a period
    that does not read as a duration."""
    period = ((spec["kubeadm"] or {}).get("cluster_configuration") or {}).get("certificateValidityPeriod")
    return timedelta(seconds=parse_duration(period)) if period else DEFAULT_CERTIFICATE_VALIDITY


def _check_certificates(spec, errors):
    """``certificates.renewal: in_place`` needs the window it renews in; a window as long as the certificates'
    validity never ends, whatever renews them."""
    rollout = spec["rollout"]
    days = ((rollout or {}).get("before") or {}).get("certificates_expiry_days")
    renewal = (spec["certificates"] or {}).get("renewal")
    if renewal == "in_place" and days is None and rollout is not None:
        errors.append(error("certificates.renewal", "in_place needs rollout.before.certificates_expiry_days: the window in "
                                                    "which a machine's certificates are renewed", renewal))
    if days is None:
        return
    try:
        valid_days = certificate_validity(spec).total_seconds() / 86400
    except ValueError:
        return
    if days >= valid_days:
        errors.append(error("rollout.before.certificates_expiry_days", "must be less than the certificates' validity (%g days): "
                                                                       "new certificates would be within it already" % valid_days, days))


def _check_counts(spec, errors):
    replicas = spec["replicas"]
    if replicas is None:
        return
    if replicas % 2 == 0 and not etcd_is_external(spec):
        errors.append(error("replicas", "must be odd with stacked etcd (an even count tolerates no more failures "
                                        "than one less); any count is allowed with external etcd", replicas))
    rollout = spec["rollout"]
    if rollout and rollout["max_surge"] == 0 and replicas < 3:
        errors.append(error("rollout.max_surge", "0 needs replicas >= 3 (removing first must keep etcd quorum)", 0))


# --- entry points ----------------------------------------------------------------------------------------


def _normalize(raw, path, fields):
    errors = []
    value = read_mapping({} if raw is None else raw, path, errors, fields)
    return (value if not errors else None), errors


def worker_group_setting(spec, group, key):
    """A worker group's ``key`` (``health_check``, ``drain_timeout``, ...): the group's own under ``workers.groups``, else
    the workers' under ``workers`` (``group`` None: the workers without a group take the latter)."""
    workers = spec.get("workers") or {}
    own = ((workers.get("groups") or {}).get(group) or {}).get(key) if group is not None else None
    return own if own is not None else workers.get(key)


def uses_external_remediation(spec):
    """Whether an unhealthy machine or worker of ``spec`` may be handed to the user's remediation tasks."""
    workers = spec.get("workers") or {}
    return ((spec.get("remediation") or {}).get("external") is not None or workers.get("external_remediation") is not None
            or any((group or {}).get("external_remediation") is not None for group in (workers.get("groups") or {}).values()))


def _check_workers(spec, errors):
    """A worker runs no control plane pods: its health check judges its Node, never the machine conditions. A group
    replaced with neither a surge nor an unavailable worker could never replace one (a MachineDeployment refuses
    both 0 too)."""
    workers = spec.get("workers") or {}
    for name in [None] + sorted(workers.get("groups") or {}):
        if worker_group_setting(spec, name, "max_surge") == 0 and worker_group_setting(spec, name, "max_unavailable") == 0:
            path = "workers" if name is None else "workers.groups.%s" % name
            errors.append(error(path + ".max_unavailable", "must be at least 1 with max_surge 0: a worker replaced where it stands is "
                                "unavailable while it is rebuilt", 0))
    checks = [("workers.health_check", workers.get("health_check"))] + [
        ("workers.groups.%s.health_check" % name, (group or {}).get("health_check")) for name, group in sorted((workers.get("groups") or {}).items())]
    for path, check in checks:
        if check and check.get("unhealthy_machine_conditions"):
            errors.append(error(path + ".unhealthy_machine_conditions", "must be empty: a worker runs no control plane pods whose "
                                "conditions it could judge; list the Node's conditions in unhealthy_conditions",
                                check["unhealthy_machine_conditions"]))


def normalize_health_check(raw, path="health_check"):
    """(health check with defaults, errors) for ``raw`` as written under ``health_check`` (None = all defaults)."""
    return _normalize(raw, path, _HEALTH_CHECK)


def normalize_spec(raw, partial=False):
    """(normalized spec, errors): every default filled in and every error at once; the spec is None on error, unless
    ``partial``: then it is what could be read (a field in error None, or as far as it could be read), for the checks
    that compare it with another spec to report their errors too (None only when ``raw`` is no mapping)."""
    errors = []
    spec = read_mapping(raw, "", errors, _SPEC)
    if spec is None:
        return None, errors
    if spec["kubeadm"] is not None:
        _check_kubeadm(spec, errors)
    _check_counts(spec, errors)
    _check_certificates(spec, errors)
    _check_workers(spec, errors)
    return (spec if not errors or partial else None), errors
