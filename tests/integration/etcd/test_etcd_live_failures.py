# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Broken etcd clusters, for real: dead members, lost quorum, a NOSPACE alarm, a second cluster.

Membership changes go through the etcd_member module's own ``run`` (the guard, then the change), so the
refusals tested here are the module's; the module through Ansible is tested in test_etcd_live_modules.py.
"""

import time

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdError
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import change_verdict, evaluate
from ansible_collections.kubeadm.control_plane.plugins.modules.etcd_member import Refused, Unknown, run

pytestmark = pytest.mark.etcd

POLL_LIMIT = 15.0


def machines_for(cluster):
    return [{"name": n, "node": {"name": n}, "deleting": False} for n in cluster.members]


def member_params(name, state="absent", peer_urls=None, learner=True, leader=False, force=False):
    return dict(name=name, state=state, peer_urls=peer_urls, learner=learner, leader=leader, force=force)


def gather_until(client, condition, what):
    """Gather until ``condition(section)`` holds (etcd notices a lost peer after its election timeout)."""
    deadline = time.monotonic() + POLL_LIMIT
    while True:
        section = client.gather()
        if condition(section):
            return section
        if time.monotonic() > deadline:
            raise AssertionError("%s not seen within %.0fs: %s" % (what, POLL_LIMIT, section))
        time.sleep(0.1)


def by_name(section):
    return {m["name"]: m for m in section["members"]}


def test_one_dead_member_is_reported_and_only_its_own_removal_is_allowed(make_cluster, client_for):
    cluster = make_cluster(3)
    cluster.kill("cp-3")
    client = client_for(cluster)

    section = client.gather()
    dead = by_name(section)["cp-3"]
    assert dead["responsive"] is False and "Connection refused" in dead["error"]
    health = evaluate(section, machines_for(cluster))
    assert health["members_by_machine"]["cp-3"]["status"] == "unknown"
    assert not health["ok"] and any("cp-3 did not answer" in p for p in health["problems"])

    with pytest.raises(Refused) as refusal:
        run(client, member_params("cp-1"), check_mode=False)
    assert "after the change 1 of 2 voting members would be healthy" in refusal.value.args[1]["reasons"][0]
    assert len(cluster.member_ids()) == 3

    # force skips the guard; etcd's own reconfiguration check still refuses to break its active quorum
    with pytest.raises(EtcdError) as etcd_refusal:
        run(client_for(cluster, retry_timeout=1.0), member_params("cp-1", force=True), check_mode=False)
    assert "unhealthy cluster" in etcd_refusal.value.message
    assert len(cluster.member_ids()) == 3

    result = run(client, member_params("cp-3"), check_mode=False)
    assert result["actions"] == ["remove"] and result["changed"]
    assert sorted(cluster.member_ids()) == ["cp-1", "cp-2"]
    assert evaluate(client.gather(), machines_for(cluster)[:2])["ok"]


def test_two_dead_of_three_lose_quorum_and_every_change_is_refused(make_cluster, client_for):
    cluster = make_cluster(3)
    cluster.kill("cp-2")
    cluster.kill("cp-3")
    client = client_for(cluster)

    # the health read through quorum fails at once; the status says "no leader" after the election timeout
    section = gather_until(client, lambda s: by_name(s)["cp-1"]["error"], "the survivor reporting no quorum")
    assert any(text in by_name(section)["cp-1"]["error"] for text in ("no leader", "health read through quorum"))
    assert not evaluate(section, machines_for(cluster))["ok"]

    with pytest.raises(Refused) as refusal:
        run(client, member_params("cp-3"), check_mode=False)
    assert any("no quorum now" in r for r in refusal.value.args[1]["reasons"])
    # a member missing from a list no quorum stands behind may exist all the same
    with pytest.raises(Unknown) as unknown:
        run(client, member_params("cp-4", "present", ["https://127.0.0.1:12380"]), check_mode=False)
    assert "cannot tell whether member cp-4 exists" in str(unknown.value)
    assert len(cluster.call("cp-1", "cluster/member/list")["members"]) == 3


def test_a_real_nospace_alarm_is_reported_and_blocks_changes(make_cluster, client_for):
    cluster = make_cluster(3, extra_flags=["--quota-backend-bytes=%d" % (1024 * 1024)])
    writes = cluster.fill_until_nospace()
    assert writes > 0
    client = client_for(cluster)

    section = gather_until(client, lambda s: all(m["alarms"] for m in s["members"]), "the alarm on every member")
    assert all(m["alarms"] == ["NOSPACE"] and m["error"] is None for m in section["members"])
    health = evaluate(section, machines_for(cluster))
    assert {e["status"] for e in health["members_by_machine"].values()} == {"false"}
    assert any("has alarms: NOSPACE" in p for p in health["problems"])

    verdict = change_verdict(section, remove=[by_name(section)["cp-3"]["id"]])
    assert not verdict["ok"] and "NOSPACE" in verdict["reasons"][0]
    with pytest.raises(Refused):
        run(client, member_params("cp-3"), check_mode=False)


def test_a_second_cluster_answering_under_a_members_address_is_reported(make_cluster, client_for):
    cluster = make_cluster(3)
    cluster.replace_with_foreign_cluster("cp-3")
    # cp-3 may have led: the genuine members answer cleanly once they have elected a leader between them
    section = gather_until(
        client_for(cluster),
        lambda s: all(by_name(s)[n]["responsive"] and not by_name(s)[n]["error"] for n in ("cp-1", "cp-2")),
        "the genuine members answering through a quorum",
    )

    members = by_name(section)
    impostor, genuine = members["cp-3"], members["cp-1"]
    assert impostor["responsive"] and impostor["cluster_id"] != genuine["cluster_id"]
    assert impostor["member_ids_seen"] != genuine["member_ids_seen"]
    health = evaluate(section, machines_for(cluster))
    assert health["members_by_machine"]["cp-3"]["status"] == "false"
    # The first membership rule that fails: its member list is not the one cp-1, the first healthy member, reports.
    assert "reports members" in health["members_by_machine"]["cp-3"]["reason"]
    assert any("disagree on the member list" in p for p in health["problems"])
    assert any("different clusters" in p for p in health["problems"])
