# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated API server through the official Python ``kubernetes`` client, with a client certificate:
objects live in etcd, resourceVersions are etcd revisions, and the client's models accept every answer."""

import http.client
import json
import ssl
import threading

import pytest
from kubernetes import client as k8s
from kubernetes import watch

from kcpsim import kubeclient

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 1


@pytest.fixture(scope="module")
def api_client(cluster):
    configuration = k8s.Configuration()
    configuration.host = "https://%s:6443" % cluster.ip(4)
    configuration.ssl_ca_cert = cluster.path("ca.crt")
    configuration.cert_file = cluster.path("admin.crt")
    configuration.key_file = cluster.path("admin.key")
    api_client = k8s.ApiClient(configuration)
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def core(api_client):
    return k8s.CoreV1Api(api_client)


def configmap(name, labels=None, data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}},
            "data": data or {}}


def test_objects_are_stored_in_etcd_under_registry_with_the_mod_revision_as_resource_version(cluster, core):
    created = core.create_namespaced_config_map("default", configmap("stored", data={"a": "1"}))
    etcd = cluster.etcd_client(2)
    try:
        kv = etcd.get("/registry/configmaps/default/stored")
    finally:
        etcd.close()
    assert kv is not None
    assert created.metadata.resource_version == str(kv.mod_revision)
    assert created.metadata.uid and created.metadata.creation_timestamp
    assert b'"a":"1"' in kv.value and b"resourceVersion" not in kv.value


def test_create_of_an_existing_name_is_409_already_exists(core):
    core.create_namespaced_config_map("default", configmap("twice"))
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_config_map("default", configmap("twice"))
    assert (caught.value.status, caught.value.reason) == (409, "Conflict")
    assert '"reason":"AlreadyExists"' in caught.value.body


def test_update_from_a_stale_resource_version_is_409_conflict_and_a_fresh_one_succeeds(core):
    first = core.create_namespaced_config_map("default", configmap("stale", data={"v": "1"}))
    core.patch_namespaced_config_map("stale", "default", {"data": {"v": "2"}})
    first.data = {"v": "3"}
    with pytest.raises(k8s.ApiException) as caught:
        core.replace_namespaced_config_map("stale", "default", first)
    assert caught.value.status == 409 and '"reason":"Conflict"' in caught.value.body
    fresh = core.read_namespaced_config_map("stale", "default")
    fresh.data = {"v": "3"}
    replaced = core.replace_namespaced_config_map("stale", "default", fresh)
    assert replaced.data == {"v": "3"}
    assert int(replaced.metadata.resource_version) > int(fresh.metadata.resource_version)


def test_a_patch_carrying_a_stale_resource_version_is_409(core):
    created = core.create_namespaced_config_map("default", configmap("patch-stale"))
    core.patch_namespaced_config_map("patch-stale", "default", {"data": {"x": "1"}})
    with pytest.raises(k8s.ApiException) as caught:
        core.patch_namespaced_config_map("patch-stale", "default", {
            "metadata": {"resourceVersion": created.metadata.resource_version}, "data": {"x": "2"}})
    assert caught.value.status == 409


def test_an_update_that_changes_nothing_keeps_the_resource_version(core):
    created = core.create_namespaced_config_map("default", configmap("noop", labels={"k": "v"}))
    patched = core.patch_namespaced_config_map("noop", "default", {"metadata": {"labels": {"k": "v"}}})
    assert patched.metadata.resource_version == created.metadata.resource_version


@pytest.mark.parametrize("selector, expected", [
    ("tier=a", ["sel-1", "sel-2"]),
    ("tier==a,zone!=z1", ["sel-2"]),
    ("tier in (a,b),zone", ["sel-1", "sel-2", "sel-3"]),
    ("tier notin (a)", ["sel-3"]),
    ("!zone", []),
    ("zone,!missing", ["sel-1", "sel-2", "sel-3"]),
], ids=["equality picks both a-tier objects",
        "two requirements must both hold",
        "set membership plus existence",
        "notin excludes the listed values",
        "does-not-exist matches nothing when every object has the label",
        "exists and does-not-exist combine"])
