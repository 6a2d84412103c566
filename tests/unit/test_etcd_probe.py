# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""EtcdClient.probe against a member that trails the leader by a membership change: which member list it keeps."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_client
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdUnavailable

BEFORE = [{"ID": "1", "name": "cp-1"}, {"ID": "2", "name": "cp-2"}, {"ID": "3", "name": "cp-3"}]
AFTER = BEFORE[:2]  # cp-3 removed by the leader


class TrailingMember:
    """A member that has not applied cp-3's removal until a read through quorum makes it catch up (or fails)."""

    def __init__(self, quorum):
        self.quorum = quorum
        self.caught_up = False
        self.calls = []

    def __call__(self, endpoint, context, timeout):
        return self

    def call(self, path, body=None, timeout=None):
        self.calls.append(path)
        if path == "maintenance/status":
            return {"header": {"member_id": "1", "cluster_id": "9"}}
        if path == "cluster/member/list":
            return {"members": AFTER if self.caught_up else BEFORE}
        if path == "kv/range":
            if not self.quorum:
                raise EtcdUnavailable("https://cp-1:2379", "timed out")
            self.caught_up = True
            return {}
        raise AssertionError(path)

    def version(self, timeout=None):
        return {"etcdcluster": "3.5.0"}

    def close(self):
        pass


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setattr(etcd_client, "tls_context", lambda *args: None)
    return etcd_client.EtcdClient(["https://cp-1:2379"])


def test_with_quorum_the_list_read_after_the_health_read_is_kept(client, monkeypatch):
    member = TrailingMember(quorum=True)
    monkeypatch.setattr(etcd_client, "GatewayClient", member)
    probe = client.probe("https://cp-1:2379")
    assert probe.error is None and probe.members == AFTER
    assert member.calls == ["maintenance/status", "cluster/member/list", "kv/range", "cluster/member/list"]


def test_without_quorum_the_members_own_list_is_kept_with_the_failure(client, monkeypatch):
    monkeypatch.setattr(etcd_client, "GatewayClient", TrailingMember(quorum=False))
    probe = client.probe("https://cp-1:2379")
    assert probe.members == BEFORE and probe.error.startswith("health read through quorum: ")
