# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/bundle.yml (the bundle_build role) through ansible-playbook against a release mirror served on
127.0.0.1, laid out as dl.k8s.io and the containerd and CNI plugins GitHub releases are: the bundle it builds, its
SHA256SUMS and node_bundle_info's verdict on it; a second run and check mode; each file it refuses, named.

The mirror is plain HTTP because it is this test's own, on loopback; the role's defaults are the HTTPS upstream
sites, with certificate checks on."""

import hashlib
import http.server
import io
import json
import os
import re
import subprocess
import tarfile
import threading

import pytest

from ansible_run import BIN, ROOT, ansible_env, run_module

pytestmark = pytest.mark.ansible
PLAYBOOK = os.path.join(ROOT, "playbooks", "bundle.yml")
VERSIONS = ["v1.37.0", "v1.36.4"]
ARCHES = ["amd64", "arm64"]
CONTAINERD = "2.2.4"
CNI_PLUGINS = "1.9.1"
BINARIES = ("kubeadm", "kubelet", "kubectl")
OWN_FILES = ("systemd/kubelet.service", "systemd/kubelet.service.d/10-kubeadm.conf", "systemd/containerd.service",
             "cni/10-bridge.conflist")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def tar_gz(members):
    """A gzip-compressed tar archive of ``{name: bytes}``, every member executable, as the releases ship them."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o755, 1700000000
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def mirror_files():
    """``{URL path: bytes}`` of the three release sites, each artifact with its checksum file as upstream writes it:
    a bare digest beside the Kubernetes binaries, sha256sum lines beside the two archives."""
    files = {}
    for arch in ARCHES:
        for version in VERSIONS:
            for name in BINARIES:
                data = ("%s %s %s\n" % (name, version, arch)).encode()
                path = "/k8s/%s/bin/linux/%s/%s" % (version, arch, name)
                files[path], files[path + ".sha256"] = data, (sha256(data) + "\n").encode()
        name = "containerd-%s-linux-%s.tar.gz" % (CONTAINERD, arch)
        data = tar_gz({"bin/%s" % binary: ("%s %s\n" % (binary, arch)).encode()
                       for binary in ("containerd", "ctr", "containerd-shim-runc-v2")})
        files["/containerd/v%s/%s" % (CONTAINERD, name)] = data
        files["/containerd/v%s/%s.sha256sum" % (CONTAINERD, name)] = ("%s  %s\n" % (sha256(data), name)).encode()
        name = "cni-plugins-linux-%s-v%s.tgz" % (arch, CNI_PLUGINS)
        data = tar_gz({"./%s" % plugin: ("%s %s\n" % (plugin, arch)).encode()
                       for plugin in ("bridge", "host-local", "loopback", "portmap")})
        files["/cni/v%s/%s" % (CNI_PLUGINS, name)] = data
        files["/cni/v%s/%s.sha256" % (CNI_PLUGINS, name)] = ("%s  %s\n" % (sha256(data), name)).encode()
    return files


class Mirror:
    """The release sites on 127.0.0.1, every request recorded; ``replaced`` serves other bytes for a path, or a
    404 for None."""

    def __init__(self):
        self.files, self.replaced, self.requests = mirror_files(), {}, []
        mirror = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the name http.server calls)
                self.answer(body=True)

            def do_HEAD(self):  # noqa: N802
                self.answer(body=False)

            def answer(self, body):
                mirror.requests.append((self.command, self.path))
                data = mirror.replaced.get(self.path, mirror.files.get(self.path))
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def extra_vars(self, bundle, **more):
        """The playbook's variables for a bundle at ``bundle`` built from this mirror."""
        return dict(bundle_build_dir=str(bundle), bundle_build_versions=VERSIONS, bundle_build_arches=ARCHES,
                    bundle_build_containerd_version=CONTAINERD, bundle_build_cni_plugins_version=CNI_PLUGINS,
                    bundle_build_kubernetes_url=self.url + "/k8s", bundle_build_containerd_url=self.url + "/containerd",
                    bundle_build_cni_plugins_url=self.url + "/cni", **more)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture(scope="module")
