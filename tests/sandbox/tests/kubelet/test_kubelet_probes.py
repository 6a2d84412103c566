# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Probes: parsed from the manifest, run against real loopback endpoints, sequenced like the kubelet's."""

import http.server
import socket
import threading
import time

import pytest

from kcpsandbox.commands import wait_until
from kcpsim.kubelet import probes
from kubelet_harness import free_port

CONTAINER = {"ports": [{"name": "metrics", "containerPort": 2381}]}


@pytest.mark.parametrize("probe, expected", [
    ({"httpGet": {"host": "127.0.0.1", "port": 2381, "path": "/health?serializable=true", "scheme": "HTTP"},
      "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 15, "failureThreshold": 8},
     ("http", "127.0.0.1", 2381, "/health?serializable=true", "HTTP", 10.0, 10.0, 15.0, 8)),
    ({"httpGet": {"port": "metrics", "path": "/readyz", "scheme": "https"}},
     ("http", "10.0.0.5", 2381, "/readyz", "HTTPS", 0.0, 10.0, 1.0, 3)),
    ({"tcpSocket": {"port": "6443"}, "periodSeconds": 1},
     ("tcp", "10.0.0.5", 6443, "/", "HTTP", 0.0, 1.0, 1.0, 3)),
], ids=[
    "kubeadm's etcd liveness probe keeps its host, port, path and timing",
    "a named port resolves through the container's ports; the host defaults to the pod IP",
    "a tcpSocket probe with a numeric string port",
])
def test_probe_specs(probe, expected):
    spec = probes.probe_spec(probe, CONTAINER, "10.0.0.5")
    assert (spec.kind, spec.host, spec.port, spec.path, spec.scheme, spec.initial_delay, spec.period, spec.timeout,
            spec.failure_threshold) == expected


def test_probe_timing_scales_with_the_sandbox_factor_within_floors():
    spec = probes.probe_spec({"httpGet": {"port": 1}, "initialDelaySeconds": 10, "periodSeconds": 10,
                              "timeoutSeconds": 15}, CONTAINER, "10.0.0.5", scale=0.01)
    assert (spec.initial_delay, spec.period, spec.timeout) == (pytest.approx(0.1), 0.1, 0.5)


def test_an_unknown_named_port_is_refused():
    with pytest.raises(ValueError, match="neither a number nor a named container port"):
        probes.probe_spec({"httpGet": {"port": "nope"}}, CONTAINER, "10.0.0.5")


class _Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = int(self.path.strip("/").split("?")[0] or 200)
        self.send_response(code)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def status_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path, ok", [("/200", True), ("/302", True), ("/500", False), ("/404", False)],
                         ids=["HTTP 200 succeeds", "a redirect status succeeds", "HTTP 500 fails", "HTTP 404 fails"])
def test_http_probe_outcomes(status_server, path, ok):
    spec = probes.ProbeSpec("http", "127.0.0.1", status_server, path=path, timeout=2)
    assert probes.run_probe(spec)[0] is ok


def test_probes_of_a_closed_port_fail():
    port = free_port()
    assert probes.run_probe(probes.ProbeSpec("http", "127.0.0.1", port, timeout=1))[0] is False
    assert probes.run_probe(probes.ProbeSpec("tcp", "127.0.0.1", port, timeout=1))[0] is False


def test_a_tcp_probe_succeeds_on_connect(status_server):
    assert probes.run_probe(probes.ProbeSpec("tcp", "127.0.0.1", status_server, timeout=1))[0] is True


class _Scripted:
    """A probe function answering from a per-probe script (the last answer repeats)."""

    def __init__(self, **scripts):
        self.scripts = {name: list(answers) for name, answers in scripts.items()}
        self.calls = {name: 0 for name in scripts}
        self.lock = threading.Lock()

    def __call__(self, spec):
        with self.lock:
            script = self.scripts[spec.kind]
            answer = script[min(self.calls[spec.kind], len(script) - 1)]
            self.calls[spec.kind] += 1
        return answer, "scripted"


def _spec(kind, failure_threshold=3, success_threshold=1):
    return probes.ProbeSpec(kind, "127.0.0.1", 1, initial_delay=0, period=0.01, timeout=0.5,
                            failure_threshold=failure_threshold, success_threshold=success_threshold)


def _run(prober):
    prober.start()
    return prober


def test_without_probes_a_started_container_is_ready_at_once():
    prober = _run(probes.Prober("x", None, None, None, probe=_Scripted()))
    wait_until(lambda: prober.ready, 2, "readiness")
    prober.stop()


