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
    ("v1.37.1\n", "amd64", "version: 'v1.37.1\\n' is not a release version like v1.37.1"),
    ("v1.37.1", "amd64\n", "arch: 'amd64\\n' is not an architecture name like amd64"),
], ids=["a version without its v", "a version that is a path", "an architecture that is not a name",
        "a version with a trailing newline", "an architecture with a trailing newline"])
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


@pytest.mark.parametrize("role, file, dest", [
    ("kubeadm", "bin/linux/amd64/kubeadm", "/usr/local/bin/kubeadm"),
    ("kubelet", "bin/linux/amd64/kubelet", "/usr/local/bin/kubelet"),
    ("kubectl", "bin/linux/amd64/kubectl", "/usr/local/bin/kubectl"),
    ("containerd", "containerd-2.1.4-linux-amd64.tar.gz", "/usr/local"),
    ("cni_plugins", "cni-plugins-linux-amd64-v1.7.1.tgz", "/opt/cni/bin"),
    ("kubelet_unit", "systemd/kubelet.service", "/etc/systemd/system/kubelet.service"),
    ("kubelet_dropin", "systemd/kubelet.service.d/10-kubeadm.conf", "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"),
    ("containerd_unit", "systemd/containerd.service", "/etc/systemd/system/containerd.service"),
    ("cni_config", "cni/10-bridge.conflist", "/etc/cni/net.d/99-kcp-bridge.conflist"),
], ids=["kubeadm goes to /usr/local/bin", "the kubelet goes to /usr/local/bin", "kubectl goes to /usr/local/bin",
        "containerd's archive is extracted into /usr/local", "the CNI plugins' archive is extracted into /opt/cni/bin",
        "the kubelet's unit goes to systemd's directory", "kubeadm's drop-in goes beside the kubelet's unit",
        "containerd's unit goes to systemd's directory", "the stand-in pod network sorts after any other"])
def test_each_artifact_is_the_bundles_file_installed_where_the_docs_say(role, file, dest):
    sums, unused = node_bundle.parse_sums(sums_text())
    chosen, missing = node_bundle.select(sums, "amd64")
    assert missing == []
    assert chosen[role] == {"file": file, "sha256": A, "dest": dest}


def test_an_empty_sums_file_names_every_artifact_missing_with_a_file_like_it():
    chosen, missing = node_bundle.select({}, "arm64")
    assert chosen == {}
    assert missing == [
        "SHA256SUMS lists no cni_config for arm64 (a file like cni/10-bridge.conflist)",
        "SHA256SUMS lists no cni_plugins for arm64 (a file like cni-plugins-linux-arm64-v[0-9][^/]*.tgz)",
        "SHA256SUMS lists no containerd for arm64 (a file like containerd-[0-9][^/]*-linux-arm64.tar.gz)",
        "SHA256SUMS lists no containerd_unit for arm64 (a file like systemd/containerd.service)",
        "SHA256SUMS lists no kubeadm for arm64 (a file like bin/linux/arm64/kubeadm)",
        "SHA256SUMS lists no kubectl for arm64 (a file like bin/linux/arm64/kubectl)",
        "SHA256SUMS lists no kubelet for arm64 (a file like bin/linux/arm64/kubelet)",
        "SHA256SUMS lists no kubelet_dropin for arm64 (a file like systemd/kubelet.service.d/10-kubeadm.conf)",
        "SHA256SUMS lists no kubelet_unit for arm64 (a file like systemd/kubelet.service)",
    ]


LONG = "x" * 100


@pytest.mark.parametrize("text, errors", [
    ("not a checksum line\n", ["SHA256SUMS line 1: not '<sha256> <file>': 'not a checksum line'"]),
    ("\n%s  kubeadm\n%s\n" % (A, LONG), ["SHA256SUMS line 3: not '<sha256> <file>': '%s'" % LONG[:80]]),
    ("%s  ../../etc/passwd\n" % A, ["SHA256SUMS line 1: ../../etc/passwd is not a path inside the bundle"]),
    ("%s  ./../kubeadm\n" % A, ["SHA256SUMS line 1: ../kubeadm is not a path inside the bundle"]),
    ("%s  /usr/bin/kubeadm\n" % A, ["SHA256SUMS line 1: /usr/bin/kubeadm is not a path inside the bundle"]),
    ("%s  kubeadm\n%s  kubeadm\n" % (A, B), ["SHA256SUMS line 2: kubeadm is listed twice with different checksums"]),
], ids=["a line that is not a checksum is quoted", "a long malformed line is quoted to its first 80 characters",
        "a path that climbs out of the bundle", "a path that climbs out after a leading dot slash", "an absolute path",
        "one file with two checksums names the second line"])
