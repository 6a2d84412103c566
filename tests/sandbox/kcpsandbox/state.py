# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state dir of one sandbox, the record of what it made, process identities and locking.

``state.json`` is written (atomically) *before* each thing it names is made, so ``sandbox down`` finds
everything even after ``up`` died half way. Every process the harness starts writes its own PID file
(``pids/<name>.pid``: PID and kernel start time) in the child, before it runs the program: no moment
exists in which it runs unrecorded. A PID the kernel has since given to another process is never signalled.
"""

import contextlib
import errno
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time

from . import addressing
from .errors import InvalidArguments, SandboxError

DEFAULT_ROOT = "/srv/kcp-sandbox"
DEFAULT_NAME = "kcp"
LOCK_TIMEOUT = 300.0
# How long a test run waits for another run's use of the same test sandbox (a whole suite at worst).
TEST_LOCK_TIMEOUT = 1800.0


def state_root():
    return os.environ.get("KCP_SANDBOX_ROOT", DEFAULT_ROOT)


def default_name():
    return os.environ.get("KCP_SANDBOX_NAME", DEFAULT_NAME)


def write_file(path, data, mode=0o644):
    """Write ``data`` (str or bytes) atomically with ``mode`` from the first byte on."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def exclusive(root, name, timeout=LOCK_TIMEOUT):
    """An exclusive lock named ``name``; the lock files live in ``<root>/.locks``, outside any state dir,
    so ``down`` can remove a state dir while holding its lock."""
    lock_dir = os.path.join(root, ".locks")
    os.makedirs(lock_dir, mode=0o700, exist_ok=True)
    with open(os.path.join(lock_dir, name + ".lock"), "w") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                    raise SandboxError("another sandbox command held the lock %s for %.0fs" % (name, timeout))
                time.sleep(0.05)
        yield


def lock_for_test_run(name):
    """Held by a test run while it uses sandbox ``name``: two runs on one machine (two people, or CI and a
    person) would otherwise tear down each other's sandbox; the second waits."""
    return exclusive(state_root(), name + ".tests", TEST_LOCK_TIMEOUT)


class ProcessRef:
    """A process we started, named by PID and kernel start time (so a recycled PID is never mistaken for it)."""

    def __init__(self, pid, start):
        self.pid = pid
        self.start = start

    @classmethod
    def of(cls, pid):
        stat = _stat(pid)
        return cls(pid, stat[19]) if stat else None

    @classmethod
    def from_file(cls, path):
        try:
            with open(path) as handle:
                pid, start = handle.read().split()
            return cls(int(pid), start)
        except (OSError, ValueError):
            return None

    def alive(self):
        """Running (zombies count as gone: they only wait to be reaped)."""
        stat = _stat(self.pid)
        return bool(stat) and stat[19] == self.start and stat[0] not in ("Z", "X")

    def signal(self, signum):
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def children(self):
        pids = []
        for task in _listdir("/proc/%d/task" % self.pid):
            with contextlib.suppress(OSError):
                with open("/proc/%d/task/%s/children" % (self.pid, task)) as handle:
                    pids.extend(int(p) for p in handle.read().split())
        return pids


