# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One sandbox host: its disk (``hosts/<host>/``), booting it in its own namespaces, powering it off, and
the harness's back door into it.

A host is ``unshare --mount --uts --pid --fork --kill-child --mount-proc`` inside its netns, running
hostfs/init, which mounts the host's private filesystem and becomes PID 1 (tini named systemd -> boot ->
sshd). Whatever a host runs or reads lives on the machine's own filesystem or in the state dir (hostfs/ and
tini are copied there once per sandbox), never in the checkout: a checkout may sit under /tmp or /run,
which every host covers with its own tmpfs. Power off = SIGKILL to the host's PID 1 and its unshare: the
kernel then kills every process of the host's PID namespace; the disk stays. The back door (``exec``) enters the host's namespaces with
nsenter: for the harness and tests only, never for the collection, which reaches hosts over SSH.
"""

import os
import shutil
import signal
import socket
import time
import uuid

from . import addressing, net
from .commands import WAIT_LIMIT, run, wait_until, where_to_look
from .errors import SandboxError
from .state import ProcessRef, write_file

HOSTFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostfs")
# Overlaid (copy-on-write over the real root fs) and private (plain per-host dirs) paths: DESIGN.md.
OVERLAID = ("etc", "root", "var/lib", "var/log", "opt")
PRIVATE = ("etc/kubernetes", "var/lib/etcd", "var/lib/kubelet", "etc/containerd", "opt/cni/bin", "usr/local/bin",
           "var/lib/kcpsim")
HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "LANG": "C.UTF-8"}
# No packet leaves the sandbox, so the machine's DNS servers are out of reach and every lookup /etc/hosts
# cannot answer (getent and glibc ask for IPv6 too) would wait out their timeouts: no server answers here
# (nothing listens on the host's loopback port 53), so such a lookup fails at once.
RESOLV_CONF = ("# Sandbox host (test infrastructure): names come from /etc/hosts; there is no DNS server.\n"
               "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
# Where Debian keeps the skeleton of root's ~/.bashrc and ~/.profile (base-files: dot.bashrc, dot.profile).
SKELETON = "/usr/share/base-files"
# Owned by root and private to it: what kubeadm creates and etcd insists on for its data dir.
PRIVATE_MODES = {"var/lib/etcd": 0o700}


def new_key_pair():
    """(private OpenSSH PEM, public ``ssh-ed25519 …`` line) of a fresh ed25519 key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private, public.decode()


def prepare_disk(sbx, host, authorized_key):
    """The disk of a new host: private dirs, overlay layers, SSH host key, root's authorized key, identity."""
    for path in PRIVATE:
        os.makedirs(sbx.host_fs(host, path), exist_ok=True)
        os.chmod(sbx.host_fs(host, path), PRIVATE_MODES.get(path, 0o755))
    for path in OVERLAID:
        layer = os.path.dirname(sbx.host_overlay(host, path))
        os.makedirs(os.path.join(layer, "upper"), exist_ok=True)
        os.makedirs(os.path.join(layer, "work"), exist_ok=True)
    etc = sbx.host_overlay(host, "/etc")
    private, public = new_key_pair()
    write_file(os.path.join(etc, "ssh", "ssh_host_ed25519_key"), private, 0o600)
    write_file(os.path.join(etc, "ssh", "ssh_host_ed25519_key.pub"), public + "\n", 0o644)
    ssh_dir = os.path.join(sbx.host_overlay(host, "/root"), ".ssh")
    os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
    # Replaces (in the overlay) whatever keys the real root account has: only the sandbox key logs in.
    write_file(os.path.join(ssh_dir, "authorized_keys"), authorized_key + "\n", 0o600)
    # A fresh host's root reads Debian's start-up files, not the real machine's: bash reads ~/.bashrc in every
    # SSH session, and a developer machine's may set up tool managers (measured: pyenv's, 140 ms of CPU a session).
    for name in (".bashrc", ".profile"):
        write_file(os.path.join(sbx.host_overlay(host, "/root"), name), root_shell_file(name), 0o644)
    write_file(os.path.join(etc, "hostname"), host + "\n")
    # /etc/hosts is not the host's own: hostfs/init bind-mounts the sandbox's (inventory.write_etc_hosts).
    write_file(os.path.join(etc, "resolv.conf"), RESOLV_CONF)
    write_file(os.path.join(etc, "machine-id"), uuid.uuid4().hex + "\n", 0o444)
    # The real machine's enabled services (haproxy, sshd, …) are not this host's: an opaque unit dir.
    units = os.path.join(etc, "systemd", "system")
    os.makedirs(units, exist_ok=True)
    os.setxattr(units, "trusted.overlay.opaque", b"y")


