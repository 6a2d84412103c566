# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_validate as a user runs it: through ansible-core, on the controller, with every error in one failure."""


import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validate_answer import validate
from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module
from ansible_collections.kubeadm.control_plane.tests.unit.builders import spec, with_field

MINIMAL = {"cluster_name": "demo", "replicas": 3, "version": "1.36.4", "endpoint": {"host": "10.0.0.100"}}


def test_validate_returns_the_normalized_spec_and_no_error():
    assert validate(MINIMAL) == (spec(), [])


def test_errors_in_the_previous_spec_are_reported_under_its_prefix():
    normalized, errors = validate(MINIMAL, previous=with_field(MINIMAL, "replicas", "3"))
    assert normalized is None
    assert [e["path"] for e in errors] == ["previous.replicas"]


def test_an_update_is_checked_against_the_previous_spec():
    errors = validate(with_field(MINIMAL, "version", "v1.37.0"), previous=with_field(MINIMAL, "version", "v1.35.1"))[1]
    assert [(e["path"], e["value"]) for e in errors] == [("version", "v1.37.0")]


def test_a_spec_invalid_on_its_own_is_checked_as_an_update_too_each_field_named_once():
    # stacked etcd in force; the new spec removes etcd.local, switches to an external etcd it gives only in part,
    # skips a minor and has a port out of range: every error at once, the port's only once
    cc = "kubeadm.cluster_configuration"
    previous = with_field(MINIMAL, cc + ".etcd", {"local": {"dataDir": "/var/lib/etcd"}})
    new = with_field(with_field(with_field(MINIMAL, cc + ".etcd", {"external": {"endpoints": ["https://10.0.0.9:2379"]}}),
                                "version", "v1.37.1"), "endpoint.port", 70000)
    normalized, errors = validate(new, previous=with_field(previous, "version", "v1.35.1"))
    paths = [e["path"] for e in errors]
    assert normalized is None
    assert paths.count("endpoint.port") == 1, errors
    assert {cc + ".etcd.external.caFile", cc + ".etcd.local", cc + ".etcd", "version"} <= set(paths), errors
    assert [e["rule"] for e in errors if e["path"] == cc + ".etcd"] == ["may not switch between stacked (local) and external etcd"]


def test_worker_groups_are_label_values_each_error_naming_its_host():
    assert validate(MINIMAL, workers={"w-1": "md-0", "w-2": "default", "w-3": "gpu.a_1"}) == (spec(), [])
    normalized, errors = validate(MINIMAL, workers={"w-1": "md-0", "w-2": "GPU pool", "w-3": "-edge", "w-4": None, "w-5": "x" * 64})
    assert normalized is None
    assert [e["path"] for e in errors] == ["workers.w-2", "workers.w-3", "workers.w-4", "workers.w-5"]
    assert all(e["rule"].startswith("must be a worker group name: a Kubernetes label value") for e in errors)


def test_a_worker_host_names_its_node():
    normalized, errors = validate(MINIMAL, workers={"w-1": "md-0", "--all": "md-0", "W_2": "md-0"})
    assert normalized is None
    assert [e["path"] for e in errors] == ["--all", "W_2"]
    assert all(e["rule"].startswith("an inventory host of the group names its Node") for e in errors)


@pytest.mark.ansible
def test_without_a_spec_only_what_the_run_is_given_is_checked():
    outcome, result = run_module("kcp_validate", {"lock": {"holder": "awx-workers-remove"}})[:2]
    assert outcome == "SUCCESS" and result["errors"] == [] and "spec" not in result
    outcome, result = run_module("kcp_validate", {"lock": {"holder": ""}})[:2]
    assert outcome == "FAILED!" and [e["path"] for e in result["errors"]] == ["flow_holder"]
    assert result["msg"].startswith("the run cannot go ahead with what the inventory gives it: flow_holder")


@pytest.mark.parametrize(
    "lock,paths",
    [
        ({"holder": "alice@laptop pid 4242", "duration": 900}, []),
        ({"holder": "awx-kubeadm-control-plane-scale", "duration": "20"}, []),
        ({}, []),
        ({"holder": ""}, ["flow_holder"]),
        ({"holder": "  "}, ["flow_holder"]),
        ({"duration": 2}, ["kcp_lock_duration"]),
        ({"duration": "15m"}, ["kcp_lock_duration"]),
        ({"duration": True}, ["kcp_lock_duration"]),
        ({"holder": "", "duration": -1}, ["flow_holder", "kcp_lock_duration"]),
    ],
    ids=["a name and seconds", "a fixed name and the digits an inventory gives", "neither given", "an empty name",
         "a blank name", "too short to renew", "not a number of seconds", "a boolean", "both"],
)
def test_a_lock_the_run_cannot_name_or_keep_is_refused_with_the_spec(lock, paths):
    normalized, errors = validate(MINIMAL, lock=lock)
    assert [e["path"] for e in errors] == paths
    assert (normalized is None) == bool(paths)


@pytest.mark.ansible
def test_the_failure_says_which_errors_are_the_specs_and_which_the_runs():
    outcome, result = run_module("kcp_validate", {"spec": with_field(MINIMAL, "replicas", 4), "lock": {"holder": ""}})[:2]
    assert outcome == "FAILED!"
    assert result["msg"].startswith("the control plane spec is invalid: replicas: must be odd with stacked etcd")
    assert result["msg"].endswith("; the run cannot go ahead with what the inventory gives it: flow_holder: must name this run for the cluster "
                                  "lock (leave it unset for this controller and process, or set a fixed name such as an AWX "
                                  "template's)")
    assert [e["path"] for e in result["errors"]] == ["replicas", "flow_holder"]


@pytest.mark.ansible
def test_a_valid_spec_comes_back_normalized_with_the_hash_of_each_part():
    outcome, result = run_module("kcp_validate", {"spec": MINIMAL})
    assert outcome == "SUCCESS"
    assert result["changed"] is False
    assert result["spec"] == spec()
    assert result["spec_hashes"] == spec_hashes(spec())
    assert result["etcd_external"] is False
    assert result["errors"] == []


@pytest.mark.ansible
def test_an_invalid_spec_fails_listing_every_error_without_a_traceback():
    bad = with_field(with_field(MINIMAL, "replicas", 2), "rollout.max_surge", 2)
    bad = with_field(with_field(bad, "endpoint.port", "6443"), "health_check.unhealthy_range", "[3-1]")
    outcome, result = run_module("kcp_validate", {"spec": bad})
    assert outcome == "FAILED!"
    paths = ["endpoint.port", "rollout.max_surge", "health_check.unhealthy_range", "replicas"]
    assert sorted(e["path"] for e in result["errors"]) == sorted(paths)
    for error in result["errors"]:
        assert "%s: %s" % (error["path"], error["rule"]) in result["msg"]
    assert "exception" not in result


@pytest.mark.ansible
def test_an_update_that_skips_a_minor_fails_and_a_one_minor_upgrade_passes_in_check_mode():
    previous = with_field(MINIMAL, "version", "v1.35.6")
    outcome, result = run_module("kcp_validate", {"spec": with_field(MINIMAL, "version", "v1.37.0"), "previous": previous})
    assert outcome == "FAILED!"
    assert [e["path"] for e in result["errors"]] == ["version"]
    assert "may not skip a minor" in result["msg"]

    outcome, result = run_module("kcp_validate", {"spec": MINIMAL, "previous": previous}, check=True)
    assert outcome == "SUCCESS"
    assert result["changed"] is False and result["spec"]["version"] == "v1.36.4"
