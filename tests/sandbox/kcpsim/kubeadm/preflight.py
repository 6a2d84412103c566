# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm's preflight checks (kubeadm-reference.md §1.7, §2.2). The checks look at the host (I/O); the
verdict — which results are fatal, which are only warnings — is the pure :func:`classify`.

The rule: a check that fails with an error is fatal unless its name (case-insensitive) or ``all`` is in
``--ignore-preflight-errors`` / ``nodeRegistration.ignorePreflightErrors``, in which case it is printed as a
warning; warnings never stop anything.
"""

from __future__ import annotations

import errno
import json
import os
import socket

from kcpsim.kubeadm import certplan, config, manifests
from kcpsim.kubeadm.context import KubeadmError
from kcpsim.kubeadm.kubelet import KubeletError
from kcpsim.kubeadm.release import parse_version

IMAGES_JSON_CANDIDATES = ("/opt/kcpsim/releases/images.json",)
MOUNTINFO = "/proc/self/mountinfo"
CGROUP_V1 = ("cgroups v1 support is deprecated and will be removed in a future release. Please migrate to cgroups "
             "v2. To explicitly enable cgroups v1 support for kubelet v1.35 or newer, you must set the kubelet "
             "configuration option 'FailCgroupV1' to 'false'. You must also explicitly skip this validation. For "
             "more information, see https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1")
IMAGES_ENV = "KCPSIM_IMAGES"
# kubeadm 1.33+'s InPathCheck list on Linux, all mandatory (conntrack, socat and ebtables went in 1.32; nsenter, ip,
# iptables, ethtool, tc and touch in 1.33, when losetup and cp came).
REQUIRED_EXECUTABLES = ("mount", "losetup", "cp")


class Result:
    """One check's outcome: ``kind`` is "error" or "warning"."""

    def __init__(self, name, kind, message):
        self.name, self.kind, self.message = name, kind, message

    def __repr__(self):
        return "Result(%s, %s, %s)" % (self.name, self.kind, self.message)


class PreflightError(Exception):
    def __init__(self, errors):
        lines = ["[preflight] Some fatal errors occurred:"]
        lines += ["\t[ERROR %s]: %s" % (r.name, r.message) for r in errors]
        lines.append("[preflight] If you know what you are doing, you can make a check non-fatal with "
                     "`--ignore-preflight-errors=...`")
        super().__init__("\n".join(lines))
        self.errors = errors


def classify(results, ignored):
    """``(fatal, warnings)``: errors not ignored are fatal; ignored errors and warnings are warnings."""
    ignore = {name.lower() for name in ignored}
    fatal, warnings = [], []
    for result in results:
        if result.kind == "error" and "all" not in ignore and result.name.lower() not in ignore:
            fatal.append(result)
        else:
            warnings.append(result)
    return fatal, warnings


def report(ctx, results, ignored):
    """Print the warnings as kubeadm init and join do, then stop with the fatal errors, if any."""
    fatal, warnings = classify(results, ignored)
    for result in warnings:
        ctx.out("\t[WARNING %s]: %s" % (result.name, result.message))
    if fatal:
        raise KubeadmError(str(PreflightError(fatal)))


def port_addresses(release, cluster, advertise_address):
    """Where the Port-* checks of the control plane bind: every address before 1.37; from 1.37 the address each
    component is configured to serve on (the advertise address for the API server and etcd, the controller
    manager's and scheduler's ``--bind-address``, 127.0.0.1 by default), so a listener elsewhere on the port is
    no conflict (kubeadm-reference-1.32-plus.md section 4)."""
    if release.minor < 37:
        return None

    def bind_address(component):
        return config.args_dict(cluster[component]["extraArgs"]).get("bind-address", "127.0.0.1")
    return {"kube-apiserver": advertise_address, "etcd": advertise_address,
            "kube-controller-manager": bind_address("controllerManager"), "kube-scheduler": bind_address("scheduler")}


def file_check_name(prefix, path):
    return prefix + path.replace("/", "-")


