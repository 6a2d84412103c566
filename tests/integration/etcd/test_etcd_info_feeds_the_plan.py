# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The contract between etcd_info and the decision modules, as a playbook chains them: what etcd_info reports
from a real etcd cluster (healthy, one member dead, quorum lost, nothing answering) goes verbatim into the
snapshot that kcp_plan and machine_health_check read, and both accept it and decide on it.

The snapshot section is taken from etcd_info's result whatever else the result says, so the test holds
whether etcd_info succeeds or fails when no endpoint answers.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "unit"))

from builders import VERSION, machine  # noqa: E402

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec  # noqa: E402
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash  # noqa: E402

pytestmark = [pytest.mark.etcd, pytest.mark.ansible]

RAW_SPEC = {"cluster_name": "demo", "replicas": 3, "version": VERSION, "endpoint": {"host": "10.0.0.100"}}
NAMES = ["cp-1", "cp-2", "cp-3"]


def observed(etcd_section):
    """A snapshot of three healthy machines cp-1..cp-3 built from RAW_SPEC, with etcd as etcd_info saw it."""
    current = spec_hash(normalize_spec(RAW_SPEC)[0], "join")
    machines = [machine(name, created=1000 - i, spec_hash=current) for i, name in enumerate(NAMES)]
    return {"now": "2026-11-22T10:00:00Z", "initialized": True, "endpoint_ready": True, "machines": machines,
            "etcd": etcd_section}


def chain(run_module, connection_args, cluster):
    """etcd_info, then kcp_plan and machine_health_check on its snapshot section: (etcd section, plan, health)."""
    info, output = run_module("etcd_info", connection_args(cluster, expected_members=NAMES))[1:]
    assert "etcd" in info, output[-2000:]
    snapshot = observed(info["etcd"])
    rc, plan, output = run_module("kcp_plan", {"spec": RAW_SPEC, "observed": snapshot})
    assert rc == 0, output[-2000:]
    rc, health, output = run_module("machine_health_check", {"observed": snapshot})
    assert rc == 0, output[-2000:]
    return info["etcd"], plan, health


def rules(plan):
    return [b["rule"] for b in plan["blocked_by"]]


def test_a_healthy_etcd_gives_a_settled_plan(healthy3, connection_args, run_module):
    section, plan, health = chain(run_module, connection_args, healthy3)
    assert sorted(m["name"] for m in section["members"]) == NAMES
    assert (plan["action"], plan["blocked_by"], plan["etcd"]["ok"]) == ("none", [], True)
    assert (health["unhealthy"], health["healthy"]) == ([], 3)


def test_one_dead_member_is_reported_by_the_plan_and_its_machine_stays_a_machine(make_cluster, connection_args, run_module):
    cluster = make_cluster(3)
    # a follower: killing the leader would leave the others without one (answering with errors) for an election
    victim = next(name for name in NAMES if name != cluster.leader_name())
    cluster.kill(victim)
    section, plan, health = chain(run_module, connection_args, cluster)
    assert [m["name"] for m in section["members"] if not m["responsive"]] == [victim]
    assert plan["action"] == "none" and plan["etcd"]["ok"] is False
    assert rules(plan) == ["etcd_members_not_healthy", "etcd_cluster"]
    assert plan["blocked_by"][0]["machines"] == [victim]
    assert health["unhealthy"] == []


def test_a_lost_quorum_blocks_every_change_the_plan_could_make(make_cluster, connection_args, run_module):
    cluster = make_cluster(3)
    cluster.kill("cp-2")
    cluster.kill("cp-3")
    cluster.wait_leaderless("cp-1")
    section, plan, health = chain(run_module, connection_args, cluster)
    assert sorted(m["name"] for m in section["members"] if not m["responsive"]) == ["cp-2", "cp-3"]
    assert plan["action"] == "none" and plan["etcd"]["ok"] is False
    assert "etcd_members_not_healthy" in rules(plan)
    # cp-1 answers, but without a quorum its member list call fails: no member of the three is healthy
    assert sorted(plan["blocked_by"][rules(plan).index("etcd_members_not_healthy")]["machines"]) == NAMES
    assert health["unhealthy"] == []


def test_an_etcd_where_nothing_answers_is_accepted_and_the_plan_waits_naming_etcd(make_cluster, connection_args, run_module):
    cluster = make_cluster(3)
    for name in NAMES:
        cluster.kill(name)
    section, plan, health = chain(run_module, connection_args, cluster)
    assert [(m["name"], m["id"], m["responsive"]) for m in section["members"]] == [("", "", False)] * 3
    assert (plan["action"], rules(plan)) == ("wait", ["etcd_unreachable"])
    assert plan["retry_after_seconds"] is None
    assert (health["unhealthy"], health["healthy"]) == ([], 3)
