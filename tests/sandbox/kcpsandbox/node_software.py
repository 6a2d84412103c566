# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node software, offered on the controller side as an operator's air-gapped mirror would offer it
(DESIGN.md "The mirror"). Hosts get none of it from the provider: the operator (or the collection) installs it.

``build`` runs tests/sandbox/kcpsim/build.py into ``<state>/releases`` (the emulated binaries and the
image index); ``lay_out_mirror`` turns every release there into ``<state>/mirror/<version>/``:

    SHA256SUMS                                     sha256sum format, every other file of the directory
    bin/linux/<arch>/{kubeadm,kubelet,kubectl}     as dl.k8s.io serves them (kubectl: the machine's real one)
    containerd-<v>-linux-<arch>.tar.gz             bin/containerd, as containerd releases pack it
    cni-plugins-linux-<arch>-v<v>.tgz              ./bridge ./host-local ./loopback, as the CNI plugins pack them
    systemd/kubelet.service, systemd/kubelet.service.d/10-kubeadm.conf, systemd/containerd.service
    cni/10-bridge.conflist                         a bridge network config (host-local IPAM; one subnet per node)

Writes are idempotent: a file whose bytes did not change is left alone, so a second ``up`` costs little.
"""

import gzip
import hashlib
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile

from .commands import where_to_look
from .errors import SandboxError

SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_SCRIPT = os.path.join(SANDBOX_DIR, "kcpsim", "build.py")
MIRROR_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mirror_files")
RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
BUILD_TIMEOUT = 300.0
KUBERNETES_BINARIES = ("kubeadm", "kubelet")
CNI_PLUGINS = ("bridge", "host-local", "loopback")
UNIT_FILES = {"kubelet.service": "systemd/kubelet.service",
              "10-kubeadm.conf": "systemd/kubelet.service.d/10-kubeadm.conf",
              "containerd.service": "systemd/containerd.service"}
CNI_CONFIG = "cni/10-bridge.conflist"
CHECKSUMS = "SHA256SUMS"
ARCHITECTURES = {"x86_64": "amd64", "aarch64": "arm64"}


def available():
    return os.path.exists(BUILD_SCRIPT)


def architecture(machine=None):
    """Kubernetes' name for the machine's architecture (``x86_64`` → ``amd64``) (pure)."""
    machine = machine or platform.machine()
    return ARCHITECTURES.get(machine, machine)


def release_versions(releases_dir):
    """Kubernetes versions with a bundle under ``releases_dir``."""
    if not os.path.isdir(releases_dir):
        return []
    return sorted(v for v in os.listdir(releases_dir)
                  if RELEASE.match(v) and os.path.exists(os.path.join(releases_dir, v, "VERSION")))


def build(sbx):
    """Run build.py into ``<state>/releases`` (recorded as process ``build``, so ``down`` can stop it)."""
    log = os.path.join(sbx.logs_dir, "build.log")
    process = sbx.spawn("build", [sys.executable, BUILD_SCRIPT, "--out", sbx.releases_dir], log)
    try:
        code = process.wait(timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = None
    sbx.forget_process("build")
    if code != 0:
        raise SandboxError("building the release bundles failed (%s); %s"
                           % ("exit %d" % code if code is not None else "no result in %.0fs" % BUILD_TIMEOUT,
                              where_to_look([log])))


def _component(releases_dir, version, component, key):
    """``(release, dir)`` of ``releases/<component>/<release>/`` for the ``key`` release that ``version``'s
    components.json names (the runtime that ships with that Kubernetes minor); the newest one when it names
    none; None if there is none."""
    base = os.path.join(releases_dir, component)
    try:
        with open(os.path.join(releases_dir, version, "components.json")) as handle:
            wanted = json.load(handle).get(key)
    except (OSError, ValueError):
        wanted = None
    if not (wanted and os.path.isdir(os.path.join(base, wanted))):
        versions = os.listdir(base) if os.path.isdir(base) else []
        wanted = max(versions, key=lambda v: [int(x) if x.isdigit() else x for x in re.split(r"[.-]", v)],
                     default=None)
    return (wanted, os.path.join(base, wanted)) if wanted else None


def tarball(members):
    """A reproducible gzipped tar of ``members`` (``[(name, bytes, mode)]``): fixed owner and times (pure)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, data, mode in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime, info.uname, info.gname = len(data), mode, 0, "root", "root"
            archive.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0) as compressed:
        compressed.write(raw.getvalue())
    return packed.getvalue()


