# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Faults on demand (DESIGN.md "Faults"), each done the way the real failure would show itself.

- partition / heal: iptables in the host's netns drop traffic to and from the rest of the subnet (peers,
  and the VIP the load balancer connects from) but keep the controller (the bridge address) and the
  host's own loopback traffic.
- power-off / power-on: SIGKILL to the host's PID 1 / boot again; the disk survives.
- kubelet-stop / kubelet-start: ``systemctl stop|start kubelet`` on the host.
- etcd-kill: SIGKILL to the etcd pod's process group (PID from the kubelet's /run/kcpsim/pods/etcd.pid);
  the kubelet restarts it. etcd-stop / etcd-start: create / remove /run/kcpsim/pods/etcd.hold, which makes
  the kubelet keep the pod down. etcd-wipe: the member's data lost (a disk replaced, a directory wiped): etcd
  killed and held down, its ``--data-dir`` emptied, the hold lifted, so the kubelet starts it on nothing.
- etcd-alarm-nospace / etcd-alarm-clear: raise / disarm the member's NOSPACE alarm through etcd's JSON
  gateway (the emulation's own client, kcpsim.etcdclient) with the host's healthcheck-client certificate.
- join-fail-next: the marker /var/lib/kcpsim/faults/join-fail-next the kubeadm emulation consumes.
- certs-expire-soon <when>: re-sign the host's leaf certificates (and the client certificates embedded in
  its kubeconfigs) to expire that soon (whole days, or ``30m`` / ``2h``), with the host's own CAs.
