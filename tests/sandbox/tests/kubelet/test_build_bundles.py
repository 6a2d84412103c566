# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""build.py makes the release bundles of DESIGN.md, reproducibly, runnable by Debian's python3."""

import hashlib
import json
import os
import subprocess

import pytest

from kcpsandbox.commands import wait_until
from kcpsim import build, version
from kcpsim.kubelet import kubelet
from kcpsim.runtime import images
from kubelet_harness import SYSTEM_PYTHON, free_port

COMPONENTS = sorted(build.KUBERNETES_BINARIES)


def _built(releases, release, name):
    path = releases / release / "bin" / name
    if not path.exists():
        assert not build.module_exists(build.KUBERNETES_BINARIES[name]), "%s exists but was not built" % name
        pytest.skip("%s's entry module %s is not written yet" % (name, build.KUBERNETES_BINARIES[name]))
    return path


def _run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False, **kwargs)


def test_every_release_has_its_version_file_and_the_runtime_that_goes_with_it(releases):
    for release in version.RELEASES:
        assert (releases / release / "VERSION").read_text() == release + "\n"
        assert os.access(releases / release / "bin" / "kubelet", os.X_OK)
        components = json.loads((releases / release / "components.json").read_text())
        assert os.access(releases / "containerd" / components["containerd"] / "containerd", os.X_OK)
        for plugin in build.CNI_PLUGINS:
            assert os.access(releases / "cni" / components["cni-plugins"] / plugin, os.X_OK)
    assert os.access(releases / "etcd" / version.ETCD_BINARY_VERSION / "etcd", os.X_OK)


def test_each_kubernetes_minor_brings_a_newer_runtime_for_an_in_place_upgrade_to_replace():
    pairs = [version.runtime_for(release) for release in version.RELEASES]
    for older, newer in zip(pairs, pairs[1:]):
        if older == newer:  # two patches of one minor
            continue
        for component in ("containerd", "cni-plugins"):
            assert tuple(map(int, newer[component].split("."))) > tuple(map(int, older[component].split(".")))
    assert version.runtime_for("v1.37.0") == version.runtime_for("v1.37.1")
    assert len({json.dumps(pair, sort_keys=True) for pair in pairs}) == len(version.RUNTIME_BY_MINOR)


def _tree(root):
    """``{relative path: (mode, sha256)}`` of every file under ``root``."""
    tree = {}
    for directory, unused_dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                tree[os.path.relpath(path, root)] = (os.stat(path).st_mode, hashlib.sha256(handle.read()).hexdigest())
    return tree


def test_a_second_build_is_byte_identical_and_a_rebuild_rewrites_nothing(releases, tmp_path):
    assert build.build(str(tmp_path))["written"] > 0
    assert _tree(str(tmp_path)) == _tree(str(releases))
    assert build.build(str(tmp_path))["written"] == 0


@pytest.mark.parametrize("release", version.RELEASES)
@pytest.mark.parametrize("name", COMPONENTS)
def test_each_binary_is_a_python3_zipapp_with_its_version_stamped(releases, release, name):
    path = _built(releases, release, name)
    assert path.read_bytes().startswith(b"#!/usr/bin/python3\n")
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from kcpsim import version, etcdclient; "
              "print(version.current(), etcdclient.Etcd.__name__)")
    result = _run([SYSTEM_PYTHON, "-c", script, str(path)], env={"KCPSIM_VERSION": "v0.0.1"})
    assert result.stdout.split() == [release, "Etcd"], result.stderr


@pytest.mark.parametrize("name, argv, expected", [
    ("kubelet", ["--version"], "Kubernetes v1.37.1"),
    ("kube-apiserver", ["--version"], "Kubernetes v1.37.1"),
    ("kube-controller-manager", ["--version"], "Kubernetes v1.37.1"),
    ("kube-scheduler", ["--version"], "Kubernetes v1.37.1"),
    ("kubeadm", ["version", "-o", "short"], "v1.37.1"),
], ids=[
    "kubelet --version prints Kubernetes v1.37.1",
    "kube-apiserver --version prints Kubernetes v1.37.1",
    "kube-controller-manager --version prints Kubernetes v1.37.1",
    "kube-scheduler --version prints Kubernetes v1.37.1",
    "kubeadm version -o short prints v1.37.1",
])
def test_binaries_print_their_version_when_run_directly(releases, name, argv, expected):
    result = _run([str(_built(releases, "v1.37.1", name))] + argv)
    assert (result.returncode, result.stdout.strip()) == (0, expected), result.stderr


def test_images_json_maps_every_static_pod_image_to_a_bundled_executable(releases):
    index = json.loads((releases / "images.json").read_text())
    resolver = images.ImageIndex(str(releases / "images.json"))
    for tag in version.ETCD_IMAGE_TAGS:
        assert resolver.resolve("registry.k8s.io/etcd:%s" % tag) == str(releases / "etcd" / "3.5.1" / "etcd-image")
    for release in version.RELEASES:
        assert index["registry.k8s.io/kube-proxy:%s" % release] is None
        for name in build.STATIC_POD_IMAGES:
            image = "registry.k8s.io/%s:%s" % (name, release)
            if build.module_exists(build.KUBERNETES_BINARIES[name]):
                assert resolver.resolve(image) == str(releases / release / "bin" / name)
            else:
                assert index[image] is None