def checksums_text(digests):
    """``SHA256SUMS`` in sha256sum's format (``<hex>  <path>``, sorted by path) of ``{path: hex}`` (pure)."""
    return "".join("%s  %s\n" % (digests[path], path) for path in sorted(digests))


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def _put(path, data, mode):
    """Write ``data`` (atomically) unless the file holds exactly it already."""
    try:
        if _read(path) == data:
            return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as handle:
        handle.write(data)
    os.chmod(path + ".tmp", mode)
    os.replace(path + ".tmp", path)


def _link_big(source, target):
    """``target`` as a hard link to ``source`` (a copy across file systems), unless it is that file already."""
    try:
        if os.path.samefile(source, target):
            return
        os.unlink(target)
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _sha256(path, memo):
    """sha256 of a file, computed once per (device, inode, size, mtime): the mirrors share kubectl's inode."""
    info = os.stat(path)
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in memo:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        memo[key] = digest.hexdigest()
    return memo[key]


def lay_out_mirror(releases_dir, mirror_dir, kubectl, arch=None):
    """``<mirror_dir>/<version>/`` for every release under ``releases_dir`` (layout in the module doc);
    ``kubectl``: the path of the kubectl binary the mirror offers. Returns the versions laid out."""
    arch = arch or architecture()
    memo = {}
    versions = release_versions(releases_dir)
    for version in versions:
        out = os.path.join(mirror_dir, version)
        files = {}
        for name in KUBERNETES_BINARIES:
            files["bin/linux/%s/%s" % (arch, name)] = _read(os.path.join(releases_dir, version, "bin", name))
        containerd = _component(releases_dir, version, "containerd", "containerd")
        if containerd:
            files["containerd-%s-linux-%s.tar.gz" % (containerd[0], arch)] = tarball(
                [("bin/containerd", _read(os.path.join(containerd[1], "containerd")), 0o755)])
        cni = _component(releases_dir, version, "cni", "cni-plugins")
        if cni:
            files["cni-plugins-linux-%s-v%s.tgz" % (arch, cni[0])] = tarball(
                [("./" + plugin, _read(os.path.join(cni[1], plugin)), 0o755) for plugin in CNI_PLUGINS])
        for source, target in UNIT_FILES.items():
            files[target] = _read(os.path.join(MIRROR_FILES, source))
        files[CNI_CONFIG] = _read(os.path.join(MIRROR_FILES, os.path.basename(CNI_CONFIG)))
        digests = {}
        for path, data in files.items():
            _put(os.path.join(out, path), data, 0o755 if data.startswith(b"#!") else 0o644)
            digests[path] = hashlib.sha256(data).hexdigest()
        kubectl_path = "bin/linux/%s/kubectl" % arch
        _link_big(kubectl, os.path.join(out, kubectl_path))
        digests[kubectl_path] = _sha256(os.path.join(out, kubectl_path), memo)
        _put(os.path.join(out, CHECKSUMS), checksums_text(digests).encode(), 0o644)
    return versions


def kubectl_binary():
    """The machine's real kubectl (the emulation has none of its own), resolved through links."""
    found = shutil.which("kubectl", path="/usr/bin:/bin:/usr/local/bin")
    if not found:
        raise SandboxError("kubectl is not installed on this machine: the mirror offers the machine's own")
    return os.path.realpath(found)