def mirror():
    served = Mirror()
    yield served
    served.close()


@pytest.fixture
def fresh_mirror(mirror):
    """The module's mirror with nothing replaced and no request recorded yet."""
    mirror.replaced.clear()
    del mirror.requests[:]
    yield mirror
    mirror.replaced.clear()


def playbook(extra_vars, check=False):
    """ansible-playbook playbooks/bundle.yml with ``extra_vars``; the CompletedProcess (stdout: the play's output)."""
    argv = [os.path.join(BIN, "ansible-playbook"), PLAYBOOK, "-e", json.dumps(extra_vars)] + (["--check"] if check else [])
    done = subprocess.run(argv, cwd=ROOT, env=ansible_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=600, check=False)
    assert "Traceback" not in done.stdout + done.stderr
    return done


def recap(output):
    """localhost's counts in the PLAY RECAP (ok, changed, failed, ...)."""
    line = re.search(r"^localhost\s+:(.*)$", output.split("PLAY RECAP", 1)[-1], re.M).group(1)
    return {key: int(value) for key, value in (pair.split("=") for pair in line.split())}


def bundle_files(version, arch):
    """The path in a version's directory of every file the bundle holds for ``arch``."""
    return ["bin/linux/%s/%s" % (arch, name) for name in BINARIES] + [
        "containerd-%s-linux-%s.tar.gz" % (CONTAINERD, arch), "cni-plugins-linux-%s-v%s.tgz" % (arch, CNI_PLUGINS)]


def mirror_path(version, path):
    """Where a downloaded file of the bundle comes from on the mirror."""
    if path.startswith("bin/"):
        return "/k8s/%s/%s" % (version, path)
    if path.startswith("containerd-"):
        return "/containerd/v%s/%s" % (CONTAINERD, path)
    return "/cni/v%s/%s" % (CNI_PLUGINS, path)


def all_files(root):
    return sorted(os.path.relpath(os.path.join(top, name), str(root)) for top, dirs, names in os.walk(str(root))
                  for name in names)


@pytest.fixture(scope="module")
def built(mirror, tmp_path_factory):
    """A bundle of both versions and both architectures, built once: (its directory, the first run, the requests)."""
    mirror.replaced.clear()
    del mirror.requests[:]
    bundle = tmp_path_factory.mktemp("bundle")
    done = playbook(mirror.extra_vars(bundle))
    return bundle, done, list(mirror.requests)


def test_the_bundle_is_laid_out_as_documented_with_every_file_from_the_mirror(built, mirror):
    bundle, done, requests = built
    assert done.returncode == 0, done.stdout[-4000:]
    expected = []
    for version in VERSIONS:
        downloaded = [path for arch in ARCHES for path in bundle_files(version, arch)]
        expected += ["%s/%s" % (version, path) for path in downloaded + list(OWN_FILES) + ["SHA256SUMS"]]
        for path in downloaded:
            with open(str(bundle / version / path), "rb") as handle:
                assert handle.read() == mirror.files[mirror_path(version, path)], path
            mode = os.stat(str(bundle / version / path)).st_mode & 0o777
            assert mode == (0o755 if path.startswith("bin/") else 0o644), (path, oct(mode))
    assert all_files(bundle) == sorted(expected)
    artifact_gets = [path for method, path in requests if method == "GET" and not path.endswith(("sha256", "sha256sum"))]
    assert len(artifact_gets) == len(VERSIONS) * len(ARCHES) * 5, "a file was downloaded twice"


def test_sha256sums_lists_every_file_of_the_version_sorted_with_the_digest_on_disk(built):
    bundle = built[0]
    for version in VERSIONS:
        directory = bundle / version
        files = sorted([path for arch in ARCHES for path in bundle_files(version, arch)] + list(OWN_FILES))
        with open(str(directory / "SHA256SUMS"), encoding="utf-8") as handle:
            text = handle.read()
        assert text == "".join("%s  %s\n" % (sha256((directory / path).read_bytes()), path) for path in files)
        assert oct(os.stat(str(directory / "SHA256SUMS")).st_mode & 0o777) == "0o644"


