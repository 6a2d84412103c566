# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd maintenance against real etcd that ran out of space (a 1 MiB quota, filled until NOSPACE): the alarm stays
while the data still fills most of the quota, however much is compacted and defragmented; once the filler is deleted, the
members are defragmented, the leader last, every database shrinks under the quota, the alarm raised by its member is
cleared and etcd takes writes again (modules/etcd_maintenance.maintain over EtcdClient)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import b64
from ansible_collections.kubeadm.control_plane.plugins.modules.etcd_maintenance import Stopped, maintain

pytestmark = pytest.mark.etcd
QUOTA = 1024 * 1024
PARAMS = {"compact": True, "defrag_timeout": 60.0}


def test_nospace_is_cleared_only_once_the_space_is_back(make_cluster, client_for):
    cluster = make_cluster(3, extra_flags=["--quota-backend-bytes=%d" % QUOTA])
    assert cluster.fill_until_nospace() > 0
    client = client_for(cluster, retry_timeout=30.0)
    raised = client.alarms()  # each member that ran out raised its own
    assert raised and {alarm for _member, alarm in raised} == {"NOSPACE"}

    # compaction and defragmentation of live data leave it near the quota: the alarm stays
    with pytest.raises(Stopped, match="NOSPACE stays: the space is not back under the quota of 1048576 bytes"):
        maintain(client, PARAMS, QUOTA, False)
    assert sorted(client.alarms()) == sorted(raised)

    cluster.call_any("kv/deleterange", {"key": b64("/fill/"), "range_end": b64("/fill0")})  # deletes are taken under NOSPACE
    leader = next(m["name"] for m in client.gather()["members"] if m["leader"])
    result = maintain(client, PARAMS, QUOTA, False)
    assert [m["name"] for m in result["members"]][-1] == leader
    assert all(m["db_size_after"] < QUOTA * 4 // 5 for m in result["members"]), result["members"]
    names = {m["id"]: m["name"] for m in client.gather()["members"]}
    assert sorted(result["disarmed"]) == sorted(names[member] for member, _alarm in raised) and client.alarms() == []
    cluster.call_any("kv/put", {"key": b64("/after"), "value": b64("written")})
