# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node that comes back under its old name (a rollout back onto a pool host, remediation on the same host).

The control plane node's kubelet is stopped and its Node deleted, as kubeadm reset and the flow leave them; its
mirror pods stay behind, owned by the deleted Node, and the controller manager's garbage collector deletes
them gracefully (Terminating: no kubelet finishes it). The kubelet then starts again under the same name with a
changed manifest (the join writes etcd's anew): it registers a new Node, and every mirror pod must be made again
for it and reach Running and Ready, both the changed one and those whose manifest did not change but that are
being deleted (as the real kubelet's syncPod, which deletes such a mirror pod at once and makes it again).
"""

import pytest

from kcpsandbox.commands import wait_until
from kcpsim.kubelet import manifests
from kubelet_harness import Processes
from test_kubelet_api import NODE, _mirror, _pod_ready, _ready, start_control_plane

pytestmark = pytest.mark.etcd

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager")


@pytest.fixture
def plane(tmp_path, releases):
    procs = Processes()
    try:
        yield start_control_plane(tmp_path, releases, procs, controller_manager=True)
    finally:
        procs.cleanup()


def test_a_node_rejoining_under_its_old_name_gets_new_mirror_pods_running_and_ready(plane):
    api = plane.client()
    old = {name: wait_until(lambda name=name: _mirror(api, name, _pod_ready), 60, "%s's mirror pod Ready" % name)
           for name in COMPONENTS}
    plane.host.procs.stop(plane.host.kubelet)
    old_node = api.get("v1", "nodes", NODE)
    api.delete("v1", "nodes", NODE)
    for name in COMPONENTS:  # the garbage collector (the static controller manager still runs) takes them on
        wait_until(lambda name=name: _mirror(api, name, lambda pod: pod["metadata"].get("deletionTimestamp")), 30,
                   "the garbage collector to delete %s's orphaned mirror pod" % name, interval=0.2)

    etcd_hash = manifests.config_hash(plane.write_manifests(etcd_extra=["--snapshot-count=5000"],
                                                            controller_manager=True)["etcd"])
    assert etcd_hash != old["etcd"]["metadata"]["annotations"]["kubernetes.io/config.hash"]
    plane.host.start_kubelet("--kubeconfig=%s" % plane.kubelet_conf, "--cert-dir=%s" % (plane.host.root / "kubelet-pki"),
                             "--node-labels=topology.kubernetes.io/zone=fd-a")
    node = wait_until(lambda: _ready(api, NODE), 60, "the node registered again and Ready", interval=0.2)
    assert node["metadata"]["uid"] != old_node["metadata"]["uid"]

    def renewed(name):
        def check(pod):
            return (pod["metadata"]["uid"] != old[name]["metadata"]["uid"] and _pod_ready(pod)
                    and not pod["metadata"].get("deletionTimestamp")
                    and [owner["uid"] for owner in pod["metadata"]["ownerReferences"]] == [node["metadata"]["uid"]])
        return lambda: _mirror(api, name, check)

    for name in COMPONENTS:
        wait_until(renewed(name), 30, "a new %s mirror pod owned by the new Node, Running and Ready" % name,
                   [str(plane.host.root / "kubelet.log")], interval=0.2)
    assert _mirror(api, "etcd")["metadata"]["annotations"]["kubernetes.io/config.hash"] == etcd_hash
