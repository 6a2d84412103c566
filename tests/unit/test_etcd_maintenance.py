# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd maintenance (docs/disaster-recovery.md): which members it refuses, the order it defragments them in, the
quota, when NOSPACE may be cleared (module_utils/etcd_maintenance.py), and the module's run over a client that
records what it is asked. Real etcd: tests/e2e/test_disaster_recovery.py."""

import pytest
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_maintenance import (
    DEFAULT_QUOTA_BYTES, defrag_order, disarm_refusal, maintenance_refusal, quota_bytes)
from ansible_collections.kubeadm.control_plane.plugins.modules.etcd_maintenance import Stopped, maintain
from ansible_collections.kubeadm.control_plane.tests.unit.builders import member


def members(leader="cp-1", **changes):
    """Three healthy members, each seeing the three; ``changes``: a member's name -> fields to change."""
    found = [member(name, leader=(name == leader)) for name in ("cp-1", "cp-2", "cp-3")]
    ids = sorted(m["id"] for m in found)
    for m in found:
        m.update(member_ids_seen=ids, db_size=100 * 1024 ** 2)
        m.update(changes.get(m["name"], {}))
    return found


def test_healthy_members_and_a_nospace_alarm_may_be_maintained():
    assert maintenance_refusal(members()) is None
    assert maintenance_refusal(members(**{"cp-2": {"alarms": ["NOSPACE"]}})) is None


@pytest.mark.parametrize("changes, refusal", [
    ({"cp-2": {"responsive": False, "error": "no answer within 5.0s"}}, "cp-2 does not answer (no answer within 5.0s)"),
    ({"cp-3": {"alarms": ["CORRUPT"]}}, "cp-3 has alarm CORRUPT"),
    ({"cp-3": {"learner": True}}, "cp-3 is a learner, not promoted yet"),
    ({"cp-2": {"error": "status: etcdserver: request timed out"}}, "cp-2: status: etcdserver: request timed out"),
])
def test_a_member_not_well_refuses_maintenance_and_is_named(changes, refusal):
    assert refusal in maintenance_refusal(members(**changes))


def test_members_that_disagree_on_the_member_list_are_refused():
    found = members()
    found[2]["member_ids_seen"] = found[2]["member_ids_seen"][:2]
    assert "disagree on the member list" in maintenance_refusal(found)


def test_the_leader_is_defragmented_last():
    assert [m["name"] for m in defrag_order(members(leader="cp-2"))] == ["cp-1", "cp-3", "cp-2"]


def test_the_quota_is_the_manifest_s_else_etcd_s_default():
    assert quota_bytes("    - --quota-backend-bytes=8589934592\n    - --data-dir=/var/lib/etcd\n") == 8589934592
    assert quota_bytes("    - --data-dir=/var/lib/etcd\n") == DEFAULT_QUOTA_BYTES == 2147483648


def test_nospace_stays_while_a_database_leaves_less_than_a_fifth_of_the_quota_free():
    nearly = members(**{"cp-3": {"db_size": 1717986918}})  # four fifths of 2 GiB, rounded down
    assert disarm_refusal(nearly, 2147483648) == (
        "the space is not back under the quota of 2147483648 bytes (a fifth of it free: under 1717986918 bytes): cp-3 "
        "holds 1717986918 bytes; delete what fills it and run again")
    assert disarm_refusal(members(**{"cp-3": {"db_size": 1717986917}}), 2147483648) is None


class Client:
    """etcd as the module reaches it: each gather answers the next reading; what it is asked is recorded."""

    def __init__(self, *readings, raised=()):
        self.readings, self.asked, self.raised = list(readings), [], list(raised)

    def alarms(self):
        return self.raised

    def gather(self):
        return {"members": self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]}

    def gather_until(self, condition):
        return self.gather()

    def revision(self):
        return 4821

    def compact(self, revision):
        self.asked.append(("compact", revision))

    def defragment(self, url, timeout):
        self.asked.append(("defragment", url))

    def disarm(self, member_id, alarm):
        self.asked.append(("disarm", member_id, alarm))


PARAMS = {"compact": True, "defrag_timeout": 300.0}


def test_compaction_then_each_member_the_leader_last_then_nospace_cleared():
    # every member reports the cluster's alarm; etcd's alarm list says cp-2 raised it
    before = members(**{name: {"alarms": ["NOSPACE"]} for name in ("cp-1", "cp-2", "cp-3")})
    after = members(**{name: {"db_size": 20 * 1024 ** 2, "alarms": ["NOSPACE"]} for name in ("cp-1", "cp-2", "cp-3")})
    client = Client(before, after, raised=[(before[1]["id"], "NOSPACE")])
    result = maintain(client, PARAMS, DEFAULT_QUOTA_BYTES, False)
    assert client.asked == [("compact", 4821), ("defragment", "https://cp-2:2379"), ("defragment", "https://cp-3:2379"),
                            ("defragment", "https://cp-1:2379"), ("disarm", before[1]["id"], "NOSPACE")]
    assert result["changed"] and result["compacted"] == 4821 and result["disarmed"] == ["cp-2"]
    assert [(m["name"], m["db_size_before"], m["db_size_after"]) for m in result["members"]] == [
        (name, 100 * 1024 ** 2, 20 * 1024 ** 2) for name in ("cp-2", "cp-3", "cp-1")]


def test_a_member_that_is_not_well_after_its_turn_stops_the_rest():
    sick = members(**{"cp-3": {"responsive": False, "error": "no answer"}})
    client = Client(members(), sick)
    with pytest.raises(Stopped, match="stopped after defragmenting cp-2: cp-3 does not answer .no answer.; not defragmented: cp-3, cp-1"):
        maintain(client, PARAMS, DEFAULT_QUOTA_BYTES, False)
    assert client.asked == [("compact", 4821), ("defragment", "https://cp-2:2379")]


def test_nospace_stays_armed_while_the_space_is_not_back():
    full = members(**{"cp-2": {"alarms": ["NOSPACE"], "db_size": DEFAULT_QUOTA_BYTES}})
    client = Client(full, raised=[(full[1]["id"], "NOSPACE")])
    with pytest.raises(Stopped, match="NOSPACE stays: the space is not back under the quota"):
        maintain(client, PARAMS, DEFAULT_QUOTA_BYTES, False)
    assert not [asked for asked in client.asked if asked[0] == "disarm"]


def test_a_refusal_and_check_mode_change_nothing():
    client = Client(members(**{"cp-1": {"alarms": ["CORRUPT"]}}))
    with pytest.raises(Stopped, match="refused: cp-1 has alarm CORRUPT"):
        maintain(client, PARAMS, DEFAULT_QUOTA_BYTES, False)
    found = members(**{"cp-3": {"alarms": ["NOSPACE"]}})
    client = Client(found, raised=[(found[2]["id"], "NOSPACE")])
    planned = maintain(client, PARAMS, DEFAULT_QUOTA_BYTES, True)
    assert client.asked == [] and planned["disarmed"] == ["cp-3"] and [m["name"] for m in planned["members"]] == ["cp-2", "cp-3", "cp-1"]
