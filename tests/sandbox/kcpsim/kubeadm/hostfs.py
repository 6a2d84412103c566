# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host kubeadm runs on: its files (with kubeadm's modes), hostname, default address, processes.
Adapter: I/O only, no decisions.

Every absolute path goes through :meth:`Host.path`, so tests can run a command against a scratch root
(``KCPSIM_ROOT``, a sandbox test hook; unset on sandbox hosts, where the root is ``/``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import tempfile

from kcpsim import pki
from kcpsim.kubeadm.waiting import wait_for

ROOT_ENV = "KCPSIM_ROOT"
PODS_PID_DIR = "/run/kcpsim/pods"
FAULTS_DIR = "/var/lib/kcpsim/faults"


class Host:
    """Files and facts of the local host, under ``root``."""

    def __init__(self, root=None):
        self.root = root if root is not None else os.environ.get(ROOT_ENV, "/")

    def path(self, absolute):
        if self.root in ("", "/"):
            return absolute
        return os.path.join(self.root, absolute.lstrip("/"))

    # --- files --------------------------------------------------------------------------------------

    def exists(self, absolute):
        return os.path.exists(self.path(absolute))

    def is_executable_file(self, absolute):
        """Whether ``absolute`` is a regular file anyone may execute (Go's exec.LookPath test on Unix)."""
        target = self.path(absolute)
        return os.path.isfile(target) and bool(os.stat(target).st_mode & 0o111)

    def read(self, absolute):
        with open(self.path(absolute), "rb") as handle:
            return handle.read()

    def read_text(self, absolute):
        return self.read(absolute).decode("utf-8")

    def write(self, absolute, data, mode):
        """Atomic write with ``mode`` from the first byte on (parent dirs 0755 when missing)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        pki.write_file(self.path(absolute), data, mode)

    def mkdir(self, absolute, mode):
        """Create a directory with ``mode`` when missing (an existing one keeps its mode, as kubeadm does)."""
        target = self.path(absolute)
        if not os.path.isdir(target):
            os.makedirs(target, mode=mode, exist_ok=True)
            os.chmod(target, mode)

    def listdir(self, absolute):
        try:
            return sorted(os.listdir(self.path(absolute)))
        except FileNotFoundError:
            return []

    def is_empty_dir(self, absolute):
        return not self.listdir(absolute)

    def remove(self, absolute):
        """Remove a file; True when there was one."""
        try:
            os.unlink(self.path(absolute))
            return True
        except FileNotFoundError:
            return False

    def empty_dir(self, absolute):
        """Remove everything inside a directory, keeping the directory itself."""
        target = self.path(absolute)
        for name in self.listdir(absolute):
            entry = os.path.join(target, name)
            if os.path.isdir(entry) and not os.path.islink(entry):
                shutil.rmtree(entry, ignore_errors=True)
            else:
                try:
                    os.unlink(entry)
                except FileNotFoundError:
                    pass

    def copy_tree(self, source, destination):
        shutil.copytree(self.path(source), self.path(destination), symlinks=True)

    def move(self, source, destination):
        os.makedirs(os.path.dirname(self.path(destination)), exist_ok=True)
        os.replace(self.path(source), self.path(destination))

    def make_temp_dir(self, parent, prefix):
        """A fresh 0700 directory under ``parent``; returns its absolute (host) path."""
        self.mkdir(parent, 0o700)
        real = tempfile.mkdtemp(prefix=prefix, dir=self.path(parent))
        return os.path.join(parent, os.path.basename(real))

    def remove_tree(self, absolute):
        shutil.rmtree(self.path(absolute), ignore_errors=True)

    def consume(self, absolute):
        """Remove a marker file; True when it was there."""
        return self.remove(absolute)

    # --- facts --------------------------------------------------------------------------------------

    @staticmethod
    def hostname():
        return socket.gethostname()

    def default_address(self):
        """The IPv4 address of the interface holding the default route (kubeadm's choice for advertise)."""
        try:
            with open("/proc/net/route", "r", encoding="ascii") as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            lines = []
        for line in lines:
            fields = line.split()
            if len(fields) > 2 and fields[1] == "00000000":
                gateway = socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
                probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                try:
                    probe.connect((gateway, 9))  # UDP connect sends nothing; it only picks the source address
                    return probe.getsockname()[0]
                except OSError:
                    continue
                finally:
                    probe.close()
        return None

    # --- the container runtime's processes (the kubelet emulation's pid files) -----------------------

    def stop_pods(self, timeout=10.0):
        """Stop every static pod process group the runtime recorded; returns the pod names stopped."""
        stopped = []
        for name in self.listdir(PODS_PID_DIR):
            if not name.endswith(".pid"):
                continue
            pod = name[:-len(".pid")]
            record = PODS_PID_DIR + "/" + name
            try:
                pid = int(self.read_text(record).strip())
            except (OSError, ValueError):
                pid = None
            if pid and _signal_group(pid, signal.SIGTERM):
                try:
                    wait_for(lambda: not _alive(pid), timeout, 0.1, "pod %s to stop" % pod)
                except TimeoutError:
                    _signal_group(pid, signal.SIGKILL)
                stopped.append(pod)
            # The container is gone: so is the runtime's record of it (PID file and adoption record).
            self.remove(record)
            self.remove("%s/%s.json" % (PODS_PID_DIR, pod))
        return stopped


def _signal_group(pid, signum):
    try:
        os.killpg(pid, signum)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        try:
            os.kill(pid, signum)
            return True
        except ProcessLookupError:
            return False


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid, "r", encoding="ascii") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