def _stat(pid):
    """Fields of /proc/<pid>/stat after the command name: [0] state, [19] start time; None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


class Sandbox:
    """One sandbox's state dir and record. ``data`` is the parsed state.json (empty when there is none)."""

    def __init__(self, name, root=None):
        # Every path below is built from the name: a bad one ("", "..") must never reach rmtree.
        problems = addressing.sandbox_name_problems(name)
        if problems:
            raise InvalidArguments(problems)
        self.name = name
        self.root = root or state_root()
        self.dir = os.path.join(self.root, name)
        self.state_file = os.path.join(self.dir, "state.json")
        self.ssh_dir = os.path.join(self.dir, "ssh")
        self.ssh_key = os.path.join(self.ssh_dir, "id_ed25519")
        self.ssh_config = os.path.join(self.ssh_dir, "ssh_config")
        self.known_hosts = os.path.join(self.ssh_dir, "known_hosts")
        self.inventory = os.path.join(self.dir, "inventory.ini")
        self.releases_dir = os.path.join(self.dir, "releases")
        self.mirror_dir = os.path.join(self.dir, "mirror")
        self.haproxy_dir = os.path.join(self.dir, "haproxy")
        self.logs_dir = os.path.join(self.dir, "logs")
        self.bin_dir = os.path.join(self.dir, "bin")
        self.pids_dir = os.path.join(self.dir, "pids")
        self.hostfs_dir = os.path.join(self.dir, "hostfs")
        # Every host's /etc/hosts, naming every host of the sandbox; hostfs/init bind-mounts its directory.
        self.etc_hosts_dir = os.path.join(self.dir, "etc-hosts")
        self.etc_hosts = os.path.join(self.etc_hosts_dir, "hosts")
        self.data = {}

    # --- the record -----------------------------------------------------------------------------------
    def exists(self):
        """There is a record: the sandbox is up, or was being made (``down`` cleans up either way)."""
        return os.path.exists(self.state_file)

    def is_up(self):
        """Its network was made: hosts, faults and status apply (``load`` first)."""
        return bool(self.data.get("failure_domains"))

    def load(self):
        try:
            with open(self.state_file) as handle:
                self.data = json.load(handle)
        except FileNotFoundError:
            self.data = {}
        except ValueError as exc:
            raise SandboxError("%s is not valid JSON (%s); `sandbox down` cleans up without it"
                               % (self.state_file, exc))
        return self

    def save(self):
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        write_file(self.state_file, json.dumps(self.data, indent=2, sort_keys=True) + "\n", 0o600)

    @property
    def network(self):
        return addressing.network(self.name, self.data["subnet"])

    @property
    def hosts(self):
        return self.data.setdefault("hosts", {})

    def host_dir(self, host):
        return os.path.join(self.dir, "hosts", host)

    def host_fs(self, host, path):
        """The plain directory behind one of the host's private mounts, e.g. ``/etc/kubernetes``."""
        return os.path.join(self.host_dir(host), "fs", path.lstrip("/"))

    def host_overlay(self, host, path):
        """The upper dir of the host's copy-on-write view of ``path`` (one of the overlaid roots)."""
        return os.path.join(self.host_dir(host), "ov", path.strip("/").replace("/", "_"), "upper")

    def require_host(self, host):
        if host not in self.hosts:
            raise SandboxError("sandbox %s has no host %r (it has: %s)"
                               % (self.name, host, ", ".join(sorted(self.hosts)) or "none"))
        return self.hosts[host]

    # --- processes --------------------------------------------------------------------------------------
    def pid_file(self, process_name):
        return os.path.join(self.pids_dir, process_name + ".pid")

    def process(self, process_name):
        """The recorded process ``process_name`` if it still runs, else None."""
        ref = ProcessRef.from_file(self.pid_file(process_name))
        return ref if ref and ref.alive() else None

    def recorded_processes(self):
        """{name: ProcessRef} of every PID file (running or not)."""
        names = [f[:-4] for f in _listdir(self.pids_dir) if f.endswith(".pid")]
        refs = {name: ProcessRef.from_file(self.pid_file(name)) for name in names}
        return {name: ref for name, ref in refs.items() if ref}

    def record_process(self, process_name, ref):
        """Record a process the harness did not start itself (e.g. a host's PID 1, unshare's child)."""
        os.makedirs(self.pids_dir, exist_ok=True)
        write_file(self.pid_file(process_name), "%d %s\n" % (ref.pid, ref.start), 0o600)

    def forget_process(self, process_name):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.pid_file(process_name))

    def spawn(self, process_name, argv, log_path, env=None):
        """Start ``argv`` in a new session, output appended to ``log_path``; its PID file is written by the
        child itself before it runs the program. Returns the Popen."""
        os.makedirs(self.pids_dir, exist_ok=True)
        pid_file = self.pid_file(process_name)

        def record_self():
            with open("/proc/self/stat") as stat:
                start = stat.read().rsplit(")", 1)[1].split()[19]
            fd = os.open(pid_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.write(fd, ("%d %s\n" % (os.getpid(), start)).encode())
            os.close(fd)

        with open(log_path, "ab") as log:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                    start_new_session=True, preexec_fn=record_self)

    # --- exclusive access -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, timeout=LOCK_TIMEOUT):
        """Hold this sandbox's lock (commands that change it take turns) and load its record."""
        with exclusive(self.root, self.name, timeout):
            self.load()
            yield self

    def remove_dir(self):
        """Delete the state dir, refusing if anything is mounted below it (deleting would reach into it)."""
        if not os.path.exists(self.dir):
            return
        prefix = os.path.realpath(self.dir) + "/"
        with open("/proc/self/mountinfo") as handle:
            mounted = [line.split()[4] for line in handle if (line.split()[4] + "/").startswith(prefix)]
        if mounted:
            raise SandboxError("not removing %s: still mounted below it: %s" % (self.dir, ", ".join(mounted)))
        shutil.rmtree(self.dir)