def test_list_filters_by_label_selector(core, selector, expected):
    if not core.list_namespaced_config_map("default", label_selector="suite=sel").items:
        for name, tier, zone in (("sel-1", "a", "z1"), ("sel-2", "a", "z2"), ("sel-3", "b", "z1")):
            core.create_namespaced_config_map("default", configmap(name, labels={"suite": "sel", "tier": tier,
                                                                                 "zone": zone}))
    found = core.list_namespaced_config_map("default", label_selector="suite=sel," + selector)
    assert sorted(item.metadata.name for item in found.items) == expected


def test_list_resource_version_is_the_etcd_header_revision(cluster, core):
    listed = core.list_namespaced_config_map("default")
    etcd = cluster.etcd_client(1)
    try:
        revision = etcd.range("/registry/", prefix=True, keys_only=True)[1]
    finally:
        etcd.close()
    assert int(listed.metadata.resource_version) <= revision
    assert int(listed.metadata.resource_version) >= max(int(i.metadata.resource_version) for i in listed.items)


def test_field_selectors_pick_pods_by_node_and_an_unknown_field_is_400(core):
    for name, node in (("fs-a", "node-a"), ("fs-b", "node-b")):
        core.create_namespaced_pod("default", {"metadata": {"name": name}, "spec": {
            "nodeName": node, "containers": [{"name": "c", "image": "pause"}]}})
    on_a = core.list_namespaced_pod("default", field_selector="spec.nodeName=node-a")
    assert [pod.metadata.name for pod in on_a.items] == ["fs-a"]
    by_name = core.list_pod_for_all_namespaces(field_selector="metadata.name=fs-b")
    assert [pod.metadata.name for pod in by_name.items] == ["fs-b"]
    with pytest.raises(k8s.ApiException) as caught:
        core.list_namespaced_pod("default", field_selector="spec.unknownField=x")
    assert caught.value.status == 400


@pytest.mark.parametrize("name, patch, content_type, expected", [
    ("patch-smp", {"metadata": {"labels": {"added": "yes", "drop": None}}}, None, {"keep": "1", "added": "yes"}),
    ("patch-json", [{"op": "add", "path": "/metadata/labels/added", "value": "yes"},
                    {"op": "remove", "path": "/metadata/labels/drop"}], None, {"keep": "1", "added": "yes"}),
    ("patch-merge", {"metadata": {"labels": {"added": "yes", "drop": None}}}, "application/merge-patch+json",
     {"keep": "1", "added": "yes"}),
], ids=["a dict is sent as a strategic merge patch",
        "a list is sent as a JSON patch",
        "an explicit merge patch"])
def test_patch_types_of_the_python_client(api_client, core, name, patch, content_type, expected):
    core.create_namespaced_config_map("default", configmap(name, labels={"keep": "1", "drop": "1"}))
    if content_type:
        api_client.set_default_header("Content-Type", content_type)
    try:
        patched = core.patch_namespaced_config_map(name, "default", patch)
    finally:
        api_client.default_headers.pop("Content-Type", None)
    assert patched.metadata.labels == expected


