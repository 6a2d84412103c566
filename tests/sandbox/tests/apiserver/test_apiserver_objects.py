# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the API server does to objects before storing them (strategy, required), how it names what a path
asks for (api.parse_target), and how it prints them for kubectl (tables)."""

import datetime

import pytest

import gen_required_fields
from kcpsim.apiserver import api, errors, required, resources, strategy, tables

USER = ("system:bootstrap:abcdef", ("system:bootstrappers", "system:authenticated"), "")
NOW = "2026-01-01T00:00:00Z"


def resource(plural, group=""):
    found = [r for r in resources.RESOURCES if (r.plural, r.group) == (plural, group)]
    return found[0]


def create(plural, body, namespace="default", group=""):
    return strategy.prepare_create(resource(plural, group), body, namespace, USER, "uid-1", NOW, "x7k2p")


def test_create_sets_uid_timestamp_namespace_kind_and_api_version():
    made = create("leases", {"metadata": {"name": "l"}, "spec": {}}, group="coordination.k8s.io")
    assert made["metadata"] == {"name": "l", "namespace": "default", "uid": "uid-1", "creationTimestamp": NOW}
    assert (made["kind"], made["apiVersion"]) == ("Lease", "coordination.k8s.io/v1")


@pytest.mark.parametrize("plural, group, body, field, expected", [
    ("pods", "", {"spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Running"}}, "status",
     {"phase": "Pending"}),
    ("jobs", "batch", {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}, "status": {"succeeded": 1}},
     "status", {}),
    ("jobs", "batch", {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}, "generation", 1),
    ("nodes", "", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, "status",
     {"conditions": [{"type": "Ready", "status": "True"}]}),
    ("secrets", "", {}, "type", "Opaque"),
    ("certificatesigningrequests", "certificates.k8s.io",
     {"spec": {"request": "eA==", "signerName": "s", "username": "forged"}, "status": {"certificate": "eA=="}},
     "spec", {"request": "eA==", "signerName": "s", "username": USER[0], "groups": list(USER[1])}),
    ("namespaces", "", {}, "status", {"phase": "Active"}),
], ids=["a pod starts Pending", "a job starts with an empty status", "a job starts at generation 1",
        "a node keeps the status its kubelet registers", "a secret defaults to Opaque",
        "a CSR records who asked, whatever the body claims", "a namespace starts Active"])
def test_create_resets_what_clients_may_not_choose(plural, group, body, field, expected):
    body = dict(body, metadata={"name": "o"})
    made = create(plural, body, namespace=None if plural in ("nodes", "namespaces", "certificatesigningrequests")
                  else "default", group=group)
    value = made["metadata"].get(field) if field == "generation" else made.get(field)
    assert value == expected


@pytest.mark.parametrize("body, code, message", [
    ({"metadata": {}}, 422, "metadata.name: Required value"),
    ({"metadata": {"name": "Upper_Case"}}, 422, "lowercase RFC 1123 subdomain"),
    ({"metadata": {"name": "x", "resourceVersion": "5"}}, 500, "resourceVersion should not be set"),
    ({"kind": "Secret", "metadata": {"name": "x"}}, 400, "cannot be handled as a ConfigMap"),
    ({"apiVersion": "v2", "metadata": {"name": "x"}}, 400, "does not match the expected API version"),
    ({"metadata": {"name": "x", "namespace": "other"}}, 400, "does not match the namespace"),
    ([], 400, "must be a JSON object"),
], ids=["no name", "a name that is not a DNS subdomain", "a resourceVersion", "another kind", "another version",
        "another namespace", "not an object"])
def test_create_refuses_bad_bodies_like_the_real_server(body, code, message):
    with pytest.raises(errors.ApiError) as caught:
        create("configmaps", body)
    assert caught.value.code == code and message in caught.value.message


@pytest.mark.parametrize("plural, group, name, valid", [
    ("clusterroles", "rbac.authorization.k8s.io", "kubeadm:get-nodes", True),
    ("roles", "rbac.authorization.k8s.io", "kubeadm:nodes/kubeadm-config", False),
    ("certificatesigningrequests", "certificates.k8s.io", "Node_CSR", True),
    ("namespaces", "", "kube.system", False),
    ("services", "", "1st-service", False),
    ("configmaps", "", "kubeadm-config.v2", True),
    ("configmaps", "", "..", False),
], ids=["an RBAC name with a colon", "an RBAC name with a slash", "a CSR name is free-form",
        "a namespace name is a DNS label", "a service name starts with a letter",
        "a configmap name is a DNS subdomain", "never a relative path segment"])
def test_names_follow_the_rule_of_their_kind(plural, group, name, valid):
    namespace = None if plural in ("clusterroles", "certificatesigningrequests", "namespaces") else "default"
    try:
        create(plural, {"metadata": {"name": name}, "spec": {"request": "eA==", "signerName": "s"}}
               if plural == "certificatesigningrequests" else {"metadata": {"name": name}}, namespace, group)
        outcome = True
    except errors.ApiError as exc:
        assert exc.code == 422 and "metadata.name: Invalid value" in exc.message
        outcome = False
    assert outcome is valid


def test_generate_name_gets_the_random_suffix():
    assert create("configmaps", {"metadata": {"generateName": "kubeadm-"}})["metadata"]["name"] == "kubeadm-x7k2p"


def stored(plural, body, group=""):
    made = create(plural, dict(body, metadata={"name": "o"}), namespace=None if plural == "nodes" else "default",
                  group=group)
    made["metadata"]["resourceVersion"] = "7"
    return made


def test_an_update_keeps_identity_fields_and_the_status_of_a_resource_with_a_status_subresource():
    old = stored("nodes", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    new = {"metadata": {"name": "o", "creationTimestamp": "1999-01-01T00:00:00Z", "labels": {"a": "b"}},
           "spec": {"unschedulable": True}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    result = strategy.prepare_update(resource("nodes"), old, new)
    assert result["metadata"]["creationTimestamp"] == NOW and result["metadata"]["uid"] == "uid-1"
    assert result["metadata"]["labels"] == {"a": "b"} and result["spec"] == {"unschedulable": True}
    assert result["status"] == old["status"]


def test_a_status_update_changes_only_the_status():
    old = stored("nodes", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    new = {"metadata": {"name": "o", "labels": {"sneaky": "yes"}}, "spec": {"unschedulable": True},
           "status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    result = strategy.prepare_update(resource("nodes"), old, new, "status")
    assert "labels" not in result["metadata"] and "unschedulable" not in result.get("spec", {})
    assert result["status"]["conditions"][0]["status"] == "False"


def test_an_approval_update_changes_only_the_conditions():
    csr = resource("certificatesigningrequests", "certificates.k8s.io")
    old = strategy.prepare_create(csr, {"metadata": {"name": "c"}, "spec": {"request": "eA==", "signerName": "s"}},
                                  None, USER, "uid-1", NOW, "")
    old["metadata"]["resourceVersion"] = "3"
    new = {"metadata": {"name": "c"}, "status": {"certificate": "Zm9yZ2Vk", "conditions": [
        {"type": "Approved", "status": "True"}]}}
    result = strategy.prepare_update(csr, old, new, "approval")
    assert result["status"] == {"conditions": [{"type": "Approved", "status": "True"}]}


@pytest.mark.parametrize("new_spec, generation", [({"parallelism": 2}, 2), ({"parallelism": 1}, 1)],
                         ids=["a spec change bumps the generation", "an unchanged spec keeps it"])
def test_generation_follows_spec_changes(new_spec, generation):
    template = {"template": {"spec": {"containers": [{"name": "c"}]}}}
    old = stored("jobs", {"spec": dict(template, parallelism=1)}, group="batch")
    new = {"metadata": {"name": "o"}, "spec": dict(template, **new_spec)}
    assert strategy.prepare_update(resource("jobs", "batch"), old, new)["metadata"]["generation"] == generation


@pytest.mark.parametrize("body, data", [
    ({"stringData": {"token": "s3cret"}}, {"token": "czNjcmV0"}),
    ({"data": {"a": "YQ==", "token": "b2xk"}, "stringData": {"token": "s3cret"}}, {"a": "YQ==", "token": "czNjcmV0"}),
    ({"data": {"a": "YQ=="}}, {"a": "YQ=="}),
    ({"stringData": {"text": "ünï"}}, {"text": "w7xuw68="}),
], ids=["stringData is stored base64-encoded in data", "stringData wins over data for the same key",
        "data alone is kept as sent", "stringData is encoded as UTF-8"])
def test_a_secret_stores_string_data_folded_into_data(body, data):
    made = create("secrets", dict(body, metadata={"name": "s"}))
    assert made["data"] == data
    assert "stringData" not in made


def test_a_secret_update_folds_string_data_too():
    old = stored("secrets", {"data": {"a": "YQ=="}})
    result = strategy.prepare_update(resource("secrets"), old, dict(old, stringData={"b": "b"}))
    assert result["data"] == {"a": "YQ==", "b": "Yg=="} and "stringData" not in result


@pytest.mark.parametrize("body, message", [
    ({"data": {"a": "not base64!"}}, "illegal base64 data at input byte 3 (data[a])"),
    ({"data": {"a": "YQ"}}, "illegal base64 data at input byte 2 (data[a])"),
    ({"data": {"a": 5}}, "a value is not a string (data[a])"),
    ({"stringData": {"a": 5}}, "stringData must be a map of strings"),
    ({"data": ["a"]}, "data must be a map of strings"),
], ids=["a value outside the base64 alphabet", "a value without its padding", "a number in data",
        "a number in stringData", "data that is not a map"])
def test_a_secret_that_does_not_decode_is_400(body, message):
    with pytest.raises(errors.ApiError) as caught:
        create("secrets", dict(body, metadata={"name": "s"}))
    assert caught.value.code == 400
    assert 'Secret in version "v1" cannot be handled as a Secret: ' + message in caught.value.message


def test_an_update_naming_another_uid_is_a_conflict():
    old = stored("configmaps", {})
    with pytest.raises(errors.ApiError) as caught:
        strategy.prepare_update(resource("configmaps"), old, {"metadata": {"name": "o", "uid": "someone-else"}})
    assert caught.value.code == 409


@pytest.mark.parametrize("kind, body, problems, filled", [
    ("Node", {"status": {"nodeInfo": {"kubeletVersion": "v1.31.2"}}}, [], ("status", "nodeInfo", "bootID")),
    ("Pod", {"spec": {"containers": [{"image": "pause"}]}}, [("spec.containers[0].name", "Required value")], None),
    ("Pod", {"spec": {}}, [("spec.containers", "Required value")], None),
    ("ConfigMap", {"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "s"}]}},
     [("metadata.ownerReferences[0].uid", "Required value")], None),
    ("Pod", {"spec": {"containers": [{"name": "c"}]}, "status": {"containerStatuses": [{"name": "c"}]}}, [],
     ("status", "containerStatuses", 0, "restartCount")),
    ("Endpoints", {"subsets": []}, [], None),
], ids=["a node status gets Go zero values for missing nodeInfo fields",
        "a container without a name is refused", "a pod without containers is refused",
        "an owner reference without uid is refused", "a container status gets its zero restart count",
        "a kind without required fields passes"])
def test_required_fields(kind, body, problems, filled):
    assert required.complete(kind, body) == problems
    if filled:
        value = body
        for step in filled:
            value = value[step]
        assert value in ("", 0, False)


def test_the_required_fields_table_matches_the_pinned_kubernetes_client():
    version, kinds, types = gen_required_fields.generate()
    from kcpsim.apiserver import required_fields
    assert (required_fields.KINDS, required_fields.TYPES) == (kinds, types), (
        "kubernetes==%s: regenerate with tests/sandbox/tests/apiserver/gen_required_fields.py" % version)


@pytest.mark.parametrize("path, expected", [
    ("/api/v1/namespaces/kube-system/pods/etcd-cp-1", ("pods", "kube-system", "etcd-cp-1", None)),
    ("/api/v1/namespaces/kube-system/pods/etcd-cp-1/status", ("pods", "kube-system", "etcd-cp-1", "status")),
    ("/api/v1/pods", ("pods", None, None, None)),
    ("/api/v1/namespaces/kube-system", ("namespaces", None, "kube-system", None)),
    ("/api/v1/namespaces/kube-system/finalize", ("namespaces", None, "kube-system", "finalize")),
    ("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/cp-1",
     ("leases", "kube-node-lease", "cp-1", None)),
    ("/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval",
     ("certificatesigningrequests", None, "csr-1", "approval")),
    ("/api/v1", None),
    ("/version", None),
], ids=["a namespaced object", "its status", "a list across namespaces", "a namespace",
        "a namespace subresource", "a grouped resource", "a cluster-scoped subresource",
        "discovery is not a resource", "neither is /version"])
def test_parse_target(path, expected):
    target = api.parse_target(path)
    got = None if target is None else (target.resource.plural, target.namespace, target.name, target.subresource)
    assert got == expected


@pytest.mark.parametrize("path", ["/api/v1/widgets", "/api/v1/pods/x", "/api/v1/namespaces/a/pods/b/exec",
                                  "/apis/apps/v9/deployments"],
                         ids=["an unknown resource", "a namespaced object without a namespace",
                              "an unknown subresource", "an unserved version"])
def test_parse_target_refuses_paths_the_server_does_not_serve(path):
    with pytest.raises(errors.ApiError) as caught:
        api.parse_target(path)
    assert caught.value.code == 404


@pytest.mark.parametrize("seconds, text", [
    (-5, "<invalid>"), (0, "0s"), (119, "119s"), (125, "2m5s"), (600, "10m"), (3 * 3600 + 60, "3h1m"),
    (9 * 3600, "9h"), (3 * 86400 + 3600, "3d1h"), (30 * 86400, "30d"), (3 * 365 * 86400 + 86400, "3y1d"),
], ids=["negative", "zero", "under two minutes", "minutes and seconds", "ten minutes", "hours and minutes",
        "hours", "days and hours", "days", "years and days"])
def test_age_column_format(seconds, text):
    assert tables.human_duration(seconds) == text


def test_the_nodes_table_shows_status_roles_and_version():
    node = {"metadata": {"name": "cp-1", "creationTimestamp": NOW,
                         "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}], "nodeInfo": {"kubeletVersion": "v1"}}}
    now = datetime.datetime(2026, 1, 1, 0, 5, tzinfo=datetime.timezone.utc)
    table = tables.table(resource("nodes"), [node], 9, now)
    assert table["rows"][0]["cells"][:5] == ["cp-1", "NotReady,SchedulingDisabled", "control-plane", "5m", "v1"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
