# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kcp_plan module, run through ansible-core as a user runs it (ad hoc, on localhost)."""


import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash, spec_hashes

from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module
from ansible_collections.kubeadm.control_plane.tests.unit.builders import FAILURE_DOMAINS, control_plane, snapshot

pytestmark = pytest.mark.ansible

RAW_SPEC = {"cluster_name": "demo", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "10.0.0.100"}}
CURRENT = spec_hash(normalize_spec(RAW_SPEC)[0], "join")
HASHES = spec_hashes(normalize_spec(RAW_SPEC)[0])
FDS = FAILURE_DOMAINS


def machines(n, **overrides):
    """cp-1..cp-n built from the current spec, cp-1 oldest."""
    return control_plane(n, CURRENT, **overrides)


@pytest.mark.parametrize(
    "observed,check,expect",
    [
        (snapshot(machines(3), failure_domains=FDS), False, {"action": "none", "blocked_by": [], "spec_hashes": HASHES}),
        (
            snapshot(machines(5), failure_domains=FDS),
            True,
            {"action": "scale_down", "machine": "cp-1", "failure_domain": "fd-a", "leader_candidate": "cp-5"},
        ),
        (
            snapshot(machines(3, cp_1={"version": "v1.35.8"}), failure_domains=FDS),
            False,
            {"action": "rollout", "step": "scale_up", "failure_domain": "fd-a", "outdated": {"cp-1": ["runs v1.35.8, the spec wants v1.36.4"]}},
        ),
        (
            snapshot(machines(2, cp_2={"has_node": False, "created": 2}), failure_domains=FDS),
            False,
            {"action": "wait", "step": "scale_up"},
        ),
    ],
    ids=[
        "a control plane as declared needs nothing",
        "in check mode a scale down is planned the same way",
        "an outdated machine starts a rollout",
        "a machine still starting without a node holds a scale up back",
    ],
)
def test_the_module_returns_the_plan(observed, check, expect):
    outcome, result = run_module("kcp_plan", {"spec": RAW_SPEC, "observed": observed}, check=check)
    assert outcome == "SUCCESS" and result["changed"] is False
    assert {k: result[k] for k in expect} == expect
    assert {"preflight", "health_check", "spec_hashes", "retry_after_seconds", "reason", "blocked_by", "remediation"} <= set(result)


def test_bad_input_fails_listing_every_error_of_both_arguments():
    observed = snapshot(machines(2))
    del observed["machines"][1]["created"]
    outcome, result = run_module("kcp_plan", {"spec": dict(RAW_SPEC, replicas=2), "observed": observed})
    assert outcome == "FAILED!"
    paths = sorted(e["path"] for e in result["errors"])
    assert paths == ["observed.machines[1].created", "spec.replicas"]
    assert "observed.machines[1].created" in result["msg"] and "spec.replicas" in result["msg"]
