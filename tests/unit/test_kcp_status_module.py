# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_status, run through ansible-core: conditions out, bad input refused, check mode the same."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash
from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module
from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, snapshot, with_field

pytestmark = pytest.mark.ansible

RAW_SPEC = {"cluster_name": "demo", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "10.0.0.100"}}
CURRENT = spec_hash(normalize_spec(RAW_SPEC)[0], "join")


def observed(**cp_2):
    return snapshot([machine("cp-%d" % i, created=1000 - i, spec_hash=CURRENT, **(cp_2 if i == 2 else {})) for i in (1, 2, 3)])


@pytest.mark.parametrize("check", [False, True], ids=["a run", "a check mode run"])
def test_a_healthy_control_plane_reports_ready_and_changes_nothing(check):
    outcome, result = run_module("kcp_status", {"spec": RAW_SPEC, "observed": observed()}, check=check)
    assert outcome == "SUCCESS" and result["changed"] is False
    assert result["ready"] is True
    assert {c["type"]: c["status"] for c in result["conditions"]}["EtcdClusterHealthy"] == "True"
    assert sorted(result["machines"]) == ["cp-1", "cp-2", "cp-3"]


def test_a_crashed_pod_is_reported_on_its_machine_and_the_control_plane():
    outcome, result = run_module("kcp_status", {"spec": RAW_SPEC, "observed": observed(components={"api_server": "unhealthy"})})
    assert outcome == "SUCCESS" and result["ready"] is False
    (api,) = [c for c in result["machines"]["cp-2"] if c["type"] == "APIServerPodHealthy"]
    assert (api["status"], api["reason"], api["severity"]) == ("False", "PodFailed", "Error")
    (components,) = [c for c in result["conditions"] if c["type"] == "ControlPlaneComponentsHealthy"]
    assert components["message"].startswith("cp-2/APIServerPodHealthy")


def test_bad_input_fails_naming_each_field():
    outcome, result = run_module("kcp_status", {"spec": with_field(RAW_SPEC, "version", "v1.31.0"),
                                                "observed": with_field(observed(), "now", "yesterday")})
    assert outcome == "FAILED!"
    assert sorted(e["path"] for e in result["errors"]) == ["observed.now", "spec.version"]
