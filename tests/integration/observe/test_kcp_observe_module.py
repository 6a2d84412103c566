# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_observe run as a user runs it (`ansible localhost -m`): nothing is concluded from no answer, and bad
input fails naming the host and the rule. The snapshot of a real cluster is tested end to end in
tests/e2e/test_kubeadm_roles.py."""

import json
import socket

import pytest

from ansible_run import run

HOSTS = [{"name": "cp-1", "address": "10.0.0.1", "failure_domain": "fd-1"},
         {"name": "cp-2", "address": "10.0.0.2", "failure_domain": "fd-2"}]


def kubeconfig_for(server, path):
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "admin",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "admin", "user": {"token": "not-a-secret-anyone-uses"}}],
        "contexts": [{"name": "admin", "context": {"cluster": "c", "user": "admin"}}],
    }))
    path.chmod(0o600)
    return str(path)


def test_without_a_kubeconfig_or_records_there_is_no_cluster_yet():
    outcome, result = run("kcp_observe", {"hosts": HOSTS})[:2]
    assert outcome == "SUCCESS", result
    observed = result["observed"]
    assert (observed["initialized"], observed["machines"], observed["etcd"]["members"]) == (False, [], [])
    assert (observed["workers"], result["worker_nodes"]) == ([], [])
    assert [fd["name"] for fd in observed["failure_domains"]] == ["fd-1", "fd-2"]


def test_an_api_server_that_does_not_answer_is_a_failure_not_an_empty_cluster(tmp_path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    kubeconfig = kubeconfig_for("https://127.0.0.1:%d" % port, tmp_path / "admin.conf")
    outcome, result, _rc, output = run("kcp_observe", {"hosts": HOSTS, "kubeconfig": kubeconfig, "timeout": 2})
    assert outcome == "FAILED!"
    assert result["msg"].startswith("cannot read the cluster: the API server at https://127.0.0.1:%d did not answer" % port)
    assert "observed" not in result and "not-a-secret-anyone-uses" not in output


@pytest.mark.parametrize(
    "record,expected",
    [
        ("{not json", "hosts[cp-2].record: not JSON"),
        ("[1, 2]", "hosts[cp-2].record: must be a JSON object"),
        (json.dumps({"created": "2026-11-26T10:00:00Z", "step": "joined", "joined": "2026-11-26T10:01:00Z"}),
         "kubeconfig: required, the host records of cp-2 say they joined a cluster"),
    ],
    ids=["a record that is not JSON", "a record that is not an object", "a joined machine without a kubeconfig"],
)
def test_bad_input_fails_naming_the_host_and_the_rule(record, expected):
    hosts = [HOSTS[0], dict(HOSTS[1], record=record)]
    outcome, result = run("kcp_observe", {"hosts": hosts})[:2]
    assert outcome == "FAILED!" and expected in result["msg"], result


def test_a_record_the_host_could_not_read_fails_naming_the_host():
    hosts = [HOSTS[0], dict(HOSTS[1], record_error="/etc/kubernetes/control-plane-machine.json: not a JSON object")]
    outcome, result = run("kcp_observe", {"hosts": hosts})[:2]
    assert outcome == "FAILED!"
    assert "hosts[cp-2].record: /etc/kubernetes/control-plane-machine.json: not a JSON object" in result["msg"]


def test_a_deleting_record_without_a_cluster_is_the_last_machine_a_killed_delete_left():
    record = {"name": "cp-2", "created": "2026-11-26T10:00:00Z", "bootstrap": "init", "step": "deleting",
              "joined": "2026-11-26T10:01:00Z"}
    outcome, result = run("kcp_observe", {"hosts": [HOSTS[0], dict(HOSTS[1], record=json.dumps(record))]})[:2]
    assert outcome == "SUCCESS", result
    [machine] = result["observed"]["machines"]
    assert (machine["name"], machine["deleting"], machine["node"]) == ("cp-2", True, None)
    assert result["worker_nodes"] == []
