# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How much the flows cost over the commands they run: create(3), scale 3 -> 5 and 5 -> 3, and a rollout of the 3
machines to the next minor with max_surge 0, on the sandbox, each against a floor measured in the same run.

The floor is an operator doing the same work by hand over SSH, one step after another (the manual walk's steps,
tests/sandbox/tests/walk): node software installed on the new hosts at once, then ``kubeadm init`` (create) or a
fresh join command, then ``kubeadm join --control-plane`` on each new host in turn, each followed by the pod
network's configuration; to scale down, ``kubeadm reset`` (which removes the host's etcd member) and ``kubectl
delete node`` for each host in turn; to roll out, the kubeadm-config ConfigMap's kubernetesVersion set by hand, then
for each machine in turn ``kubeadm reset``, ``kubectl delete node``, the new version's node software and a fresh
join. The cluster is created at the minor before the newest. What the flows add on top: observing the cluster and etcd each pass, the
lock, the host records, the etcd snapshot before each membership change, waiting for each new machine's pods to
be ready, and the drain before a removal.

Printed for each flow: its time, the floor, their ratio (target <= 1.5), the tasks Ansible ran and the SSH
invocations it made. Own sandbox ``benchflow`` (172.31.241.0/24), 5 hosts over 3 failure domains; needs root.

    .venv/bin/python bench/flows.py
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANDBOX_DIR = os.path.join(ROOT, "tests", "sandbox")
sys.path[:0] = [SANDBOX_DIR, os.path.join(SANDBOX_DIR, "tests", "walk")]
import node_setup  # noqa: E402  (needs the path set above)
import walk_support as walk  # noqa: E402

NAME, SUBNET, TARGET = "benchflow", "172.31.241.0/24", 1.5
BIN = os.path.dirname(sys.executable)


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def floor(operator, workdir, new):
    """(create(3), scale 3 -> 5, scale 5 -> 3, rollout(3) to ``new``) seconds of the operator's steps by hand."""
    hosts = operator.inventory()[0]
    mirror_dir = operator.mirror()[0]

    def create():
        operator.prepare_hosts(["cp-1", "cp-2", "cp-3"])
        output = operator.init_first_control_plane("cp-1", hosts["cp-1"]["failure_domain"], workdir)
        operator.install_pod_network("cp-1")
        join = walk.control_plane_join_command(output)
        for host in ("cp-2", "cp-3"):
            operator.join_control_plane(host, join)
            operator.install_pod_network(host)

    def scale():
        operator.prepare_hosts(["cp-4", "cp-5"])
        for host in ("cp-4", "cp-5"):
            operator.join_control_plane(host, operator.fresh_control_plane_join_command("cp-1"))
            operator.install_pod_network(host)

    def scale_down():
        for host in ("cp-5", "cp-4"):
            operator.ssh(host, "kubeadm reset --force")
            operator.ssh("cp-1", "kubectl --kubeconfig /etc/kubernetes/admin.conf delete node %s" % host)

    def rollout():
        operator.ssh("cp-2", "kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get configmap kubeadm-config"
                             " -o yaml | sed 's/kubernetesVersion: .*/kubernetesVersion: %s/'"
                             " | kubectl --kubeconfig /etc/kubernetes/admin.conf replace -f -" % new)
        for host, via in (("cp-1", "cp-2"), ("cp-2", "cp-3"), ("cp-3", "cp-1")):
            operator.ssh(host, "kubeadm reset --force")
            operator.ssh(via, "kubectl --kubeconfig /etc/kubernetes/admin.conf delete node %s" % host)
            operator.node(host).prepare(mirror_dir, new, hosts[host]["failure_domain"])
            operator.join_control_plane(host, operator.fresh_control_plane_join_command(via))
            operator.install_pod_network(host)

    return timed(create), timed(scale), timed(scale_down), timed(rollout)


def flow(operator, playbook, replicas, workdir, version, max_surge=1):
    """(seconds, tasks, ssh invocations) of one flow run by ansible-playbook, as an operator runs it."""
    inventory = os.path.join(operator.state, "inventory.ini")
    variables = operator.inventory()[1]
    mirror_dir = operator.mirror()[0]
    extra = {"kcp_bundle_dir": mirror_dir, "kcp_etcd_snapshot_dir": os.path.join(workdir, "snapshots"),
             "ansible_ssh_executable": counting_ssh(workdir),
             "kcp": {"cluster_name": "bench", "replicas": replicas, "version": version, "rollout": {"max_surge": max_surge},
                     "endpoint": {"host": variables["sandbox_endpoint_host"], "port": 6443},
                     "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}}
    count_file = os.path.join(workdir, "ssh-count")
    open(count_file, "w").close()
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"))
    start = time.perf_counter()
    done = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", playbook),
                           "-e", json.dumps(extra)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=1800, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit("%s failed (exit %d):\n%s" % (playbook, done.returncode, done.stdout[-4000:]))
    tasks = len(re.findall(r"^TASK \[", done.stdout, re.MULTILINE))
    with open(count_file, encoding="utf-8") as handle:
        return seconds, tasks, len(handle.readlines())


def counting_ssh(workdir):
    """An ssh that counts its invocations in <workdir>/ssh-count (one a round trip, whatever ControlPersist
    reuses underneath) and runs the real ssh."""
    path = os.path.join(workdir, "ssh")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\necho >> %s\nexec %s \"$@\"\n" % (os.path.join(workdir, "ssh-count"), shutil.which("ssh")))
    os.chmod(path, stat.S_IRWXU)
    return path


def main():
    operator = walk.Operator(NAME)
    workdir = tempfile.mkdtemp(prefix="bench-flows-")
    try:
        operator.down()
        operator.up(5, 3, SUBNET)
        mirror_dir = operator.mirror()[0]
        # created at the minor before the newest, rolled out to the newest
        new = node_setup.newest_version(mirror_dir)
        old = node_setup.newest([v for v in os.listdir(mirror_dir) if v.split(".")[:2] != new.split(".")[:2]])
        walk.WALK_VERSION = old
        floor_create, floor_up, floor_down, floor_rollout = floor(operator, workdir, new)
        operator.down()
        operator.up(5, 3, SUBNET)
        figures = [("create(3)", flow(operator, "create.yml", 3, workdir, old), floor_create),
                   ("scale 3->5", flow(operator, "scale.yml", 5, workdir, old), floor_up),
                   ("scale 5->3", flow(operator, "scale.yml", 3, workdir, old), floor_down),
                   ("rollout(3)", flow(operator, "rollout.yml", 3, workdir, new, max_surge=0), floor_rollout)]
    finally:
        operator.down()
        shutil.rmtree(workdir)
    verdicts = []  # printed, like the other benchmarks' targets: a missed one is a figure to act on, not a crash
    for name, (seconds, tasks, ssh), floor_seconds in figures:
        ratio = seconds / floor_seconds
        verdicts.append(ratio <= TARGET)
        print("%-11s %6.1f s  floor %5.1f s  = %4.2f x floor (target <= %.1f: %s)  %4d tasks  %4d ssh invocations"
              % (name, seconds, floor_seconds, ratio, TARGET, "met" if ratio <= TARGET else "MISSED", tasks, ssh))
    print("target %s" % ("met for every flow" if all(verdicts) else "MISSED"))


if __name__ == "__main__":
    main()
