# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static pod workers: keep one process per static pod manifest, as the kubelet keeps its containers.

Each ``sync(manifests, runtime_up)``:
- a pod whose manifest is gone is stopped and forgotten;
- a pod whose manifest hash changed is stopped and started anew (a new pod: restart count 0), no sooner than
  RECREATE_SECONDS after the old one stopped: the real kubelet finishes the old pod's termination, then the
  runtime tears down its sandbox and creates the new one's before the container starts, so a component whose
  manifest kubeadm rewrites (an upgrade) is down for seconds, not for the blink of a process restart;
- a held pod (``<pod>.hold``) is stopped and kept down;
- a running pod whose probes ask for a restart is stopped; one whose process exited is noted;
- a pod that is not running is started once its back-off has passed and the runtime socket is up;
  an image missing from the mirror is retried with the same back-off.
Pods recorded by an earlier kubelet are adopted on start (they outlived it, like containers).
"""

import logging
import os
import threading
import time

from kcpsim.kubelet import backoff, manifests, probes
from kcpsim.runtime import processes
from kcpsim.runtime.images import ImageNotFound

LOG = logging.getLogger("kubelet")
RECREATE_SECONDS = 3.0


class PodState:
    """What the API side reports for one static pod (an immutable snapshot)."""

    def __init__(self, manifest, running, has_run, ready, restarts, started_at, waiting_reason, message,
                 last_exit_code):
        self.manifest = manifest
        self.running = running
        self.has_run = has_run
        self.ready = ready
        self.restarts = restarts
        self.started_at = started_at
        self.waiting_reason = waiting_reason
        self.message = message
        self.last_exit_code = last_exit_code

    @property
    def phase(self):
        """Running once its container has run (a crash-looping container's pod stays Running), else Pending."""
        return "Running" if self.running or self.has_run else "Pending"


class _Worker:
    def __init__(self, name, restarts=0):
        self.name = name
        self.manifest = None
        self.container = None
        self.prober = None
        self.restarts = restarts
        self.has_run = False
        self.consecutive_failures = 0
        self.next_start = 0.0
        self.waiting_reason = "ContainerCreating"
        self.message = ""
        self.last_exit_code = None


class PodWorkers:
    def __init__(self, runtime, images, pod_ip, probe_scale=1.0, environ=None, clock=time.monotonic):
        self.runtime = runtime
        self.images = images
        self.pod_ip = pod_ip
        self.probe_scale = probe_scale
        self.environ = dict(os.environ if environ is None else environ)
        self.clock = clock
        self.workers = {}
        self._lock = threading.Lock()
        self._published = {}

    def adopt(self):
        """Take over the pods an earlier kubelet left running (their records live in the run dir)."""
        for name in self.runtime.recorded():
            container, restarts = self.runtime.adopt(name)
            if restarts is None:
                self.runtime.forget(name)
                continue
            worker = _Worker(name, restarts)
            worker.has_run = True
            if container is not None:
                LOG.info("adopted static pod %s (pid %d)", name, container.pid)
                worker.container = container
            self.workers[name] = worker

    def sync(self, wanted, runtime_up):
        """Bring processes in line with ``wanted`` ({name: Manifest}); then publish a snapshot."""
        for name in sorted(set(self.workers) - set(wanted)):
            self._remove(self.workers.pop(name))
        for name, manifest in sorted(wanted.items()):
            worker = self.workers.setdefault(name, _Worker(name))
            self._sync_one(worker, manifest, runtime_up)
        self._publish()

    def _remove(self, worker):
        grace = worker.manifest.grace_period if worker.manifest else 30.0
        self._stop(worker, grace, "its manifest was removed")
        self.runtime.forget(worker.name)

    def _stop(self, worker, grace, why):
        if worker.prober is not None:
            worker.prober.stop()
            worker.prober = None
        if worker.container is not None:
            LOG.info("stopping static pod %s (pid %d): %s", worker.name, worker.container.pid, why)
            if not self.runtime.stop(worker.container, grace):
                LOG.error("static pod %s (pid %d) did not stop", worker.name, worker.container.pid)
            worker.last_exit_code = worker.container.exit_code()
            worker.container = None

    def _sync_one(self, worker, manifest, runtime_up):
        previous, worker.manifest = worker.manifest, manifest
        container = worker.container
        if container is not None:
            changed = container.config_hash != manifest.config_hash
        else:
            changed = previous is not None and previous.config_hash != manifest.config_hash
        if changed:
            self._stop(worker, (previous or manifest).grace_period, "its manifest changed")
            worker.restarts, worker.has_run, worker.consecutive_failures = 0, False, 0
            worker.next_start = self.clock() + RECREATE_SECONDS
            worker.waiting_reason, worker.message = "ContainerCreating", ""
        if self.runtime.held(worker.name):
            self._stop(worker, manifest.grace_period, "it is held")
            worker.waiting_reason, worker.message = "Held", "kept down by %s.hold (sandbox fault)" % worker.name
            return
        if worker.container is not None:
            self._check_running(worker, manifest)
        if worker.container is None:
            self._maybe_start(worker, manifest, runtime_up)

    def _check_running(self, worker, manifest):
        container, now = worker.container, self.clock()
        if worker.prober is None:  # adopted: probe it afresh
            worker.prober = self._prober(manifest, running_for=max(0.0, time.time() - container.started_at))
        reason = worker.prober.restart_reason
        if reason:
            self._stop(worker, manifest.grace_period, reason)
        elif not container.running():
            worker.last_exit_code = container.exit_code()
            LOG.info("static pod %s (pid %d) exited with %s", worker.name, container.pid, worker.last_exit_code)
            worker.prober.stop()
            worker.container, worker.prober = None, None
        else:
            if time.time() - container.started_at >= backoff.RESET_AFTER:
                worker.consecutive_failures = 0
            return
        worker.consecutive_failures += 1
        worker.next_start = now + backoff.restart_delay(worker.consecutive_failures)
        worker.waiting_reason = "CrashLoopBackOff"
        worker.message = reason or "exited with %s" % worker.last_exit_code

    def _maybe_start(self, worker, manifest, runtime_up):
        if not runtime_up:
            worker.waiting_reason, worker.message = "ContainerCreating", "container runtime is down"
            return
        if self.clock() < worker.next_start:
            return
        try:
            executable = self.images.resolve(manifest.container["image"])
        except ImageNotFound as exc:
            worker.consecutive_failures += 1
            worker.next_start = self.clock() + max(1.0, backoff.restart_delay(worker.consecutive_failures))
            if worker.message != str(exc):
                LOG.error("static pod %s: %s", worker.name, exc)
            worker.waiting_reason, worker.message = "ErrImagePull", str(exc)
            return
        if worker.has_run:
            worker.restarts += 1
        argv = manifests.command_line(manifest.container, executable)
        env = manifests.environment(manifest.container, self.environ)
        worker.container = self.runtime.spawn(worker.name, argv, env, manifest.config_hash, worker.restarts)
        worker.has_run = True
        worker.waiting_reason, worker.message = None, ""
        worker.prober = self._prober(manifest)
        LOG.info("started static pod %s (pid %d, restarts %d)", worker.name, worker.container.pid, worker.restarts)

    def _prober(self, manifest, running_for=None):
        container = manifest.container
        specs = []
        for field in ("startupProbe", "readinessProbe", "livenessProbe"):
            try:
                specs.append(probes.probe_spec(container.get(field), container, self.pod_ip, self.probe_scale))
            except ValueError as exc:
                LOG.error("static pod %s: %s: %s", manifest.name, field, exc)
                specs.append(None)
        prober = probes.Prober(manifest.name, *specs, running_for=running_for)
        prober.start()
        return prober

    def _publish(self):
        states = {}
        for name, worker in self.workers.items():
            if worker.manifest is None:
                continue
            running = worker.container is not None
            states[name] = PodState(
                worker.manifest, running, worker.has_run, running and worker.prober is not None and worker.prober.ready,
                worker.restarts, worker.container.started_at if running else None,
                None if running else worker.waiting_reason, worker.message, worker.last_exit_code)
        with self._lock:
            self._published = states

    def container_log(self, namespace, pod, container, node_name, previous=False):
        """What the container of mirror pod ``pod`` (``<name>-<node_name>``) wrote since it started, or in its
        previous run with ``previous``: bytes, or None when this kubelet runs no such container (or it has no
        previous run). The runtime appends every run's output to one file, each run after a start line of its
        own, which is left out."""
        for name, state in self.snapshot().items():
            manifest = state.manifest
            if (manifest.namespace, "%s-%s" % (manifest.name, node_name), manifest.container.get("name")) == (namespace, pod, container):
                try:
                    with open(self.runtime.log_file(name), "rb") as handle:
                        runs = handle.read().split(processes.RUN_MARKER)
                except OSError:
                    return None
                runs = [run.partition(b"\n")[2] for run in runs[1:]]
                wanted = -2 if previous else -1
                return runs[wanted] if len(runs) >= -wanted else None
        return None

    def snapshot(self):
        """``{name: PodState}`` as of the last sync (safe to call from another thread)."""
        with self._lock:
            return dict(self._published)

    def shutdown(self):
        """Stop probing; the pods themselves keep running (containers outlive the kubelet)."""
        for worker in self.workers.values():
            if worker.prober is not None:
                worker.prober.stop()
