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
    "cni_config": (r"cni/10-bridge\.conflist", "/etc/cni/net.d/99-kcp-bridge.conflist"),
}
BINARIES = ("kubeadm", "kubelet", "kubectl")
UNITS = ("kubelet_unit", "kubelet_dropin", "containerd_unit")
# The stand-in pod network's configuration (docs/node-software.md): the container runtime picks it up by itself.
CONFIGS = ("cni_config",)
ARCHIVES = ("containerd", "cni_plugins")
# What the node software installs on a host.
INSTALLED_FILES = BINARIES + UNITS + CONFIGS
INSTALLED = INSTALLED_FILES + ARCHIVES
# What a run may be limited to (node_software_install's ``only``): each component with the files that go with it, so an
# in-place upgrade installs kubeadm, the runtime and the CNI plugins first and the kubelet and kubectl after the drain.
COMPONENTS = {
    "kubeadm": ("kubeadm",),
    "kubelet": ("kubelet", "kubelet_unit", "kubelet_dropin"),
    "kubectl": ("kubectl",),
    "containerd": ("containerd", "containerd_unit"),
    "cni_plugins": ("cni_plugins",),
    "pod_network": ("cni_config",),
}
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
    if not VERSION.fullmatch(version or ""):
        errors.append("version: %r is not a release version like v1.37.1" % (version,))
    if not ARCH.fullmatch(arch or ""):
        errors.append("arch: %r is not an architecture name like amd64" % (arch,))
    return errors


def selected(only):
    """The artifact roles the components ``only`` names install (all of them for None), in INSTALLED's order."""
    components = COMPONENTS if only is None else only
    unknown = sorted(set(components) - set(COMPONENTS))
    if unknown:
        raise ValueError("%s: not a component (%s)" % (", ".join(unknown), ", ".join(sorted(COMPONENTS))))
    roles = set(role for component in components for role in COMPONENTS[component])
    return tuple(role for role in INSTALLED if role in roles)


def record_after(record, version, artifacts, roles):
    """The record of the software installed once the binaries among ``roles`` are the bundle's of ``version``: each
    binary's checksum and version (``sha256``, ``versions``; a binary this run did not install keeps what the record
    said of it), and ``version`` only when kubeadm, the kubelet and kubectl are all of one version - else null, a host
    half way through an in-place upgrade (its kubeadm new, its kubelet still the old one)."""
    old_sha = record.get("sha256") if isinstance(record.get("sha256"), dict) else {}
    old_versions = record.get("versions") if isinstance(record.get("versions"), dict) else {}
    sha256, versions = {}, {}
    for role in BINARIES:
        if role in roles:
            sha256[role], versions[role] = artifacts[role]["sha256"], version
        elif old_sha.get(role):
            sha256[role] = old_sha[role]
            # a record written before ``versions`` existed names one version for all three
            versions[role] = old_versions.get(role) or record.get("version")
    common = set(versions.get(role) for role in BINARIES)
    return {"version": common.pop() if len(common) == 1 else None, "versions": versions, "sha256": sha256}


def foreign_binaries(artifacts, installed, record, replace, roles=BINARIES):
    """Refusals for kubeadm, kubelet or kubectl found on a host that are neither the bundle's nor what the record
    says was installed (``installed``: role -> SHA-256 on the host, None when absent), unless ``replace``: software
    the collection did not install is never swapped silently. Only the binaries among ``roles`` (those a run
    installs) are looked at."""
    if replace:
        return []
    ours = record.get("sha256") if isinstance(record.get("sha256"), dict) else {}
    refusals = []
    for role in BINARIES:
        if role not in roles:
            continue
        found, bundle = installed.get(role), artifacts[role]["sha256"]
        if found is not None and found not in (bundle, ours.get(role)):
            refusals.append("%s is not the bundle's %s (SHA-256 %s, the bundle's is %s) and not one the node_software role installed."
                            % (artifacts[role]["dest"], role, found, bundle))
    return refusals


# The files a bundle's version gets from the role that builds it (roles/bundle_build/files), by their path in it.
OWN_FILES = (
    ("kubelet.service", "systemd/kubelet.service"),
    ("10-kubeadm.conf", "systemd/kubelet.service.d/10-kubeadm.conf"),
    ("containerd.service", "systemd/containerd.service"),
    ("10-bridge.conflist", "cni/10-bridge.conflist"),
)


def bundle_files(versions, arches, containerd_version, cni_plugins_version, urls, checksums):
    """What building the bundle writes, laid out as above: ``downloads`` (each with ``file``, its path in the bundle,
    ``url``, ``mode``, ``checksum``, the digest the operator pinned in ``checksums`` (by path) or else the URL of
    the release's own checksum file, and ``checksum_from``, which of the two), ``own_files`` (``src`` in the role,
    ``file``) and ``unknown_pins``, the pinned paths the bundle does not hold. ``urls`` has the ``kubernetes``,
    ``containerd`` and ``cni_plugins`` release sites (or mirrors laid out as they are)."""
    versions, arches = _unique(versions), _unique(arches)
    containerd = "containerd-%s" % containerd_version
    cni_plugins = "v%s" % cni_plugins_version
    downloads = []
    for version in versions:
        for arch in arches:
            for name in BINARIES:
                path = "bin/linux/%s/%s" % (arch, name)
                downloads.append(dict(file="%s/%s" % (version, path), mode="0755", sums=".sha256",
                                      url="%s/%s/%s" % (urls["kubernetes"], version, path)))
            archive = "%s-linux-%s.tar.gz" % (containerd, arch)
            downloads.append(dict(file="%s/%s" % (version, archive), mode="0644", sums=".sha256sum",
                                  url="%s/v%s/%s" % (urls["containerd"], containerd_version, archive)))
            archive = "cni-plugins-linux-%s-%s.tgz" % (arch, cni_plugins)
            downloads.append(dict(file="%s/%s" % (version, archive), mode="0644", sums=".sha256",
                                  url="%s/%s/%s" % (urls["cni_plugins"], cni_plugins, archive)))
    for download in downloads:
        pinned = str(checksums.get(download["file"]) or "").lower()
        published = download["url"] + download.pop("sums")
        download.update(checksum=pinned or published, checksum_from="bundle_build_checksums" if pinned else published)
    own_files = [dict(src=src, file="%s/%s" % (version, path)) for version in versions for src, path in OWN_FILES]
    held = {download["file"] for download in downloads}
    return dict(downloads=downloads, own_files=own_files, unknown_pins=sorted(set(checksums) - held))


def _unique(items):
    """``items`` without repeats, in their order."""
    return list(dict.fromkeys(items))
