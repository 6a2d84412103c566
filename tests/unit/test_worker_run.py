# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the worker playbooks decide before they touch a worker (module_utils/worker_run.py), and kcp_validate's
refusals of their input."""

import pytest
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validate_answer import ARGUMENT_SPEC, answer
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_run import (
    worker_groups, worker_host_overlap_errors, worker_join_version, worker_removal_errors, worker_run_refusal)

HOSTS = ["cp-1", "cp-2", "cp-3", "worker-1", "worker-2"]
CANDIDATES = ["cp-1", "cp-2", "cp-3"]


def condition(kind, status="True", message=""):
    return {"type": kind, "status": status, "reason": "", "message": message}


HEALTHY = [condition("Available"), condition("ControlPlaneComponentsHealthy"), condition("EtcdClusterHealthy"),
           condition("MachinesReady", "False", "cp-2 is not ready")]


@pytest.mark.parametrize("names, rule", [
    ([], "must be a list of inventory host names, the workers to remove"),
    ("worker-1", "must be a list of inventory host names, the workers to remove"),  # a bare name from an AWX survey
    ({"worker-1": None}, "must be a list of inventory host names, the workers to remove"),
    (None, "must be a list of inventory host names, the workers to remove"),
    (["worker-1", "nope", "gone"], "not inventory hosts: nope, gone"),
    (["worker-1", "cp-2"], "control plane candidates, not workers (scale the control plane down instead): cp-2"),
])
def test_a_removal_must_name_workers_of_the_inventory(names, rule):
    assert worker_removal_errors(names, HOSTS, CANDIDATES) == [{"path": "kcp_workers_remove", "rule": rule, "value": names}]


def test_workers_of_the_inventory_may_be_removed():
    assert worker_removal_errors(["worker-2", "worker-1"], HOSTS, CANDIDATES) == []


def test_a_host_is_a_worker_or_a_candidate_never_both():
    errors = worker_host_overlap_errors({"worker-1": "default", "cp-2": "gpu", "cp-1": "default"}, CANDIDATES)
    assert [e["path"] for e in errors] == ["cp-1", "cp-2"]
    assert errors[0]["rule"] == "is in both the control plane candidates and the workers group; a host is one or the other"
    assert worker_host_overlap_errors({"worker-1": "default"}, CANDIDATES) == []
    assert worker_host_overlap_errors({"cp-1": "default"}, None) == []


def test_no_run_without_a_control_plane_host_that_answers():
    refusal = worker_run_refusal("", "control_plane_candidates", HEALTHY)
    assert refusal.startswith("no control plane: no host of control_plane_candidates holds /etc/kubernetes/admin.conf")
    assert worker_run_refusal(None, "cps") == worker_run_refusal("", "cps", None)


def test_workers_join_a_control_plane_whose_three_conditions_are_true_whatever_the_others():
    assert worker_run_refusal("cp-1", "control_plane_candidates", HEALTHY) is None


def test_each_condition_that_is_not_true_is_named_with_its_message():
    conditions = [condition("Available"), condition("ControlPlaneComponentsHealthy", "Unknown", "cp-2: no answer"),
                  condition("EtcdClusterHealthy", "False", "member cp-3 is not healthy")]
    assert worker_run_refusal("cp-1", "cps", conditions) == (
        "the control plane is not healthy enough to join workers: ControlPlaneComponentsHealthy: cp-2: no answer; "
        "EtcdClusterHealthy: member cp-3 is not healthy")


def test_a_removal_gives_no_conditions_and_is_not_held_back_by_an_unhealthy_control_plane():
    assert worker_run_refusal("cp-1", "cps") is None


def test_a_worker_joins_at_the_cluster_s_version_else_the_spec_s():
    assert worker_join_version({"kubernetes_version": "v1.35.2"}, {"version": "v1.36.0"}) == "v1.35.2"
    assert worker_join_version(None, {"version": "v1.36.0"}) == "v1.36.0"
    assert worker_join_version({"kubernetes_version": None}, {"version": "v1.36.0"}) == "v1.36.0"
    assert worker_join_version(None, None) is None


def test_each_worker_joins_its_worker_group_else_default():
    assert worker_groups(["worker-1", "worker-2"], {"worker-1": {"worker_group": "gpu"}, "worker-2": {}}) == {
        "worker-1": "gpu", "worker-2": "default"}


def params(**given):
    defaults = {name: None for name in ARGUMENT_SPEC}
    return dict(defaults, **given)


def test_kcp_validate_refuses_a_removal_and_an_overlap_as_errors_of_the_run():
    refused = answer(params(workers_remove=["cp-1"], inventory_hosts=HOSTS, candidates=CANDIDATES))
    assert refused["failed"] and refused["msg"] == (
        "the run cannot go ahead with what the inventory gives it: kcp_workers_remove: control plane candidates, not "
        "workers (scale the control plane down instead): cp-1")
    overlap = answer(params(workers={"cp-1": "default"}, candidates=CANDIDATES))
    assert overlap["failed"] and [e["path"] for e in overlap["errors"]] == ["cp-1"]
    assert answer(params(workers_remove=["worker-1"], inventory_hosts=HOSTS, candidates=CANDIDATES)) == {"changed": False, "errors": []}
