# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runtime's pod network status (CRI ``NetworkReady``), as containerd derives it from the CNI configuration:
the first network config in ``/etc/cni/net.d`` (``*.conf``, ``*.conflist``, ``*.json``, in name order) that
parses, and every plugin it chains present in ``/opt/cni/bin``. Until then the kubelet reports its Node NotReady
with the runtime's words. ``KCPSIM_CNI_CONF_DIR`` / ``KCPSIM_CNI_BIN_DIR`` move both directories (a test
hook, as containerd's ``conf_dir`` / ``bin_dir`` settings would; hosts use the defaults).
"""

import json
import os

CONF_DIR = "/etc/cni/net.d"
BIN_DIR = "/opt/cni/bin"
CONF_EXTENSIONS = (".conf", ".conflist", ".json")
NOT_READY = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
             "message:Network plugin returns error: cni plugin not initialized")


def plugin_types(config):
    """The plugin types a parsed network config (a ``.conflist``'s ``plugins`` or a single ``.conf``) names
    (pure); None when it names none."""
    if not isinstance(config, dict):
        return None
    plugins = config.get("plugins") if "plugins" in config else [config]
    if not isinstance(plugins, list):
        return None
    types = [p.get("type") for p in plugins if isinstance(p, dict)]
    return types if types and all(isinstance(t, str) and t for t in types) else None


def first_network(conf_dir):
    """The plugin types of the first loadable network config in ``conf_dir``, None when there is none."""
    try:
        names = sorted(n for n in os.listdir(conf_dir) if n.endswith(CONF_EXTENSIONS) and not n.startswith("."))
    except OSError:
        return None
    for name in names:
        try:
            with open(os.path.join(conf_dir, name), encoding="utf-8") as handle:
                types = plugin_types(json.load(handle))
        except (OSError, ValueError):
            continue
        if types:
            return types
    return None


def not_ready_reason(conf_dir=None, bin_dir=None):
    """None when the pod network is ready; else the message the kubelet puts in its Ready condition."""
    conf_dir = conf_dir or os.environ.get("KCPSIM_CNI_CONF_DIR") or CONF_DIR
    bin_dir = bin_dir or os.environ.get("KCPSIM_CNI_BIN_DIR") or BIN_DIR
    types = first_network(conf_dir)
    if types and all(os.access(os.path.join(bin_dir, t), os.X_OK) for t in types):
        return None
    return NOT_READY
