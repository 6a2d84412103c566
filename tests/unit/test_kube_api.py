# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kube_api.connected: the kubeconfig's inline certificate, key and CA are in files only this user can read while the
client is in use, and gone once it is left; the Kubernetes client leaves none of its own behind (it would remove them
only at the process's exit, which an ansible worker leaves without); relative paths are the kubeconfig's."""

import base64
import glob
import os
import stat
import tempfile

import pytest
import yaml
from kubernetes.config import kube_config

from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files, kube_api


def kubeconfig(path, cluster, user):
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "admin@demo",
        "clusters": [{"name": "demo", "cluster": dict(cluster, server="https://10.0.0.100:6443")}],
        "users": [{"name": "admin", "user": user}],
        "contexts": [{"name": "admin@demo", "context": {"cluster": "demo", "user": "admin"}}]}))
    return str(path)


def inline(data):
    return base64.standard_b64encode(data).decode()


def leftovers():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), credential_files.PREFIX + "*")))


def test_inline_credentials_live_in_private_files_while_the_client_is_in_use(tmp_path):
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority-data": inline(b"ca")},
                      {"client-certificate-data": inline(b"cert"), "client-key-data": inline(b"key")})
    before, library_files = leftovers(), dict(kube_config._temp_files)
    with kube_api.connected(path) as api:
        settings = api.configuration
        for name, content in ((settings.cert_file, b"cert"), (settings.key_file, b"key"), (settings.ssl_ca_cert, b"ca")):
            with open(name, "rb") as handle:
                assert handle.read() == content
            assert stat.S_IMODE(os.stat(name).st_mode) == 0o600
            assert stat.S_IMODE(os.stat(os.path.dirname(name)).st_mode) == 0o700
        assert settings.host == "https://10.0.0.100:6443" and settings.verify_ssl
    assert not any(os.path.exists(name) for name in (settings.cert_file, settings.key_file, settings.ssl_ca_cert))
    assert leftovers() == before
    assert kube_config._temp_files == library_files


def test_paths_the_kubeconfig_names_are_relative_to_its_directory(tmp_path):
    for name in ("ca.crt", "admin.crt", "admin.key"):
        (tmp_path / name).write_text(name)
    path = kubeconfig(tmp_path / "admin.conf", {"certificate-authority": "ca.crt"},
                      {"client-certificate": "admin.crt", "client-key": str(tmp_path / "admin.key")})
    with kube_api.connected(path) as api:
        assert (api.configuration.ssl_ca_cert, api.configuration.cert_file, api.configuration.key_file) == \
            (str(tmp_path / "ca.crt"), str(tmp_path / "admin.crt"), str(tmp_path / "admin.key"))


def test_a_kubeconfig_that_cannot_be_used_is_unreadable_and_leaves_nothing(tmp_path):
    before = leftovers()
    with pytest.raises(kube_api.ClusterUnreadable, match="cannot be used"):
        with kube_api.connected(str(tmp_path / "missing.conf")):
            pass
    assert leftovers() == before
