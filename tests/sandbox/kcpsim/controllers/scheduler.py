# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kube-scheduler`` emulation: leader election on Lease ``kube-system/kube-scheduler``, HTTPS /healthz (default
127.0.0.1:10259 as kubeadm configures it), and binding: every second the leader binds each pod that has no
``spec.nodeName`` and asks for ``default-scheduler`` to the node placement.choose picks, through the
``pods/binding`` subresource as the real scheduler does. Pods that fit nowhere stay Pending. Pods and nodes are
read from informers (kcpsim/informer.py: one LIST, then a WATCH), as the real scheduler reads them.

Flags: --kubeconfig, --bind-address, --secure-port, --leader-elect and its timings; others are ignored.
"""

import sys

from kcpsim import kubeclient
from kcpsim.controllers import component, placement

FLAGS = {"secure-port": ("int", 10259)}
PERIOD = 1.0
SCHEDULER_NAME = "default-scheduler"


def pending_pods(pods):
    """The pods this scheduler should place."""
    return [pod for pod in pods if not (pod.get("spec") or {}).get("nodeName")
            and (pod.get("spec") or {}).get("schedulerName", SCHEDULER_NAME) == SCHEDULER_NAME]


def schedule_once(client, log, lister=None):
    """Bind every pending pod that fits somewhere; returns how many were bound. Reads go through ``lister``
    (informer.Listers) when given, else to the API server."""
    lister = lister or client
    pods = lister.list("v1", "pods")["items"]
    pending = pending_pods(pods)
    if not pending:
        return 0
    nodes = lister.list("v1", "nodes")["items"]
    per_node = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            per_node[node] = per_node.get(node, 0) + 1
    bound = 0
    for pod in pending:
        metadata = pod["metadata"]
        node = placement.choose(nodes, pod.get("spec") or {}, per_node)
        if node is None:
            continue
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": metadata["name"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            client.request("POST", kubeclient.resource_path("v1", "pods", metadata["namespace"], metadata["name"],
                                                            "binding"), body)
        except (kubeclient.Conflict, kubeclient.NotFound):
            continue
        if lister is not client:
            pod.setdefault("spec", {})["nodeName"] = node  # assumed, as the real scheduler's cache assumes it
            lister.written("v1", "pods", pod)
        per_node[node] = per_node.get(node, 0) + 1
        bound += 1
        log("Successfully bound pod to node: pod=%s/%s node=%s" % (metadata["namespace"], metadata["name"], node))
    return bound


def prepare(values, log):
    """The leader's work: binding every PERIOD seconds."""
    return component.periodic(lambda client, lister: [("scheduling", PERIOD, lambda: schedule_once(client, log, lister))],
                              log, PERIOD)


def main(argv=None):
    return component.main(argv, "kube-scheduler", FLAGS, prepare)


if __name__ == "__main__":
    sys.exit(main())
