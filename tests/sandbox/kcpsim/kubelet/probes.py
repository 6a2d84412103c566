# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Container probes, as the kubelet runs them from the manifest.

Rule (the real kubelet's): while a startup probe has not succeeded, nothing else runs and the container is
not ready; ``failureThreshold`` startup failures restart it. Then the readiness probe decides Ready
(``failureThreshold`` failures in a row → not ready, ``successThreshold`` successes → ready; no readiness
probe → ready once started) and ``failureThreshold`` liveness failures in a row restart it. Delays count
from the container's start. httpGet succeeds on status 200–399 (HTTPS without certificate verification,
as the kubelet probes), tcpSocket on connect; other probe kinds count as success. All times are multiplied
by ``scale`` (KCPSIM_PROBE_SCALE).

A kubelet that restarts takes over the containers already running and probes them afresh: none counts as started
or ready until its probes say so, their delays still count from the container's start, and each probe first waits a
random part of its period, as the real kubelet's probe workers do when it started less than a period ago (so that
the probes of every container do not run at once).
"""

import http.client
import random
import socket
import ssl
import threading
import time

MIN_PERIOD = 0.1
MIN_TIMEOUT = 0.5


class ProbeSpec:
    def __init__(self, kind, host, port, path="/", scheme="HTTP", headers=None, initial_delay=0.0, period=10.0,
                 timeout=1.0, success_threshold=1, failure_threshold=3):
        self.kind = kind
        self.host = host
        self.port = port
        self.path = path
        self.scheme = scheme
        self.headers = headers or {}
        self.initial_delay = initial_delay
        self.period = period
        self.timeout = timeout
        self.success_threshold = success_threshold
        self.failure_threshold = failure_threshold

    def __repr__(self):
        return "ProbeSpec(%s %s://%s:%s%s)" % (self.kind, self.scheme.lower(), self.host, self.port, self.path)


def _port(value, container):
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    for port in container.get("ports") or []:
        if port.get("name") == value:
            return int(port["containerPort"])
    raise ValueError("probe port %r is neither a number nor a named container port" % (value,))


def probe_spec(probe, container, pod_ip, scale=1.0):
    """A ProbeSpec for one manifest probe (None if absent); ValueError for an unusable port."""
    if not probe:
        return None
    timing = dict(
        initial_delay=float(probe.get("initialDelaySeconds", 0)) * scale,
        period=max(MIN_PERIOD, float(probe.get("periodSeconds", 10)) * scale),
        timeout=max(MIN_TIMEOUT, float(probe.get("timeoutSeconds", 1)) * scale),
        success_threshold=int(probe.get("successThreshold", 1)),
        failure_threshold=int(probe.get("failureThreshold", 3)),
    )
    if "httpGet" in probe:
        get = probe["httpGet"]
        headers = {h["name"]: h.get("value", "") for h in get.get("httpHeaders") or [] if h.get("name")}
        return ProbeSpec("http", get.get("host") or pod_ip, _port(get.get("port"), container),
                         path=get.get("path") or "/", scheme=(get.get("scheme") or "HTTP").upper(), headers=headers,
                         **timing)
    if "tcpSocket" in probe:
        sock = probe["tcpSocket"]
        return ProbeSpec("tcp", sock.get("host") or pod_ip, _port(sock.get("port"), container), **timing)
    return ProbeSpec("other", pod_ip, 0, **timing)


_INSECURE = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
_INSECURE.check_hostname = False
_INSECURE.verify_mode = ssl.CERT_NONE


def run_probe(spec):
    """``(ok, detail)`` of one probe attempt."""
    if spec.kind == "other":
        return True, "probe kind not emulated"
    try:
        if spec.kind == "tcp":
            with socket.create_connection((spec.host, spec.port), timeout=spec.timeout):
                return True, "connected"
        if spec.scheme == "HTTPS":
            conn = http.client.HTTPSConnection(spec.host, spec.port, timeout=spec.timeout, context=_INSECURE)
        else:
            conn = http.client.HTTPConnection(spec.host, spec.port, timeout=spec.timeout)
        try:
            conn.request("GET", spec.path, headers=dict(spec.headers, **{"User-Agent": "kube-probe/kcpsim"}))
            response = conn.getresponse()
            body = response.read(200)
        finally:
            conn.close()
        ok = 200 <= response.status < 400
        return ok, "HTTP probe failed with statuscode: %d %s" % (response.status, body[:80]) if not ok else "ok"
    except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
        return False, "%s: %s" % (type(exc).__name__, exc)


class Prober(threading.Thread):
    """Probes one container instance; ``ready`` and ``restart_reason`` are read by the pod workers."""

    def __init__(self, name, startup, readiness, liveness, probe=run_probe, clock=time.monotonic, running_for=None,
                 jitter=random.random):
        """``running_for``: the seconds the container has run, for one a restarted kubelet takes over (None for one
        it starts); ``jitter``: the part of a period (0 to 1) such a container's probes first wait."""
        super().__init__(name="probe-" + name, daemon=True)
        self.startup = startup
        self.readiness = readiness
        self.liveness = liveness
        self._probe = probe
        self._clock = clock
        self._halt = threading.Event()
        self.started_ok = startup is None
        self.ready = False
        self.restart_reason = None
        self.last_detail = ""
        self._running_for = running_for
        self._jitter = jitter
        self._began = None

    def _first(self, origin, spec):
        """When ``spec`` first runs: its initial delay after the container's start and, for a container taken over,
        no sooner than a random part of its period after the prober began."""
        first = origin + spec.initial_delay
        if self._running_for is not None:
            first = max(first, self._began + self._jitter() * spec.period)
        return first

    def stop(self):
        self._halt.set()

    def _wait_until(self, moment):
        return not self._halt.wait(max(0.0, moment - self._clock()))

    def run(self):
        self._began = self._clock()
        origin = self._began - (self._running_for or 0.0)
        if self.startup is not None and not self._run_startup(origin):
            return
        self.started_ok = True
        if self.readiness is None:
            self.ready = True
        due = {}
        for role, spec in (("readiness", self.readiness), ("liveness", self.liveness)):
            if spec is not None:
                due[role] = self._first(origin, spec)
        counts = {role: [0, 0] for role in due}  # consecutive successes, failures
        while due and not self._halt.is_set():
            role = min(due, key=due.get)
            if not self._wait_until(due[role]):
                return
            spec = self.readiness if role == "readiness" else self.liveness
            ok, self.last_detail = self._probe(spec)
            successes, failures = counts[role]
            counts[role] = [successes + 1, 0] if ok else [0, failures + 1]
            if role == "readiness":
                if ok and counts[role][0] >= spec.success_threshold:
                    self.ready = True
                elif not ok and counts[role][1] >= spec.failure_threshold:
                    self.ready = False
            elif counts[role][1] >= spec.failure_threshold:
                self.ready = False
                self.restart_reason = "liveness probe failed: %s" % self.last_detail
                return
            due[role] = self._clock() + spec.period

    def _run_startup(self, origin):
        spec, failures = self.startup, 0
        moment = self._first(origin, spec)
        while self._wait_until(moment):
            ok, self.last_detail = self._probe(spec)
            if ok:
                return True
            failures += 1
            if failures >= spec.failure_threshold:
                self.restart_reason = "startup probe failed: %s" % self.last_detail
                return False
            moment = self._clock() + spec.period
        return False
