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


class Failed(Exception):
    def __init__(self, message, **fields):
        super().__init__(message)
        self.fields = fields


class Reader(host_kubeconfig.ApiAction):
    """An ApiAction as cluster_object's, pods_ready's and kcp_lock's are: what it answers is scripted."""
    MODULE = "kubeadm.control_plane.reader"
    ARGUMENT_SPEC = dict(kubeconfig=dict(type="path"), admin_kubeconfig_on_host=dict(type="path"), name=dict(type="str", required=True))
    FAILURES = (Failed,)

    def argument_problems(self, params):
        return ["name: must not be empty"] if not params["name"] else []

    def answer(self, params, check_mode, task_vars):
        with open(params["kubeconfig"], "rb") as handle:
            self.read = handle.read()
        return self.scripted(params, check_mode)


def reader(args, scripted=None, check_mode=False, monkeypatch=None):
    plugin = object.__new__(Reader)
    plugin._connection, plugin.modules_run = Connection(), []
    plugin._task = types.SimpleNamespace(args=args, delegate_to=None)
    plugin._play_context = types.SimpleNamespace(check_mode=check_mode)
    plugin.scripted = scripted or (lambda params, check_mode: {"changed": False, "name": params["name"]})

    def execute_module(module_name, module_args, task_vars):
        plugin.modules_run.append((module_name, module_args))
        return {"ran": "where the task runs"}

    plugin._execute_module = execute_module
    monkeypatch.setattr(host_kubeconfig.ActionBase, "run", lambda self, tmp=None, task_vars=None: {})
    return plugin


def test_an_api_action_without_a_host_kubeconfig_runs_its_module_where_the_task_runs(monkeypatch):
    plugin = reader({"kubeconfig": "/root/admin.conf", "name": "cp-1"}, monkeypatch=monkeypatch)
    assert plugin.run(task_vars={}) == {"ran": "where the task runs"}
    assert plugin.modules_run == [("kubeadm.control_plane.reader", {"kubeconfig": "/root/admin.conf", "name": "cp-1"})]


def test_an_api_action_reads_the_hosts_kubeconfig_and_answers_from_the_controller(monkeypatch):
    plugin = reader({"admin_kubeconfig_on_host": "/etc/kubernetes/admin.conf", "name": "cp-1"}, check_mode=True, monkeypatch=monkeypatch)
    plugin.scripted = lambda params, check_mode: {"changed": False, "check_mode": check_mode, "path": params["kubeconfig"]}
    done = plugin.run(task_vars={})
    assert plugin.read == KUBECONFIG and done["check_mode"] is True and not os.path.exists(done["path"])
    assert plugin.modules_run == [] and plugin._connection.fetched == ["/etc/kubernetes/admin.conf"]


@pytest.mark.parametrize("args, message", [
    ({"admin_kubeconfig_on_host": "/etc/kubernetes/admin.conf", "kubeconfig": "/root/admin.conf", "name": "cp-1"},
     "admin_kubeconfig_on_host: the kubeconfig is read on the host, kubeconfig may not be given too"),
    ({"admin_kubeconfig_on_host": "/etc/kubernetes/admin.conf"}, "invalid arguments: missing required arguments: name"),
    ({"admin_kubeconfig_on_host": "/etc/kubernetes/admin.conf", "name": ""}, "invalid arguments: name: must not be empty"),
], ids=["both kubeconfigs", "what the argument spec refuses", "what the module's own rules refuse"])
def test_an_api_action_refuses_bad_arguments_before_reading_anything(args, message, monkeypatch):
    plugin = reader(args, monkeypatch=monkeypatch)
    assert plugin.run(task_vars={}) == {"failed": True, "msg": message}
    assert plugin._connection.fetched == [] and plugin.modules_run == []


@pytest.mark.parametrize("raised, expected", [
    (Failed("not ready", pods=["etcd-cp-1"]), {"failed": True, "msg": "not ready", "pods": ["etcd-cp-1"]}),
    (host_kubeconfig.kube_api.ClusterUnreadable("the API server did not answer"), {"failed": True, "msg": "the API server did not answer"}),
], ids=["a failure of the module's own carries its fields", "no answer from the cluster"])
def test_an_api_action_turns_what_its_answer_raises_into_a_failed_result(raised, expected, monkeypatch):
    def fails(params, check_mode):
        raise raised
    assert reader({"admin_kubeconfig_on_host": "/etc/kubernetes/admin.conf", "name": "cp-1"}, fails, monkeypatch=monkeypatch).run(task_vars={}) == expected