def test_each_malformed_line_is_one_error_that_names_its_line(text, errors):
    assert node_bundle.parse_sums(text)[1] == errors


@pytest.mark.parametrize("version, arch, errors", [
    ("v1.37.1", "amd64", []),
    ("v1.37.1", "arm64", []),
    ("1.37", "", ["version: '1.37' is not a release version like v1.37.1", "arch: '' is not an architecture name like amd64"]),
    (None, "amd64", ["version: None is not a release version like v1.37.1"]),
], ids=["a release version for amd64 is fine", "a release version for arm64 is fine",
        "a bad version and an empty architecture are two errors", "a missing version is refused"])
def test_the_request_is_checked_field_by_field(version, arch, errors):
    assert node_bundle.check_request(version, arch) == errors


@pytest.mark.parametrize("only, roles", [
    (None, ("kubeadm", "kubelet", "kubectl", "kubelet_unit", "kubelet_dropin", "containerd_unit", "cni_config", "containerd", "cni_plugins")),
    (["kubeadm"], ("kubeadm",)),
    (["kubelet"], ("kubelet", "kubelet_unit", "kubelet_dropin")),
    (["kubectl"], ("kubectl",)),
    (["containerd"], ("containerd_unit", "containerd")),
    (["cni_plugins"], ("cni_plugins",)),
    (["pod_network"], ("cni_config",)),
    (["kubeadm", "containerd", "cni_plugins"], ("kubeadm", "containerd_unit", "containerd", "cni_plugins")),
    (["kubectl", "kubelet"], ("kubelet", "kubectl", "kubelet_unit", "kubelet_dropin")),
    ([], ()),
], ids=["null installs everything, files before archives", "kubeadm alone", "the kubelet with its unit and kubeadm's drop-in",
        "kubectl alone", "containerd with its unit", "the CNI plugins alone", "the pod network is its configuration",
        "an in-place upgrade's first go", "an in-place upgrade's second go, in the installed order", "nothing named installs nothing"])
def test_the_components_named_install_their_files_in_the_installed_order(only, roles):
    assert node_bundle.selected(only) == roles


def test_a_component_that_does_not_exist_is_refused_naming_the_ones_that_do():
    with pytest.raises(ValueError) as raised:
        node_bundle.selected(["kubeadm", "runc", "etcd"])
    assert str(raised.value) == "etcd, runc: not a component (cni_plugins, containerd, kubeadm, kubectl, kubelet, pod_network)"


NEW, OLD = "v1.37.1", "v1.36.2"
BUNDLE = {role: {"sha256": A, "dest": "/usr/local/bin/%s" % role} for role in node_bundle.BINARIES}
OLD_RECORD = {"version": OLD, "versions": {"kubeadm": OLD, "kubelet": OLD, "kubectl": OLD}, "sha256": {"kubeadm": B, "kubelet": B, "kubectl": B}}
HALF_WAY = {"version": None, "versions": {"kubeadm": NEW, "kubelet": OLD, "kubectl": OLD}, "sha256": {"kubeadm": A, "kubelet": B, "kubectl": B}}


@pytest.mark.parametrize("record, roles, after", [
    ({}, node_bundle.BINARIES,
     {"version": NEW, "versions": {"kubeadm": NEW, "kubelet": NEW, "kubectl": NEW}, "sha256": {"kubeadm": A, "kubelet": A, "kubectl": A}}),
    (OLD_RECORD, ("kubeadm",), HALF_WAY),
    (HALF_WAY, ("kubelet", "kubectl"),
     {"version": NEW, "versions": {"kubeadm": NEW, "kubelet": NEW, "kubectl": NEW}, "sha256": {"kubeadm": A, "kubelet": A, "kubectl": A}}),
    (HALF_WAY, ("kubelet",),
     {"version": None, "versions": {"kubeadm": NEW, "kubelet": NEW, "kubectl": OLD}, "sha256": {"kubeadm": A, "kubelet": A, "kubectl": B}}),
    ({"version": OLD, "sha256": {"kubeadm": B, "kubelet": B, "kubectl": B}}, ("kubeadm",),
     {"version": None, "versions": {"kubeadm": NEW, "kubelet": OLD, "kubectl": OLD}, "sha256": {"kubeadm": A, "kubelet": B, "kubectl": B}}),
    ({"version": OLD, "versions": "not a mapping", "sha256": {"kubelet": B}}, ("kubeadm",),
     {"version": None, "versions": {"kubeadm": NEW, "kubelet": OLD}, "sha256": {"kubeadm": A, "kubelet": B}}),
    ({"version": OLD, "versions": {"kubelet": OLD}, "sha256": "not a mapping"}, ("kubeadm",),
     {"version": None, "versions": {"kubeadm": NEW}, "sha256": {"kubeadm": A}}),
    ({}, ("kubeadm",), {"version": None, "versions": {"kubeadm": NEW}, "sha256": {"kubeadm": A}}),
    (OLD_RECORD, (), OLD_RECORD),
], ids=["a bare host given all three is of the new version", "kubeadm first leaves the host half way, of no one version",
        "the kubelet and kubectl after the drain make it whole again", "the kubelet alone keeps kubectl's old version",
        "a record from before versions existed names its one version for all three",
        "versions that are not a mapping fall back to the record's version", "checksums that are not a mapping are forgotten",
        "a binary the host never had from the role is left out, so there is no one version", "installing no binary keeps the record as it was"])
