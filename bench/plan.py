# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How fast the planner decides: plans per second on synthetic control planes of 1, 3, 5 and 7 machines, and
one pass over a fleet of 10,000 snapshots.

Each rate is printed with its ratio to a baseline measured in the same run on the same snapshots
(``copy.deepcopy`` of the snapshot), so figures from different machines compare. The snapshots are random
but seeded: health, failure-domain layout, outdated machines, etcd trouble and deletions vary. Targets: one
7-machine plan under 1 ms; the fleet under 5 s.

Run: ``make bench``, or ``.venv/bin/python bench/plan.py [--fleet N] [--seconds S]``.
"""

import argparse
import copy
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))

from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan  # noqa: E402
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash  # noqa: E402

from builders import VERSION, at, machine, member, snapshot, spec  # noqa: E402

FAILURE_DOMAINS = [{"name": n, "control_plane": True} for n in ("fd-a", "fd-b", "fd-c")] + [{"name": "fd-x", "control_plane": False}]
SPEC = spec()
HASH = spec_hash(SPEC, "join")


def synthetic(rng, size):
    """A snapshot of `size` machines with seeded random trouble (each kind rare, as in a real fleet)."""
    machines = []
    for i in range(1, size + 1):
        m = machine(
            "cp-%d" % i,
            fd=rng.choice(["fd-a", "fd-b", "fd-c", "fd-a", "fd-b", "fd-c", "fd-x", None]),
            created=rng.randint(60, 100000),
            version=VERSION if rng.random() > 0.3 else "v1.29.8",
            spec_hash=HASH if rng.random() > 0.2 else rng.choice([None, "0123456789abcdef"]),
            has_node=rng.random() > 0.05,
            deleting=rng.random() < 0.03,
            delete_requested=rng.random() < 0.05,
            components={"api_server": "unhealthy"} if rng.random() < 0.1 else None,
        )
        if m["node"] is not None and rng.random() < 0.1:
            m["node"]["conditions"][0].update(status="False", last_transition=at(rng.randint(1, 30)))
        machines.append(m)
    members = [
        member(m["name"], leader=(i == 0), responsive=rng.random() > 0.05, alarms=["NOSPACE"] if rng.random() < 0.02 else ())
        for i, m in enumerate(machines)
        if m["node"] is not None
    ]
    if rng.random() < 0.05:
        members.append(member("cp-gone"))
    return snapshot(machines, members=members, failure_domains=FAILURE_DOMAINS)


def rate(function, items, seconds):
    """Calls per second of `function` over `items`, cycling for about `seconds` (at least one full pass)."""
    calls, start = 0, time.perf_counter()
    while True:
        for item in items:
            function(item)
        calls += len(items)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleet", type=int, default=10000, help="snapshots in the fleet pass")
    parser.add_argument("--seconds", type=float, default=1.0, help="time spent on each rate")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    print("%-16s %10s %12s %16s %12s" % ("control plane", "plans/s", "deepcopies/s", "plan/deepcopy", "per plan"))
    for size in (1, 3, 5, 7):
        snaps = [synthetic(rng, size) for count in range(200)]
        plans = rate(lambda s: plan(SPEC, s), snaps, args.seconds)
        copies = rate(copy.deepcopy, snaps, args.seconds / 4)
        print("%-16s %10.0f %12.0f %15.1fx %9.3f ms" % ("%d machine(s)" % size, plans, copies, copies / plans, 1000.0 / plans))

    fleet = [synthetic(rng, rng.choice((1, 3, 5, 7))) for count in range(args.fleet)]
    start = time.perf_counter()
    actions = {}
    for snap in fleet:
        action = plan(SPEC, snap)["action"]
        actions[action] = actions.get(action, 0) + 1
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    for snap in fleet:
        copy.deepcopy(snap)
    baseline = time.perf_counter() - start
    print(
        "fleet of %d snapshots: %.2f s (%.0f plans/s); deepcopy of the fleet %.2f s; plan/deepcopy %.1fx"
        % (args.fleet, elapsed, args.fleet / elapsed, baseline, elapsed / baseline)
    )
    print("actions: %s" % ", ".join("%s %d" % (a, n) for a, n in sorted(actions.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
