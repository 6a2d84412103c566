# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How fast the sandbox comes and goes: ``sandbox up`` of 5 hosts (until every sshd answers), ``down``,
``machine create`` (host booted, sshd answering, in inventory and load balancer) and ``machine delete``.

Each figure is also given as a multiple of a baseline measured in the same run: one ``ip netns add`` +
``ip netns del`` pair (the cheapest thing a host needs), so figures from different machines compare.
Targets: up of 5 hosts under 15 s, down under 5 s, a machine (host + sshd) well under 1 s.
Uses its own sandbox (``bench``, 172.31.248.0/24); needs root.

Run: ``make bench``, or ``.venv/bin/python bench/sandbox.py [--runs 3] [--machines 5]``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "tests", "sandbox", "sandbox")
NAME, SUBNET = "bench", "172.31.248.0/24"


def sandbox(*args):
    subprocess.run([CLI, "--name", NAME] + list(args), check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def baseline(runs):
    def pair():
        subprocess.run(["ip", "netns", "add", "kcp-bench-probe"], check=True)
        subprocess.run(["ip", "netns", "del", "kcp-bench-probe"], check=True)
    return statistics.median(timed(pair)[0] for _run in range(runs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--machines", type=int, default=5)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench/sandbox.py: skipped, the sandbox needs root")
        return 0
    sandbox("down")
    base = baseline(10)
    figures = {"up": [], "down": [], "machine create": [], "machine delete": []}
    try:
        for _run in range(args.runs):
            figures["up"].append(timed(lambda: sandbox("up", "--machines", str(args.machines), "--subnet", SUBNET))[0])
            for _machine in range(3):
                seconds, done = timed(lambda: subprocess.run([CLI, "--name", NAME, "machine", "create"], check=True,
                                                             capture_output=True, text=True))
                figures["machine create"].append(seconds)
                name = json.loads(done.stdout)["name"]
                figures["machine delete"].append(timed(lambda: sandbox("machine", "delete", name))[0])
            figures["down"].append(timed(lambda: sandbox("down"))[0])
    finally:
        sandbox("down")
    print("baseline (ip netns add + del): %.1f ms" % (base * 1000))
    targets = {"up": 15.0, "down": 5.0, "machine create": 1.0, "machine delete": 1.0}
    for what, values in figures.items():
        median = statistics.median(values)
        print("%-16s median %6.2f s  max %6.2f s  = %5.0f x baseline  (target < %.0f s, %s)"
              % (what, median, max(values), median / base, targets[what],
                 "met" if max(values) < targets[what] else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
