# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet command line, as kubeadm's systemd drop-in and ``kubeadm-flags.env`` build it. Pure.

The flags are read as every emulated component reads them (kcpsim.flags); the kubelet's own parts are its
flag set, its refusal of other words (``unknown command <word>``, as the real kubelet says it), and
``--node-labels`` / ``--register-with-taints``.

``--node-labels`` follows the real kubelet's rules: labels in the ``kubernetes.io`` / ``k8s.io`` namespaces
are refused unless they are on the kubelet's allowed list or under ``kubelet.kubernetes.io`` /
``node.kubernetes.io`` (so ``node-role.kubernetes.io/control-plane`` cannot be set this way); the flag may be
given more than once and the maps merge, a later value of a key winning (component-base's MapStringString),
so kubeadm's ``$KUBELET_KUBEADM_ARGS`` and the operator's ``$KUBELET_EXTRA_ARGS`` (/etc/default/kubelet)
both reach the Node.
"""

import re

from kcpsim import flags as component_flags
from kcpsim.flags import FlagError

VALUE_FLAGS = (
    "bootstrap-kubeconfig", "kubeconfig", "config", "cert-dir", "container-runtime-endpoint", "node-ip",
    "hostname-override", "register-with-taints", "pod-infra-container-image", "root-dir", "v",
    "runtime-request-timeout", "cgroup-driver", "provider-id",
)
SPEC = {name: ("str", None) for name in VALUE_FLAGS}
SPEC["node-labels"] = ("list", [])
SPEC.update({"version": ("bool", False), "help": ("bool", False), "register-node": ("bool", True)})

ALLOWED_KUBERNETES_LABELS = {
    "kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
    "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
}
ALLOWED_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_LABEL_NAME = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


class Flags:
    """The parsed command line: ``values`` by flag name, the flags given but not modelled, and derived fields."""

    def __init__(self, values, ignored=()):
        self.values = values
        self.ignored = list(ignored)
        self.labels = parse_labels(",".join(values.get("node-labels") or ()))
        self.taints = parse_taints(values.get("register-with-taints") or "")

    def get(self, name, default=None):
        value = self.values.get(name)
        return default if value is None else value

    @property
    def runtime_socket(self):
        """The socket path of ``--container-runtime-endpoint`` (``unix:///run/...`` or a bare path)."""
        endpoint = self.get("container-runtime-endpoint", "unix:///run/containerd/containerd.sock")
        return endpoint[len("unix://"):] if endpoint.startswith("unix://") else endpoint


def _unknown_command(words):
    return "unknown command %s" % words[0]


def parse(argv):
    """Flags from ``argv`` (without the program name); FlagError naming every problem."""
    return Flags(*component_flags.parse(argv, SPEC, _unknown_command, component_flags.known_flags("kubelet")))


def parse_labels(text):
    """``{key: value}`` from ``a=b,c=d``; FlagError for malformed or restricted labels."""
    labels, restricted = {}, []
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not _LABEL_NAME.match(key) or not _LABEL_VALUE.match(value):
            raise FlagError("invalid --node-labels entry %r: expected <name>=<value> with valid label syntax" % item)
        prefix = key.partition("/")[0] if "/" in key else ""
        in_kubernetes = any(prefix == ns or prefix.endswith("." + ns) for ns in ("kubernetes.io", "k8s.io"))
        allowed_ns = any(prefix == ns or prefix.endswith("." + ns) for ns in ALLOWED_LABEL_NAMESPACES)
        if in_kubernetes and not allowed_ns and key not in ALLOWED_KUBERNETES_LABELS:
            restricted.append(key)
        labels[key] = value
    if restricted:
        raise FlagError("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %s"
                        % sorted(restricted))
    return labels


def parse_taints(text):
    """Taints from ``key=value:Effect,key:Effect``; FlagError naming a malformed one."""
    taints = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        spec, sep, effect = item.rpartition(":")
        if not sep or effect not in TAINT_EFFECTS:
            raise FlagError("invalid --register-with-taints entry %r: expected <key>[=<value>]:<effect> with "
                            "effect one of %s" % (item, ", ".join(TAINT_EFFECTS)))
        key, unused_sep, value = spec.partition("=")
        taint = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints.append(taint)
    return taints