def test_the_record_changes_only_for_the_binaries_installed(record, roles, after):
    assert node_bundle.record_after(record, NEW, BUNDLE, roles) == after


def test_only_the_binaries_a_run_installs_are_looked_at_for_foreign_software():
    installed = {"kubeadm": B, "kubelet": B, "kubectl": B}
    assert node_bundle.foreign_binaries(BUNDLE, installed, {}, False, roles=("kubeadm",)) == [
        "/usr/local/bin/kubeadm is not the bundle's kubeadm (SHA-256 %s, the bundle's is %s) and not one the node_software role installed." % (B, A)]
    assert node_bundle.foreign_binaries(BUNDLE, installed, {}, False, roles=()) == []


URLS = {"kubernetes": "https://dl.k8s.io/release", "containerd": "https://mirror/containerd",
        "cni_plugins": "https://mirror/cni"}


def test_the_files_a_built_bundle_holds_each_version_and_architecture_once():
    files = node_bundle.bundle_files(["v1.37.0", "v1.37.0"], ["amd64"], "2.2.4", "1.9.1", URLS, {})
    assert [d["file"] for d in files["downloads"]] == [
        "v1.37.0/bin/linux/amd64/kubeadm", "v1.37.0/bin/linux/amd64/kubelet", "v1.37.0/bin/linux/amd64/kubectl",
        "v1.37.0/containerd-2.2.4-linux-amd64.tar.gz", "v1.37.0/cni-plugins-linux-amd64-v1.9.1.tgz"]
    kubeadm, containerd, cni = (files["downloads"][i] for i in (0, 3, 4))
    assert kubeadm == dict(file="v1.37.0/bin/linux/amd64/kubeadm", mode="0755",
                           url="https://dl.k8s.io/release/v1.37.0/bin/linux/amd64/kubeadm",
                           checksum="https://dl.k8s.io/release/v1.37.0/bin/linux/amd64/kubeadm.sha256",
                           checksum_from="https://dl.k8s.io/release/v1.37.0/bin/linux/amd64/kubeadm.sha256")
    assert containerd["url"] == "https://mirror/containerd/v2.2.4/containerd-2.2.4-linux-amd64.tar.gz"
    assert containerd["checksum"].endswith(".tar.gz.sha256sum") and containerd["mode"] == "0644"
    assert cni["url"] == "https://mirror/cni/v1.9.1/cni-plugins-linux-amd64-v1.9.1.tgz"
    assert [f["file"] for f in files["own_files"]] == [
        "v1.37.0/systemd/kubelet.service", "v1.37.0/systemd/kubelet.service.d/10-kubeadm.conf",
        "v1.37.0/systemd/containerd.service", "v1.37.0/cni/10-bridge.conflist"]
    assert files["unknown_pins"] == []


def test_a_pinned_digest_replaces_the_published_one_and_a_pin_the_bundle_does_not_hold_is_named():
    pins = {"v1.37.0/bin/linux/amd64/kubelet": "AB" * 32, "v1.36.0/bin/linux/amd64/kubelet": "cd" * 32}
    files = node_bundle.bundle_files(["v1.37.0"], ["amd64"], "2.2.4", "1.9.1", URLS, pins)
    kubelet = files["downloads"][1]
    assert (kubelet["checksum"], kubelet["checksum_from"]) == ("ab" * 32, "bundle_build_checksums")
    assert files["unknown_pins"] == ["v1.36.0/bin/linux/amd64/kubelet"]
