# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How fast the sandbox comes and goes: ``sandbox up`` of 5 hosts (until every sshd answers), ``down``,
``machine create`` (host booted, sshd answering, in inventory and load balancer) and ``machine delete``.

Each figure is also given as a multiple of a baseline measured in the same run: one ``ip netns add`` +
``ip netns del`` pair (the cheapest thing a host needs), so figures from different machines compare.
Targets: up of 5 hosts under 15 s, down under 5 s, a machine (host + sshd) well under 1 s.
Uses its own sandbox (``bench``, 172.31.248.0/24); needs root.

Section ``walk``: an operator's manual walk to a 3-member control plane (the steps of tests/sandbox/tests/walk),
timed step by step against the same baseline; target under 45 s. Own sandbox ``benchwalk`` (sandbox names have at
most 9 characters), 172.31.247.0/24.

Run: ``make bench``, or ``.venv/bin/python bench/sandbox.py [--runs 3] [--machines 5] [--walk-runs 1] [--walk-only]``.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANDBOX_DIR = os.path.join(ROOT, "tests", "sandbox")
CLI = os.path.join(SANDBOX_DIR, "sandbox")
# The walk test's steps (tests/sandbox/tests/walk/walk_support.py), so the benchmark times what the test runs.
sys.path[:0] = [SANDBOX_DIR, os.path.join(SANDBOX_DIR, "tests", "walk")]
import walk_support as walk  # noqa: E402  (needs the path set above)
NAME, SUBNET = "bench", "172.31.248.0/24"


class SandboxFailed(Exception):
    """A sandbox command failed; the message quotes it and what it said."""


def sandbox(*args):
    """Run ``sandbox --name bench <args>``; its output, or SandboxFailed."""
    done = subprocess.run([CLI, "--name", NAME] + list(args), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        raise SandboxFailed("`sandbox %s` failed (exit %d): %s" % (" ".join(args), done.returncode, said))
    return done.stdout


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def baseline(runs):
    def pair():
        subprocess.run(["ip", "netns", "add", "kcp-bench-probe"], check=True)
        subprocess.run(["ip", "netns", "del", "kcp-bench-probe"], check=True)
    return statistics.median(timed(pair)[0] for _run in range(runs))


def measure(runs, machines):
    """{what: [seconds]} of ``runs`` rounds of up, three machine create + delete, down; the sandbox is down after."""
    sandbox("down")
    figures = {"up": [], "down": [], "machine create": [], "machine delete": []}
    try:
        for _run in range(runs):
            figures["up"].append(timed(lambda: sandbox("up", "--machines", str(machines), "--subnet", SUBNET))[0])
            for _machine in range(3):
                seconds, created = timed(lambda: sandbox("machine", "create"))
                figures["machine create"].append(seconds)
                name = json.loads(created)["name"]
                figures["machine delete"].append(timed(lambda: sandbox("machine", "delete", name))[0])
            figures["down"].append(timed(lambda: sandbox("down"))[0])
    finally:
        sandbox("down")
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--machines", type=int, default=5)
    parser.add_argument("--walk-runs", type=int, default=1, help="manual walks to time (0: none)")
    parser.add_argument("--walk-only", action="store_true", help="time the manual walk only")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/sandbox.py: skipped, the sandbox needs root")
        return 0
    if args.walk_only:
        return walk_section(args.walk_runs, baseline(10))
    try:
        figures = measure(args.runs, args.machines)
    except SandboxFailed as exc:
        print("bench/sandbox.py: %s (make setup installs what the sandbox needs)" % exc)
        return 1
    base = baseline(10)
    print("baseline (ip netns add + del): %.1f ms" % (base * 1000))
    targets = {"up": 15.0, "down": 5.0, "machine create": 1.0, "machine delete": 1.0}
    for what, values in figures.items():
        median = statistics.median(values)
        print("%-16s median %6.2f s  max %6.2f s  = %5.0f x baseline  (target < %.0f s, %s)"
              % (what, median, max(values), median / base, targets[what],
                 "met" if max(values) < targets[what] else "MISSED"))
    return walk_section(args.walk_runs, base)


# -- section "walk": an operator's manual walk to a 3-member control plane (tests/sandbox/tests/walk) ---------

WALK_NAME, WALK_SUBNET, WALK_TARGET = "benchwalk", "172.31.247.0/24", 45.0


def walk_once(workdir):
    """[(step, seconds)] of one walk on a fresh ``benchwalk`` sandbox: up of 3 bare hosts, the operator's own
    set-up of each (node software from the mirror, zone label, ip_forward), kubeadm init on cp-1, a control
    plane join on cp-2 and on cp-3 (as the operator runs them, over SSH), the pod network's config on each,
    then kubectl get nodes through the VIP until all 3 are Ready control planes. The caller takes the sandbox
    down."""
    operator = walk.Operator(WALK_NAME)
    steps = [("up (3 hosts)", timed(lambda: operator.up(3, 3, WALK_SUBNET))[0])]
    hosts = operator.inventory()[0]
    steps.append(("install + label (3)", timed(lambda: operator.prepare_hosts(sorted(hosts)))[0]))
    seconds, output = timed(lambda: operator.init_first_control_plane("cp-1", hosts["cp-1"]["failure_domain"], workdir))
    steps.append(("kubeadm init cp-1", seconds))
    steps.append(("pod network cp-1", timed(lambda: operator.install_pod_network("cp-1"))[0]))
    join = walk.control_plane_join_command(output)
    for host in ("cp-2", "cp-3"):
        steps.append(("kubeadm join " + host,
                      timed(lambda: operator.join_control_plane(host, join))[0]))
        steps.append(("pod network " + host, timed(lambda: operator.install_pod_network(host))[0]))

    def nodes_ready():
        kubeconfig = operator.fetch("cp-1", "/etc/kubernetes/admin.conf", workdir)
        zones = {host: facts["failure_domain"] for host, facts in hosts.items()}
        walk.poll(lambda: operator.ready_control_plane_nodes(kubeconfig) == zones, 60, "3 Ready control planes")

    steps.append(("get nodes: 3 Ready", timed(nodes_ready)[0]))
    return steps


def walk_section(runs, base):
    """Time ``runs`` manual walks and print each step's median as seconds and as a multiple of ``base``; 0 when
    done, 1 when a step failed. The ``benchwalk`` sandbox is down afterwards."""
    if runs < 1:
        return 0
    operator = walk.Operator(WALK_NAME)
    figures = {}
    try:
        operator.down()
        for _run in range(runs):
            workdir = tempfile.mkdtemp(prefix="bench-walk-")
            try:
                for step, seconds in walk_once(workdir):
                    figures.setdefault(step, []).append(seconds)
            finally:
                shutil.rmtree(workdir)
                operator.down()
    except (walk.WalkError, walk.node_setup.SetupError, subprocess.TimeoutExpired, ValueError) as exc:
        print("bench/sandbox.py walk: %s" % exc)
        return 1
    print("walk (%s, sandbox timings; %d run%s; baseline %.1f ms):"
          % (walk.WALK_VERSION or "the newest", runs, "s"[:runs > 1], base * 1000))
    for step, values in figures.items():
        median = statistics.median(values)
        print("  %-22s median %6.2f s  = %6.0f x baseline" % (step, median, median / base))
    totals = [sum(run) for run in zip(*figures.values())]
    print("  %-22s median %6.2f s  max %6.2f s  = %6.0f x baseline  (target < %.0f s, %s)"
          % ("total", statistics.median(totals), max(totals), statistics.median(totals) / base, WALK_TARGET,
             "met" if max(totals) < WALK_TARGET else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
