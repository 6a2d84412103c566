# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), decoded to the JSON
form the rest of the emulation works on.

kubectl 1.32 and later write built-in types through typed clients that send protobuf (`kubectl create configmap`,
the evictions and pod deletions of `kubectl drain`); a real API server decodes them, so the emulation must too.
The envelope is the magic `k8s\\0` followed by a `runtime.Unknown` message whose `raw` bytes hold the object.

Emulation limit: a real API server knows every built-in type's schema; this one knows the schemas of the kinds
kubectl writes as protobuf in what the sandbox exercises (SCHEMAS below). Any other kind is refused with 415, in
words that name the emulation, so a gap shows as a clear failure, never as a silently dropped field. Responses
stay JSON, which every client that asks for protobuf also accepts.
"""

import base64
import datetime

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """The body is not a protobuf object this emulation can decode."""


class UnsupportedKind(ProtobufError):
    """A well-formed envelope around a kind whose schema the emulation does not have."""


# A field is (JSON name, type). Types: "string", "bytes" (base64 in JSON), "int", "bool", "time" (metav1.Time),
# a message name from SCHEMAS, or ("map", value type) / ("repeated", type).
SCHEMAS = {
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "raw"), 3: ("contentEncoding", "string"),
                4: ("contentType", "string")},
    "TypeMeta": {1: ("apiVersion", "string"), 2: ("kind", "string")},
    "Time": {1: ("seconds", "int"), 2: ("nanos", "int")},
    "ObjectMeta": {
        1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"), 4: ("selfLink", "string"),
        5: ("uid", "string"), 6: ("resourceVersion", "string"), 7: ("generation", "int"),
        8: ("creationTimestamp", "time"), 9: ("deletionTimestamp", "time"),
        10: ("deletionGracePeriodSeconds", "int"), 11: ("labels", ("map", "string")),
        12: ("annotations", ("map", "string")), 13: ("ownerReferences", ("repeated", "OwnerReference")),
        14: ("finalizers", ("repeated", "string")),
    },
    "OwnerReference": {1: ("kind", "string"), 3: ("name", "string"), 4: ("uid", "string"),
                       5: ("apiVersion", "string"), 6: ("controller", "bool"), 7: ("blockOwnerDeletion", "bool")},
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", ("map", "string")),
                  3: ("binaryData", ("map", "bytes")), 4: ("immutable", "bool")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", ("map", "bytes")), 3: ("type", "string"),
               4: ("stringData", ("map", "string")), 5: ("immutable", "bool")},
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec"), 3: ("status", "NamespaceStatus")},
    "NamespaceSpec": {1: ("finalizers", ("repeated", "string"))},
    "NamespaceStatus": {1: ("phase", "string")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 3: ("automountServiceAccountToken", "bool")},
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "int"), 2: ("preconditions", "Preconditions"),
                      3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "string"),
                      5: ("dryRun", ("repeated", "string"))},
    "Preconditions": {1: ("uid", "string"), 2: ("resourceVersion", "string")},
    # rbac.authorization.k8s.io/v1 (kubectl create clusterrolebinding / rolebinding / clusterrole / role)
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", ("repeated", "Subject")),
                           3: ("roleRef", "RoleRef")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", ("repeated", "Subject")), 3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", "string"), 2: ("apiGroup", "string"), 3: ("name", "string"), 4: ("namespace", "string")},
    "RoleRef": {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", ("repeated", "PolicyRule")),
                    3: ("aggregationRule", "AggregationRule")},
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", ("repeated", "PolicyRule"))},
    "PolicyRule": {1: ("verbs", ("repeated", "string")), 2: ("apiGroups", ("repeated", "string")),
                   3: ("resources", ("repeated", "string")), 4: ("resourceNames", ("repeated", "string")),
                   5: ("nonResourceURLs", ("repeated", "string"))},
    "AggregationRule": {1: ("clusterRoleSelectors", ("repeated", "LabelSelector"))},
    "LabelSelector": {1: ("matchLabels", ("map", "string")),
                      2: ("matchExpressions", ("repeated", "LabelSelectorRequirement"))},
    "LabelSelectorRequirement": {1: ("key", "string"), 2: ("operator", "string"), 3: ("values", ("repeated", "string"))},
}

# The kinds a request body may carry, by (apiVersion, kind): both name the same schema in every group version.
TOP_LEVEL = {("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Namespace"), ("v1", "ServiceAccount"),
             ("policy/v1", "Eviction"), ("meta.k8s.io/v1", "DeleteOptions"), ("v1", "DeleteOptions")} | {
    ("rbac.authorization.k8s.io/v1", kind) for kind in ("ClusterRoleBinding", "RoleBinding", "ClusterRole", "Role")}


def decode(body):
    """The JSON form of one protobuf request body; ProtobufError when it is not one."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the protobuf envelope's magic number")
    envelope = _message(body[len(MAGIC):], "Unknown")
    type_meta = envelope.get("typeMeta", {})
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    if envelope.get("contentEncoding"):
        raise ProtobufError("content encoding %r is not supported" % envelope["contentEncoding"])
    if (api_version, kind) not in TOP_LEVEL:
        raise UnsupportedKind("the emulated API server decodes protobuf bodies only for %s; %s %s must be sent as "
                              "JSON here" % (", ".join(sorted("%s %s" % k for k in TOP_LEVEL)), api_version, kind))
    obj = _message(envelope.get("raw", b""), kind)
    obj.update({"apiVersion": api_version, "kind": kind})
    return obj