def test_node_bundle_info_accepts_the_bundle_in_the_play_and_on_its_own(built):
    bundle, done = built[:2]
    assert "Check the bundle as the node_software role will" in done.stdout
    for version in VERSIONS:
        for arch in ARCHES:
            outcome, result = run_module("node_bundle_info", {"path": str(bundle), "version": version, "arch": arch})
            assert outcome == "SUCCESS", result
            assert result["artifacts"]["kubelet"]["src"] == str(bundle / version / "bin/linux" / arch / "kubelet")
            containerd = result["artifacts"]["containerd"]["src"]
            with tarfile.open(containerd) as archive:
                assert "bin/containerd" in archive.getnames()
            with tarfile.open(result["artifacts"]["cni_plugins"]["src"]) as archive:
                assert {"./bridge", "./host-local", "./loopback"} <= set(archive.getnames())


def test_the_units_are_kubeadms_with_the_kubelet_in_usr_local_bin(built):
    directory = built[0] / VERSIONS[0]
    unit = (directory / "systemd/kubelet.service").read_text()
    assert "ExecStart=/usr/local/bin/kubelet\n" in unit
    dropin = (directory / "systemd/kubelet.service.d/10-kubeadm.conf").read_text()
    for line in ('Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf '
                 '--kubeconfig=/etc/kubernetes/kubelet.conf"',
                 'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"',
                 "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env", "EnvironmentFile=-/etc/default/kubelet",
                 "ExecStart=\n",
                 "ExecStart=/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS "
                 "$KUBELET_EXTRA_ARGS"):
        assert line in dropin
    assert "ExecStart=/usr/local/bin/containerd\n" in (directory / "systemd/containerd.service").read_text()
    network = json.loads((directory / "cni/10-bridge.conflist").read_text())
    assert [plugin["type"] for plugin in network["plugins"]] == ["bridge", "portmap"]


def test_a_second_run_changes_nothing_and_downloads_nothing(built, fresh_mirror):
    bundle = built[0]
    before = {path: os.stat(str(bundle / path)).st_mtime_ns for path in all_files(bundle)}
    done = playbook(fresh_mirror.extra_vars(bundle))
    assert done.returncode == 0, done.stdout[-4000:]
    assert recap(done.stdout)["changed"] == 0, done.stdout[-4000:]
    # Only the checksum files are read again, to check what is on disk against what the mirror publishes now.
    assert fresh_mirror.requests and all(path.endswith((".sha256", ".sha256sum")) for method, path in fresh_mirror.requests)
    assert {path: os.stat(str(bundle / path)).st_mtime_ns for path in all_files(bundle)} == before


def test_check_mode_on_a_built_bundle_has_nothing_to_do(built, fresh_mirror):
    done = playbook(fresh_mirror.extra_vars(built[0]), check=True)
    assert done.returncode == 0, done.stdout[-4000:]
    assert recap(done.stdout)["changed"] == 0, done.stdout[-4000:]


def test_check_mode_on_an_empty_directory_says_what_it_would_download_and_creates_nothing(fresh_mirror, tmp_path):
    done = playbook(fresh_mirror.extra_vars(tmp_path), check=True)
    assert done.returncode == 0, done.stdout[-4000:]
    assert os.listdir(str(tmp_path)) == []
    kubeadm = "download %s/k8s/v1.37.0/bin/linux/arm64/kubeadm to %s/v1.37.0/bin/linux/arm64/kubeadm" % (
        fresh_mirror.url, tmp_path)
    assert kubeadm in done.stdout
    assert "write %s/v1.36.4/systemd/kubelet.service.d/10-kubeadm.conf" % tmp_path in done.stdout
    assert not [path for method, path in fresh_mirror.requests if method == "GET" and not path.endswith("sha256")]


def one_arch(mirror, bundle, **more):
    return dict(mirror.extra_vars(bundle, **more), bundle_build_versions=["v1.37.0"], bundle_build_arches=["amd64"])