def test_strategic_merge_patch_merges_node_conditions_by_type(core):
    core.create_node({"metadata": {"name": "smp-node"}, "status": {"conditions": [
        {"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"}]}})
    patched = core.patch_node_status("smp-node", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    assert {(c.type, c.status) for c in patched.status.conditions} == {("Ready", "False"), ("DiskPressure", "False")}


def test_status_subresource_writes_only_status_and_main_writes_keep_it(core):
    core.create_node({"metadata": {"name": "status-node"}, "status": {"conditions": [
        {"type": "Ready", "status": "True"}]}})
    core.patch_node("status-node", {"status": {"conditions": [{"type": "Ready", "status": "False"}]},
                                    "metadata": {"labels": {"main": "write"}}})
    node = core.read_node("status-node")
    assert node.status.conditions[0].status == "True" and node.metadata.labels == {"main": "write"}
    core.patch_node_status("status-node", {"metadata": {"labels": {"status": "write"}},
                                           "status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    node = core.read_node("status-node")
    assert node.status.conditions[0].status == "False" and node.metadata.labels == {"main": "write"}


def test_missing_required_status_fields_get_go_zero_values_so_strict_clients_can_read_them(core, admin):
    # Written with kcpsim's own client: the official one refuses to even send such an object.
    admin.create("v1", "nodes", {"metadata": {"name": "sparse-node"},
                                 "status": {"nodeInfo": {"kubeletVersion": "v1.31.2"}}})
    node = core.read_node("sparse-node")
    assert node.status.node_info.kubelet_version == "v1.31.2"
    assert node.status.node_info.boot_id == ""


def test_a_pod_without_containers_is_refused_with_422_naming_the_field(admin):
    with pytest.raises(kubeclient.ApiError) as caught:
        admin.create("v1", "pods", {"metadata": {"name": "empty"}, "spec": {}}, "default")
    assert (caught.value.status, caught.value.reason) == (422, "Invalid")
    assert "spec.containers: Required value" in caught.value.message


def test_create_in_a_missing_namespace_is_404(core):
    with pytest.raises(k8s.ApiException) as caught:
        core.create_namespaced_config_map("no-such-namespace", configmap("x"))
    assert caught.value.status == 404 and 'namespaces \\"no-such-namespace\\" not found' in caught.value.body


def test_system_namespaces_exist_at_start_and_may_not_be_deleted(core):
    names = {ns.metadata.name for ns in core.list_namespace().items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    with pytest.raises(k8s.ApiException) as caught:
        core.delete_namespace("kube-system")
    assert caught.value.status == 403


def test_deleting_a_namespace_deletes_what_it_holds(core):
    core.create_namespace({"metadata": {"name": "doomed"}})
    core.create_namespaced_config_map("doomed", configmap("inside"))
    core.delete_namespace("doomed")
    with pytest.raises(k8s.ApiException) as caught:
        core.read_namespaced_config_map("inside", "doomed")
    assert caught.value.status == 404


def test_eviction_starts_a_graceful_deletion_and_binding_assigns_a_node(core):
    core.create_namespaced_pod("default", {"metadata": {"name": "evict-me"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "c", "image": "pause"}]}})
    core.create_namespaced_pod_eviction("evict-me", "default", {"apiVersion": "policy/v1", "kind": "Eviction",
                                                                "metadata": {"name": "evict-me"}})
    # No kubelet runs n1 here: the pod stays Terminating, marked as evicted, until one removes it.
    evicted = core.read_namespaced_pod("evict-me", "default")
    assert evicted.metadata.deletion_timestamp and evicted.metadata.deletion_grace_period_seconds == 30
    assert [(c.type, c.reason) for c in evicted.status.conditions] == [("DisruptionTarget", "EvictionByEvictionAPI")]
    core.delete_namespaced_pod("evict-me", "default", grace_period_seconds=0)
    with pytest.raises(k8s.ApiException):
        core.read_namespaced_pod("evict-me", "default")
    core.create_namespaced_pod("default", {"metadata": {"name": "bind-me"}, "spec": {
        "containers": [{"name": "c", "image": "pause"}]}})
    # The real server answers a binding with a Status, which this client cannot read back into a V1Binding
    # (kubernetes-client/python#547): take the raw answer.
    core.create_namespaced_pod_binding("bind-me", "default", {"metadata": {"name": "bind-me"},
                                                              "target": {"kind": "Node", "name": "n2"}},
                                       _preload_content=False)
    assert core.read_namespaced_pod("bind-me", "default").spec.node_name == "n2"


def test_a_created_pod_starts_pending_whatever_status_the_client_sent(core):
    pod = core.create_namespaced_pod("default", {"metadata": {"name": "pending"}, "spec": {
        "containers": [{"name": "c", "image": "pause"}]}, "status": {"phase": "Running"}})
    assert pod.status.phase == "Pending"


def test_server_side_dry_run_changes_nothing(core):
    core.create_namespaced_config_map("default", configmap("dry"), dry_run="All")
    with pytest.raises(k8s.ApiException) as caught:
        core.read_namespaced_config_map("dry", "default")
    assert caught.value.status == 404


def test_generate_name_gets_a_random_suffix(core):
    made = core.create_namespaced_config_map("default", {"metadata": {"generateName": "gen-"}})
    assert made.metadata.name.startswith("gen-") and len(made.metadata.name) == len("gen-") + 5


def test_a_secret_written_with_string_data_reads_back_as_base64_data(core):
    core.create_namespaced_secret("kube-system", {"metadata": {"name": "creds", "labels": {"suite": "secret"}},
                                                  "stringData": {"password": "s3cret"}})
    secret = core.read_namespaced_secret("creds", "kube-system")
    assert (secret.type, secret.data, secret.string_data) == ("Opaque", {"password": "czNjcmV0"}, None)
    core.patch_namespaced_secret("creds", "kube-system", {"stringData": {"user": "admin"}})
    listed = core.list_namespaced_secret("kube-system", label_selector="suite=secret").items
    assert [s.data for s in listed] == [{"password": "czNjcmV0", "user": "YWRtaW4="}]


def test_discovery_names_the_served_groups_and_resources(api_client):
    assert k8s.CoreApi(api_client).get_api_versions().versions == ["v1"]
    groups = {g.name: g.preferred_version.group_version for g in k8s.ApisApi(api_client).get_api_versions().groups}
    assert groups["coordination.k8s.io"] == "coordination.k8s.io/v1"
    assert {"apps", "batch", "certificates.k8s.io", "policy", "rbac.authorization.k8s.io"} <= set(groups)
    core = {r.name: r for r in k8s.CoreV1Api(api_client).get_api_resources().resources}
    assert {"nodes", "nodes/status", "pods", "pods/eviction", "configmaps", "secrets", "namespaces"} <= set(core)
    assert (core["nodes"].namespaced, core["pods"].namespaced, core["pods"].kind) == (False, True, "Pod")
    leases = k8s.CoordinationV1Api(api_client).get_api_resources().resources
    assert [(r.name, r.namespaced) for r in leases] == [("leases", True)]


def test_leases_jobs_and_csrs_round_trip_through_their_groups(api_client):
    coordination = k8s.CoordinationV1Api(api_client)
    lease = coordination.create_namespaced_lease("kube-node-lease", {"metadata": {"name": "n1"}, "spec": {
        "holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": "2026-01-01T00:00:00.000000Z"}})
    assert lease.spec.holder_identity == "n1"
    batch = k8s.BatchV1Api(api_client)
    job = batch.create_namespaced_job("default", {"metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}}}})
    assert job.metadata.generation == 1 and job.status.succeeded is None
    certificates = k8s.CertificatesV1Api(api_client)
    csr = certificates.create_certificate_signing_request({"metadata": {"name": "csr-1"}, "spec": {
        "request": "cmVxdWVzdA==", "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
        "usages": ["client auth"]}})
    assert csr.spec.username == "kubernetes-admin"
    assert "kubeadm:cluster-admins" in csr.spec.groups


def test_watch_reports_additions_changes_and_deletions_after_a_list(core):
    start = core.list_namespaced_config_map("default", label_selector="suite=watch")
    events = []

    def change():
        core.create_namespaced_config_map("default", configmap("watched", labels={"suite": "watch"}))
        core.patch_namespaced_config_map("watched", "default", {"data": {"a": "b"}})
        core.delete_namespaced_config_map("watched", "default")

    threading.Thread(target=change).start()
    stream = watch.Watch()
    for event in stream.stream(core.list_namespaced_config_map, "default", label_selector="suite=watch",
                               resource_version=start.metadata.resource_version, timeout_seconds=5):
        events.append(event["type"])
        if event["type"] == "DELETED":
            stream.stop()
    assert events == ["ADDED", "MODIFIED", "DELETED"]


class RawWatch:
    """A watch request over plain HTTPS, its events read one line at a time (10 s each at most)."""

    def __init__(self, cluster, query):
        context = ssl.create_default_context(cafile=cluster.path("ca.crt"))
        context.load_cert_chain(cluster.path("admin.crt"), cluster.path("admin.key"))
        self.connection = http.client.HTTPSConnection(cluster.ip(4), 6443, context=context, timeout=10)
        self.connection.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=20&" + query)
        self.response = self.connection.getresponse()

    def next(self):
        event = json.loads(self.response.readline())
        return event["type"], event["object"]

    def close(self):
        self.connection.close()


def test_a_watch_from_a_list_resource_version_reports_a_change_made_before_the_watch_request(cluster, admin):
    admin.create("v1", "configmaps", configmap("between"), "default")
    listed = admin.list("v1", "configmaps", "default", field_selector="metadata.name=between")
    admin.patch("v1", "configmaps", "between", {"data": {"after": "list"}}, "default")
    watching = RawWatch(cluster, "fieldSelector=metadata.name%%3Dbetween&resourceVersion=%s"
                        % listed["metadata"]["resourceVersion"])
    try:
        kind, obj = watching.next()
    finally:
        watching.close()
    assert (kind, obj["data"]) == ("MODIFIED", {"after": "list"})


def test_a_watch_from_resource_version_0_starts_with_the_current_object_then_reports_changes(cluster, admin):
    admin.create("v1", "configmaps", configmap("from-zero"), "default")
    admin.patch("v1", "configmaps", "from-zero", {"data": {"before": "watch"}}, "default")
    watching = RawWatch(cluster, "fieldSelector=metadata.name%3Dfrom-zero&resourceVersion=0")
    try:
        first = watching.next()
        admin.patch("v1", "configmaps", "from-zero", {"data": {"during": "watch"}}, "default")
        second = watching.next()
    finally:
        watching.close()
    assert (first[0], first[1]["data"]) == ("ADDED", {"before": "watch"})
    assert (second[0], second[1]["data"]) == ("MODIFIED", {"before": "watch", "during": "watch"})


def test_send_initial_events_ends_the_initial_objects_with_a_bookmark_then_streams_changes(cluster, admin):
    created = admin.create("v1", "configmaps", configmap("initial"), "default")
    watching = RawWatch(cluster, "fieldSelector=metadata.name%%3Dinitial&sendInitialEvents=true&allowWatchBookmarks"
                        "=true&resourceVersionMatch=NotOlderThan&resourceVersion=%s"
                        % created["metadata"]["resourceVersion"])
    try:
        added, bookmark = watching.next(), watching.next()
        admin.patch("v1", "configmaps", "initial", {"data": {"a": "b"}}, "default")
        modified = watching.next()
    finally:
        watching.close()
    assert (added[0], added[1]["metadata"]["name"]) == ("ADDED", "initial")
    assert bookmark[0] == "BOOKMARK"
    assert bookmark[1]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark[1]["metadata"]["resourceVersion"]) >= int(created["metadata"]["resourceVersion"])
    assert (modified[0], modified[1]["data"]) == ("MODIFIED", {"a": "b"})


@pytest.mark.parametrize("query", ["sendInitialEvents=true&allowWatchBookmarks=true",
                                   "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
                                   "resourceVersionMatch=NotOlderThan"],
                         ids=["without resourceVersionMatch", "without bookmarks", "resourceVersionMatch alone"])
def test_watch_list_options_the_real_server_rejects_are_422(cluster, query):
    watching = RawWatch(cluster, query)
    try:
        status, body = watching.response.status, json.loads(watching.response.read())
    finally:
        watching.close()
    assert (status, body["reason"]) == (422, "Invalid")


def test_reads_fail_over_to_another_etcd_member_named_in_etcd_servers(cluster):
    process = cluster.start_apiserver(5, etcd_numbers=(3, 1, 2))
    client = cluster.client("admin", cluster.ip(5))
    try:
        cluster.etcd[2].stop(kill=True)
        assert client.get("v1", "namespaces", "default")["metadata"]["name"] == "default"
    finally:
        client.close()
        process.stop()
        cluster.restart_etcd(3)
        cluster.wait_member(3, 30)


def test_the_etcd_client_sees_the_same_objects_the_api_serves(cluster, admin):
    admin.create("v1", "configmaps", configmap("via-kcpsim"), "default")
    etcd = cluster.etcd_client(3)
    try:
        keys = [kv.key for kv in etcd.range("/registry/configmaps/default/", prefix=True)[0]]
    finally:
        etcd.close()
    assert "/registry/configmaps/default/via-kcpsim" in keys


def test_a_chunked_request_body_is_read(cluster):
    context = ssl.create_default_context(cafile=cluster.path("ca.crt"))
    context.load_cert_chain(cluster.path("admin.crt"), cluster.path("admin.key"))
    connection = http.client.HTTPSConnection(cluster.ip(4), 6443, context=context, timeout=10)
    try:
        body = iter([b'{"metadata": {"name": "chunked"}, ', b'"data": {"k": "v"}}'])
        connection.request("POST", "/api/v1/namespaces/default/configmaps", body=body, encode_chunked=True,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        created = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 201 and created["data"] == {"k": "v"}