def root_shell_file(name):
    """Debian's skeleton of root's ``name`` (empty on a machine without one)."""
    try:
        with open(os.path.join(SKELETON, "dot" + name)) as handle:
            return handle.read()
    except OSError:
        return ""


def write_environment(sbx, host, environment):
    """Sandbox-wide variables for the host's SSH sessions (sshd SetEnv) and services (DefaultEnvironment)."""
    etc = sbx.host_overlay(host, "/etc")
    pairs = " ".join('"%s=%s"' % (key, value) for key, value in sorted(environment.items()))
    if pairs:
        write_file(os.path.join(etc, "ssh", "kcp-sandbox-environment.conf"), "SetEnv %s\n" % pairs)
        write_file(os.path.join(etc, "systemd", "system.conf.d", "kcp-sandbox.conf"),
                   "[Manager]\nDefaultEnvironment=%s\n" % pairs)


def public_host_key(sbx, host):
    with open(os.path.join(sbx.host_overlay(host, "/etc"), "ssh", "ssh_host_ed25519_key.pub")) as handle:
        return handle.read().strip()


def boot_files(sbx):
    """(hostfs dir, init binary) in the state dir, copied there the first time a host of ``sbx`` boots, so
    every host of a sandbox boots from the same files and none from the checkout. The init binary is tini
    under the name ``systemd``: /proc/1/comm is what Ansible reads to tell the service manager."""
    init = os.path.join(sbx.bin_dir, "systemd")
    # Each copied under a temporary name and renamed into place: an interrupted copy is never taken as done.
    if not os.path.exists(init):
        tini = shutil.which("tini")
        if not tini:
            raise SandboxError("tini is not installed (make setup installs it)")
        os.makedirs(sbx.bin_dir, exist_ok=True)
        shutil.copy2(tini, init + ".tmp")
        os.rename(init + ".tmp", init)
    if not os.path.isdir(sbx.hostfs_dir):
        shutil.rmtree(sbx.hostfs_dir + ".tmp", ignore_errors=True)
        shutil.copytree(HOSTFS, sbx.hostfs_dir + ".tmp", ignore=shutil.ignore_patterns("__pycache__"))
        os.rename(sbx.hostfs_dir + ".tmp", sbx.hostfs_dir)
    return sbx.hostfs_dir, init


# Process names in pids/: host names are DNS labels, so the dot keeps them apart from "haproxy" and "build".
def init_process_name(host):
    return "init." + host


def unshare_process_name(host):
    return "unshare." + host


def is_running(sbx, host):
    return sbx.process(init_process_name(host)) is not None


def boot(sbx, host):
    """Start the host (no-op when it runs). Returns without waiting for sshd (see wait_for_ssh)."""
    record = sbx.hosts[host]
    if is_running(sbx, host):
        return
    releases = sbx.releases_dir if os.path.isdir(sbx.releases_dir) else ""
    hostfs, init_binary = boot_files(sbx)
    argv = ["ip", "netns", "exec", record["netns"], "unshare", "--mount", "--uts", "--pid", "--fork", "--kill-child",
            "--mount-proc", "--propagation", "private", os.path.join(hostfs, "init"), sbx.host_dir(host), host,
            init_binary, sbx.etc_hosts_dir, releases]
    process = sbx.spawn(unshare_process_name(host), argv, console_log(sbx, host), env=dict(HOST_ENV))
    unshare = ProcessRef.of(process.pid)
    child = wait_until(lambda: (unshare and unshare.children()) or process.poll() is not None, WAIT_LIMIT,
                       "host %s's PID 1" % host, [console_log(sbx, host)])
    init = ProcessRef.of(child[0]) if child is not True else None
    if init is None:
        raise SandboxError("host %s died while booting; %s" % (host, where_to_look([console_log(sbx, host)])))
    sbx.record_process(init_process_name(host), init)
    record["pidns"] = os.stat("/proc/%d/ns/pid" % init.pid).st_ino
    sbx.save()


