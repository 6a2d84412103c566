# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The admin kubeconfig's private copy on the controller (plugins/plugin_utils/host_kubeconfig.py): copied over the
connection, or read through slurp when the task becomes another user; private from its creation, gone after the
block also when the block fails, and a file that cannot be read says where. Exercised on the sandbox by every flow."""

import base64
import os
import stat
import types

import pytest
from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_kubeconfig

KUBECONFIG = b"apiVersion: v1\nkind: Config\n"


class Connection:
    def __init__(self, become=None, fails=None):
        self.become, self.fails, self.fetched, self.modes = become, fails, [], []

    def fetch_file(self, source, dest):
        self.fetched.append(source)
        self.modes.append(stat.S_IMODE(os.stat(dest).st_mode))  # private before anything is written to it
        if self.fails:
            raise self.fails("file or module does not exist: %s" % source)
        with open(dest, "wb") as out:
            out.write(KUBECONFIG)


def action(connection, slurped=None):
    plugin = types.SimpleNamespace(_connection=connection, _task=types.SimpleNamespace(delegate_to="cp-2"), modules_run=[])

    def execute_module(module_name, module_args, task_vars):
        plugin.modules_run.append(module_name)
        return slurped

    plugin._execute_module = execute_module
    return plugin


def read_back(plugin):
    with host_kubeconfig.private_copy(plugin, "/etc/kubernetes/admin.conf", {"inventory_hostname": "cp-1"}) as path:
        with open(path, "rb") as handle:
            return path, handle.read(), stat.S_IMODE(os.stat(path).st_mode)


def test_the_file_is_copied_over_the_connection_private_and_removed_after():
    connection = Connection()
    path, text, mode = read_back(action(connection))
    assert text == KUBECONFIG and mode == 0o600 and connection.modes == [0o600]
    assert connection.fetched == ["/etc/kubernetes/admin.conf"]
    assert not os.path.exists(path)


def test_a_task_that_becomes_another_user_reads_it_through_slurp():
    plugin = action(Connection(become=object()), {"content": base64.b64encode(KUBECONFIG).decode()})
    path, text, mode = read_back(plugin)
    assert text == KUBECONFIG and mode == 0o600 and plugin.modules_run == ["ansible.legacy.slurp"]
    assert plugin._connection.fetched == [] and not os.path.exists(path)


@pytest.mark.parametrize("plugin", [action(Connection(fails=AnsibleError)),
                                    action(Connection(become=object()), {"failed": True, "msg": "file not found"})])
def test_a_file_that_cannot_be_read_says_where_and_leaves_no_copy(plugin, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    host_kubeconfig.credential_files.tempfile.tempdir = None
    try:
        with pytest.raises(host_kubeconfig.Unreadable, match="reading /etc/kubernetes/admin.conf on cp-2"):
            read_back(plugin)
        assert os.listdir(tmp_path) == []
    finally:
        host_kubeconfig.credential_files.tempfile.tempdir = None


def test_the_copy_is_removed_when_the_block_fails():
    seen = []
    with pytest.raises(RuntimeError):
        with host_kubeconfig.private_copy(action(Connection()), "/etc/kubernetes/admin.conf", {}) as path:
            seen.append(path)
            raise RuntimeError("the cluster did not answer")
    assert seen and not os.path.exists(seen[0])


def test_a_host_that_stops_answering_leaves_the_task_unreachable_and_no_copy():
    # not "failed": the flows tell a host that stopped answering by the task being unreachable (roles/flow/tasks/lost.yml)
    connection = Connection(fails=AnsibleConnectionFailure)
    with pytest.raises(AnsibleConnectionFailure):
        read_back(action(connection))
    assert connection.fetched == ["/etc/kubernetes/admin.conf"]
