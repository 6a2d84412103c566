# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The KubeletConfiguration file (``--config``, kubeadm writes /var/lib/kubelet/config.yaml).

Only the fields the emulation acts on are read; their defaults are the real kubelet's. Environment
overrides, named as sandbox speed-ups: ``KCPSIM_HEARTBEAT`` (seconds between Lease / Node status updates)
and ``KCPSIM_PROBE_SCALE`` (factor on probe delays, periods and timeouts).
"""

import os

from kcpsim.kubeadm import durations

API_VERSION = "kubelet.config.k8s.io/v1beta1"


class ConfigError(Exception):
    """The file is missing or invalid; the message names the path and the field (the kubelet exits 1)."""


class KubeletConfig:
    def __init__(self, data):
        self.static_pod_path = data.get("staticPodPath") or ""
        self.node_status_update_frequency = _seconds(data, "nodeStatusUpdateFrequency", "10s")
        # As the kubelet defaults it: 5 min, or the update frequency when that one is set and this one is not.
        self.node_status_report_frequency = _seconds(data, "nodeStatusReportFrequency", "0s") or (
            self.node_status_update_frequency if _seconds(data, "nodeStatusUpdateFrequency", "0s") else 300.0)
        self.node_lease_duration = int(data.get("nodeLeaseDurationSeconds", 40))
        self.healthz_port = int(data.get("healthzPort", 10248))
        self.healthz_bind_address = data.get("healthzBindAddress") or "127.0.0.1"
        self.port = int(data.get("port", 10250))
        self.address = data.get("address") or "0.0.0.0"
        self.register_with_taints = list(data.get("registerWithTaints") or [])
        # who may use the kubelet API (endpoints): clients with a certificate of this CA, as the authorizer says
        authentication = data.get("authentication") or {}
        self.client_ca_file = ((authentication.get("x509") or {}).get("clientCAFile")) or ""
        self.authorization_mode = (data.get("authorization") or {}).get("mode") or "AlwaysAllow"
        # With rotation on (kubeadm sets it) the client certificate manager bootstraps in the background.
        self.rotate_certificates = bool(data.get("rotateCertificates", False))
        heartbeat = os.environ.get("KCPSIM_HEARTBEAT")
        self.heartbeat = float(heartbeat) if heartbeat else self.node_status_update_frequency
        scale = os.environ.get("KCPSIM_PROBE_SCALE")
        self.probe_scale = float(scale) if scale else 1.0


def _seconds(data, field, default):
    """The duration ``field`` in seconds; a zero one (kubeadm writes ``0s``) is defaulted, as the kubelet does."""
    try:
        return durations.parse(data.get(field) or "0s") or durations.parse(default)
    except ValueError as exc:
        raise ConfigError("%s: %s" % (field, exc))


def parse(text, source):
    import yaml  # here, not at the top: the start that only finds the file missing (read) needs no YAML

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError("failed to load kubelet config file, path: %s, error: %s" % (source, exc))
    if not isinstance(data, dict):
        raise ConfigError("failed to load kubelet config file, path: %s, error: not a mapping" % source)
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if (kind, api_version) != ("KubeletConfiguration", API_VERSION):
        raise ConfigError("failed to load kubelet config file, path: %s, error: kind %r apiVersion %r is not "
                          "KubeletConfiguration %s" % (source, kind, api_version, API_VERSION))
    try:
        return KubeletConfig(data)
    except (TypeError, ValueError) as exc:
        raise ConfigError("failed to load kubelet config file, path: %s, error: %s" % (source, exc))


def read(path):
    """The text of the ``--config`` file; ConfigError with the real kubelet's words when it cannot be read."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigError("failed to load kubelet config file, path: %s, error: failed to load Kubelet config file "
                          "%s, error failed to read kubelet config file \"%s\", error: open %s: %s"
                          % (path, path, path, path, (exc.strerror or str(exc)).lower()))


def load(path):
    return parse(read(path), path)
