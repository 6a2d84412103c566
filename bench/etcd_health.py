# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long gathering the etcd section of the snapshot takes on a real 5-member cluster, with 0, 1 and 2
members stopped (SIGSTOP: they accept TCP connections and never answer, the slowest way to be dead).

Baseline, measured in the same run: one status call to one live member over a new TLS connection.
Target: with k members stopped, a gather takes at most 1.2 x timeout + 100 ms, whatever k is, because every
member is asked in parallel under its own timeout.

    .venv/bin/python bench/etcd_health.py [--timeout 1.0] [--runs 5]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "etcd"))

from etcd_test_cluster import EtcdCluster  # noqa: E402
from etcd_test_pki import EtcdPKI  # noqa: E402

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_client import EtcdClient  # noqa: E402
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import GatewayClient  # noqa: E402


def median_seconds(action, runs):
    times = []
    for _run in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def one_status_call(client, endpoint):
    gateway = GatewayClient(endpoint, client.context, client.timeout)
    try:
        gateway.call("maintenance/status")
    finally:
        gateway.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1.0, help="per-member timeout, seconds")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median is printed)")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-etcd-") as workdir:
        pki = EtcdPKI(os.path.join(workdir, "pki"))
        started = time.perf_counter()
        with EtcdCluster(pki, os.path.join(workdir, "cluster"), size=5) as cluster:
            print("5-member TLS cluster healthy in %.2f s" % (time.perf_counter() - started))
            client = EtcdClient(cluster.endpoints, pki.ca_file, pki.client_cert, pki.client_key, timeout=options.timeout)
            live = cluster.endpoints[0]
            baseline = median_seconds(lambda: one_status_call(client, live), options.runs * 4)
            print("baseline: one status call to one live member (new TLS connection): %.1f ms" % (baseline * 1000))

            limit = 1.2 * options.timeout + 0.1
            stopped = []
            verdicts = []
            for victim in (None, "cp-5", "cp-4"):
                if victim:
                    cluster.pause(victim)
                    stopped.append(victim)
                section = client.gather()
                answered = sum(m["responsive"] for m in section["members"])
                took = median_seconds(client.gather, options.runs)
                within = took <= limit if stopped else True
                verdicts.append(within)
                print(
                    "gather, %d stopped (%d of 5 answered): %7.1f ms = %6.1f x baseline = %.2f x timeout%s"
                    % (
                        len(stopped),
                        answered,
                        took * 1000,
                        took / baseline,
                        took / options.timeout,
                        "" if not stopped else ("  (target <= %.0f ms: %s)" % (limit * 1000, "met" if within else "MISSED")),
                    )
                )
            for victim in stopped:
                cluster.resume(victim)
            client.close()
    print("target %s" % ("met for every k" if all(verdicts) else "MISSED"))


if __name__ == "__main__":
    main()
