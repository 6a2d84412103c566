# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The machine_health_check module, run through ansible-core as a user runs it (ad hoc, on localhost)."""


import pytest

from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module
from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, seconds_ago, snapshot

pytestmark = pytest.mark.ansible


def stalled(name, status, seconds):
    m = machine(name)
    m["node"]["conditions"] = [{"type": "Ready", "status": status, "last_transition": seconds_ago(seconds)}]
    return m


THREE_WITH_ONE_DOWN = snapshot([machine("cp-1"), machine("cp-2"), stalled("cp-3", "Unknown", 600)])


@pytest.mark.parametrize(
    "args,check,expect",
    [
        (
            {"observed": snapshot([machine("cp-1"), machine("cp-2"), machine("cp-3")])},
            False,
            {"expected": 3, "healthy": 3, "unhealthy": [], "max_allowed": 3, "remediations_allowed": 3},
        ),
        (
            {"health_check": {"max_unhealthy": "40%"}, "observed": THREE_WITH_ONE_DOWN},
            False,
            {"unhealthy": ["cp-3"], "max_allowed": 1, "remediation_allowed": True, "remediations_allowed": 0},
        ),
        (
            {"health_check": {"max_unhealthy": "33%"}, "observed": THREE_WITH_ONE_DOWN},
            True,
            {"unhealthy": ["cp-3"], "max_allowed": 0, "remediation_allowed": False, "remediations_allowed": 0},
        ),
        (
            {
                "health_check": {
                    "unhealthy_conditions": [{"type": "Ready", "status": "Unknown", "timeout": "15m"}],
                    "unhealthy_range": "[1-1]",
                },
                "observed": THREE_WITH_ONE_DOWN,
            },
            False,
            {"unhealthy": [], "pending": ["cp-3"], "next_check_seconds": 301.0, "remediation_allowed": True},
        ),
    ],
    ids=[
        "a healthy control plane with the default rules is all healthy",
        "one machine down past its timeout may be remediated under 40 percent",
        "check mode reports the same block when 33 percent of 3 allows none",
        "a longer timeout written as a duration string keeps the machine pending",
    ],
)
def test_module_returns_the_evaluation(args, check, expect):
    outcome, result = run_module("machine_health_check", args, check=check)
    assert outcome == "SUCCESS" and result["changed"] is False
    assert {k: result[k] for k in expect} == expect
    assert [t["machine"] for t in result["targets"]] == [m["name"] for m in args["observed"]["machines"]]
    assert result["reason"].startswith("Remediation is")


def test_bad_input_fails_listing_every_error_with_its_path():
    observed = snapshot([machine("cp-1"), machine("cp-2")])
    del observed["now"]
    del observed["machines"][1]["created"]
    outcome, result = run_module(
        "machine_health_check",
        {
            "health_check": {
                "max_unhealthy": "10",
                "unhealthy_conditions": [{"type": "Ready", "status": True, "timeout": "5m"}],
                "node_startup_timeout": "10s",
                "colour": "blue",
            },
            "observed": observed,
        },
    )
    assert outcome == "FAILED!" and "targets" not in result
    paths = {e["path"] for e in result["errors"]}
    assert paths >= {
        "health_check.max_unhealthy",
        "health_check.unhealthy_conditions[0].status",
        "health_check.node_startup_timeout",
        "health_check.colour",
        "observed.now",
        "observed.machines[1].created",
    }
    assert all(e["rule"] for e in result["errors"])
    assert all(path in result["msg"] for path in paths)


def test_a_missing_snapshot_is_refused_by_the_argument_spec():
    outcome, result = run_module("machine_health_check", {"health_check": {}})
    assert outcome == "FAILED!"
    assert "observed" in result["msg"]
