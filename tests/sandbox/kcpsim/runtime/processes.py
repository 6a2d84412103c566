# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static pod "containers" as host processes: spawn, record, adopt, stop.

Each container runs in its own session and process group, so it outlives the kubelet that started it, as
a real container outlives a stopped kubelet. ``<run_dir>/pods/<pod>.pid`` holds its PID (what faults read)
and ``<pod>.json`` what the kubelet needs to adopt it after a restart: PID, the kernel start time of that PID
(so a recycled PID is never mistaken for the container), the manifest hash and the restart count.
Output is appended to ``<log_dir>/pods/<pod>.log``.
"""

import datetime
import json
import os
import signal
import subprocess
import time

DEFAULT_RUN_DIR = "/run/kcpsim"
DEFAULT_LOG_DIR = "/var/log/kcpsim"
KILL_WAIT = 5.0  # how long a SIGKILLed process group may take to disappear
# The line the runtime writes to a pod's log before each run's output (pods.container_log splits on it).
RUN_MARKER = b"--- kcpsim kubelet "


def run_dir():
    return os.environ.get("KCPSIM_RUN_DIR") or DEFAULT_RUN_DIR


def log_dir():
    return os.environ.get("KCPSIM_LOG_DIR") or DEFAULT_LOG_DIR


def proc_start_time(pid):
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if there is no such live process."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2:].split()
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


class Container:
    """One static pod process: ``pid``, its start time, the manifest ``config_hash`` it runs, ``restarts``."""

    def __init__(self, name, pid, start_time, config_hash, started_at, restarts, popen=None):
        self.name = name
        self.pid = pid
        self.start_time = start_time
        self.config_hash = config_hash
        self.started_at = started_at  # wall clock, seconds since the epoch
        self.restarts = restarts
        self._popen = popen

    def running(self):
        # This kubelet's own child: only waitpid tells, and reaps it. Reading /proc after a waitpid that found it
        # alive could see it die in between and leave it a zombie nobody waits for.
        if self._popen is not None:
            return self._popen.poll() is None
        return proc_start_time(self.pid) == self.start_time

    def exit_code(self):
        """The exit status when this kubelet started it and it has exited, else None (adopted: unknown)."""
        return self._popen.poll() if self._popen is not None else None


class ProcessRuntime:
    """Spawns and tracks static pod processes under ``run_dir`` / ``log_dir``."""

    def __init__(self, run_dir_path=None, log_dir_path=None):
        self.pods_dir = os.path.join(run_dir_path or run_dir(), "pods")
        self.logs_dir = os.path.join(log_dir_path or log_dir(), "pods")
        os.makedirs(self.pods_dir, mode=0o755, exist_ok=True)
        os.makedirs(self.logs_dir, mode=0o755, exist_ok=True)

    def _path(self, name, suffix):
        return os.path.join(self.pods_dir, name + suffix)

    def pid_file(self, name):
        return self._path(name, ".pid")

    def log_file(self, name):
        return os.path.join(self.logs_dir, name + ".log")

    def held(self, name):
        """The fault hook: while ``<pod>.hold`` exists the pod is kept down."""
        return os.path.exists(self._path(name, ".hold"))

    def recorded(self):
        """Names of pods with a state file (running or left over from an earlier kubelet)."""
        return sorted(entry[:-5] for entry in os.listdir(self.pods_dir) if entry.endswith(".json"))

    def _write(self, name, suffix, text):
        tmp = self._path(name, suffix + ".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, self._path(name, suffix))

    def spawn(self, name, argv, env, config_hash, restarts=0):
        """Start ``argv`` in a new session with ``env``; record and return the Container."""
        with open(self.log_file(name), "ab") as log:
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            log.write(RUN_MARKER + ("%s: starting %s\n" % (stamp, " ".join(argv))).encode("utf-8"))
            log.flush()
            popen = subprocess.Popen(argv, env=env, cwd="/", stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     close_fds=True, start_new_session=True)
        start_time = proc_start_time(popen.pid)
        container = Container(name, popen.pid, start_time, config_hash, time.time(), restarts, popen)
        self._write(name, ".json", json.dumps({"pid": popen.pid, "start_time": start_time, "hash": config_hash,
                                               "started_at": container.started_at, "restarts": restarts}))
        self._write(name, ".pid", "%d\n" % popen.pid)
        return container

    def adopt(self, name):
        """``(container, restarts)`` from the state file: the container if its process still lives, else None;
        ``restarts`` is None when there is no usable record (a state file without its PID file is stale:
        ``kubeadm reset`` removes PID files).
        """
        try:
            with open(self._path(name, ".json"), "r", encoding="utf-8") as handle:
                state = json.load(handle)
            with open(self.pid_file(name), "r", encoding="utf-8") as handle:
                recorded_pid = int(handle.read().strip())
            pid, start_time = int(state["pid"]), state["start_time"]
        except (OSError, ValueError, KeyError, TypeError):
            return None, None
        if recorded_pid != pid:
            return None, None
        restarts = int(state.get("restarts", 0))
        if proc_start_time(pid) != start_time or start_time is None:
            return None, restarts
        return Container(name, pid, start_time, state.get("hash"), float(state.get("started_at", 0)), restarts), restarts

    def _signal_group(self, container, sig):
        if not container.running():
            return
        try:
            os.killpg(container.pid, sig)  # its own process group: start_new_session made pgid == pid
        except ProcessLookupError:
            pass

    def _wait_gone(self, container, timeout):
        deadline = time.monotonic() + timeout
        while container.running():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def stop(self, container, grace):
        """SIGTERM the process group, SIGKILL it after ``grace`` seconds; True once it is gone."""
        self._signal_group(container, signal.SIGTERM)
        if self._wait_gone(container, grace):
            return True
        self._signal_group(container, signal.SIGKILL)
        return self._wait_gone(container, KILL_WAIT)

    def stop_all(self, grace=30.0):
        """Stop and forget every recorded pod: what ``kubeadm reset`` does to a node's containers through CRI."""
        for name in self.recorded():
            container = self.adopt(name)[0]
            if container is not None:
                self.stop(container, grace)
            self.forget(name)

    def forget(self, name):
        """Remove the PID and state files of a pod whose process is gone."""
        for suffix in (".pid", ".json"):
            try:
                os.unlink(self._path(name, suffix))
            except FileNotFoundError:
                pass
