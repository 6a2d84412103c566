# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The three PATCH bodies (kcpsim.apiserver.patch): merge patch, strategic merge patch, JSON patch."""

import pytest

from kcpsim.apiserver import patch

NODE = {"metadata": {"name": "cp-1", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
        "spec": {"taints": [{"key": "t1", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"}]}}


@pytest.mark.parametrize("body, expected", [
    ({"metadata": {"labels": {"c": "3"}}}, {"a": "1", "b": "2", "c": "3"}),
    ({"metadata": {"labels": {"a": None}}}, {"b": "2"}),
    ({"metadata": {"labels": None}}, None),
], ids=["adds a key", "null deletes a key", "null deletes the whole map"])
def test_merge_patch_merges_maps(body, expected):
    assert patch.apply(patch.MERGE, NODE, body)["metadata"].get("labels") == expected


def test_merge_patch_replaces_lists_and_leaves_the_target_untouched():
    result = patch.apply(patch.MERGE, NODE, {"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    assert result["status"]["conditions"] == [{"type": "Ready", "status": "False"}]
    assert len(NODE["status"]["conditions"]) == 2


@pytest.mark.parametrize("body, expected", [
    ({"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
     [{"type": "Ready", "status": "False"}, {"type": "DiskPressure", "status": "False"}]),
    ({"status": {"conditions": [{"type": "PIDPressure", "status": "False"}]}},
     [{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"},
      {"type": "PIDPressure", "status": "False"}]),
    ({"status": {"conditions": [{"type": "DiskPressure", "$patch": "delete"}]}}, [{"type": "Ready", "status": "True"}]),
    ({"status": {"$setElementOrder/conditions": [{"type": "Ready"}], "conditions": [{"type": "Ready", "status": "Unknown"}]}},
     [{"type": "Ready", "status": "Unknown"}, {"type": "DiskPressure", "status": "False"}]),
], ids=["an item with a known merge key is merged in place", "a new item is appended",
        "$patch delete removes the item", "$setElementOrder is read and dropped"])
def test_strategic_merge_patch_merges_conditions_by_type(body, expected):
    assert patch.apply(patch.STRATEGIC, NODE, body)["status"]["conditions"] == expected


@pytest.mark.parametrize("body, path, expected", [
    ({"spec": {"taints": [{"key": "t2", "effect": "NoExecute"}]}}, ("spec", "taints"),
     [{"key": "t2", "effect": "NoExecute"}]),
    ({"metadata": {"finalizers": ["y", "x"]}}, ("metadata", "finalizers"), ["x", "y"]),
    ({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, ("metadata", "finalizers"), []),
    ({"metadata": {"labels": {"$patch": "replace", "only": "this"}}}, ("metadata", "labels"), {"only": "this"}),
], ids=["taints have no merge strategy and are replaced", "finalizers merge as a set",
        "$deleteFromPrimitiveList removes values", "$patch replace replaces a map"])
def test_strategic_merge_patch_list_strategies(body, path, expected):
    result = patch.apply(patch.STRATEGIC, NODE, body)
    assert result[path[0]][path[1]] == expected


def test_strategic_merge_patch_refuses_a_merge_list_item_without_its_key():
    with pytest.raises(patch.PatchError, match="merge key 'type'"):
        patch.apply(patch.STRATEGIC, NODE, {"status": {"conditions": [{"status": "True"}]}})


@pytest.mark.parametrize("operations, check", [
    ([{"op": "add", "path": "/metadata/labels/c", "value": "3"}], lambda r: r["metadata"]["labels"]["c"] == "3"),
    ([{"op": "remove", "path": "/metadata/labels/a"}], lambda r: "a" not in r["metadata"]["labels"]),
    ([{"op": "replace", "path": "/spec/taints/0/key", "value": "t9"}], lambda r: r["spec"]["taints"][0]["key"] == "t9"),
    ([{"op": "add", "path": "/spec/taints/-", "value": {"key": "t2"}}], lambda r: len(r["spec"]["taints"]) == 2),
    ([{"op": "add", "path": "/metadata/annotations", "value": {"k~/": "v"}},
      {"op": "copy", "from": "/metadata/annotations/k~0~1", "path": "/metadata/labels/copied"}],
     lambda r: r["metadata"]["labels"]["copied"] == "v"),
    ([{"op": "move", "from": "/metadata/labels/a", "path": "/metadata/labels/z"}],
     lambda r: r["metadata"]["labels"] == {"b": "2", "z": "1"}),
    ([{"op": "test", "path": "/metadata/name", "value": "cp-1"}], lambda r: r == NODE),
], ids=["add", "remove", "replace inside a list", "append with -", "copy with escaped pointer characters",
        "move", "a passing test changes nothing"])
def test_json_patch_operations(operations, check):
    assert check(patch.apply(patch.JSON_PATCH, NODE, operations))


@pytest.mark.parametrize("operations, message", [
    ([{"op": "test", "path": "/metadata/name", "value": "other"}], "testing value /metadata/name failed"),
    ([{"op": "remove", "path": "/metadata/nope"}], "path /metadata/nope does not exist"),
    ([{"op": "replace", "path": "/spec/taints/5", "value": 1}], "out of range"),
    ([{"op": "add", "path": "/x"}], "needs 'value'"),
    ([{"op": "frobnicate", "path": "/x"}], "unknown op"),
    ({"op": "add"}, "must be a list"),
], ids=["a failing test", "removing what is not there", "an index past the end", "add without a value",
        "an unknown operation", "not a list"])
def test_json_patch_failures_say_what_is_wrong(operations, message):
    with pytest.raises(patch.PatchError, match=message):
        patch.apply(patch.JSON_PATCH, NODE, operations)
