# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Entry point of the kubelet bundle: ``main(argv=None) -> exit status``.

Until kubeadm writes /var/lib/kubelet/config.yaml, systemd restarts the kubelet every RestartSec and every
start ends, as the real kubelet's does, on the missing ``--config`` file. So the flags and that file are read
first, with light modules only, and the kubelet proper (TLS, HTTP, YAML, the pod machinery: most of a start's
CPU) is imported once the file is there: a start of the crash loop costs little more than the interpreter's.
"""

import logging
import sys

from kcpsim import version
from kcpsim.kubelet import config, flags

LOG = logging.getLogger("kubelet")

USAGE = """The kubelet (kcpsim sandbox emulation, %s).

Usage: kubelet --config=FILE [--kubeconfig=FILE] [--bootstrap-kubeconfig=FILE] [--cert-dir=DIR]
               [--container-runtime-endpoint=unix:///run/containerd/containerd.sock] [--node-ip=IP]
               [--hostname-override=NAME] [--node-labels=k=v,...] [--register-with-taints=k=v:Effect,...]
               [--version]
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s.%(msecs)03d kubelet[%(process)d] %(levelname)s %(message)s",
                        datefmt="%Y-%m-%dT%H:%M:%S")
    try:
        parsed = flags.parse(argv)
    except flags.FlagError as exc:
        print("Error: %s" % exc, file=sys.stderr)
        return 1
    if parsed.get("version"):
        print("Kubernetes %s" % version.current())
        return 0
    if parsed.get("help"):
        print(USAGE % version.current())
        return 0
    try:
        config_text = config.read(parsed.get("config")) if parsed.get("config") else ""
    except config.ConfigError as exc:
        LOG.error("command failed: %s", exc)
        return 1
    from kcpsim.kubelet import kubelet  # the heavy part, only now that the kubelet can start

    return kubelet.start(parsed, config_text)


if __name__ == "__main__":
    sys.exit(main())
