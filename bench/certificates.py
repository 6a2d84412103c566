# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What renewing the certificates of a 3-machine control plane in place costs with playbooks/certificates.yml, against
the same work done by hand over SSH in the same run (docs/certificates.md).

The floor, one host after another: ``kubeadm certs renew all``, then each static pod restarted as kubeadm's
documentation says (its manifest moved out of /etc/kubernetes/manifests, a wait until its probe's port no longer
answers, the manifest moved back, a wait until the probe answers 200), etcd first, one SSH command a pod; then, apart
from the floor, the wait until the host's pods report Ready in the API before the next host (what a careful operator
checks, as the flow does). The flow: the sandbox's certs-expire-soon fault on every host (not timed), then
certificates.yml renews the three machines, each behind the full preflight, with the quorum check and the leadership
hand-over before its etcd restarts.

Printed: the flow's time, the floor, the health waits, the ratio against floor + waits, the tasks and the SSH
invocations. Own sandbox ``benchcert`` (172.31.226.0/24), 3 hosts over 3 failure domains; needs root.

    .venv/bin/python bench/certificates.py
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flows import admin_json, flow, timed, walk, wait_pods_ready  # noqa: E402  (bench/flows.py, found through the path above)

NAME, SUBNET, HOSTS = "benchcert", "172.31.226.0/24", ("cp-1", "cp-2", "cp-3")
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
# The probe each kubeadm component answers on the host (its manifest's readiness probe).
PROBES = {"etcd": "http://127.0.0.1:2381/readyz", "kube-controller-manager": "https://127.0.0.1:10257/healthz",
          "kube-scheduler": "https://127.0.0.1:10259/healthz"}


def restart_by_hand(operator, host, address):
    """The operator's command for each static pod of ``host``: out, wait until gone, back, wait until healthy."""
    for component in COMPONENTS:
        probe = PROBES.get(component, "https://%s:6443/readyz" % address)
        operator.ssh(host, "mv /etc/kubernetes/manifests/{c}.yaml /etc/kubernetes/{c}.yaml && "
                           "timeout 300 sh -c 'while curl -sk -o /dev/null {p}; do sleep 0.5; done' && "
                           "mv /etc/kubernetes/{c}.yaml /etc/kubernetes/manifests/{c}.yaml && "
                           "timeout 300 sh -c 'until curl -skf -o /dev/null {p}; do sleep 0.5; done'".format(c=component, p=probe))


def by_hand(operator):
    """(floor seconds, health wait seconds) of renewing the three hosts by hand."""
    hosts = operator.inventory()[0]
    floor = waits = 0.0
    for host in HOSTS:
        floor += timed(lambda: operator.ssh(host, "kubeadm certs renew all"))
        floor += timed(lambda: restart_by_hand(operator, host, hosts[host]["ip"]))
        waits += timed(lambda: wait_pods_ready(operator, host))
    return floor, waits


def main():
    operator = walk.Operator(NAME)
    workdir = tempfile.mkdtemp(prefix="bench-certificates-")
    try:
        operator.down()
        operator.up(3, 3, SUBNET)
        version = sorted(os.listdir(operator.mirror()[0]), key=lambda v: tuple(int(p) for p in v.lstrip("v").split(".")))[-1]
        flow(operator, "create.yml", 3, workdir, version)
        floor, waits = by_hand(operator)
        for host in HOSTS:
            operator.sandbox("fault", "certs-expire-soon", host, "2")
        run = flow(operator, "certificates.yml", 3, workdir, version,
                   rollout={"max_surge": 0, "before": {"certificates_expiry_days": 7}}, certificates={"renewal": "in_place"})
        left = [host for host in HOSTS if admin_json(operator, "get node %s" % host) is None]
        if left:
            raise SystemExit("nodes missing after the renewal: %s" % ", ".join(left))
    finally:
        operator.down()
        shutil.rmtree(workdir)
    print("certificates(3) %6.1f s  floor %5.1f s + health waits %5.1f s = %4.2f x (floor + waits), %4.2f x floor  %4d tasks  "
          "%4d ssh invocations" % (run["seconds"], floor, waits, run["seconds"] / (floor + waits), run["seconds"] / floor, run["tasks"], run["ssh"]))
    for seconds, runs, task in run["top"]:
        print("    %6.1f s %4d x  %s" % (seconds, runs, task[:110]))


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print("bench ran %.0f s" % (time.perf_counter() - start))
