# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The etcd image entry point (kcpsim/runtime/etcd_image.py): real etcd 3.5.1 behind a listener that adds the
/livez and /readyz of etcd 3.5.11+, which kubeadm 1.31 and later probe."""

import http.client
import os
import signal
import subprocess

import pytest

from kcpsandbox.commands import wait_until
from kcpsim.runtime import etcd_image
from kubelet_harness import free_port

METRICS = etcd_image.METRICS_FLAG


@pytest.mark.parametrize("args, rest, urls", [
    (["--name=a", METRICS + "=http://127.0.0.1:2381"], ["--name=a"], ["http://127.0.0.1:2381"]),
    ([METRICS, "http://127.0.0.1:2381,http://10.0.0.1:2381", "--name=a"], ["--name=a"],
     ["http://127.0.0.1:2381", "http://10.0.0.1:2381"]),
    (["--name=a", "--listen-client-urls=https://127.0.0.1:2379"], ["--name=a", "--listen-client-urls=https://127.0.0.1:2379"],
     []),
], ids=[
    "the flag with = is taken out",
    "the flag as two words with two URLs is taken out",
    "without the flag nothing is taken",
])
def test_the_metrics_flag_is_taken_out_of_etcds_arguments(args, rest, urls):
    assert etcd_image.split_metrics_flag(args) == (rest, urls)


def test_only_plain_http_metrics_urls_can_be_served():
    with pytest.raises(ValueError, match="only on http://host:port"):
        etcd_image.private_urls(["http://127.0.0.1:2381", "https://127.0.0.1:2382"])


def test_etcds_own_listeners_are_distinct_free_ports_below_the_ephemeral_range():
    with open(etcd_image.PORT_RANGE_FILE) as handle:
        ephemeral_low = int(handle.read().split()[0])
    urls = etcd_image.private_urls(["http://127.0.0.1:2381", "http://10.0.0.1:2381"])
    ports = [int(url.rsplit(":", 1)[1]) for url in urls]
    assert len(set(ports)) == 2 and all(etcd_image.PRIVATE_PORT_FLOOR < port < ephemeral_low for port in ports)
    assert all(url.startswith("http://127.0.0.1:") for url in urls)


def get(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def answers(port, path):
    try:
        return get(port, path)
    except OSError:
        return None


def start_wrapped_etcd(releases, tmp_path, procs, absent_peer=False):
    """One plain-HTTP etcd member started through the built etcd-image entry point; with ``absent_peer`` its
    cluster names a second member that never starts, so it never has a leader (no quorum)."""
    ports = {name: free_port() for name in ("client", "peer", "metrics", "absent")}
    cluster = "m1=http://127.0.0.1:%d" % ports["peer"]
    if absent_peer:
        cluster += ",m2=http://127.0.0.1:%d" % ports["absent"]
    argv = [str(releases / "etcd" / "3.5.1" / "etcd-image"), "--name=m1", "--data-dir=%s" % (tmp_path / "data"),
            "--listen-client-urls=http://127.0.0.1:%d" % ports["client"],
            "--advertise-client-urls=http://127.0.0.1:%d" % ports["client"],
            "--listen-peer-urls=http://127.0.0.1:%d" % ports["peer"],
            "--initial-advertise-peer-urls=http://127.0.0.1:%d" % ports["peer"],
            "--initial-cluster=%s" % cluster, "--listen-metrics-urls=http://127.0.0.1:%d" % ports["metrics"]]
    process = procs.start(argv, log=str(tmp_path / "etcd.log"))
    wait_until(lambda: answers(ports["metrics"], "/livez") == (200, "ok\n"), 30, "etcd's /livez", interval=0.1)
    return process, ports["metrics"]


def test_livez_and_readyz_answer_ok_and_other_paths_pass_through(releases, tmp_path, procs):
    _process, port = start_wrapped_etcd(releases, tmp_path, procs)
    wait_until(lambda: answers(port, "/readyz") == (200, "ok\n"), 30, "etcd's /readyz", interval=0.1)
    status, body = get(port, "/health?serializable=true")
    assert status == 200 and '"health":"true"' in body
    status, body = get(port, "/metrics")
    assert status == 200 and "etcd_server_has_leader 1" in body


def test_a_member_without_quorum_is_live_but_not_ready(releases, tmp_path, procs):
    _process, port = start_wrapped_etcd(releases, tmp_path, procs, absent_peer=True)
    status, body = get(port, "/readyz")
    assert status == 503 and body.startswith("[-]readyz failed"), body
    assert get(port, "/livez") == (200, "ok\n")


def test_sigterm_reaches_etcd_and_the_wrapper_exits_as_etcd_did(releases, tmp_path, procs):
    process, _port = start_wrapped_etcd(releases, tmp_path, procs)
    etcd_pid = int(open("/proc/%d/task/%d/children" % (process.pid, process.pid)).read().split()[0])
    process.send_signal(signal.SIGTERM)
    # etcd re-raises SIGTERM once it has shut down; a container that dies of a signal exits 128 + its number.
    assert process.wait(timeout=30) == 128 + signal.SIGTERM
    assert not os.path.exists("/proc/%d" % etcd_pid)


def test_etcd_dies_with_the_wrapper_as_a_container_dies_with_its_first_process(releases, tmp_path, procs):
    process, _port = start_wrapped_etcd(releases, tmp_path, procs)
    etcd_pid = int(open("/proc/%d/task/%d/children" % (process.pid, process.pid)).read().split()[0])
    process.kill()
    process.wait(timeout=10)
    wait_until(lambda: not os.path.exists("/proc/%d" % etcd_pid), 10, "etcd (PID %d) to die" % etcd_pid)


@pytest.mark.parametrize("args, expected", [
    (["--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s", "--name=cp-1"],
     ["--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s", "--name=cp-1"]),
    (["--experimental-initial-corrupt-check=true", "--snapshot-count=10000"],
     ["--experimental-initial-corrupt-check=true", "--snapshot-count=10000"]),
], ids=["etcd 3.6 flag names are passed to etcd 3.5.1 under their experimental names",
        "etcd 3.5 flags pass unchanged"])
def test_etcd36_flags_run_on_etcd35(args, expected):
    assert etcd_image.as_etcd35_flags(args) == expected


def test_a_feature_gate_etcd35_cannot_express_is_refused():
    with pytest.raises(ValueError, match="unrecognized feature gate: FastLeaseKeepAlive"):
        etcd_image.as_etcd35_flags(["--feature-gates=FastLeaseKeepAlive=true"])


def test_etcd_exits_at_a_flag_it_does_not_have_as_its_static_pod_would(releases, tmp_path):
    # etcd is the real binary: an extraArgs flag it lacks stops it at start, and its static pod crash-loops
    done = subprocess.run([str(releases / "etcd" / "3.5.1" / "etcd-image"), "--name=m1", "--data-dir=%s" % tmp_path,
                           "--no-such-flag=1"], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode != 0 and "flag provided but not defined: -no-such-flag" in done.stdout + done.stderr
