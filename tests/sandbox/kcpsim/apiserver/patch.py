# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The three PATCH bodies the API server takes, applied to a JSON object. Pure, no I/O.

* ``application/merge-patch+json`` (RFC 7386): maps merge key by key, ``null`` deletes, anything else
  (lists included) replaces.
* ``application/strategic-merge-patch+json``: a merge patch, except for the lists the real API types mark
  ``patchStrategy: merge`` — those merge item by item on their merge key (``conditions`` by ``type``,
  ``containers`` by ``name``, ``ownerReferences`` by ``uid``, …, see MERGE_KEYS) and ``finalizers`` merge as a
  set. Directives: ``$patch: delete`` on a list item removes it, ``$patch: replace`` on a map replaces it,
  ``$deleteFromPrimitiveList/<field>`` removes values; ``$setElementOrder`` and ``$retainKeys`` are read and
  dropped (order is kept as stored). The merge keys are looked up by field name, not by the full schema:
  enough for the objects the sandbox writes, not a general implementation.
* ``application/json-patch+json`` (RFC 6902): add, remove, replace, move, copy, test.
"""

import copy

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
TYPES = (MERGE, STRATEGIC, JSON_PATCH)

# List fields with patchStrategy "merge" in the core API types, and their patchMergeKey.
MERGE_KEYS = {
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "env": "name",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "addresses": "type",
    "hostAliases": "ip",
    "secrets": "name",
}
# Lists of scalars with patchStrategy "merge": a union.
MERGE_SETS = ("finalizers",)


class PatchError(ValueError):
    """The patch cannot be applied (bad pointer, failed test, wrong shape); the message says where."""


def merge_patch(target, patch):
    """RFC 7386 merge patch of ``target`` (not modified) by ``patch``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target, patch):
    """Strategic merge patch of ``target`` (not modified) by ``patch``; see the module docstring."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.partition("/")[2]
            if isinstance(result.get(field), list):
                result[field] = [item for item in result[field] if item not in (value or [])]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS:
            result[key] = _merge_list(result.get(key), value, MERGE_KEYS[key], key)
        elif isinstance(value, list) and key in MERGE_SETS:
            current = list(result.get(key) or [])
            result[key] = current + [item for item in value if item not in current]
        elif isinstance(value, dict):
            merged = strategic_merge_patch(result.get(key), value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = copy.deepcopy(value)
    return result


def _merge_list(current, items, merge_key, field):
    result = copy.deepcopy(current) if isinstance(current, list) else []
    for item in items:
        if not isinstance(item, dict) or merge_key not in item:
            raise PatchError("%s: every item needs the merge key %r" % (field, merge_key))
        position = next((i for i, old in enumerate(result)
                         if isinstance(old, dict) and old.get(merge_key) == item[merge_key]), None)
        if item.get("$patch") == "delete":
            if position is not None:
                del result[position]
        elif position is None:
            result.append({k: v for k, v in item.items() if k != "$patch"})
        else:
            result[position] = strategic_merge_patch(result[position], item)
    return result


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("JSON pointer %r does not start with /" % path)
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(doc, parts, path):
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError("path %s does not exist" % path)
    return node


def _get(doc, path):
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError("path %s does not exist" % path)


def _remove(doc, path):
    parts = _pointer(path)
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError("path %s does not exist" % path)


def _add(doc, path, value, replace=False):
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError("path %s does not exist" % path)
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise PatchError("index %s is out of range for %s" % (last, path))
    else:
        raise PatchError("path %s does not exist" % path)
    return doc


def json_patch(target, operations):
    """RFC 6902 JSON patch of ``target`` (not modified) by a list of operations."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for number, operation in enumerate(operations):
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise PatchError("operation %d needs 'op' and 'path'" % number)
        op, path = operation["op"], operation["path"]
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError("operation %d (%s) needs 'value'" % (number, op))
        if op in ("move", "copy") and "from" not in operation:
            raise PatchError("operation %d (%s) needs 'from'" % (number, op))
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation["value"]))
        elif op == "replace":
            doc = _add(doc, path, copy.deepcopy(operation["value"]), replace=True)
        elif op == "remove":
            _remove(doc, path)
        elif op == "move":
            doc = _add(doc, path, _remove(doc, operation["from"]))
        elif op == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, operation["from"])))
        elif op == "test":
            if _get(doc, path) != operation["value"]:
                raise PatchError("testing value %s failed" % path)
        else:
            raise PatchError("operation %d: unknown op %r" % (number, op))
    return doc


def apply(content_type, target, patch):
    """Apply a patch body of one of TYPES; PatchError when it does not fit the object."""
    if content_type == JSON_PATCH:
        return json_patch(target, patch)
    if not isinstance(patch, dict):
        raise PatchError("a %s body must be a JSON object" % content_type)
    if content_type == STRATEGIC:
        return strategic_merge_patch(target, patch)
    return merge_patch(target, patch)