def _message(data, schema_name):
    """A dict of the fields of one message; unknown field numbers are an error, as a dropped field would be."""
    schema, out = SCHEMAS[schema_name], {}
    for number, value in _fields(data):
        if number not in schema:
            raise UnsupportedKind("field %d of %s is not known to the emulated API server" % (number, schema_name))
        name, kind = schema[number]
        if isinstance(kind, tuple) and kind[0] == "map":
            entry = dict(_fields(_expect_bytes(value, name)))
            out.setdefault(name, {})[_text(entry.get(1, b""), name)] = _scalar(entry.get(2, b""), kind[1], name)
        elif isinstance(kind, tuple):
            out.setdefault(name, []).append(_scalar(value, kind[1], name))
        else:
            decoded = _scalar(value, kind, name)
            if decoded is not None:
                out[name] = decoded
    return out


def _scalar(value, kind, name):
    if kind == "int":
        if not isinstance(value, int):
            raise ProtobufError("field %s must be a varint" % name)
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind == "bool":
        if not isinstance(value, int):
            raise ProtobufError("field %s must be a varint" % name)
        return bool(value)
    data = _expect_bytes(value, name)
    if kind == "string":
        return _text(data, name)
    if kind == "bytes":
        return base64.b64encode(data).decode("ascii")
    if kind == "raw":
        return data
    if kind == "time":
        # An empty Time is Go's zero time, which JSON writes as null; leave the field out.
        stamp = _message(data, "Time")
        if not stamp:
            return None
        moment = datetime.datetime.fromtimestamp(stamp.get("seconds", 0), datetime.timezone.utc)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return _message(data, kind)


def _expect_bytes(value, name):
    if not isinstance(value, bytes):
        raise ProtobufError("field %s must be length-delimited" % name)
    return value


def _text(data, name):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtobufError("field %s is not valid UTF-8" % name)


def _fields(data):
    """(field number, value) pairs of one message: an int for a varint, bytes for a length-delimited field."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, position = _varint(data, position)
        elif wire_type == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise ProtobufError("a length-delimited field runs past the end of the body")
            value, position = data[position:position + length], position + length
        else:
            raise ProtobufError("wire type %d is not used by Kubernetes objects" % wire_type)
        yield number, value


def _varint(data, position):
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ProtobufError("a varint runs past the end of the body")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