@pytest.mark.parametrize("image, outcome", [
    ("registry.k8s.io/etcd:3.5.24-0", "etcd/3.5.1/etcd-image"),
    ("registry.k8s.io/etcd:3.7.0-0", "etcd/3.5.1/etcd-image"),
    ("mirror.example.com/k8s/etcd:3.6.8-0", "etcd/3.5.1/etcd-image"),
    ("registry.k8s.io/pause:3.10.2", "nothing that runs it"),
    ("registry.k8s.io/etcd:3.6.0-0", "is not in the mirror"),
], ids=[
    "etcd 3.5 resolves to the real etcd behind the wrapper",
    "etcd 3.7 resolves to the real etcd behind the /livez, /readyz and flag-name wrapper",
    "an image from a custom repository resolves by name and tag",
    "pause is listed but not runnable",
    "an unknown tag is not in the mirror",
])
def test_image_resolution(releases, image, outcome):
    resolver = images.ImageIndex(str(releases / "images.json"))
    if outcome.startswith("etcd/"):
        assert resolver.resolve(image) == str(releases / outcome)
    else:
        with pytest.raises(images.ImageNotFound, match=outcome):
            resolver.resolve(image)


@pytest.mark.parametrize("release", version.CONTAINERD_VERSIONS)
def test_each_containerd_release_reports_its_own_version_and_prints_a_default_config(releases, release):
    containerd = str(releases / "containerd" / release / "containerd")
    assert _run([containerd, "--version"]).stdout.startswith(
        "containerd github.com/containerd/containerd v%s " % release)
    assert '[grpc]\n  address = "/run/containerd/containerd.sock"' in _run([containerd, "config", "default"]).stdout


def test_containerd_serves_the_socket_named_in_its_config_and_removes_it_on_sigterm(releases, tmp_path, procs):
    sock = tmp_path / "run" / "containerd.sock"
    (tmp_path / "config.toml").write_text('version = 2\n[grpc]\n  address = "%s"\n' % sock)
    release = version.CONTAINERD_VERSIONS[0]
    process = procs.start([str(releases / "containerd" / release / "containerd"),
                           "--config", str(tmp_path / "config.toml")])
    wait_until(sock.is_socket, 10, "containerd's socket")
    assert kubelet.runtime_version(str(sock)) == {"version": "0.1.0", "runtimeName": "containerd",
                                                  "runtimeVersion": "v" + release, "runtimeApiVersion": "v1"}
    procs.stop(process)
    assert process.returncode == 0 and not sock.exists()


@pytest.mark.parametrize("release", version.CNI_PLUGINS_VERSIONS)
@pytest.mark.parametrize("plugin", build.CNI_PLUGINS)
def test_cni_plugins_answer_version_and_about(releases, plugin, release):
    path = str(releases / "cni" / release / plugin)
    answer = _run([path], env={"CNI_COMMAND": "VERSION"})
    assert json.loads(answer.stdout) == {"cniVersion": "1.1.0", "supportedVersions": list(version.CNI_SPEC_VERSIONS)}
    about = _run([path], env={})
    banner = "CNI %s plugin v%s" % (plugin, release)
    assert about.returncode == 0 and about.stderr.startswith(banner)
    refused = _run([path], env={"CNI_COMMAND": "ADD"})
    assert refused.returncode == 1 and json.loads(refused.stdout)["code"] == 4


def test_the_pki_works_with_debians_python3_cryptography(releases):
    script = """
import sys, datetime
sys.path.insert(0, sys.argv[1])
import cryptography
from kcpsim import pki
for algorithm in pki.ALGORITHMS[:1] + pki.ALGORITHMS[-1:]:
    ca, key = pki.new_ca("kubernetes", algorithm=algorithm)
    cert, _ = pki.new_leaf(ca, key, "cp-1", dns_names=["cp-1"], ip_addresses=["10.0.0.1"], usages=("server", "client"),
                           algorithm=algorithm)
    soon = pki.utcnow() + datetime.timedelta(days=2)
    again = pki.resign(cert, ca, key, not_after=soon)
    csr = pki.new_csr(pki.new_key("ECDSA-P256"), "system:node:cp-1", ["system:nodes"])
    signed = pki.sign_csr(csr, ca, key)
    assert pki.signed_by(again, ca) and pki.signed_by(signed, ca) and pki.sans(again) == pki.sans(cert)
    assert pki.not_after(again) == soon.replace(microsecond=0)
    assert pki.ca_cert_hash(ca).startswith("sha256:")
print(cryptography.__version__)
"""
    result = _run([SYSTEM_PYTHON, "-c", script, str(releases / "v1.37.1" / "bin" / "kubelet")])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "38.0.4"


def test_the_build_script_runs_standalone_and_reports(tmp_path):
    result = _run([SYSTEM_PYTHON, os.path.join(build.HERE, "build.py"), "--out", str(tmp_path),
                   "--version", "v1.36.4"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("build: ")
    assert sorted(p for p in os.listdir(tmp_path) if p.startswith("v")) == ["v1.36.4"]


def test_free_port_is_usable():
    assert 1024 < free_port() < 65536
