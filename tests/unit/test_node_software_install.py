# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_software_install's host side on a scratch directory: when an archive counts as installed, which members are
refused, the extraction renaming files into place (a running binary is replaced, not written over), and what
systemctl is asked to do."""

import io
import os
import tarfile

import pytest

from ansible_collections.kubeadm.control_plane.plugins.action.node_software_install import archive_listing
from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_bundle
from ansible_collections.kubeadm.control_plane.plugins.modules import node_software_install as install


def make_archive(path, files, links=()):
    with tarfile.open(path, "w:gz") as archive:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(content), 0o755, 1700000000
            archive.addfile(info, io.BytesIO(content))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return str(path)


def test_an_extracted_archive_is_up_to_date_and_a_changed_member_is_not(tmp_path):
    archive = make_archive(tmp_path / "a.tgz", {"bin/containerd": b"v2", "bin/ctr": b"ctr"}, [("bin/alias", "ctr")])
    dest = tmp_path / "usr-local"
    listing = archive_listing(archive)
    assert not install.archive_up_to_date(str(dest), listing)
    install.extract(archive, str(dest))
    assert install.archive_up_to_date(str(dest), listing)
    assert (dest / "bin/containerd").read_bytes() == b"v2" and os.readlink(str(dest / "bin/alias")) == "ctr"
    assert not [name for name in os.listdir(str(dest)) if name.startswith(".kcp-extract-")]
    (dest / "bin/ctr").write_bytes(b"someone else's")
    assert not install.archive_up_to_date(str(dest), listing)


def test_extraction_replaces_a_file_by_renaming_so_a_running_binary_is_never_written_over(tmp_path):
    dest = tmp_path / "usr-local"
    install.extract(make_archive(tmp_path / "old.tgz", {"bin/containerd": b"v1"}), str(dest))
    running = os.open(str(dest / "bin/containerd"), os.O_RDONLY)  # the running process keeps its inode
    try:
        inode = os.fstat(running).st_ino
        install.extract(make_archive(tmp_path / "new.tgz", {"bin/containerd": b"v2"}), str(dest))
        assert os.stat(str(dest / "bin/containerd")).st_ino != inode
        assert os.pread(running, 2, 0) == b"v1" and (dest / "bin/containerd").read_bytes() == b"v2"
    finally:
        os.close(running)


@pytest.mark.parametrize("files, links, refused", [
    ({"/etc/passwd": b"x"}, (), "would be extracted outside"),
    ({"bin/../../etc/passwd": b"x"}, (), "would be extracted outside"),
    ({}, [("bin/sh", "/bin/sh")], "links outside"),
    ({}, [("bin/up", "../../etc")], "links outside"),
])
def test_members_that_would_land_outside_the_directory_are_refused_and_nothing_is_extracted(tmp_path, files, links, refused):
    dest = tmp_path / "dest"
    with pytest.raises(ValueError, match=refused):
        install.extract(make_archive(tmp_path / "bad.tgz", files, links), str(dest))
    assert os.listdir(str(dest)) == []


def host(containerd=(True, True), kubelet=(True, False)):
    return {"services": {"containerd": dict(zip(("enabled", "active"), containerd)),
                         "kubelet": dict(zip(("enabled", "active"), kubelet))}}


@pytest.mark.parametrize("found, units_changed, containerd_changed, actions", [
    (host(), False, False, []),
    (host(containerd=(False, False), kubelet=(False, False)), True, True,
     ["daemon-reload", "enable containerd", "start containerd", "enable kubelet"]),
    (host(), False, True, ["restart containerd"]),  # the new binary runs
    (host(containerd=(True, False)), False, True, ["start containerd"]),
    (host(kubelet=(False, True)), True, False, ["daemon-reload", "enable kubelet"]),  # kubeadm starts the kubelet
])
def test_systemctl_is_asked_only_for_what_differs(found, units_changed, containerd_changed, actions):
    assert install.service_actions(found, units_changed, containerd_changed) == actions


@pytest.mark.parametrize("found, roles, actions", [
    # an upgrade's first run (kubeadm, runtime, CNI plugins): containerd's binaries and unit changed, the kubelet untouched
    (host(kubelet=(False, True)), node_bundle.selected(["kubeadm", "containerd", "cni_plugins"]), ["daemon-reload", "restart containerd"]),
    # its second (kubelet, kubectl): containerd left as it is, even stopped
    (host(containerd=(False, False), kubelet=(False, True)), node_bundle.selected(["kubelet", "kubectl"]), ["daemon-reload", "enable kubelet"]),
])
def test_systemctl_touches_only_the_services_of_the_components_installed(found, roles, actions):
    assert install.service_actions(found, True, "containerd" in roles, roles) == actions


@pytest.mark.parametrize("only, roles", [
    (None, node_bundle.INSTALLED),
    (["kubeadm", "containerd", "cni_plugins"], ("kubeadm", "containerd_unit", "containerd", "cni_plugins")),
    (["kubelet", "kubectl"], ("kubelet", "kubectl", "kubelet_unit", "kubelet_dropin")),
    (["pod_network"], ("cni_config",)),
    ([], ()),
])
def test_only_names_components_and_each_brings_its_files(only, roles):
    assert node_bundle.selected(only) == roles


def test_only_refuses_what_is_not_a_component():
    with pytest.raises(ValueError, match="kubelet_unit: not a component"):
        node_bundle.selected(["kubeadm", "kubelet_unit"])


def artifacts(version):
    return {role: {"sha256": "%s-%s" % (role, version), "dest": "/usr/local/bin/" + role} for role in node_bundle.BINARIES}


OLD = {"version": "v1.36.4", "versions": {"kubeadm": "v1.36.4", "kubelet": "v1.36.4", "kubectl": "v1.36.4"},
       "sha256": {"kubeadm": "kubeadm-v1.36.4", "kubelet": "kubelet-v1.36.4", "kubectl": "kubectl-v1.36.4"}}


@pytest.mark.parametrize("record, only, after", [
    # a fresh host, everything installed
    ({}, None, {"version": "v1.37.1", "versions": dict.fromkeys(node_bundle.BINARIES, "v1.37.1"),
                "sha256": {"kubeadm": "kubeadm-v1.37.1", "kubelet": "kubelet-v1.37.1", "kubectl": "kubectl-v1.37.1"}}),
    # half way through an in-place upgrade: kubeadm new, the kubelet and kubectl still the old version's; no one version
    (OLD, ["kubeadm", "containerd", "cni_plugins"],
     {"version": None, "versions": {"kubeadm": "v1.37.1", "kubelet": "v1.36.4", "kubectl": "v1.36.4"},
      "sha256": {"kubeadm": "kubeadm-v1.37.1", "kubelet": "kubelet-v1.36.4", "kubectl": "kubectl-v1.36.4"}}),
    # then the kubelet and kubectl: the host is of the new version
    ({"version": None, "versions": {"kubeadm": "v1.37.1", "kubelet": "v1.36.4", "kubectl": "v1.36.4"},
      "sha256": {"kubeadm": "kubeadm-v1.37.1", "kubelet": "kubelet-v1.36.4", "kubectl": "kubectl-v1.36.4"}},
     ["kubelet", "kubectl"],
     {"version": "v1.37.1", "versions": dict.fromkeys(node_bundle.BINARIES, "v1.37.1"),
      "sha256": {"kubeadm": "kubeadm-v1.37.1", "kubelet": "kubelet-v1.37.1", "kubectl": "kubectl-v1.37.1"}}),
    # a record written before per-binary versions: its one version is each binary's
    ({"version": "v1.36.4", "sha256": OLD["sha256"]}, ["kubeadm"],
     {"version": None, "versions": {"kubeadm": "v1.37.1", "kubelet": "v1.36.4", "kubectl": "v1.36.4"},
      "sha256": {"kubeadm": "kubeadm-v1.37.1", "kubelet": "kubelet-v1.36.4", "kubectl": "kubectl-v1.36.4"}}),
    # a host with no record, kubeadm alone installed: the record names nothing it did not install
    ({}, ["kubeadm"], {"version": None, "versions": {"kubeadm": "v1.37.1"}, "sha256": {"kubeadm": "kubeadm-v1.37.1"}}),
    # nothing of the binaries: the record as it was (plus the versions it implied)
    (OLD, ["containerd"], OLD),
])
def test_the_record_says_what_is_installed_binary_by_binary(record, only, after):
    assert node_bundle.record_after(record, "v1.37.1", artifacts("v1.37.1"), node_bundle.selected(only)) == after


def test_a_binary_the_run_does_not_install_is_not_refused_even_when_foreign():
    found = {"kubeadm": "kubeadm-v1.37.1", "kubelet": "someone else's", "kubectl": None}
    assert node_bundle.foreign_binaries(artifacts("v1.37.1"), found, {}, False, node_bundle.selected(["kubeadm"])) == []
    refused = node_bundle.foreign_binaries(artifacts("v1.37.1"), found, {}, False, node_bundle.selected(["kubelet"]))
    assert len(refused) == 1 and "kubelet" in refused[0]


def test_reading_the_host_reads_only_the_files_of_the_components_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(install, "systemctl", lambda module, *args: (0, "enabled"))
    arts = {role: {"dest": str(tmp_path / role), "sha256": "x", "members": []} for role in node_bundle.INSTALLED}
    found = install.read_host(None, arts, str(tmp_path / "record.json"), node_bundle.selected(["kubeadm", "cni_plugins"]))
    assert sorted(found["files"]) == ["kubeadm"] and found["archives_missing"] == []
    assert install.transfer_needed(arts, found) == ["kubeadm"]