def test_nothing_is_ready_until_the_startup_probe_succeeds():
    script = _Scripted(startup=[False, False, True], readiness=[True])
    prober = _run(probes.Prober("x", _spec("startup", 5), _spec("readiness"), None, probe=script))
    wait_until(lambda: prober.ready, 2, "readiness after startup")
    assert script.calls["startup"] == 3 and prober.restart_reason is None
    prober.stop()


def test_too_many_startup_failures_ask_for_a_restart():
    prober = _run(probes.Prober("x", _spec("startup", 3), _spec("readiness"), None,
                                probe=_Scripted(startup=[False], readiness=[True])))
    wait_until(lambda: prober.restart_reason, 2, "a restart request")
    assert prober.restart_reason.startswith("startup probe failed") and not prober.ready


class _Switch:
    """A probe function whose answer the test flips; counts the calls."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = 0

    def __call__(self, spec):
        self.calls += 1
        return self.answer, "switched"


def test_readiness_follows_its_thresholds():
    switch = _Switch(False)
    prober = _run(probes.Prober("x", None, _spec("readiness", failure_threshold=3, success_threshold=2), None,
                                probe=switch))
    wait_until(lambda: switch.calls >= 3, 2, "a few failing probes")
    assert not prober.ready
    before = switch.calls
    switch.answer = True
    wait_until(lambda: prober.ready, 2, "ready after successes")
    assert switch.calls - before >= 2
    before = switch.calls
    switch.answer = False
    wait_until(lambda: not prober.ready, 2, "not ready after failures")
    assert switch.calls - before >= 3
    prober.stop()


def test_consecutive_liveness_failures_ask_for_a_restart_but_one_failure_does_not():
    script = _Scripted(liveness=[False, True, False, False, False])
    prober = _run(probes.Prober("x", None, None, _spec("liveness", failure_threshold=3), probe=script))
    wait_until(lambda: prober.restart_reason, 2, "a restart request")
    assert script.calls["liveness"] == 5
    assert prober.restart_reason.startswith("liveness probe failed")


class _Clocked:
    """A probe function that answers True and notes when each kind of probe first ran."""

    def __init__(self):
        self.first = {}

    def __call__(self, spec):
        self.first.setdefault(spec.kind, time.monotonic())
        return True, "clocked"


def test_a_taken_over_container_keeps_the_delay_counted_from_its_start():
    # the container has run 30 s, its startup probe's initial delay is 10 s: a restarted kubelet does not wait it again
    clocked = _Clocked()
    slow = probes.ProbeSpec("startup", "127.0.0.1", 1, initial_delay=10, period=0.2, timeout=0.5)
    prober = _run(probes.Prober("x", slow, _spec("readiness"), None, probe=clocked, running_for=30.0, jitter=lambda: 0.0))
    wait_until(lambda: prober.ready, 3, "ready soon after the kubelet took it over")
    prober.stop()


def test_a_taken_over_container_is_probed_after_a_part_of_the_period_and_its_remaining_delay():
    clocked = _Clocked()
    began = time.monotonic()
    startup = probes.ProbeSpec("startup", "127.0.0.1", 1, initial_delay=0, period=0.6, timeout=0.5)
    prober = _run(probes.Prober("x", startup, None, None, probe=clocked, running_for=30.0, jitter=lambda: 0.5))
    wait_until(lambda: prober.ready, 3, "ready after the jitter")
    assert clocked.first["startup"] - began >= 0.3
    prober.stop()
    # a container that started 0.1 s before the kubelet, with an initial delay of 0.5 s: 0.4 s more
    clocked, began = _Clocked(), time.monotonic()
    startup = probes.ProbeSpec("startup", "127.0.0.1", 1, initial_delay=0.5, period=0.2, timeout=0.5)
    prober = _run(probes.Prober("x", startup, None, None, probe=clocked, running_for=0.1, jitter=lambda: 0.0))
    wait_until(lambda: prober.ready, 3, "ready after the rest of the initial delay")
    assert clocked.first["startup"] - began >= 0.39
    prober.stop()


def test_a_stopped_prober_ends_its_thread():
    prober = _run(probes.Prober("x", None, _spec("readiness"), None, probe=_Scripted(readiness=[True])))
    prober.stop()
    prober.join(2)
    assert not prober.is_alive()


def test_a_probe_that_hangs_is_bounded_by_its_timeout():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts the connection, never answers
    try:
        ok, detail = probes.run_probe(probes.ProbeSpec("http", "127.0.0.1", listener.getsockname()[1], timeout=0.5))
    finally:
        listener.close()
    assert ok is False and "timed out" in detail
