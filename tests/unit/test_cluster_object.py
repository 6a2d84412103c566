# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_object: a merge patch applied only where it changes something, a missing object created only when asked,
a deletion only of what exists; check mode writes nothing; diff shows a Secret's keys, never its values
(object_patch, cluster_object_answer)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_object_answer, kube_api, object_patch
from ansible_collections.kubeadm.control_plane.tests.unit.builders import serve_api

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "cp-2", "resourceVersion": "7", "labels": {"a": "1"}, "annotations": {"keep": "x", "drop": "y"}},
        "spec": {"unschedulable": True}, "status": {"conditions": []}}


@pytest.mark.parametrize("target, patch, expected", [
    ({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": 4}}, {"a": 1, "b": {"c": 4, "d": 3}}),
    ({"a": 1, "b": 2}, {"b": None}, {"a": 1}),
    ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
    ({"a": {"b": 1}}, {"a": "flat"}, {"a": "flat"}),
    ({"a": "flat"}, {"a": {"b": None, "c": 1}}, {"a": {"c": 1}}),
    (None, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ({"a": 1}, {"missing": None}, {"a": 1}),
], ids=["mappings merge key by key", "null removes a key", "a list is replaced whole", "a value replaces a mapping",
        "a mapping replaces a value, its nulls dropped", "a patch of nothing is the patch", "removing a missing key changes nothing"])
def test_a_merge_patch_is_applied_as_rfc_7386_says(target, patch, expected):
    assert object_patch.merged(target, patch) == expected


def test_the_merge_leaves_what_it_read_untouched():
    before = {"a": {"b": [1]}}
    after = object_patch.merged(before, {"a": {"c": 2}})
    after["a"]["b"].append(2)
    assert before == {"a": {"b": [1]}}


@pytest.mark.parametrize("found, state, patch, create, expected", [
    (NODE, "present", {"metadata": {"annotations": {"keep": "x"}}}, False, object_patch.NONE),
    (NODE, "present", {"metadata": {"annotations": {"missing": None}}}, False, object_patch.NONE),
    (NODE, "present", {"metadata": {"annotations": {"drop": None}}}, False, object_patch.PATCH),
    (NODE, "present", {"spec": {"unschedulable": None}}, False, object_patch.PATCH),
    (None, "present", {"data": {"k": "v"}}, True, object_patch.CREATE),
    (None, "present", {"data": {"k": "v"}}, False, object_patch.MISSING),
    (NODE, "absent", {}, False, object_patch.DELETE),
    (None, "absent", {}, False, object_patch.NONE),
], ids=["a value already there", "a key already gone", "a key to remove", "an uncordon", "a creation asked for",
        "a missing object not to be created", "a deletion", "nothing to delete"])
def test_what_is_done_is_what_changes_something(found, state, patch, create, expected):
    assert object_patch.decide(found, state, patch, create, {"metadata": {"name": "x"}})[0] == expected


def test_diff_shows_what_a_patch_sets_and_hides_a_secrets_values():
    assert object_patch.shown(NODE) == {"metadata": {"name": "cp-2", "labels": {"a": "1"}, "annotations": {"keep": "x", "drop": "y"}},
                                        "spec": {"unschedulable": True}}
    secret = {"metadata": {"name": "kubeadm-certs", "namespace": "kube-system"}, "data": {"ca.key": "c2VjcmV0"}}
    assert object_patch.shown(secret, secret=True)["data"] == {"ca.key": object_patch.HIDDEN}
    assert object_patch.shown(None) == {}


class FakeCluster:
    """The API server, as the module reaches it through kube_api.request: objects by path, every write recorded."""

    def __init__(self, objects):
        self.objects, self.writes, self.conflicts = dict(objects), [], 0

    def request(self, _api, method, path, _timeout, query=None, body=None, content_type="application/json"):
        if method == "GET":
            if path not in self.objects:
                raise kube_api.ClusterUnreadable("404", status=404)
            return self.objects[path]
        self.writes.append((method, path, body, content_type))
        if method == "POST" and self.conflicts:
            self.conflicts -= 1
            self.objects[path + "/" + body["metadata"]["name"]] = dict(body, metadata=dict(body["metadata"], resourceVersion="1"))
            raise kube_api.ClusterUnreadable("409", status=409)
        return {}


@pytest.fixture
def cluster(monkeypatch):
    return serve_api(monkeypatch, FakeCluster({"/api/v1/nodes/cp-2": NODE}))


def params(**overrides):
    base = dict(kubeconfig="admin.conf", admin_kubeconfig_on_host=None, kind="Node", name="cp-2", namespace=None,
                state="present", patch={}, create=False, timeout=10)
    base.update(overrides)
    return base


def test_a_patch_that_changes_nothing_writes_nothing_and_says_so(cluster):
    done = cluster_object_answer.apply(params(patch={"metadata": {"labels": {"a": "1"}}}), False, True)
    assert (done["changed"], done["action"], cluster.writes) == (False, "none", [])
    assert done["diff"]["before"] == done["diff"]["after"]


def test_a_patch_that_changes_the_object_is_sent_as_a_merge_patch_and_diffed(cluster):
    patch = {"metadata": {"annotations": {"drop": None, "control-plane.kubeadm.io/deleting": "2026-11-29T10:00:00Z"}}}
    done = cluster_object_answer.apply(params(patch=patch), False, True)
    assert (done["changed"], done["action"], done["existed"]) == (True, "patch", True)
    assert cluster.writes == [("PATCH", "/api/v1/nodes/cp-2", patch, "application/merge-patch+json")]
    assert done["diff"]["after"]["metadata"]["annotations"] == {"keep": "x", "control-plane.kubeadm.io/deleting": "2026-11-29T10:00:00Z"}


def test_check_mode_says_what_would_be_done_and_writes_nothing(cluster):
    done = cluster_object_answer.apply(params(state="absent"), True, False)
    assert (done["changed"], done["action"], cluster.writes) == (True, "delete", [])
    assert "diff" not in done


def test_a_missing_object_is_created_only_when_asked(cluster):
    patch = {"data": {"remediation": "{}"}}
    with pytest.raises(cluster_object_answer.Refused, match="ConfigMap kube-system/state does not exist"):
        cluster_object_answer.apply(params(kind="ConfigMap", namespace="kube-system", name="state", patch=patch), False, False)
    done = cluster_object_answer.apply(params(kind="ConfigMap", namespace="kube-system", name="state", patch=patch, create=True), False, False)
    assert (done["changed"], done["action"], done["existed"]) == (True, "create", False)
    assert cluster.writes == [("POST", "/api/v1/namespaces/kube-system/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "state", "namespace": "kube-system"}, "data": {"remediation": "{}"}},
        "application/json")]


def test_a_creation_that_finds_the_object_created_meanwhile_patches_it(cluster):
    cluster.conflicts = 1
    done = cluster_object_answer.apply(params(kind="ConfigMap", namespace="kube-system", name="state", patch={"data": {"k": "v"}},
                                              create=True), False, False)
    assert [w[0] for w in cluster.writes] == ["POST"] and done["action"] == "none"


def test_deleting_what_is_not_there_changes_nothing(cluster):
    done = cluster_object_answer.apply(params(name="cp-9", state="absent"), False, False)
    assert (done["changed"], done["action"], done["existed"], cluster.writes) == (False, "none", False, [])


def test_arguments_that_cannot_work_are_named():
    assert cluster_object_answer.argument_problems(params(kubeconfig=None, namespace="kube-system", state="absent", patch={"a": 1})) == [
        "kubeconfig: required (or admin_kubeconfig_on_host)", "namespace: a Node has none", "patch, create: only with state present"]
    assert cluster_object_answer.argument_problems(params(kind="Secret")) == ["namespace: required for a Secret"]
