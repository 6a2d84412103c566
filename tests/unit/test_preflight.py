# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight gate: each failure named by its rule, all of them at once, and the scale-down exclusion."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.preflight import check

from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, member, snapshot


def three(**overrides):
    """cp-1..cp-3; `overrides` maps a machine name (cp_2) to builder keyword arguments."""
    return [machine(n, created=100 - i, **overrides.get(n.replace("-", "_"), {})) for i, n in enumerate(("cp-1", "cp-2", "cp-3"))]


def members(**overrides):
    return [member(n, leader=(n == "cp-1"), **overrides.get(n.replace("-", "_"), {})) for n in ("cp-1", "cp-2", "cp-3")]


def rules(report):
    return [f["rule"] for f in report["failures"]]


# (snapshot, etcd managed, excluded machine, expected rules, machines named by the first failure)
CASES = [
    ("a healthy control plane passes", snapshot(three()), True, None, [], []),
    ("no machines at all passes", snapshot([]), True, None, [], []),
    (
        "a machine being deleted fails, even the excluded one",
        snapshot(three(cp_3={"deleting": True})),
        True,
        "cp-3",
        ["machines_deleting"],
        ["cp-3"],
    ),
    (
        "a machine without a node fails",
        snapshot(three(cp_3={"has_node": False})),
        True,
        None,
        ["machines_without_node", "etcd_cluster"],
        ["cp-3"],
    ),
    (
        "an unhealthy control plane pod fails",
        snapshot(three(cp_2={"components": {"api_server": "unhealthy"}})),
        True,
        None,
        ["components_not_healthy"],
        ["cp-2"],
    ),
    (
        "a pod in unknown state fails",
        snapshot(three(cp_2={"components": {"scheduler": "unknown"}})),
        True,
        None,
        ["components_not_healthy"],
        ["cp-2"],
    ),
    (
        "an unhealthy etcd pod fails with managed etcd",
        snapshot(three(cp_2={"components": {"etcd": "missing"}})),
        True,
        None,
        ["components_not_healthy"],
        ["cp-2"],
    ),
    (
        "an unhealthy etcd pod is not checked with external etcd",
        snapshot(three(cp_2={"components": {"etcd": "missing"}}), external=True, members=[member("ext-1")]),
        False,
        None,
        [],
        [],
    ),
    (
        "an etcd member that does not answer fails",
        snapshot(three(), members=members(cp_3={"responsive": False})),
        True,
        None,
        ["etcd_members_not_healthy", "etcd_cluster"],
        ["cp-3"],
    ),
    (
        "an etcd alarm fails",
        snapshot(three(), members=members(cp_2={"alarms": ["NOSPACE"]})),
        True,
        None,
        ["etcd_members_not_healthy", "etcd_cluster"],
        ["cp-2"],
    ),
    (
        "an etcd member with no machine fails",
        snapshot(three(), members=members() + [member("cp-9")]),
        True,
        None,
        ["etcd_cluster"],
        [],
    ),
    (
        "external etcd that nobody can reach fails",
        snapshot(three(), external=True, members=[member("ext-1", responsive=False)]),
        False,
        None,
        ["etcd_cluster"],
        [],
    ),
    (
        "one external etcd member down of three does not fail: its quorum holds",
        snapshot(three(), external=True, members=[member("ext-1", responsive=False), member("ext-2"), member("ext-3")]),
        False,
        None,
        [],
        [],
    ),
    (
        "an external etcd cluster without quorum fails",
        snapshot(three(), external=True, members=[member("ext-1", responsive=False), member("ext-2", responsive=False), member("ext-3")]),
        False,
        None,
        ["etcd_cluster"],
        [],
    ),
    (
        "an alarm on the external etcd cluster fails",
        snapshot(three(), external=True, members=[member("ext-1", alarms=["NOSPACE"]), member("ext-2"), member("ext-3")]),
        False,
        None,
        ["etcd_cluster"],
        [],
    ),
    (
        "an API endpoint that does not answer fails once initialized",
        snapshot(three(), endpoint_ready=False),
        True,
        None,
        ["endpoint_not_ready"],
        [],
    ),
    (
        "the API endpoint is not checked before the cluster is initialized",
        snapshot(three(), endpoint_ready=False, initialized=False),
        True,
        None,
        [],
        [],
    ),
    (
        "a spec declaring external etcd over a stacked cluster fails",
        snapshot(three()),
        False,
        None,
        ["etcd_topology"],
        [],
    ),
    (
        "the excluded machine's failing pods do not fail",
        snapshot(three(cp_1={"components": {"api_server": "unhealthy"}})),
        True,
        "cp-1",
        [],
        [],
    ),
    (
        "the excluded machine's silent etcd member does not fail",
        snapshot(three(), members=members(cp_1={"responsive": False})),
        True,
        "cp-1",
        [],
        [],
    ),
    (
        "another machine's failure still fails when one is excluded",
        snapshot(three(cp_2={"components": {"controller_manager": "unhealthy"}})),
        True,
        "cp-1",
        ["components_not_healthy"],
        ["cp-2"],
    ),
]


