# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an idle control plane costs: an operator's walk to a 3-member control plane on its own sandbox ``t-cpu``
(172.31.232.0/24), then, after it settles, the CPU each class of process (etcd, its image wrapper, the API servers,
controller managers, schedulers, kubelets) used over a window, from /proc/<pid>/stat utime + stime of the
processes in the sandbox's network namespaces. The sandbox is torn down at the end, also when a step fails.

Run as root: ``.venv/bin/python tests/sandbox/tests/walk/bench_idle_cpu.py <checkout> [settle s] [window s]``.
"""
import collections
import glob
import os
import sys
import tempfile
import time

CHECKOUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
SETTLE = float(sys.argv[2]) if len(sys.argv) > 2 else 60
WINDOW = float(sys.argv[3]) if len(sys.argv) > 3 else 60
SANDBOX_DIR = os.path.join(CHECKOUT, "tests", "sandbox")
sys.path[:0] = [SANDBOX_DIR, os.path.join(SANDBOX_DIR, "tests", "walk")]
import walk_support as walk  # noqa: E402  (needs the path set above)

NAME, SUBNET = "t-cpu", "172.31.232.0/24"
HOSTS = ("cp-1", "cp-2", "cp-3")


def classify(argv):
    """The class of a process from its command line, None for one not measured."""
    head = " ".join(argv[:3])
    for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"):
        if name in head:
            return name
    if "etcd-image" in head:
        return "etcd-wrapper"
    if argv and os.path.basename(argv[0]) == "etcd":
        return "etcd"
    return None


def sample(namespaces):
    """``{pid: (class, utime + stime in ticks)}`` of the measured processes in ``namespaces`` (netns inodes)."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat("/proc/%s/ns/net" % pid).st_ino not in namespaces:
                continue
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = [part.decode(errors="replace") for part in handle.read().split(b"\0") if part]
            with open("/proc/%s/stat" % pid, encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kind = classify(argv)
        if kind is not None:
            found[pid] = (kind, int(fields[11]) + int(fields[12]))
    return found


def measure():
    namespaces = {os.stat(path).st_ino for path in glob.glob("/run/netns/kcp-%s.*" % NAME)}
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    before, started = sample(namespaces), time.monotonic()
    time.sleep(WINDOW)
    after, elapsed = sample(namespaces), time.monotonic() - started
    used, count = collections.Counter(), collections.Counter()
    for pid, (kind, ticks) in after.items():
        if pid not in before:
            print("started during the window: %s %s" % (pid, kind))
        used[kind] += ticks - before.get(pid, (kind, 0))[1]
        count[kind] += 1
    total = 0.0
    for kind in sorted(used):
        share = 100.0 * used[kind] / ticks_per_second / elapsed
        total += share
        print("%-26s %d procs  %5.1f%% of one core" % (kind, count[kind], share))
    print("%-26s          %5.1f%%" % ("total", total))


def main():
    operator = walk.Operator(NAME)
    try:
        operator.up(3, 3, SUBNET)
        operator.prepare_hosts(list(HOSTS))
        for host in HOSTS:
            operator.install_pod_network(host)
        with tempfile.TemporaryDirectory(prefix="t-cpu-") as workdir:
            output = operator.init_first_control_plane(HOSTS[0], "fd-1", workdir)
        join = walk.control_plane_join_command(output)
        for host in HOSTS[1:]:
            operator.join_control_plane(host, join)
        print("3 control plane nodes; settling %.0f s, then measuring %.0f s" % (SETTLE, WINDOW), flush=True)
        time.sleep(SETTLE)
        measure()
    finally:
        operator.down()


if __name__ == "__main__":
    main()
