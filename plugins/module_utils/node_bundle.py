# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node software bundle: which of its files a node gets, and how each is checked. Pure: no I/O.

A bundle holds one directory per Kubernetes version, laid out as the upstream release artifacts are
(docs/node-software.md):

    <version>/SHA256SUMS                                 sha256sum format, one line per file below
    <version>/bin/linux/<arch>/{kubeadm,kubelet,kubectl}
    <version>/containerd-<v>-linux-<arch>.tar.gz         bin/containerd ... (extracted to /usr/local)
    <version>/cni-plugins-linux-<arch>-v<v>.tgz          the CNI plugins (extracted to /opt/cni/bin)
    <version>/systemd/kubelet.service
    <version>/systemd/kubelet.service.d/10-kubeadm.conf
    <version>/systemd/containerd.service
    <version>/cni/10-bridge.conflist                     the pod network's configuration

Only a file SHA256SUMS names is ever used, and only after its checksum matched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

SUMS_FILE = "SHA256SUMS"
SUMS_LINE = re.compile(r"^([0-9a-f]{64}) [ *](\S.*)$")

# role -> (how the file is found in SHA256SUMS (a pattern of its relative path, {arch} filled in), where it goes)
ARTIFACTS = {
    "kubeadm": (r"bin/linux/{arch}/kubeadm", "/usr/local/bin/kubeadm"),
    "kubelet": (r"bin/linux/{arch}/kubelet", "/usr/local/bin/kubelet"),
    "kubectl": (r"bin/linux/{arch}/kubectl", "/usr/local/bin/kubectl"),
    "containerd": (r"containerd-[0-9][^/]*-linux-{arch}\.tar\.gz", "/usr/local"),
    "cni_plugins": (r"cni-plugins-linux-{arch}-v[0-9][^/]*\.tgz", "/opt/cni/bin"),
    "kubelet_unit": (r"systemd/kubelet\.service", "/etc/systemd/system/kubelet.service"),
    "kubelet_dropin": (r"systemd/kubelet\.service\.d/10-kubeadm\.conf",
                       "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"),
    "containerd_unit": (r"systemd/containerd\.service", "/etc/systemd/system/containerd.service"),
    "cni_config": (r"cni/10-bridge\.conflist", "/etc/cni/net.d/10-bridge.conflist"),
}
BINARIES = ("kubeadm", "kubelet", "kubectl")
UNITS = ("kubelet_unit", "kubelet_dropin", "containerd_unit")
ARCHIVES = ("containerd", "cni_plugins")
# What the node software installs on a host (the pod network's configuration is the flow's, once per cluster).
INSTALLED_FILES = BINARIES + UNITS
INSTALLED = INSTALLED_FILES + ARCHIVES
VERSION = re.compile(r"^v\d+\.\d+\.\d+$")
ARCH = re.compile(r"^[a-z0-9]+$")


def parse_sums(text):
    """``({relative path: sha256}, errors)`` of a SHA256SUMS file's text; every malformed line is an error."""
    sums, errors = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = SUMS_LINE.match(line.strip())
        if not match:
            errors.append("%s line %d: not '<sha256> <file>': %r" % (SUMS_FILE, number, line[:80]))
            continue
        path = match.group(2)[2:] if match.group(2).startswith("./") else match.group(2)
        if path.startswith("/") or ".." in path.split("/"):
            errors.append("%s line %d: %s is not a path inside the bundle" % (SUMS_FILE, number, path))
        elif path in sums and sums[path] != match.group(1):
            errors.append("%s line %d: %s is listed twice with different checksums" % (SUMS_FILE, number, path))
        else:
            sums[path] = match.group(1)
    return sums, errors


def select(sums, arch):
    """``({role: {"file", "sha256", "dest"}}, errors)``: for every artifact a node needs, the one file of
    SHA256SUMS that provides it; a role with no file, or with more than one, is an error."""
    chosen, errors = {}, []
    for role, (pattern, dest) in sorted(ARTIFACTS.items()):
        regex = re.compile("^" + pattern.format(arch=re.escape(arch)) + "$")
        matches = sorted(path for path in sums if regex.match(path))
        if not matches:
            errors.append("%s lists no %s for %s (a file like %s)" % (SUMS_FILE, role, arch,
                                                                      pattern.format(arch=arch).replace("\\", "")))
        elif len(matches) > 1:
            errors.append("%s lists more than one %s for %s: %s" % (SUMS_FILE, role, arch, ", ".join(matches)))
        else:
            chosen[role] = {"file": matches[0], "sha256": sums[matches[0]], "dest": dest}
    return chosen, errors


def check_request(version, arch):
    """Errors of the version and architecture asked for (each names the field and the rule)."""
    errors = []
    if not VERSION.match(version or ""):
        errors.append("version: %r is not a release version like v1.37.1" % (version,))
    if not ARCH.match(arch or ""):
        errors.append("arch: %r is not an architecture name like amd64" % (arch,))
    return errors


def foreign_binaries(artifacts, installed, record, replace):
    """Refusals for kubeadm, kubelet or kubectl found on a host that are neither the bundle's nor what the record
    says was installed (``installed``: role -> SHA-256 on the host, None when absent), unless ``replace``: software
    the collection did not install is never swapped silently."""
    if replace:
        return []
    ours = record.get("sha256") if isinstance(record.get("sha256"), dict) else {}
    refusals = []
    for role in BINARIES:
        found, bundle = installed.get(role), artifacts[role]["sha256"]
        if found is not None and found not in (bundle, ours.get(role)):
            refusals.append("%s is not the bundle's %s (SHA-256 %s, the bundle's is %s) and not one the node_software role installed."
                            % (artifacts[role]["dest"], role, found, bundle))
    return refusals
