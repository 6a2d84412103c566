# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The garbage collector's decision: is an object an orphan? Pure, no I/O.

An object with ``ownerReferences`` is deleted when every owner it names is gone — no object of that kind and
name (in the dependent's namespace for namespaced owners), or one with a different ``uid`` (the owner was
deleted and re-created). An owner of a kind the server does not serve is treated as present: the real
collector cannot resolve it either and leaves the dependent alone. This is what removes ``kubeadm-certs`` once
the token cleaner has deleted the bootstrap token Secret that owns it.
"""

from kcpsim.apiserver import resources

UNKNOWN_KIND = object()


def owner_key(dependent, reference):
    """``(resource, namespace, name)`` of the owner a reference names, or UNKNOWN_KIND."""
    resource = resources.by_kind(reference.get("apiVersion") or "", reference.get("kind") or "")
    if resource is None:
        return UNKNOWN_KIND
    namespace = (dependent.get("metadata") or {}).get("namespace") if resource.namespaced else None
    return resource, namespace, reference.get("name")


def is_orphan(dependent, owner_uid):
    """Whether every owner of ``dependent`` is gone; ``owner_uid(resource, namespace, name)`` gives the uid of
    the live owner or None."""
    references = (dependent.get("metadata") or {}).get("ownerReferences") or []
    if not references:
        return False
    for reference in references:
        key = owner_key(dependent, reference)
        if key is UNKNOWN_KIND:
            return False
        if owner_uid(*key) == reference.get("uid"):
            return False
    return True