class Checks:
    """The individual checks, each returning a list of Results (empty when it passes)."""

    def __init__(self, host, kubelet):
        self.host = host
        self.kubelet = kubelet

    def privileged(self):
        if os.geteuid() != 0:
            return [Result("IsPrivilegedUser", "error", "user is not running as root")]
        return []

    @staticmethod
    def port(number, address=""):
        """Port-<number>: the port can be bound, on ``address`` (every address when empty)."""
        family = socket.AF_INET6 if (":" in address or (not address and socket.has_ipv6)) else socket.AF_INET
        probe = socket.socket(family, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((address, number))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return [Result("Port-%d" % number, "error", "Port %d is in use" % number)]
            return [Result("Port-%d" % number, "error", "Port %d: %s" % (number, exc.strerror))]
        finally:
            probe.close()
        return []

    def control_plane(self, cluster, bind_port, node_checks=(), addresses=None):
        """The checks of a node about to run a control plane, the first (init) or a joining one, in kubeadm's
        order: resources, the control plane ports and manifests, then ``node_checks`` (init's checks of the node
        itself), then, with local etcd, its ports and data directory. ``addresses`` (:func:`port_addresses`):
        where each port is bound, every address when None."""
        where = addresses or {}
        etcd_data_dir = None if certplan.is_external_etcd(cluster) else cluster["etcd"]["local"]["dataDir"]
        results = self.cpus() + self.memory() + self.privileged()
        results += self.port(bind_port, where.get("kube-apiserver", "")) + \
            self.port(10259, where.get("kube-scheduler", "")) + self.port(10257, where.get("kube-controller-manager", ""))
        for component in manifests.COMPONENTS:
            if component != "etcd" or etcd_data_dir:
                results += self.file_available(manifests.manifest_path(component))
        results += list(node_checks)
        if etcd_data_dir:
            results += self.port(2379, where.get("etcd", "")) + self.port(2380, where.get("etcd", ""))
            results += self.dir_available(etcd_data_dir)
        return results

    def file_available(self, path):
        if self.host.exists(path):
            return [Result(file_check_name("FileAvailable-", path), "error", "%s already exists" % path)]
        return []

    def dir_available(self, path):
        if not self.host.is_empty_dir(path):
            return [Result(file_check_name("DirAvailable-", path), "error", "%s is not empty" % path)]
        return []

    def executables(self, search_path):
        """FileExisting-<name>: what kubeadm 1.33+ needs in PATH on a Linux node (kubeadm-reference-1.32-plus.md
        section 4): ``mount`` and ``losetup`` for the kubelet's volumes, ``cp`` for kubeadm's own copies of etcd's
        directories. Each missing one is an error, found as Go's exec.LookPath finds it in ``search_path``."""
        directories = [d for d in (search_path or "").split(":") if d]
        return [Result("FileExisting-%s" % name, "error", "%s not found in system path" % name)
                for name in REQUIRED_EXECUTABLES
                if not any(self.host.is_executable_file("%s/%s" % (d.rstrip("/"), name)) for d in directories)]

    def ip_forward(self):
        path = "/proc/sys/net/ipv4/ip_forward"
        try:
            with open(path, "r", encoding="ascii") as handle:
                value = handle.read().strip()
        except OSError:
            value = ""
        if value != "1":
            return [Result(file_check_name("FileContent-", path), "error", "%s contents are not set to 1" % path)]
        return []

    @staticmethod
    def swap():
        try:
            with open("/proc/swaps", "r", encoding="ascii") as handle:
                entries = handle.read().splitlines()[1:]
        except OSError:
            entries = []
        if entries:
            return [Result("Swap", "warning", "swap is supported for cgroup v2 only. The kubelet must be properly "
                                              "configured to use swap. Please refer to "
                                              "https://kubernetes.io/docs/concepts/architecture/nodes/#swap-memory")]
        return []

    def cgroups(self, kubelet_version):
        """SystemVerification's cgroup rule: a host without the unified hierarchy (cgroup v2) at /sys/fs/cgroup is
        an error for a kubelet of 1.35 or newer, a warning before."""
        try:
            with open(self.host.path(MOUNTINFO), "r", encoding="utf-8") as handle:
                # The last mount on /sys/fs/cgroup is the one a reader sees.
                filesystems = [line.split(" - ", 1)[1].split()[0] for line in handle
                               if line.split()[4] == "/sys/fs/cgroup" and " - " in line]
        except (OSError, IndexError) as exc:
            return [Result("SystemVerification", "error", "couldn't read the host's mounts: %s" % exc)]
        if filesystems and filesystems[-1] == "cgroup2":
            return []
        return [Result("SystemVerification", "error" if (kubelet_version.major, kubelet_version.minor) >= (1, 35)
                       else "warning", CGROUP_V1)]

    def installed_kubelet_version(self, release):
        """The kubelet's own version, or kubeadm's when it cannot be read (KubeletVersion reports that)."""
        try:
            return parse_version(self.kubelet.version())
        except (KubeletError, ValueError):
            return release.version

    @staticmethod
    def cpus():
        count = os.cpu_count() or 1
        if count < 2:
            return [Result("NumCPU", "error", "the number of available CPUs %d is less than the required 2" % count)]
        return []

    @staticmethod
    def memory():
        try:
            with open("/proc/meminfo", "r", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("MemTotal:"):
                        megabytes = int(line.split()[1]) // 1024
                        if megabytes < 1700:
                            return [Result("Mem", "error", "the system RAM (%d MB) is less than the minimum 1700 MB"
                                           % megabytes)]
        except (OSError, ValueError):
            pass
        return []

    def cri(self, cri_socket):
        path = cri_socket[len("unix://"):] if cri_socket.startswith("unix://") else cri_socket
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2)
        try:
            probe.connect(self.host.path(path))
        except OSError as exc:
            return [Result("CRI", "error", "container runtime is not running: output: validate service connection: "
                                           "validate CRI v1 runtime API for endpoint \"%s\": %s"
                           % (cri_socket, exc.strerror or exc))]
        finally:
            probe.close()
        return []

    def kubelet_version(self, release, control_plane_version):
        try:
            kubelet = parse_version(self.kubelet.version())
        except (KubeletError, ValueError) as exc:
            return [Result("KubeletVersion", "error", str(exc))]
        minimum = (release.version.major, release.version.minor - release.kubelet_skew_minors)
        if (kubelet.major, kubelet.minor) < minimum:
            return [Result("KubeletVersion", "error", 'Kubelet version "%s" is lower than kubeadm can support. '
                                                      "Please upgrade kubelet" % kubelet)]
        if control_plane_version is not None and \
                (kubelet.major, kubelet.minor) > (control_plane_version.major, control_plane_version.minor):
            return [Result("KubeletVersion", "error",
                           'the kubelet version is higher than the control plane version. This is not a supported '
                           'version skew and may lead to a malfunctional cluster. Kubelet version: "%s" Control '
                           'plane version: "%s"' % (kubelet, control_plane_version))]
        return []

    def hostname(self, node_name):
        try:
            socket.getaddrinfo(node_name, None)
        except OSError:
            return [Result("Hostname", "warning", 'hostname "%s" could not be reached' % node_name)]
        return []

    def kubelet_service(self):
        if not self.kubelet.is_enabled():
            return [Result("Service-Kubelet", "warning", "kubelet service is not enabled, please run "
                                                         "'systemctl enable kubelet.service'")]
        return []

    def images(self, wanted):
        """Every image must be in the air-gapped mirror's images.json (the sandbox's registry)."""
        path = os.environ.get(IMAGES_ENV) or next((p for p in IMAGES_JSON_CANDIDATES if self.host.exists(p)), None)
        if not path:
            return [Result("ImagePull", "error", "no image registry is reachable: images.json not found at %s"
                           % " or ".join(IMAGES_JSON_CANDIDATES))]
        try:
            with open(self.host.path(path) if not os.environ.get(IMAGES_ENV) else path, "r", encoding="utf-8") as handle:
                known = json.load(handle)
        except (OSError, ValueError) as exc:
            return [Result("ImagePull", "error", "cannot read %s: %s" % (path, exc))]
        return [Result("ImagePull", "error", "failed to pull image %s: not found in the registry" % image)
                for image in wanted if image not in known]
