# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way the collection writes a file that holds secrets (the kubeadm configuration with its bootstrap token
and certificate key, an etcd snapshot, a host record): at its path it is never anything but 0600, not even for the
moment between a rename and a chmod, and it is replaced whole or not at all."""

import os
import stat

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.private_file import partial_writes, replaced_whole


def write(path, text):
    with replaced_whole(path) as out:
        out.write(text.encode())


def test_the_file_is_0600_from_the_moment_it_appears_at_its_path(tmp_path, monkeypatch):
    path = str(tmp_path / "kubeadm-control-plane.yaml")
    seen = []
    replace = os.replace

    def replace_and_look(source, destination):
        replace(source, destination)
        seen.append(stat.S_IMODE(os.stat(destination).st_mode))

    def no_chmod(*_args, **_kwargs):
        raise AssertionError("the mode is set when the file is made, never changed after")

    monkeypatch.setattr(os, "replace", replace_and_look)
    monkeypatch.setattr(os, "chmod", no_chmod)
    previous = os.umask(0o022)
    try:
        write(path, "token: abcdef.0123456789abcdef\n")
        write(path, "token: ghijkl.0123456789abcdef\n")  # over an existing file too
    finally:
        os.umask(previous)
    assert seen == [0o600, 0o600]
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == "token: ghijkl.0123456789abcdef\n"
    assert os.listdir(str(tmp_path)) == ["kubeadm-control-plane.yaml"]


def test_a_write_that_fails_leaves_the_file_as_it_was_and_nothing_beside_it(tmp_path):
    path = str(tmp_path / "record.json")
    write(path, "before")
    with pytest.raises(RuntimeError):
        with replaced_whole(path) as out:
            out.write(b"half of it")
            raise RuntimeError("killed")
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == "before"
    assert os.listdir(str(tmp_path)) == ["record.json"]


def test_partial_writes_are_the_temporary_files_of_that_path_only(tmp_path):
    path = str(tmp_path / "kubeadm.yaml")
    for name in (".kubeadm.yaml.x1y2z3", ".other.yaml.a1b2c3", "kubeadm.yaml.bak"):
        (tmp_path / name).write_text("token")
    assert partial_writes(path) == [str(tmp_path / ".kubeadm.yaml.x1y2z3")]
    assert partial_writes(str(tmp_path / "missing" / "kubeadm.yaml")) == []
