# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated node software on a host, installed as the kubeadm packages would install it
(DESIGN.md "Node software per host"): kubeadm and kubelet of one release (and the machine's real
kubectl) in /usr/local/bin, the containerd stand-in and the CNI plugins, the kubelet unit with its
10-kubeadm.conf drop-in and the containerd unit, both enabled, so the host starts them when it boots.

The releases come from tests/sandbox/kcpsim/build.py, run once per ``sandbox up`` into
``<state>/releases``; while build.py does not exist, hosts get no node software. A bundle may lack a
component whose emulation is not written yet: what exists is installed, a unit only with its program.
"""

import json
import os
import re
import shutil
import subprocess
import sys

from .commands import where_to_look
from .errors import SandboxError

SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_SCRIPT = os.path.join(SANDBOX_DIR, "kcpsim", "build.py")
UNITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostfs", "units")
RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
BUILD_TIMEOUT = 300.0


def available():
    return os.path.exists(BUILD_SCRIPT)


def newest(versions):
    """The highest of ``versions`` by numeric (major, minor, patch) (pure); None for none."""
    parsed = [v for v in versions if RELEASE.match(v)]
    return max(parsed, key=lambda v: tuple(int(x) for x in RELEASE.match(v).groups())) if parsed else None


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


def choose_version(releases_dir, requested):
    versions = release_versions(releases_dir)
    if requested is None:
        return newest(versions)
    if requested not in versions:
        raise SandboxError("--version %s: no release bundle for it in %s (there are: %s)"
                           % (requested, releases_dir, ", ".join(versions) or "none"))
    return requested


def _copy_executable(source, target):
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(source, target)
    os.chmod(target, 0o755)


def _component(releases_dir, version, component, key):
    """The dir of ``releases/<component>/<v>/`` for the ``key`` release that ``version``'s components.json names
    (the runtime that ships with that Kubernetes minor); the newest one when it names none; None if there is none."""
    base = os.path.join(releases_dir, component)
    try:
        with open(os.path.join(releases_dir, version, "components.json")) as handle:
            wanted = json.load(handle).get(key)
    except (OSError, ValueError):
        wanted = None
    if wanted and os.path.isdir(os.path.join(base, wanted)):
        return os.path.join(base, wanted)
    versions = os.listdir(base) if os.path.isdir(base) else []
    chosen = max(versions, key=lambda v: [int(x) if x.isdigit() else x for x in re.split(r"[.-]", v)], default=None)
    return os.path.join(base, chosen) if chosen else None


def install(sbx, host, version):
    """Put release ``version``'s node software on the (powered-off) host's disk."""
    releases = sbx.releases_dir
    bin_dir = sbx.host_fs(host, "/usr/local/bin")
    sources = {name: os.path.join(releases, version, "bin", name) for name in ("kubeadm", "kubelet")}
    containerd = _component(releases, version, "containerd", "containerd")
    if containerd:
        sources["containerd"] = os.path.join(containerd, "containerd")
    for name, source in sources.items():
        if os.path.exists(source):
            _copy_executable(source, os.path.join(bin_dir, name))
    # Linked, not copied (it is large): only a kubectl the host can see, i.e. not in /usr/local/bin (private).
    kubectl = shutil.which("kubectl", path="/usr/bin:/bin")
    if kubectl and not os.path.lexists(os.path.join(bin_dir, "kubectl")):
        os.symlink(kubectl, os.path.join(bin_dir, "kubectl"))
    cni = _component(releases, version, "cni", "cni-plugins")
    for plugin in sorted(os.listdir(cni)) if cni else []:
        _copy_executable(os.path.join(cni, plugin), os.path.join(sbx.host_fs(host, "/opt/cni/bin"), plugin))
    units = os.path.join(sbx.host_overlay(host, "/etc"), "systemd", "system")
    for program, files in (("containerd", {"containerd.service": "containerd.service"}),
                           ("kubelet", {"kubelet.service": "kubelet.service",
                                        "10-kubeadm.conf": "kubelet.service.d/10-kubeadm.conf"})):
        if not os.path.exists(os.path.join(bin_dir, program)):
            continue
        for source, target in files.items():
            os.makedirs(os.path.dirname(os.path.join(units, target)), exist_ok=True)
            shutil.copyfile(os.path.join(UNITS, source), os.path.join(units, target))
        link = os.path.join(units, "multi-user.target.wants", program + ".service")
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.lexists(link):
            os.symlink(os.path.join("/etc/systemd/system", program + ".service"), link)
