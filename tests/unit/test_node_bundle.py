# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which file of the node software bundle a node gets (node_bundle): SHA256SUMS parsed, one file per artifact."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_bundle

A, B = "a" * 64, "b" * 64
FILES = ("bin/linux/amd64/kubeadm", "bin/linux/amd64/kubelet", "bin/linux/amd64/kubectl",
         "bin/linux/arm64/kubeadm", "containerd-2.1.4-linux-amd64.tar.gz", "cni-plugins-linux-amd64-v1.7.1.tgz",
         "systemd/kubelet.service", "systemd/kubelet.service.d/10-kubeadm.conf", "systemd/containerd.service",
         "cni/10-bridge.conflist")


def sums_text(files=FILES, digest=A):
    return "".join("%s  %s\n" % (digest, name) for name in files)


def test_every_artifact_is_found_for_the_architecture_asked_for():
    sums, errors = node_bundle.parse_sums(sums_text())
    chosen, missing = node_bundle.select(sums, "amd64")
    assert errors == [] and missing == []
    assert chosen["kubeadm"] == {"file": "bin/linux/amd64/kubeadm", "sha256": A, "dest": "/usr/local/bin/kubeadm"}
    assert chosen["containerd"]["file"] == "containerd-2.1.4-linux-amd64.tar.gz"
    assert chosen["containerd"]["dest"] == "/usr/local"
    assert chosen["cni_plugins"]["dest"] == "/opt/cni/bin"
    assert set(chosen) == set(node_bundle.ARTIFACTS)


def test_binary_mode_lines_and_a_leading_dot_slash_are_read_as_sha256sum_writes_them():
    sums, errors = node_bundle.parse_sums("%s *./bin/linux/amd64/kubeadm\n\n" % B)
    assert errors == [] and sums == {"bin/linux/amd64/kubeadm": B}


def test_an_architecture_with_only_some_artifacts_names_each_missing_one():
    sums, unused = node_bundle.parse_sums(sums_text())
    chosen, missing = node_bundle.select(sums, "arm64")
    assert "kubeadm" in chosen and "kubelet" not in chosen
    assert "SHA256SUMS lists no kubelet for arm64 (a file like bin/linux/arm64/kubelet)" in missing
    assert any(m.startswith("SHA256SUMS lists no containerd for arm64") for m in missing)


def test_two_runtimes_for_one_architecture_are_ambiguous():
    sums, unused = node_bundle.parse_sums(sums_text(FILES + ("containerd-2.2.0-linux-amd64.tar.gz",)))
    unused, missing = node_bundle.select(sums, "amd64")
    assert missing == ["SHA256SUMS lists more than one containerd for amd64: containerd-2.1.4-linux-amd64.tar.gz, "
                       "containerd-2.2.0-linux-amd64.tar.gz"]


@pytest.mark.parametrize("text, error", [
    ("not a checksum line\n", "SHA256SUMS line 1: not '<sha256> <file>'"),
    ("%s  ../../etc/passwd\n" % A, "../../etc/passwd is not a path inside the bundle"),
    ("%s  /usr/bin/kubeadm\n" % A, "/usr/bin/kubeadm is not a path inside the bundle"),
    ("%s  kubeadm\n%s  kubeadm\n" % (A, B), "SHA256SUMS line 2: kubeadm is listed twice with different checksums"),
    ("%s  kubeadm\n" % A[:63], "SHA256SUMS line 1: not '<sha256> <file>'"),
], ids=["a line that is not a checksum", "a path that climbs out of the bundle", "an absolute path",
        "one file with two checksums", "a checksum one digit short"])
def test_a_malformed_sums_file_is_refused_line_by_line(text, error):
    unused, errors = node_bundle.parse_sums(text)
    assert any(error in e for e in errors), errors


@pytest.mark.parametrize("version, arch, error", [
    ("1.37.1", "amd64", "version: '1.37.1' is not a release version like v1.37.1"),
    ("v1.37.1/../x", "amd64", "version: "),
    ("v1.37.1", "AMD 64", "arch: 'AMD 64' is not an architecture name like amd64"),
], ids=["a version without its v", "a version that is a path", "an architecture that is not a name"])
def test_the_request_is_checked_before_any_file_is_read(version, arch, error):
    errors = node_bundle.check_request(version, arch)
    assert errors and errors[0].startswith(error)


def test_a_file_listed_twice_with_the_same_checksum_is_one_file():
    sums, errors = node_bundle.parse_sums("%s  kubeadm\n%s  kubeadm\n" % (A, A))
    assert errors == [] and sums == {"kubeadm": A}


def test_a_missing_architecture_is_refused():
    assert node_bundle.check_request("v1.37.1", None) == ["arch: None is not an architecture name like amd64"]


ARTIFACTS = {role: {"sha256": A, "dest": "/usr/local/bin/%s" % role} for role in node_bundle.BINARIES}


@pytest.mark.parametrize("installed, record, replace, refused", [
    ({}, {}, False, []),  # a bare host
    ({"kubeadm": A, "kubelet": A, "kubectl": A}, {}, False, []),  # the bundle's already
    ({"kubelet": B}, {"sha256": {"kubelet": B}}, False, []),  # what the role installed before (another version)
    ({"kubectl": B}, {}, False, ["kubectl"]),  # someone else's
    ({"kubectl": B}, {"sha256": {"kubelet": B}}, False, ["kubectl"]),  # the record names another binary's checksum
    ({"kubectl": B}, {"sha256": "not a mapping"}, False, ["kubectl"]),
    ({"kubectl": B, "kubeadm": B}, {}, True, []),  # replace asked for
])
def test_software_neither_the_bundles_nor_the_roles_is_refused_unless_replaced(installed, record, replace, refused):
    found = node_bundle.foreign_binaries(ARTIFACTS, installed, record, replace)
    assert len(found) == len(refused)
    for role, message in zip(refused, found):
        assert message.startswith("/usr/local/bin/%s is not the bundle's %s (SHA-256 %s, the bundle's is %s)" % (role, role, B, A))
