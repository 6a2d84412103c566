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
