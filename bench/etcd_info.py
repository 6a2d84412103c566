# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one etcd_info task costs on a healthy 3-member TLS cluster, beyond what any Ansible task costs.

Both are run as a user runs them, `ansible localhost -m ...`, alternating, in the same run:
  - baseline: ansible.builtin.ping (ansible-core's start-up, module transfer and result, nothing else);
  - etcd_info with every endpoint given.
Printed: each median, etcd_info minus ping (the module's own work: TLS connections, status, member list,
health read through quorum, alarms, for every member in parallel), and the ratio of the two medians.

    .venv/bin/python bench/etcd_info.py [--runs 7]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".collections"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "etcd"))

from ansible_run import run  # noqa: E402
from etcd_test_cluster import EtcdCluster  # noqa: E402
from etcd_test_pki import EtcdPKI  # noqa: E402


def timed(module, args):
    start = time.perf_counter()
    outcome, result = run(module, args)[:2]
    took = time.perf_counter() - start
    if outcome != "SUCCESS":
        raise SystemExit("%s did not succeed (%s): %s" % (module, outcome, result))
    return took, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each task (the median is printed)")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-etcd-info-") as workdir:
        pki = EtcdPKI(os.path.join(workdir, "pki"))
        with EtcdCluster(pki, os.path.join(workdir, "cluster"), size=3) as cluster:
            info_args = dict(
                endpoints=cluster.endpoints,
                ca_file=pki.ca_file,
                cert_file=pki.client_cert,
                key_file=pki.client_key,
                fail_when_no_answer=True,
            )
            pings, infos = [], []
            for _run in range(options.runs):
                pings.append(timed("ansible.builtin.ping", {"data": "pong"})[0])
                took, result = timed("etcd_info", info_args)
                summary = result["summary"]
                if not (summary["quorum"] and summary["healthy_voters"] == 3):
                    raise SystemExit("the cluster is not healthy: %s" % summary)
                infos.append(took)
    ping, info = statistics.median(pings), statistics.median(infos)
    print("baseline ansible.builtin.ping:             %7.1f ms (median of %d)" % (ping * 1000, options.runs))
    print("etcd_info, healthy 3-member TLS cluster:   %7.1f ms = %.2f x ping" % (info * 1000, info / ping))
    print("etcd_info minus ping (the module's work):  %7.1f ms" % ((info - ping) * 1000))


if __name__ == "__main__":
    main()
