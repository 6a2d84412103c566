# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's heartbeat requests (kcpsim.kubelet.apisync), as the real kubelet makes them: the Node read at
resourceVersion=0 (the API server's cache) and its status PATCHed with what changed; the Lease renewed with an
Update of the copy it last wrote, a GET only the first time or after a conflict. Against a fake API."""

import copy
import datetime
import threading

import pytest

from kcpsim import kubeclient
from kcpsim.kubelet import apisync, objects

NODE = "cp-1"
MACHINE = {"hostname": NODE, "node_ip": "172.31.250.11", "runtime_socket": "/run/containerd/containerd.sock",
           "cpus": 2, "memory_kib": 4000000, "storage_kib": 9000000, "os_image": "Debian",
           "kernel": "6.1.0", "machine_id": "m", "boot_id": "b", "kubelet_version": "v1.37.1"}
CRI_VERSION = {"runtimeName": "containerd", "runtimeVersion": "v1.7.22"}


class FakeApi:
    """Leases and Nodes with resourceVersions; ``calls`` records (verb, resource, extra)."""

    def __init__(self):
        self.objects, self.calls, self.revision = {}, [], 0

    def store(self, resource, obj):
        self.revision += 1
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self.revision)
        self.objects[(resource, obj["metadata"]["name"])] = obj
        return copy.deepcopy(obj)

    def get(self, api_version, resource, name, namespace=None, resource_version=None):
        self.calls.append(("get", resource, resource_version))
        if (resource, name) not in self.objects:
            raise kubeclient.NotFound(404, "NotFound", "not found")
        return copy.deepcopy(self.objects[(resource, name)])

    def create(self, api_version, resource, body, namespace=None):
        self.calls.append(("create", resource, None))
        return self.store(resource, body)

    def update(self, api_version, resource, body, namespace=None, subresource=None):
        self.calls.append(("update", resource, subresource))
        stored = self.objects[(resource, body["metadata"]["name"])]
        if body["metadata"].get("resourceVersion") != stored["metadata"]["resourceVersion"]:
            raise kubeclient.Conflict(409, "Conflict", "the object has been modified")
        return self.store(resource, body)

    def patch(self, api_version, resource, name, patch, namespace=None, patch_type="merge", subresource=None):
        self.calls.append(("patch", resource, subresource))
        assert patch_type == "merge" and set(patch) == {"status"}
        obj = self.objects[(resource, name)]
        obj["status"] = _merge(obj.get("status") or {}, patch["status"])
        return self.store(resource, obj)


def _merge(target, patch):
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _merge(result[key], value)
        else:
            result[key] = value
    return result


@pytest.fixture(autouse=True)
def pod_network_ready(monkeypatch):
    monkeypatch.setattr(apisync.network, "not_ready_reason", lambda: None)


class Pods:
    def snapshot(self):
        return {}


def kubelet(api):
    sync = apisync.ApiSync(lambda: api, NODE, {}, [], MACHINE, lambda: True, lambda: CRI_VERSION, Pods(),
                           heartbeat=2.0, lease_duration=40, stop=threading.Event())
    sync.api, sync.node_uid = api, "uid-1"
    return sync


def test_the_lease_is_created_once_then_renewed_by_update_without_a_get():
    api = FakeApi()
    sync = kubelet(api)
    sync.renew_lease()
    assert api.calls == [("get", "leases", None), ("create", "leases", None)]
    api.calls.clear()
    for beat in range(3):
        sync.renew_lease()
    assert api.calls == [("update", "leases", None)] * 3
    assert api.objects[("leases", NODE)]["spec"]["holderIdentity"] == NODE


def test_a_conflict_makes_the_kubelet_get_its_lease_and_renew_from_it():
    api = FakeApi()
    sync = kubelet(api)
    sync.renew_lease()
    lease = api.objects[("leases", NODE)]
    api.store("leases", dict(lease, metadata=dict(lease["metadata"], labels={"touched": "yes"})))  # written elsewhere
    api.calls.clear()
    sync.renew_lease()
    assert api.calls == [("update", "leases", None), ("get", "leases", None), ("update", "leases", None)]
    assert api.objects[("leases", NODE)]["metadata"]["labels"] == {"touched": "yes"}
    api.calls.clear()
    sync.renew_lease()
    assert api.calls == [("update", "leases", None)]


def test_the_node_status_is_read_from_the_cache_and_patched_with_what_changed():
    api = FakeApi()
    api.store("nodes", objects.node(NODE, {}, []))
    sync = kubelet(api)
    sync.post_node_status()
    assert api.calls == [("get", "nodes", "0"), ("patch", "nodes", "status")]
    ready = objects.by_type(api.objects[("nodes", NODE)]["status"]["conditions"])["Ready"]
    assert ready["status"] == "True"


def test_a_node_changed_elsewhere_keeps_those_changes_and_gets_the_kubelets_status_back():
    api = FakeApi()
    api.store("nodes", objects.node(NODE, {}, []))
    sync = kubelet(api)
    sync.post_node_status()
    # The node lifecycle controller marks it Unknown and the operator labels it, between two heartbeats.
    node = api.objects[("nodes", NODE)]
    node["metadata"]["labels"]["topology.kubernetes.io/zone"] = "fd-1"
    for condition in node["status"]["conditions"]:
        condition.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
    api.store("nodes", node)
    sync.post_node_status()
    node = api.objects[("nodes", NODE)]
    assert node["metadata"]["labels"]["topology.kubernetes.io/zone"] == "fd-1"
    conditions = objects.by_type(node["status"]["conditions"])
    assert conditions["Ready"]["status"] == "True" and conditions["Ready"]["reason"] == "KubeletReady"
    assert conditions["MemoryPressure"]["status"] == "False"


def test_the_status_patch_holds_only_what_changed():
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    old = objects.node_status(MACHINE, True, CRI_VERSION, [], now)
    new = objects.node_status(MACHINE, True, CRI_VERSION, old["conditions"], now + datetime.timedelta(seconds=2))
    assert set(objects.merge_patch_between(old, new)) == {"conditions"}   # the heartbeat times
    assert objects.merge_patch_between(new, new) == {}
    assert objects.merge_patch_between({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"b": 1}}) == {"a": {"c": None}, "d": None}


def test_a_status_changed_only_in_its_heartbeat_times_is_written_once_per_report_frequency(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(apisync.time, "monotonic", lambda: clock[0])
    start = datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.timezone.utc)
    monkeypatch.setattr(apisync, "utcnow", lambda: start + datetime.timedelta(seconds=clock[0] - 1000.0))
    api = FakeApi()
    api.store("nodes", objects.node(NODE, {}, []))
    sync = kubelet(api)
    sync.post_node_status()
    api.calls.clear()
    clock[0] += 2
    sync.post_node_status()
    assert api.calls == [("get", "nodes", "0")]            # only the heartbeat times changed: nothing written
    running = sync.runtime_up
    sync.runtime_up = lambda: False
    clock[0] += 2
    sync.post_node_status()
    assert api.calls[-1] == ("patch", "nodes", "status")   # a real change is written at once
    sync.runtime_up = running
    sync.post_node_status()
    api.calls.clear()
    clock[0] += sync.report_frequency
    sync.post_node_status()
    assert api.calls == [("get", "nodes", "0"), ("patch", "nodes", "status")]   # and every report frequency


def test_the_report_frequency_is_the_kubelets_default():
    from kcpsim.kubelet import config
    kubeadm_written = config.KubeletConfig({"nodeStatusUpdateFrequency": "0s", "nodeStatusReportFrequency": "0s"})
    assert (kubeadm_written.node_status_update_frequency, kubeadm_written.node_status_report_frequency) == (10.0, 300.0)
    assert config.KubeletConfig({"nodeStatusUpdateFrequency": "20s"}).node_status_report_frequency == 20.0
    assert config.KubeletConfig({"nodeStatusReportFrequency": "1m"}).node_status_report_frequency == 60.0
