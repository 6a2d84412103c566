# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the kube-apiserver emulation on a real 3-member etcd (loopback block 9 of this worker's range):
start-up, request latency, and how fast it stops and resumes answering when etcd loses and regains quorum.

Run: ``.venv/bin/python tests/sandbox/tests/apiserver/bench_apiserver.py`` (about 30 s; prints one table).
"""

import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]

import apiserver_harness as harness  # noqa: E402  (needs the path set above)
from kcpsim import kubeclient  # noqa: E402

REQUESTS = 200


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def percentiles(samples):
    ordered = sorted(samples)
    return "p50 %.1f ms, p95 %.1f ms" % (statistics.median(ordered) * 1000,
                                         ordered[int(len(ordered) * 0.95) - 1] * 1000)


def until(condition, timeout):
    start = time.perf_counter()
    harness.wait_until(condition, timeout, interval=0.05)
    return time.perf_counter() - start


def failing_readyz(client):
    try:
        client.get_path("/readyz", timeout=10)
        return False
    except kubeclient.ServerError:
        return True


def main():
    results = []
    workdir = tempfile.mkdtemp(prefix="kcpsim-bench-")
    cluster = harness.Cluster(workdir, 9)
    try:
        results.append(("PKI (ECDSA-P256, 3 etcd members)", "%.2f s" % timed(cluster.make_pki)))
        results.append(("3-member etcd writable", "%.2f s" % timed(cluster.start_etcd)))
        results.append(("apiserver start to readyz ok", "%.2f s" % timed(lambda: cluster.start_apiserver(4))))
        cluster.grant_cluster_admins(cluster.ip(4))
        client = cluster.client("admin", cluster.ip(4), timeout=15)
        body = {"metadata": {"name": "bench"}, "data": {"k": "v"}}
        results.append(("create ConfigMap", "%.1f ms" % (1000 * timed(
            lambda: client.create("v1", "configmaps", body, "default")))))
        gets = [timed(lambda: client.get("v1", "configmaps", "bench", "default")) for attempt in range(REQUESTS)]
        results.append(("GET one object x%d" % REQUESTS, percentiles(gets)))
        patches = [timed(lambda: client.patch("v1", "configmaps", "bench", {"data": {"n": str(time.time())}},
                                              "default")) for attempt in range(REQUESTS // 2)]
        results.append(("merge PATCH x%d" % (REQUESTS // 2), percentiles(patches)))
        for number in range(REQUESTS):
            client.create("v1", "configmaps", {"metadata": {"name": "bulk-%d" % number}}, "default")
        lists = [timed(lambda: client.list("v1", "configmaps", "default")) for attempt in range(20)]
        results.append(("list %d ConfigMaps x20" % (REQUESTS + 1), percentiles(lists)))

        cluster.etcd[1].stop(kill=True)
        cluster.etcd[2].stop(kill=True)
        results.append(("quorum lost -> readyz 500", "%.2f s" % until(lambda: failing_readyz(client), 30)))
        start = time.perf_counter()
        try:
            client.get("v1", "configmaps", "bench", "default")
        except kubeclient.ServerError as exc:
            results.append(("GET without quorum -> HTTP %d" % exc.status, "%.2f s" % (time.perf_counter() - start)))
        cluster.restart_etcd(2)
        cluster.restart_etcd(3)
        results.append(("members restarted -> readyz ok", "%.2f s" % until(
            lambda: client.get_path("/readyz", timeout=10) == "ok", 60)))
        client.close()
    finally:
        cluster.stop()
        harness.remove_tree(workdir)
    width = max(len(entry[0]) for entry in results)
    for name, value in results:
        print("%s  %s" % (name.ljust(width), value))


if __name__ == "__main__":
    main()
