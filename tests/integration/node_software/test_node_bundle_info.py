# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_bundle_info through ansible-core, on a bundle laid out in a scratch directory: what it returns, and each
file it refuses, named."""

import hashlib
import os

import pytest

from ansible_run import run_module

pytestmark = pytest.mark.ansible
VERSION = "v1.37.1"
FILES = {"bin/linux/amd64/kubeadm": b"kubeadm", "bin/linux/amd64/kubelet": b"kubelet",
         "bin/linux/amd64/kubectl": b"kubectl", "containerd-2.1.4-linux-amd64.tar.gz": b"containerd",
         "cni-plugins-linux-amd64-v1.7.1.tgz": b"cni", "systemd/kubelet.service": b"unit",
         "systemd/kubelet.service.d/10-kubeadm.conf": b"drop-in", "systemd/containerd.service": b"unit 2",
         "cni/10-bridge.conflist": b"{}"}


@pytest.fixture
def bundle(tmp_path):
    directory = tmp_path / VERSION
    for name, content in FILES.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(content)
    (directory / "SHA256SUMS").write_text("".join("%s  %s\n" % (hashlib.sha256(content).hexdigest(), name)
                                                  for name, content in FILES.items()))
    return tmp_path


def test_a_good_bundle_says_which_file_goes_where(bundle):
    outcome, result = run_module("node_bundle_info", {"path": str(bundle), "version": VERSION})
    assert outcome == "SUCCESS" and result["changed"] is False
    kubeadm = result["artifacts"]["kubeadm"]
    assert kubeadm["src"] == os.path.join(str(bundle), VERSION, "bin/linux/amd64/kubeadm")
    assert kubeadm["sha256"] == hashlib.sha256(b"kubeadm").hexdigest()
    assert kubeadm["dest"] == "/usr/local/bin/kubeadm"
    assert result["directory"] == os.path.join(str(bundle), VERSION)


def test_a_file_that_does_not_match_its_checksum_is_named(bundle):
    (bundle / VERSION / "bin/linux/amd64/kubelet").write_bytes(b"tampered")
    outcome, result = run_module("node_bundle_info", {"path": str(bundle), "version": VERSION})
    assert outcome == "FAILED!"
    assert result["errors"] == ["%s: its SHA-256 is %s, SHA256SUMS says %s" % (
        bundle / VERSION / "bin/linux/amd64/kubelet", hashlib.sha256(b"tampered").hexdigest(),
        hashlib.sha256(b"kubelet").hexdigest())]


def test_a_listed_file_that_is_missing_is_named(bundle):
    os.remove(str(bundle / VERSION / "systemd/containerd.service"))
    outcome, result = run_module("node_bundle_info", {"path": str(bundle), "version": VERSION})
    assert outcome == "FAILED!"
    assert result["errors"] == ["%s: cannot be read: No such file or directory" % (
        bundle / VERSION / "systemd/containerd.service")]


def test_a_version_the_bundle_does_not_hold_names_its_sums_file(bundle):
    outcome, result = run_module("node_bundle_info", {"path": str(bundle), "version": "v1.36.4"})
    assert outcome == "FAILED!"
    assert result["errors"][0].startswith("%s: cannot be read:" % (bundle / "v1.36.4" / "SHA256SUMS"))


def test_an_artifact_missing_from_the_sums_file_is_refused_though_the_file_is_there(bundle):
    sums = bundle / VERSION / "SHA256SUMS"
    sums.write_text("".join(line for line in sums.read_text().splitlines(True) if "kubectl" not in line))
    outcome, result = run_module("node_bundle_info", {"path": str(bundle), "version": VERSION})
    assert outcome == "FAILED!"
    assert result["errors"] == ["SHA256SUMS lists no kubectl for amd64 (a file like bin/linux/amd64/kubectl)"]