- certs-expired: the same, expired an hour ago; then the control plane pods are killed, and the kubelet starts them
  again with the expired files: what a year without renewal leaves (a real component presents the expired file it
  reads, and its peers refuse it at every handshake; the emulation's load theirs when they start).
"""

import contextlib
import datetime
import glob
import os
import re

from . import host
from .commands import run
from .errors import InvalidArguments, SandboxError
from .state import write_file

SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODS_DIR = "/run/kcpsim/pods"
ETCD_POD = "etcd"
JOIN_FAIL_MARKER = "/var/lib/kcpsim/faults/join-fail-next"
PARTITION_CHAINS = ("KCP-PARTITION-IN", "KCP-PARTITION-OUT")
CA_NAMES = ("ca", "front-proxy-ca", "etcd/ca")


# --- network ----------------------------------------------------------------------------------------------

def partition_rules(gateway, subnet):
    """iptables-restore input that cuts a host off from its subnet except the controller (pure)."""
    return "\n".join([
        "*filter",
        ":KCP-PARTITION-IN - [0:0]",
        ":KCP-PARTITION-OUT - [0:0]",
        "-A KCP-PARTITION-IN -i lo -j RETURN",
        "-A KCP-PARTITION-IN -s %s/32 -j RETURN" % gateway,
        "-A KCP-PARTITION-IN -s %s -j DROP" % subnet,
        "-A KCP-PARTITION-OUT -o lo -j RETURN",
        "-A KCP-PARTITION-OUT -d %s/32 -j RETURN" % gateway,
        "-A KCP-PARTITION-OUT -d %s -j DROP" % subnet,
        "-I INPUT 1 -j KCP-PARTITION-IN",
        "-I OUTPUT 1 -j KCP-PARTITION-OUT",
        "COMMIT",
    ]) + "\n"


def _iptables(netns, args, check=True):
    return run(["ip", "netns", "exec", netns, "iptables", "-w"] + args, check=check)


def partition(sbx, name):
    record = sbx.require_host(name)
    heal(sbx, name)
    network = sbx.network
    run(["ip", "netns", "exec", record["netns"], "iptables-restore", "-w", "--noflush"],
        input_text=partition_rules(network.gateway, network.subnet))
    record["partitioned"] = True
    sbx.save()


def heal(sbx, name):
    record = sbx.require_host(name)
    for chain, builtin in zip(PARTITION_CHAINS, ("INPUT", "OUTPUT")):
        while _iptables(record["netns"], ["-D", builtin, "-j", chain], check=False).returncode == 0:
            pass
        if _iptables(record["netns"], ["-F", chain], check=False).returncode == 0:
            _iptables(record["netns"], ["-X", chain])
    record["partitioned"] = False
    sbx.save()


# --- power and services --------------------------------------------------------------------------------------

def power_off(sbx, name):
    sbx.require_host(name)
    host.power_off(sbx, name)


def power_on(sbx, name):
    sbx.require_host(name)
    host.boot(sbx, name)
    host.wait_for_ssh(sbx, [name])


def kubelet_stop(sbx, name):
    host.exec_in(sbx, name, ["systemctl", "stop", "kubelet"])


def kubelet_start(sbx, name):
    host.exec_in(sbx, name, ["systemctl", "start", "kubelet"])


# --- etcd ---------------------------------------------------------------------------------------------------

def etcd_pid(sbx, name):
    """The PID (in the host's own PID namespace) the kubelet recorded for the etcd pod."""
    pid_file = host.path_in(sbx, name, "%s/%s.pid" % (PODS_DIR, ETCD_POD))
    try:
        with open(pid_file) as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        raise SandboxError("host %s runs no etcd pod (no PID in %s/%s.pid)" % (name, PODS_DIR, ETCD_POD))


def etcd_kill(sbx, name):
    # The PID is the host's own (its PID namespace), so the signal is sent from inside.
    host.exec_in(sbx, name, ["kill", "-KILL", "--", "-%d" % etcd_pid(sbx, name)])


def data_dir(command_line):
    """The ``--data-dir`` of an etcd command line (its argv); None when it names none."""
    for index, arg in enumerate(command_line):
        if arg.startswith("--data-dir="):
            return arg.split("=", 1)[1]
        if arg == "--data-dir" and index + 1 < len(command_line):
            return command_line[index + 1]
    return None


def etcd_wipe(sbx, name):
    """The member's disk lost: etcd killed and held down, everything in its data directory removed, the hold
    lifted. The kubelet starts etcd again on the empty directory, and real etcd does what it does then (a
    member that joined an existing cluster panics on the leader's first append and crash-loops)."""
    pid = etcd_pid(sbx, name)
    argv = host.exec_in(sbx, name, ["cat", "/proc/%d/cmdline" % pid]).stdout.split("\0")
    directory = data_dir(argv)
    if not directory:
        raise SandboxError("the etcd of host %s (PID %d) names no --data-dir" % (name, pid))
    etcd_stop(sbx, name)
    try:
        host.exec_in(sbx, name, ["kill", "-KILL", "--", "-%d" % pid])
        # gone, or a zombie its parent has not reaped yet: either way it holds no file any more
        host.exec_in(sbx, name, ["sh", "-c", 'while stat=$(cat /proc/"$1"/stat 2>/dev/null); do case "${stat##*) }" in Z*) break;; esac; '
                                 'sleep 0.1; done; find "$2" -mindepth 1 -delete', "etcd-wipe", str(pid), directory], timeout=60)
    finally:
        etcd_start(sbx, name)


def etcd_stop(sbx, name):
    write_file(host.path_in(sbx, name, "%s/%s.hold" % (PODS_DIR, ETCD_POD)), "held by sandbox fault etcd-stop\n")


def etcd_start(sbx, name):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(host.path_in(sbx, name, "%s/%s.hold" % (PODS_DIR, ETCD_POD)))


def etcd_client(sbx, name):
    """A client of the host's etcd member, authenticated like kubeadm's health checks."""
    from kcpsim import etcdclient  # the emulation's etcd client (tests/sandbox is on sys.path)
    record = sbx.require_host(name)
    pki = sbx.host_fs(name, "/etc/kubernetes/pki/etcd")
    files = [os.path.join(pki, f) for f in ("ca.crt", "healthcheck-client.crt", "healthcheck-client.key")]
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        raise SandboxError("host %s has no etcd client certificates (%s)" % (name, ", ".join(missing)))
    return etcdclient.Etcd.connect("https://%s:2379" % record["ip"], *files)


@contextlib.contextmanager
def etcd_session(sbx, name, what):
    """A client for the host's etcd member; an etcd error while using it fails ``what`` with the reason."""
    from kcpsim import etcdclient
    client = etcd_client(sbx, name)
    try:
        yield client
    except (etcdclient.EtcdError, etcdclient.EtcdUnavailable) as exc:
        raise SandboxError("%s on %s's etcd failed: %s" % (what, name, exc))
    finally:
        client.close()


def etcd_alarm_nospace(sbx, name):
    with etcd_session(sbx, name, "raising NOSPACE") as client:
        client.alarm("ACTIVATE", client.status()["header"]["member_id"], "NOSPACE")


def etcd_alarm_clear(sbx, name):
    with etcd_session(sbx, name, "clearing alarms") as client:
        for alarm in client.alarm("GET").get("alarms", []):
            client.alarm("DEACTIVATE", alarm.get("memberID", "0"), alarm.get("alarm", "NONE"))


# --- kubeadm ------------------------------------------------------------------------------------------------

def join_fail_next(sbx, name):
    sbx.require_host(name)
    write_file(sbx.host_fs(name, JOIN_FAIL_MARKER), "sandbox fault join-fail-next\n")


CONTROL_PLANE_PODS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


# certs-expire-soon's argument: whole days, or minutes and hours
EXPIRE_IN = re.compile(r"^([1-9][0-9]*)([mhd]?)$")
EXPIRE_UNITS = {"m": "minutes", "h": "hours", "d": "days", "": "days"}


def certs_expire_soon(sbx, name, soon):
    """Re-sign the host's leaf certificates and kubeconfig client certificates to expire in ``soon`` (a timedelta)."""
    return _resign_leaves(sbx, name, datetime.datetime.now(datetime.timezone.utc) + soon)


def certs_expired(sbx, name):
    """Re-sign them expired an hour ago (valid for the year before), then kill the control plane pods, which the
    kubelet starts again with the expired files."""
    now = datetime.datetime.now(datetime.timezone.utc)
    renewed = _resign_leaves(sbx, name, now - datetime.timedelta(hours=1), now=now - datetime.timedelta(days=365))
    for pod in CONTROL_PLANE_PODS:
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(host.path_in(sbx, name, "%s/%s.pid" % (PODS_DIR, pod))) as handle:
                pid = int(handle.read().split()[0])
            host.exec_in(sbx, name, ["kill", "-KILL", "--", "-%d" % pid])
    return renewed


def _resign_leaves(sbx, name, not_after, now=None):
    """Re-sign the host's leaf certificates and kubeconfig client certificates to expire at ``not_after``, each with
    the CA that signed it; ``now``: when they are signed (their validity starts then)."""
    sbx.require_host(name)
    from kcpsim import kubeconfig, pki  # the emulation's PKI code (tests/sandbox is on sys.path)

    pki_dir = sbx.host_fs(name, "/etc/kubernetes/pki")
    cas = []
    for ca_name in CA_NAMES:
        with contextlib.suppress(pki.PKIError):
            cas.append(pki.load_pair(pki_dir, ca_name))
    if not cas:
        raise SandboxError("host %s has no kubeadm CA under /etc/kubernetes/pki" % name)

    def issuer(cert):
        return next(((ca, key) for ca, key in cas if pki.signed_by(cert, ca)), None)

    renewed = []
    for path in sorted(glob.glob(os.path.join(pki_dir, "**", "*.crt"), recursive=True)):
        cert = pki.load_cert(path)
        signer = None if pki.is_ca(cert) else issuer(cert)
        if signer:
            pki.resign_file(path, signer[0], signer[1], not_after=not_after, now=now)
            renewed.append(os.path.relpath(path, pki_dir))
    for path in sorted(glob.glob(sbx.host_fs(name, "/etc/kubernetes/*.conf"))):
        # only the embedded ones, as kubeadm certs renew does: kubelet.conf points at the kubelet's own rotated file
        cert = kubeconfig.embedded_client_certificate(path)
        signer = cert and issuer(cert)
        if signer and kubeconfig.resign_embedded(path, signer[0], signer[1], not_after=not_after, now=now):
            renewed.append(os.path.basename(path))
    return renewed


# --- the catalogue ------------------------------------------------------------------------------------------

FAULTS = {
    "partition": partition, "heal": heal, "power-off": power_off, "power-on": power_on,
    "kubelet-stop": kubelet_stop, "kubelet-start": kubelet_start,
    "etcd-kill": etcd_kill, "etcd-stop": etcd_stop, "etcd-start": etcd_start, "etcd-wipe": etcd_wipe,
    "etcd-alarm-nospace": etcd_alarm_nospace, "etcd-alarm-clear": etcd_alarm_clear,
    "join-fail-next": join_fail_next, "certs-expire-soon": certs_expire_soon, "certs-expired": certs_expired,
}


def inject(sbx, kind, name, args):
    """Apply fault ``kind`` to host ``name``; returns what the fault reports (or None)."""
    problems = []
    if kind not in FAULTS:
        problems.append("fault %r: not one of %s" % (kind, ", ".join(sorted(FAULTS))))
    if name not in sbx.hosts:
        problems.append("host %r: sandbox %s has no such host (it has: %s)"
                        % (name, sbx.name, ", ".join(sorted(sbx.hosts)) or "none"))
    extra = []
    if kind == "certs-expire-soon":
        match = EXPIRE_IN.match(args[0]) if len(args) == 1 else None
        if match is None:
            problems.append("certs-expire-soon <when>: a whole number of days of at least 1, or of minutes or hours (30m, 2h)")
        else:
            extra = [datetime.timedelta(**{EXPIRE_UNITS[match.group(2)]: int(match.group(1))})]
    elif args:
        problems.append("fault %s takes no arguments (got %s)" % (kind, " ".join(args)))
    if problems:
        raise InvalidArguments(problems)
    return FAULTS[kind](sbx, name, *extra)
