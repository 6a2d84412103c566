# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Membership changes against real etcd: learner add / promote / remove, leadership moves."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import evaluate
from ansible_collections.kubeadm.control_plane.plugins.modules.etcd_member import run

pytestmark = pytest.mark.etcd


def by_name(section):
    return {m["name"]: m for m in section["members"]}


def machines(*names):
    return [{"name": n, "node": {"name": n}, "deleting": False} for n in names]


def test_a_learner_is_added_started_promoted_and_removed(make_cluster, client_for):
    cluster = make_cluster(3)
    client = client_for(cluster)
    joining = cluster.new_member("cp-4")

    added = client.add_member([joining.peer_url], learner=True)
    listed = {("%x" % int(i)) for i in cluster.member_ids().values()}
    assert added["id"] in listed and added["learner"] and added["name"] == ""
    unstarted = next(m for m in client.gather()["members"] if m["id"] == added["id"])
    assert unstarted["learner"] and not unstarted["responsive"] and "not started yet" in unstarted["error"]

    cluster.start("cp-4", initial_cluster=cluster.initial_cluster_with("cp-4"), state="existing")
    client.promote_member(added["id"])
    section = client.gather()
    promoted = by_name(section)["cp-4"]
    assert promoted["id"] == added["id"] and not promoted["learner"] and promoted["responsive"]
    assert evaluate(section, machines("cp-1", "cp-2", "cp-3", "cp-4"))["ok"]

    client.remove_member(added["id"])
    assert sorted(cluster.member_ids()) == ["cp-1", "cp-2", "cp-3"]
    client.remove_member(added["id"])  # already gone: still done, as KCP's member removal is


def absent(name):
    return dict(name=name, state="absent", peer_urls=None, learner=True, leader=False, force=False)


def test_leadership_is_moved_then_the_former_leader_is_removed_and_removing_a_leader_hands_over_first(
    make_cluster, client_for
):
    cluster = make_cluster(3)
    client = client_for(cluster)
    section = client.gather()
    former = next(m for m in section["members"] if m["leader"])
    heir = next(m for m in section["members"] if not m["leader"])

    client.move_leader(heir["id"])
    assert by_name(client.gather())[heir["name"]]["leader"]

    result = run(client, absent(former["name"]), False)
    assert result["actions"] == ["remove"] and result["id"] == former["id"]
    remaining = client.gather()
    assert former["name"] not in by_name(remaining)
    assert evaluate(remaining, machines(*by_name(remaining)))["ok"]

    result = run(client, absent(heir["name"]), False)
    assert result["actions"] == ["move_leader", "remove"]
    last = client.gather()["members"]
    assert len(last) == 1 and last[0]["leader"] and last[0]["name"] != heir["name"]


def test_peer_urls_of_another_member_are_refused_before_any_change(healthy3, client_for):
    client = client_for(healthy3)
    taken = healthy3.members["cp-1"].peer_url
    params = dict(name="cp-9", state="present", peer_urls=[taken], learner=True, leader=False, force=False)
    with pytest.raises(ValueError) as failure:
        run(client, params, False)
    assert str(failure.value).startswith("peer_urls: %s belong to member cp-1" % taken)
    assert sorted(healthy3.member_ids()) == ["cp-1", "cp-2", "cp-3"]
