# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's watch cache and the components' informers, against a real 3-member etcd.

The API server serves LISTs from its watch cache as the real one does since 1.31 (ConsistentListFromCache): a
LIST without a resourceVersion once the cache has caught up with etcd's current revision, which is what etcd
holds; ``resourceVersion=0`` from the cache as it is (LISTs and GETs), even without etcd quorum. Watches fan out from the cache.
An informer (kcpsim/informer.py) lists once, then watches; when its watch breaks (the API server went away) it
lists again, so nothing made meanwhile is missed.
"""

import threading

import pytest

import apiserver_harness as harness
from kcpsim import etcdclient, informer, kubeclient
from kcpsim.apiserver import cache, storage

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 7


def _configmap(name, **data):
    return {"metadata": {"name": name}, "data": data}


def _in_etcd(cluster, prefix):
    """``{name: (resourceVersion, data)}`` of what etcd itself holds under ``prefix``."""
    client = cluster.etcd_client(1)
    try:
        kvs = client.range(prefix, prefix=True)[0]
    finally:
        client.close()
    objects = [storage.decode(kv.value, kv.mod_revision) for kv in kvs]
    return {obj["metadata"]["name"]: (obj["metadata"]["resourceVersion"], obj.get("data")) for obj in objects}


def _listed(listing):
    return {obj["metadata"]["name"]: (obj["metadata"]["resourceVersion"], obj.get("data")) for obj in listing["items"]}


def _store(cluster):
    context = etcdclient.tls_context(cluster.path("etcd/ca.crt"), cluster.path("apiserver-etcd-client.crt"),
                                     cluster.path("apiserver-etcd-client.key"))
    return storage.Store(["https://%s:2379" % ip for ip in cluster.etcd_ips], context)


def test_a_consistent_list_returns_what_etcd_holds_right_after_writes(cluster, admin):
    admin.create("v1", "namespaces", {"metadata": {"name": "cached"}})
    for number in range(5):
        admin.create("v1", "configmaps", _configmap("cm-%d" % number, n=str(number)), "cached")
    admin.update("v1", "configmaps", dict(admin.get("v1", "configmaps", "cm-1", "cached"), data={"n": "changed"}),
                 "cached")
    admin.delete("v1", "configmaps", "cm-2", "cached")
    # No pause: a LIST right after the writes waits for the cache to catch up with etcd's revision.
    listing = admin.list("v1", "configmaps", "cached")
    assert _listed(listing) == _in_etcd(cluster, "/registry/configmaps/cached/")
    assert _listed(listing)["cm-1"][1] == {"n": "changed"} and "cm-2" not in _listed(listing)
    assert int(listing["metadata"]["resourceVersion"]) >= max(int(rv) for rv, _data in _listed(listing).values())
    stale_ok = admin.request("GET", kubeclient.resource_path("v1", "configmaps", "cached"),
                             query={"resourceVersion": "0"})
    assert _listed(stale_ok) == _listed(listing)


def test_the_registry_cache_follows_etcd_and_replays_its_history_to_a_late_watcher(cluster, admin):
    store, stopping = _store(cluster), threading.Event()
    registry = cache.RegistryCache(store, stopping).start()
    try:
        assert registry.wait_fresh(store.revision(), timeout=10)
        prefix = "/registry/configmaps/default/"
        before = registry.revision
        admin.create("v1", "configmaps", _configmap("followed", a="1"), "default")
        admin.patch("v1", "configmaps", "followed", {"data": {"a": "2"}}, "default")
        admin.delete("v1", "configmaps", "followed", "default")
        assert registry.wait_fresh(store.revision(), timeout=10)
        assert registry.list(prefix) == store.list(prefix)
        late = registry.subscribe(prefix, since=before)
        changes = [late.queue.get(timeout=1) for unused in range(3)]
        assert [(c.obj or {}).get("data") for c in changes] == [{"a": "1"}, {"a": "2"}, None]
        assert changes[2].previous["data"] == {"a": "2"}
        assert late.queue.empty()
        assert registry.subscribe(prefix, since=0) is None  # older than its history: the caller asks etcd
    finally:
        stopping.set()
        registry.close()
        store.close()


def test_an_informer_lists_again_when_its_watch_breaks_and_misses_nothing(cluster, admin):
    """The informer watches through a second API server, which is killed and started again; what was created
    meanwhile (through the first one) shows up after the relist."""
    process = cluster.start_apiserver(5)
    second = cluster.client("admin", cluster.ip(5))
    watched = informer.Informer(lambda: second, "v1", "configmaps", namespace="default").start()
    try:
        assert watched.synced.wait(10)
        admin.create("v1", "configmaps", _configmap("seen-by-watch"), "default")
        harness.wait_until(lambda: watched.get("seen-by-watch", "default"), 10, what="the watch to bring it")
        assert watched.lists == 1
        process.stop(kill=True)
        admin.create("v1", "configmaps", _configmap("made-while-down"), "default")
        admin.delete("v1", "configmaps", "seen-by-watch", "default")
        process.start()
        harness.wait_until(lambda: watched.get("made-while-down", "default") and watched.lists >= 2, 60,
                           what="the informer to list again and hold what was made meanwhile")
        assert watched.get("seen-by-watch", "default") is None
        assert {obj["metadata"]["name"] for obj in watched.items()} == set(_in_etcd(cluster, "/registry/configmaps/default/"))
    finally:
        watched.stop()
        second.close()
        process.stop()


def test_without_quorum_a_list_or_get_at_resource_version_0_is_served_from_the_cache_and_a_consistent_one_fails(
        cluster, admin):
    process = cluster.start_apiserver(6, etcd_numbers=(1,), etcd_request_timeout="2s")
    server = cluster.client("admin", cluster.ip(6), timeout=10)
    try:
        admin.create("v1", "configmaps", _configmap("before-the-outage", k="v"), "default")
        harness.wait_until(lambda: "before-the-outage" in _listed(server.list("v1", "configmaps", "default")), 10,
                           what="the second API server to list it")
        cluster.etcd[1].stop(kill=True)
        cluster.etcd[2].stop(kill=True)
        with pytest.raises(kubeclient.ServerError):
            server.list("v1", "configmaps", "default")
        cached = server.request("GET", kubeclient.resource_path("v1", "configmaps", "default"),
                                query={"resourceVersion": "0"})
        assert _listed(cached)["before-the-outage"][1] == {"k": "v"}
        # A GET at resourceVersion=0 too (what the kubelet reads its Node with), a linearizable GET fails.
        assert server.get("v1", "configmaps", "before-the-outage", "default", resource_version="0")["data"] == {"k": "v"}
        with pytest.raises(kubeclient.NotFound):
            server.get("v1", "configmaps", "never-made", "default", resource_version="0")
        with pytest.raises(kubeclient.ServerError):
            server.get("v1", "configmaps", "before-the-outage", "default")
    finally:
        cluster.restart_etcd(2)
        cluster.restart_etcd(3)
        cluster.wait_etcd_quorum(60)
        server.close()
        process.stop()
    assert "before-the-outage" in _listed(admin.list("v1", "configmaps", "default"))
