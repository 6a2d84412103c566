# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the cluster_object module does to one object of the cluster, decided from what it read: a JSON merge patch
(RFC 7386, as ``kubectl patch --type=merge`` sends it) applied, the object created or deleted, or nothing because
the object is already as asked. Pure functions: the module changes only what this says changes, so its ``changed``
is a fact and check mode and diff say exactly what a run would do."""

from __future__ import annotations

import copy

NONE, PATCH, CREATE, DELETE, MISSING = "none", "patch", "create", "delete", "missing"
# What diff shows of an object: what a patch can set, not what changes at every write (resourceVersion,
# managedFields) or what the cluster reports (status).
_SHOWN_METADATA = ("name", "namespace", "labels", "annotations")
_SHOWN = ("spec", "data")
HIDDEN = "(hidden)"


def merged(target, patch):
    """A copy of ``target`` with the merge patch ``patch`` applied: a mapping merges key by key, null removes the
    key, any other value replaces what was there."""
    return _merge(copy.deepcopy(target), copy.deepcopy(patch))


def _merge(target, patch):
    if not isinstance(patch, dict):
        return patch
    result = target if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


def decide(found, state, patch, create, template):
    """(action, the object after it) for the object read (``found``, None when it does not exist). ``state`` present
    applies ``patch``: nothing when that changes nothing, a creation from ``template`` (apiVersion, kind and
    metadata) with the patch applied when the object does not exist and ``create`` is set, else MISSING. ``state``
    absent deletes the object if it exists."""
    if state == "absent":
        return (DELETE, None) if found is not None else (NONE, None)
    if found is None:
        return (CREATE, merged(template, patch)) if create else (MISSING, None)
    after = merged(found, patch)
    return (NONE, found) if after == found else (PATCH, after)


def shown(obj, secret=False):
    """What diff shows of ``obj`` (None for no object): its name, labels, annotations, spec and data; a Secret's
    data values hidden."""
    if obj is None:
        return {}
    metadata = obj.get("metadata") or {}
    view = {"metadata": dict((k, metadata[k]) for k in _SHOWN_METADATA if metadata.get(k) is not None)}
    for key in _SHOWN:
        if obj.get(key) is not None:
            view[key] = obj[key]
    if secret and isinstance(view.get("data"), dict):
        view["data"] = dict((k, HIDDEN) for k in view["data"])
    return view