@pytest.mark.parametrize("snap,managed,exclude,expected,machines", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_preflight(snap, managed, exclude, expected, machines):
    report = check(snap, managed, [exclude] if exclude else ())
    assert rules(report) == expected
    assert report["ok"] is (not expected)
    assert report["excluded"] == ([exclude] if exclude else [])
    if expected:
        assert report["failures"][0]["machines"] == machines
        assert all(f["message"] for f in report["failures"])


def test_every_failure_is_listed_at_once_with_every_machine():
    machines = three(cp_1={"deleting": True}, cp_2={"components": {"api_server": "unhealthy"}}, cp_3={"components": {"scheduler": "missing"}})
    report = check(snapshot(machines, endpoint_ready=False), True)
    assert rules(report) == ["endpoint_not_ready", "machines_deleting", "components_not_healthy", "etcd_members_not_healthy"]
    pods = report["failures"][2]
    assert pods["machines"] == ["cp-2", "cp-3"]
    assert "cp-2: api_server false (pod unhealthy)" in pods["message"] and "scheduler false (pod missing)" in pods["message"]


# (snapshot, etcd managed, the failure's rule, its exact message, the machines it names)
MESSAGES = [
    (
        "a spec declaring external etcd over a stacked cluster names both topologies",
        snapshot(three()),
        False,
        "etcd_topology",
        "the spec declares external etcd but the observed cluster uses stacked etcd",
        [],
    ),
    (
        "a spec declaring stacked etcd over an external cluster names both topologies",
        snapshot(three(), external=True, members=[member("ext-1")]),
        True,
        "etcd_topology",
        "the spec declares stacked etcd but the observed cluster uses external etcd",
        [],
    ),
    (
        "a silent API endpoint is said to be silent",
        snapshot(three(), endpoint_ready=False),
        True,
        "endpoint_not_ready",
        "the stable API endpoint does not answer",
        [],
    ),
    (
        "one machine being deleted is named in the singular",
        snapshot(three(cp_3={"deleting": True})),
        True,
        "machines_deleting",
        "cp-3 is being deleted; wait until that finishes",
        ["cp-3"],
    ),
    (
        "two machines being deleted are named in the plural",
        snapshot(three(cp_2={"deleting": True}, cp_3={"deleting": True})),
        True,
        "machines_deleting",
        "cp-2, cp-3 are being deleted; wait until that finishes",
        ["cp-2", "cp-3"],
    ),
    (
        "one machine without a node is named in the singular",
        snapshot(three(cp_3={"has_node": False})),
        True,
        "machines_without_node",
        "cp-3 has no node yet",
        ["cp-3"],
    ),
    (
        "two machines without a node are named in the plural",
        snapshot(three(cp_2={"has_node": False}, cp_3={"has_node": False})),
        True,
        "machines_without_node",
        "cp-2, cp-3 have no node yet",
        ["cp-2", "cp-3"],
    ),
    (
        "unhealthy pods are listed per machine with their status and reason",
        snapshot(three(cp_2={"components": {"api_server": "unhealthy", "scheduler": "missing"}}, cp_3={"components": {"etcd": "unknown"}})),
        True,
        "components_not_healthy",
        "cp-2: api_server false (pod unhealthy), scheduler false (pod missing); cp-3: etcd_pod unknown (pod unknown)",
        ["cp-2", "cp-3"],
    ),
    (
        "unhealthy etcd members are listed per machine with their status and reason",
        snapshot(three(), members=members(cp_2={"alarms": ["NOSPACE"]}, cp_3={"responsive": False})),
        True,
        "etcd_members_not_healthy",
        "cp-2: etcd_member false (member cp-2 has alarms: NOSPACE); cp-3: etcd_member unknown (member cp-3 did not answer: no answer within 2.0s)",
        ["cp-2", "cp-3"],
    ),
    (
        "every etcd cluster problem is told, one after the other",
        snapshot(three(), members=members(cp_2={"alarms": ["NOSPACE"]}, cp_3={"responsive": False})),
        True,
        "etcd_cluster",
        "member cp-3 did not answer: no answer within 2.0s; member cp-2 has alarms: NOSPACE",
        [],
    ),
]


@pytest.mark.parametrize("snap,managed,rule,message,machines", [c[1:] for c in MESSAGES], ids=[c[0] for c in MESSAGES])
def test_each_failure_says_what_was_seen(snap, managed, rule, message, machines):
    failure = next(f for f in check(snap, managed)["failures"] if f["rule"] == rule)
    assert failure == {"rule": rule, "message": message, "machines": machines}
