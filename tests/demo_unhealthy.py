# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make demo's fault: stop the kubelet of one control plane machine of the demo sandbox (the sandbox's
kubelet-stop fault, tests/sandbox/README.md), then wait until the demo's health check finds the machine
unhealthy: its Node Ready Unknown (the node lifecycle's verdict after its grace period) for longer than the
timeout tests/demo.yml gives. Prints the machine's name."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "e2e"))
from e2e_support import E2ESandbox, kubectl_json, wait_ready  # noqa: E402  (found through the path above)

SANDBOX = "kcp"
UNHEALTHY_AFTER_SECONDS = 30  # tests/demo.yml's health_check timeout


def main():
    sandbox = E2ESandbox(SANDBOX)
    nodes = kubectl_json(sandbox, "get nodes -l node-role.kubernetes.io/control-plane")["items"]
    name = sorted(node["metadata"]["name"] for node in nodes)[0]
    print("stopping the kubelet of %s; waiting until its Node has been Ready Unknown for %d s" % (name, UNHEALTHY_AFTER_SECONDS), flush=True)
    sandbox.fault("kubelet-stop", name)
    wait_ready(sandbox, [name], "Unknown", longer_than=UNHEALTHY_AFTER_SECONDS + 1, timeout=300)
    print("%s is unhealthy" % name)


if __name__ == "__main__":
    main()
