# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module side of cluster_object, kcp_lock and pods_ready (module_utils/api_module.py), run as ansible runs a
module where the task runs: what it refuses, in which order, and how an answer or a failure becomes its result."""

import json

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api
from ansible_collections.kubeadm.control_plane.plugins.module_utils.api_module import run_api_module

SPEC = dict(kubeconfig=dict(type="path"), admin_kubeconfig_on_host=dict(type="path"), name=dict(type="str"))


class Refused(Exception):
    def __init__(self, message, **fields):
        super().__init__(message)
        self.fields = fields


def result_of(args, answer, capsys, **options):
    with patch_module_args(args), pytest.raises(SystemExit):
        run_api_module(SPEC, answer, **options)
    return json.loads(capsys.readouterr().out)


def answered(params, check_mode, diff):
    return {"changed": True, "name": params["name"], "check_mode": check_mode, "diff": diff, "warning": ""}


def test_the_answer_for_the_arguments_is_the_result(capsys):
    result = result_of({"kubeconfig": "/k", "name": "cp-1", "_ansible_check_mode": True, "_ansible_diff": True}, answered, capsys)
    assert (result["changed"], result["name"], result["check_mode"], result["diff"]) == (True, "cp-1", True, True)
    assert "warning" not in result and "warnings" not in result


def test_a_warning_of_the_answer_is_said_as_one(capsys, monkeypatch):
    said = []
    monkeypatch.setattr(AnsibleModule, "warn", lambda module, warning: said.append(warning))
    result = result_of({"kubeconfig": "/k", "name": "cp-1"}, lambda *_: {"changed": False, "warning": "lock expired"}, capsys)
    assert said == ["lock expired"] and "warning" not in result and not result["changed"]


def test_the_host_s_kubeconfig_is_the_action_plugin_s_to_read(capsys):
    result = result_of({"admin_kubeconfig_on_host": "/etc/kubernetes/admin.conf", "name": "cp-1"}, answered, capsys)
    assert result["failed"] and result["msg"] == "admin_kubeconfig_on_host is read by the action plugin on the controller"


def test_argument_problems_come_before_a_missing_kubernetes_package(capsys):
    result = result_of({"kubeconfig": "/k", "name": "Bad"}, answered, capsys, import_error="no kubernetes",
                       argument_problems=lambda params: ["name: must be lower case"])
    assert result["failed"] and result["msg"] == "invalid arguments: name: must be lower case"
    missing = result_of({"kubeconfig": "/k", "name": "ok"}, answered, capsys, import_error="no kubernetes",
                        argument_problems=lambda params: [])
    assert missing["failed"] and "kubernetes" in missing["msg"]


def test_a_refusal_or_an_unreadable_cluster_fails_with_its_fields(capsys):
    def refuse(params, check_mode, diff):
        raise Refused("held by awx job 8", holder="awx job 8")

    refused = result_of({"kubeconfig": "/k", "name": "cp-1"}, refuse, capsys, failures=(Refused,))
    assert refused["failed"] and refused["msg"] == "held by awx job 8" and refused["holder"] == "awx job 8"

    def unreadable(params, check_mode, diff):
        raise kube_api.ClusterUnreadable("the API server did not answer")

    gone = result_of({"kubeconfig": "/k", "name": "cp-1"}, unreadable, capsys)
    assert gone["failed"] and gone["msg"] == "the API server did not answer"