def test_a_mirror_file_that_does_not_match_its_checksum_is_named_and_no_sha256sums_lists_it(fresh_mirror, tmp_path):
    path = "/k8s/v1.37.0/bin/linux/amd64/kubelet"
    fresh_mirror.replaced[path] = b"not the release's kubelet\n"
    done = playbook(one_arch(fresh_mirror, tmp_path))
    assert done.returncode != 0
    assert "v1.37.0/bin/linux/amd64/kubelet: what %s%s sent has SHA-256 %s, %s%s.sha256 says %s; it was not kept." % (
        fresh_mirror.url, path, sha256(fresh_mirror.replaced[path]), fresh_mirror.url, path,
        sha256(fresh_mirror.files[path])) in done.stdout, done.stdout[-4000:]
    assert not (tmp_path / "v1.37.0/bin/linux/amd64/kubelet").exists()
    assert not (tmp_path / "v1.37.0/SHA256SUMS").exists()
    assert run_module("node_bundle_info", {"path": str(tmp_path), "version": "v1.37.0"})[0] == "FAILED!"


def test_a_pinned_checksum_is_used_instead_of_the_mirrors(fresh_mirror, tmp_path):
    kubectl = fresh_mirror.files["/k8s/v1.37.0/bin/linux/amd64/kubectl"]
    pinned = {"v1.37.0/bin/linux/amd64/kubectl": sha256(kubectl).upper()}
    done = playbook(one_arch(fresh_mirror, tmp_path, bundle_build_checksums=pinned))
    assert done.returncode == 0, done.stdout[-4000:]
    assert ("GET", "/k8s/v1.37.0/bin/linux/amd64/kubectl.sha256") not in fresh_mirror.requests
    assert (tmp_path / "v1.37.0/bin/linux/amd64/kubectl").read_bytes() == kubectl


def test_a_pinned_checksum_that_disagrees_fails_naming_the_file(fresh_mirror, tmp_path):
    name = "cni-plugins-linux-amd64-v%s.tgz" % CNI_PLUGINS
    pinned = {"v1.37.0/" + name: sha256(b"another archive")}
    done = playbook(one_arch(fresh_mirror, tmp_path, bundle_build_checksums=pinned))
    assert done.returncode != 0
    assert "v1.37.0/%s: what %s/cni/v%s/%s sent has SHA-256 %s, bundle_build_checksums says %s; it was not kept." % (
        name, fresh_mirror.url, CNI_PLUGINS, name, sha256(fresh_mirror.files["/cni/v%s/%s" % (CNI_PLUGINS, name)]),
        sha256(b"another archive")) in done.stdout, done.stdout[-4000:]
    assert not (tmp_path / "v1.37.0/SHA256SUMS").exists()


def test_a_pinned_checksum_of_a_file_the_run_does_not_fetch_is_refused(fresh_mirror, tmp_path):
    pinned = {"bin/linux/amd64/kubeadm": sha256(b"kubeadm")}
    done = playbook(one_arch(fresh_mirror, tmp_path, bundle_build_checksums=pinned))
    assert done.returncode != 0
    assert "bundle_build_checksums names bin/linux/amd64/kubeadm, which this run does not fetch" in done.stdout
    assert fresh_mirror.requests == []


def test_a_file_missing_from_the_mirror_fails_with_its_url(fresh_mirror, tmp_path):
    missing = "/containerd/v%s/containerd-%s-linux-amd64.tar.gz" % (CONTAINERD, CONTAINERD)
    fresh_mirror.replaced[missing] = None
    done = playbook(one_arch(fresh_mirror, tmp_path))
    assert done.returncode != 0
    assert "v1.37.0/containerd-%s-linux-amd64.tar.gz: Request failed (HTTP Error 404: Not Found) from %s%s." % (
        CONTAINERD, fresh_mirror.url, missing) in done.stdout, done.stdout[-4000:]
    assert not (tmp_path / "v1.37.0/SHA256SUMS").exists()