def console_log(sbx, host):
    """Where the host's init, boot and sshd write: the first place to look when it does not come up."""
    return os.path.join(sbx.host_dir(host), "console.log")


def wait_for_ssh(sbx, hosts, timeout=WAIT_LIMIT):
    """Wait until every host's port 22 answers with an SSH banner."""
    pending = set(hosts)

    def all_answer():
        for name in sorted(pending):
            try:
                with socket.create_connection((sbx.hosts[name]["ip"], 22), timeout=0.5) as conn:
                    conn.settimeout(0.5)
                    if conn.recv(4).startswith(b"SSH-"):
                        pending.discard(name)
            except OSError:
                pass
        return not pending

    wait_until(all_answer, timeout, lambda: "sshd on %s" % ", ".join(sorted(pending)),
               lambda: [console_log(sbx, name) for name in sorted(pending)])


def processes_in_pidns(inode):
    """Live processes of the PID namespace ``inode`` (zombies hold nothing and are left to their reaper)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat("/proc/%s/ns/pid" % entry).st_ino == inode and ProcessRef.of(int(entry)).alive():
                    found.append(int(entry))
            except (OSError, AttributeError):
                pass
    return found


def power_off(sbx, host):
    """SIGKILL the host's PID 1 (the kernel then kills the rest of its PID namespace) and its unshare."""
    record = sbx.hosts[host]
    for process_name in (init_process_name(host), unshare_process_name(host)):
        ref = sbx.process(process_name)
        if ref:
            ref.signal(signal.SIGKILL)
    if record.get("pidns"):
        wait_until(lambda: not processes_in_pidns(record["pidns"]), WAIT_LIMIT, "host %s's processes to end" % host,
                   [console_log(sbx, host)])
    for process_name in (init_process_name(host), unshare_process_name(host)):
        sbx.forget_process(process_name)
    record["pidns"] = None
    sbx.save()


def delete(sbx, host):
    """Power off, then remove the host's netns, veth and disk."""
    record = sbx.hosts[host]
    power_off(sbx, host)
    net.delete_host_link(addressing.host_address(sbx.network, record["slot"]), record["netns"])
    if os.path.isdir(sbx.host_dir(host)):
        shutil.rmtree(sbx.host_dir(host))


def running_init(sbx, host):
    sbx.require_host(host)
    init = sbx.process(init_process_name(host))
    if init is None:
        raise SandboxError("host %s is powered off" % host)
    return init


def exec_argv(sbx, host, argv):
    """The back door: ``argv`` run inside the host's namespaces (for the harness and tests only)."""
    init = running_init(sbx, host)
    return ["nsenter", "--target", str(init.pid), "--mount", "--uts", "--net", "--pid", "--wd=/", "--"] + list(argv)


def exec_in(sbx, host, argv, timeout=30.0):
    """Run ``argv`` on the host through the back door; SandboxError if it fails."""
    started = time.monotonic()
    done = run(exec_argv(sbx, host, argv), check=False, timeout=timeout, env=dict(HOST_ENV))
    if done.returncode != 0:
        raise SandboxError("on %s, %s failed (exit %d after %.1fs): %s" % (
            host, " ".join(argv), done.returncode, time.monotonic() - started, (done.stderr or done.stdout).strip()))
    return done


def path_in(sbx, host, path):
    """A path inside the running host's own mount namespace (e.g. its tmpfs /run), seen from outside."""
    return "/proc/%d/root/%s" % (running_init(sbx, host).pid, path.lstrip("/"))
