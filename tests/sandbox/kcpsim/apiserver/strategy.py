# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the API server does to an object on create and on update, before it is stored. Pure, no I/O.

Create: the body's ``kind``/``apiVersion`` must be the resource's, its namespace the request's; a name (or
``generateName``) is required and must suit the kind (a DNS subdomain; a DNS label for namespaces, a DNS-1035
label for services; RBAC and CSR names only a URL path segment); a ``resourceVersion`` must not be set (the real
server refuses with an internal error). The server sets ``uid``, ``creationTimestamp``, ``generation`` (1, where
the resource has one) and resets what a client may not choose: a Pod starts ``Pending``; a Job, a workload and a
CSR start with an empty status; a Namespace ``Active``; a CSR records the requesting user in ``spec.username``,
``spec.groups``, ``spec.uid``. A Secret without ``type`` is ``Opaque``.

Secrets, on every write: ``data`` values must be base64 (else 400, as the real server's decoding refuses them);
the write-only ``stringData`` is folded into ``data`` (its UTF-8, base64-encoded, winning over a ``data`` entry
of the same key) and never stored, so a reader sees ``data`` only, as from the real server.

Update (PUT or PATCH): ``uid``, ``creationTimestamp``, ``name``, ``namespace`` keep their stored values (a
different ``uid`` in the body is a conflict). On a resource with a ``/status`` subresource a main-resource write
keeps the stored ``status``, and a ``/status`` write changes only ``status`` (``/approval`` only
``status.conditions``). ``generation`` grows by one when ``spec`` changes.

Both end with required.complete: zero values for missing required status fields, 422 for other missing
required fields.
"""

import base64
import binascii
import copy
import re

from kcpsim.apiserver import errors, required

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# Kinds the real server checks by their own rule; every other kind's name must be a DNS subdomain.
# RBAC names (``kubeadm:cluster-admins``) and CSR names only have to be usable as a URL path segment.
_PATH_SEGMENT_KINDS = ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "CertificateSigningRequest")
_NAME_RULES = {
    "Namespace": (_DNS_LABEL, 63, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                  "or '-', and must start and end with an alphanumeric character"),
    "Service": (_DNS_1035_LABEL, 63, "a DNS-1035 label must consist of lower case alphanumeric characters or "
                                     "'-', start with an alphabetic character, and end with an alphanumeric "
                                     "character"),
}
_SUBDOMAIN_RULE = (_DNS_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                        "characters, '-' or '.', and must start and end with an alphanumeric "
                                        "character")


def _name_problems(kind, name):
    if not name:
        return [("metadata.name", "Required value: name or generateName is required")]
    if name in (".", "..") or "/" in name or "%" in name:
        return [("metadata.name", "Invalid value: %r: may not be '.' or '..' and may not contain '/' or '%%'" % name)]
    if kind in _PATH_SEGMENT_KINDS:
        return []
    pattern, longest, rule = _NAME_RULES.get(kind, _SUBDOMAIN_RULE)
    if len(name) > longest or not pattern.match(name):
        return [("metadata.name", "Invalid value: %r: %s" % (name, rule))]
    return []


def _api_version(resource):
    return "%s/%s" % (resource.group, resource.version) if resource.group else resource.version


def check_body(resource, obj, namespace, name=None):
    """Refuse a body that is not an object of this resource, or names another namespace / object."""
    if not isinstance(obj, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind and kind != resource.kind:
        raise errors.bad_request("%s in version %r cannot be handled as a %s: the kind does not match"
                                 % (kind, api_version or "", resource.kind))
    if api_version and api_version != _api_version(resource):
        raise errors.bad_request("the API version in the data (%s) does not match the expected API version (%s)"
                                 % (api_version, _api_version(resource)))
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise errors.bad_request("metadata must be an object")
    metadata = metadata or {}
    if resource.namespaced and metadata.get("namespace") and metadata["namespace"] != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
    if name is not None and metadata.get("name") and metadata["name"] != name:
        raise errors.bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                                 % (metadata["name"], name))


_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _base64_problem(value):
    """None when ``value`` is standard padded base64, else Go's decoding error (it names the offending byte)."""
    if not isinstance(value, str):
        return "a value is not a string"
    try:
        base64.b64decode(value, validate=True)
        return None
    except (binascii.Error, ValueError):
        body = value.rstrip("=")
        offset = next((i for i, char in enumerate(body) if char not in _BASE64_ALPHABET), len(body))
        return "illegal base64 data at input byte %d" % offset


def _fold_secret_string_data(obj):
    """A Secret as the server stores it: ``data`` checked as base64, ``stringData`` merged into it and dropped."""
    cannot = 'Secret in version "v1" cannot be handled as a Secret: '
    data = obj.get("data")
    if data is not None and not isinstance(data, dict):
        raise errors.bad_request(cannot + "data must be a map of strings")
    for key, value in sorted((data or {}).items()):
        problem = _base64_problem(value)
        if problem:
            raise errors.bad_request("%s%s (data[%s])" % (cannot, problem, key))
    string_data = obj.pop("stringData", None)
    if string_data is None:
        return
    if not isinstance(string_data, dict) or not all(isinstance(v, str) for v in string_data.values()):
        raise errors.bad_request(cannot + "stringData must be a map of strings")
    merged = dict(data or {})
    merged.update({key: base64.b64encode(value.encode("utf-8")).decode("ascii") for key, value in string_data.items()})
    obj["data"] = merged


def prepare_create(resource, obj, namespace, user, uid, now, random_suffix):
    """The object to store for a create, or ApiError. ``user`` = ``(name, groups, uid)``."""
    check_body(resource, obj, namespace)
    obj = copy.deepcopy(obj)
    obj["kind"] = resource.kind
    obj["apiVersion"] = _api_version(resource)
    metadata = obj.setdefault("metadata", {})
    if metadata.get("resourceVersion"):
        raise errors.internal("resourceVersion should not be set on objects to be created")
    if not metadata.get("name") and metadata.get("generateName"):
        metadata["name"] = metadata["generateName"] + random_suffix
    problems = _name_problems(resource.kind, metadata.get("name"))
    if problems:
        raise errors.invalid(resource, metadata.get("name") or "", problems)
    if resource.namespaced:
        metadata["namespace"] = namespace
    else:
        metadata.pop("namespace", None)
    for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        metadata.pop(field, None)
    metadata["uid"] = uid
    metadata["creationTimestamp"] = now
    if resource.generation:
        metadata["generation"] = 1
    _defaults_on_create(resource, obj, user)
    return _completed(resource, obj)


def _completed(resource, obj):
    problems = required.complete(resource.kind, obj)
    if problems:
        raise errors.invalid(resource, (obj.get("metadata") or {}).get("name") or "", problems)
    return obj


def _defaults_on_create(resource, obj, user):
    kind = resource.kind
    if kind == "Pod":
        obj["status"] = {"phase": "Pending"}
    elif kind == "Namespace":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
    elif kind == "Secret":
        obj.setdefault("type", "Opaque")
        _fold_secret_string_data(obj)
    elif kind == "CertificateSigningRequest":
        spec = obj.setdefault("spec", {})
        name, groups, user_uid = user
        spec["username"] = name
        spec["groups"] = list(groups)
        if user_uid:
            spec["uid"] = user_uid
        else:
            spec.pop("uid", None)
        obj["status"] = {}
    elif resource.status and kind != "Node":
        # Nodes keep the status the kubelet registers them with, as the real server does.
        obj["status"] = {}


def prepare_update(resource, old, new, subresource=None):
    """The object to store when ``new`` replaces ``old`` through the main resource or a subresource."""
    metadata = new.setdefault("metadata", {}) if isinstance(new, dict) else None
    if metadata is None or not isinstance(metadata, dict):
        raise errors.bad_request("the body of the request must be a JSON object with metadata")
    name = old["metadata"]["name"]
    if metadata.get("uid") and metadata["uid"] != old["metadata"]["uid"]:
        raise errors.conflict(resource, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                              % (metadata["uid"], old["metadata"]["uid"]))
    if subresource in ("status", "approval"):
        result = copy.deepcopy(old)
        result["metadata"]["resourceVersion"] = metadata.get("resourceVersion", old["metadata"].get("resourceVersion"))
        if subresource == "approval":
            status = result.setdefault("status", {})
            status["conditions"] = copy.deepcopy((new.get("status") or {}).get("conditions") or [])
        else:
            result["status"] = copy.deepcopy(new.get("status") or {})
        return _completed(resource, result)
    result = copy.deepcopy(new)
    result["kind"] = resource.kind
    result["apiVersion"] = _api_version(resource)
    # Set by the server only: the deletion fields by a graceful DELETE, never by an update.
    for field in ("uid", "creationTimestamp", "name", "namespace", "generation", "deletionTimestamp",
                  "deletionGracePeriodSeconds"):
        if field in old["metadata"]:
            result["metadata"][field] = old["metadata"][field]
        else:
            result["metadata"].pop(field, None)
    if resource.status:
        if "status" in old:
            result["status"] = copy.deepcopy(old["status"])
        else:
            result.pop("status", None)
    if resource.generation and result.get("spec") != old.get("spec"):
        result["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
    if resource.kind == "Secret":
        _fold_secret_string_data(result)
    return _completed(resource, result)
