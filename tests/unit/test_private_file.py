# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm configuration file holds a bootstrap token and a certificate key: at its path it is never anything
but 0600, not even for the moment between a rename and a chmod."""

import os
import stat

from ansible_collections.kubeadm.control_plane.plugins.modules import kubeadm_config


def test_the_file_is_0600_from_the_moment_it_appears_at_its_path(tmp_path, monkeypatch):
    path = str(tmp_path / "kubernetes" / "kubeadm-control-plane.yaml")
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
        kubeadm_config.write(path, "token: abcdef.0123456789abcdef\n")
        kubeadm_config.write(path, "token: ghijkl.0123456789abcdef\n")  # over an existing file too
    finally:
        os.umask(previous)
    assert seen == [0o600, 0o600]
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == "token: ghijkl.0123456789abcdef\n"
    assert os.listdir(os.path.dirname(path)) == ["kubeadm-control-plane.yaml"]
