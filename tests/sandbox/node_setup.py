# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator's own node set-up, from the controller over SSH, as the sandbox tests and benchmarks do it
before kubeadm (the sandbox's provider hands over bare hosts): install the node software of one version from
the mirror (copy, checksums, binaries, runtime and CNI plugin tarballs, units enabled), the zone label through
the kubelet's extra args, and the pod network's config. The pure helpers (scripts, file contents) do no I/O.

An Ansible role (issue 11) does the same steps; the mirror's layout is in DESIGN.md "The mirror".
"""

import json
import os
import re
import shlex
import subprocess

REMOTE_MIRROR = "/root/kcp-mirror"
ZONE_LABEL = "topology.kubernetes.io/zone"
KUBELET_EXTRA_ARGS_FILE = "/etc/default/kubelet"
CNI_CONFIG_FILE = "/etc/cni/net.d/10-bridge.conflist"
RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


class SetupError(AssertionError):
    """A set-up step failed on a host; the message says which and what the host answered."""


def newest(versions):
    """The highest of ``versions`` by numeric (major, minor, patch), other entries ignored (pure); None for none."""
    parsed = [v for v in versions if RELEASE.match(v)]
    return max(parsed, key=lambda v: tuple(int(x) for x in RELEASE.match(v).groups())) if parsed else None


def newest_version(mirror_dir):
    """The newest Kubernetes version the mirror offers."""
    found = newest(os.listdir(mirror_dir))
    if not found:
        raise SetupError("the mirror %s offers no Kubernetes version" % mirror_dir)
    return found


def install_script(version):
    """The shell script that installs node software ``version`` from its copy under REMOTE_MIRROR (pure):
    checksums first (nothing is installed from a copy that does not match), then the binaries of the host's
    architecture to /usr/local/bin, containerd to /usr/local, the CNI plugins to /opt/cni/bin, the units to
    /etc/systemd/system; containerd enabled and started, the kubelet enabled (kubeadm starts it)."""
    binaries = " ".join("bin/linux/$arch/%s" % name for name in ("kubeadm", "kubelet", "kubectl"))
    return "\n".join([
        "set -eu",
        "arch=$(dpkg --print-architecture)",
        "cd %s" % shlex.quote("%s/%s" % (REMOTE_MIRROR, version)),
        "sha256sum --quiet --strict -c SHA256SUMS",
        "install -m 0755 %s /usr/local/bin/" % binaries,
        "tar -C /usr/local -xzf containerd-*-linux-$arch.tar.gz",
        "mkdir -p /opt/cni/bin && tar -C /opt/cni/bin -xzf cni-plugins-linux-$arch-v*.tgz",
        "install -D -m 0644 systemd/kubelet.service /etc/systemd/system/kubelet.service",
        "install -D -m 0644 systemd/kubelet.service.d/10-kubeadm.conf "
        "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "install -D -m 0644 systemd/containerd.service /etc/systemd/system/containerd.service",
        "systemctl daemon-reload",
        "systemctl enable --now containerd",
        "systemctl enable kubelet",
    ]) + "\n"


def prepare_script(version, failure_domain):
    """install_script, then the zone label (kubelet_extra_args) and forwarding, which kubeadm's preflight wants
    (net.ipv4.ip_forward=1, as on any real host): what the operator does on a fresh host before kubeadm (pure)."""
    return install_script(version) + "\n".join([
        "mkdir -p %s" % os.path.dirname(KUBELET_EXTRA_ARGS_FILE),
        "printf %%s %s > %s" % (shlex.quote(kubelet_extra_args(failure_domain)), KUBELET_EXTRA_ARGS_FILE),
        "sysctl -qw net.ipv4.ip_forward=1",
    ]) + "\n"


def kubelet_extra_args(failure_domain):
    """``/etc/default/kubelet`` carrying the node's zone label (the kubelet unit's KUBELET_EXTRA_ARGS) (pure)."""
    return "KUBELET_EXTRA_ARGS=--node-labels=%s=%s\n" % (ZONE_LABEL, failure_domain)


def cni_config(template, pod_subnet):
    """The mirror's bridge network config with this node's own pod subnet (host-local IPAM) (pure)."""
    config = json.loads(template)
    config["plugins"][0]["ipam"]["ranges"] = [[{"subnet": pod_subnet}]]
    return json.dumps(config, indent=2) + "\n"


def pod_subnet(index):
    """Node ``index``'s pod subnet (``10.244.<index>.0/24``) (pure)."""
    return "10.244.%d.0/24" % index


class Node:
    """One host as the operator reaches it: ssh / scp with the sandbox's generated ssh_config."""

    def __init__(self, ssh_config, host):
        self.ssh_config = ssh_config
        self.host = host

    def run(self, command, stdin="", timeout=120):
        """``command`` on the host (a shell script), its output; SetupError naming its last line when it fails."""
        done = subprocess.run(["ssh", "-F", self.ssh_config, self.host, command], input=stdin, capture_output=True,
                              text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise SetupError("on %s, %s failed (exit %d):\n%s%s" % (self.host, command.splitlines()[-1],
                                                                    done.returncode, done.stdout[-2000:],
                                                                    done.stderr[-2000:]))
        return done.stdout

    def copy_dir(self, local, remote_parent):
        self.run("mkdir -p %s" % shlex.quote(remote_parent))
        done = subprocess.run(["scp", "-q", "-r", "-F", self.ssh_config, local, "%s:%s" % (self.host, remote_parent)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise SetupError("scp -r %s %s:%s failed: %s" % (local, self.host, remote_parent, done.stderr))

    def write(self, path, content, mode="0644"):
        self.run("install -D -m %s /dev/stdin %s" % (mode, shlex.quote(path)), stdin=content)

    # -- the steps -------------------------------------------------------------------------------------------

    def install_node_software(self, mirror_dir, version):
        """Copy ``version`` off the mirror, check it and install it (install_script)."""
        self.copy_dir(os.path.join(mirror_dir, version), REMOTE_MIRROR)
        self.run(install_script(version))

    def install_pod_network(self, mirror_dir, version, index):
        """The mirror's bridge network config, with this node's pod subnet; the plugins came with the node
        software."""
        with open(os.path.join(mirror_dir, version, "cni", "10-bridge.conflist"), encoding="utf-8") as handle:
            self.write(CNI_CONFIG_FILE, cni_config(handle.read(), pod_subnet(index)))

    def prepare(self, mirror_dir, version, failure_domain):
        """What the operator does on a fresh host before kubeadm (prepare_script), in one SSH session after the
        copy."""
        self.copy_dir(os.path.join(mirror_dir, version), REMOTE_MIRROR)
        self.run(prepare_script(version, failure_domain))
