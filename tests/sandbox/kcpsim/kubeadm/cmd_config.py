# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm config validate`` and ``kubeadm config migrate``: what operators run on a configuration before an
upgrade (kubeadm-reference-1.32-plus.md section 1).

* ``validate --config <file>`` reads the file as ``init`` / ``join`` would, but strictly: an unknown field is an
  error, not a warning. It then validates the InitConfiguration and ClusterConfiguration, or the
  JoinConfiguration, it holds, and prints ``ok``. A deprecated API (v1beta3, 1.33 - 1.36) is warned about unless
  ``--allow-deprecated-api`` (a flag of 1.36 and later).
* ``migrate --old-config <file> [--new-config <file>]`` writes the file's documents in the newest API this
  kubeadm has (v1beta4): the v1beta3 ``apiServer.timeoutForControlPlane`` and ``discovery.timeout`` become
  ``timeouts.controlPlaneComponentHealthCheck`` / ``timeouts.discovery``, extraArgs maps become ``{name, value}``
  lists, and the ClusterConfiguration is written with kubeadm's defaults filled in (an InitConfiguration
  always comes with one). A kubeadm that no longer reads the old API (v1beta3 from 1.37) refuses the file with
  the release to migrate with, as ``init`` does.
"""

from __future__ import annotations

import yaml

from kcpsim.kubeadm import config, durations
from kcpsim.kubeadm.cmd_init import decode_config_file, read_config_file
from kcpsim.kubeadm.context import KubeadmError

# The v1beta3 fields v1beta4 moved under ``timeouts``: (kind, path in the old document, timeouts key, kind written to).
_MOVED_TIMEOUTS = (
    ("ClusterConfiguration", ("apiServer", "timeoutForControlPlane"), "controlPlaneComponentHealthCheck",
     "InitConfiguration"),
    ("JoinConfiguration", ("discovery", "timeout"), "discovery", "JoinConfiguration"),
)


def validate(ctx, flags):
    if not flags.get("config"):
        raise KubeadmError('required flag(s) "config" not set')
    if flags.get("allow-deprecated-api") is not None and ctx.release.minor < 36:
        raise KubeadmError("unknown flag: --allow-deprecated-api")
    docs = decode_config_file(ctx, flags["config"])
    unknown = [w for w in docs.warnings if w.startswith("strict decoding error")]
    if unknown:
        raise KubeadmError("\n".join(unknown))
    for warning in docs.warnings:
        if "deprecated" not in warning or not flags.get("allow-deprecated-api"):
            ctx.warn(warning)
    errors = []
    if docs.get("InitConfiguration") is not None or docs.get("ClusterConfiguration") is not None:
        settings = config.init_settings(docs, {}, ctx.version, ctx.host.hostname(), ctx.host.default_address() or "")
        errors += config.validate_init(settings, ctx.release)
    if docs.get("JoinConfiguration") is not None:
        errors += config.validate_join(config.join_settings(docs, {}, None, ctx.host.hostname(),
                                                            ctx.host.default_address() or ""))
    if errors:
        raise KubeadmError(str(config.ValidationError(errors)), exit_code=3)
    ctx.out("ok")
    return 0


def migrate(ctx, flags):
    if not flags.get("old-config"):
        raise KubeadmError('required flag(s) "old-config" not set')
    docs = read_config_file(ctx, flags["old-config"])
    text = yaml.safe_dump_all(migrated(docs, ctx.version), sort_keys=True, default_flow_style=False)
    if flags.get("new-config"):
        ctx.host.write(flags["new-config"], text, 0o600)
    else:
        ctx.stdout.write(text)
        ctx.stdout.flush()
    return 0


def migrated(docs, kubeadm_version):
    """The documents of ``docs`` in v1beta4, in kubeadm's order (module docstring). Pure."""
    documents = {kind: _plain(docs.get(kind) or {}) for kind in config.SCHEMAS if docs.get(kind) is not None}
    if "InitConfiguration" in documents:
        documents.setdefault("ClusterConfiguration", {})
    for kind, path, key, target in _MOVED_TIMEOUTS:
        source = documents.get(kind, {})
        parent = source.get(path[0]) or {}
        value = parent.pop(path[1], None)
        if value is not None and target in documents:
            documents[target].setdefault("timeouts", {})[key] = value
    out = []
    for kind in ("InitConfiguration", "ClusterConfiguration", "JoinConfiguration", "ResetConfiguration",
                 "UpgradeConfiguration"):
        if kind == "ClusterConfiguration" and kind in documents:
            cluster = config.default_cluster(docs.get(kind) or {}, kubeadm_version)
            out.append(yaml.safe_load(config.stored_cluster_document(cluster)))
        elif kind in documents:
            out.append(dict(_rendered(documents[kind]), apiVersion=config.V1BETA4, kind=kind))
    return out


def _plain(value):
    """A decoded document as plain data (copies), so moving fields out of it leaves ``docs`` as it was."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _rendered(value, key=""):
    """Durations (seconds once decoded) back in Go's notation, as the v1beta4 documents spell them."""
    if isinstance(value, dict):
        return {k: _rendered(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_rendered(v, key) for v in value]
    if isinstance(value, float) and key in config.DURATION_FIELDS:
        return durations.render(value)
    return value
