# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Protobuf request bodies (kcpsim.apiserver.protobuf): what the decoder makes of an envelope, and what it refuses.
test_apiserver_kubectl feeds it the real kubectl's bodies; these cases build the bytes by hand."""

import pytest

from kcpsim.apiserver import protobuf


def varint(number):
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)


def field(number, value):
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def envelope(api_version, kind, raw):
    type_meta = field(1, api_version.encode()) + field(2, kind.encode())
    return protobuf.MAGIC + field(1, type_meta) + field(2, raw)


def entry(key, value):
    return field(1, key.encode()) + field(2, value)


METADATA = field(1, b"kubeadm-config") + field(3, b"kube-system") + field(11, entry("tier", b"control-plane")) \
    + field(8, b"")


def test_a_config_map_decodes_to_its_json_form():
    body = envelope("v1", "ConfigMap", field(1, METADATA) + field(2, entry("ClusterConfiguration", b"x: 1"))
                    + field(3, entry("blob", b"\x00\xff")) + field(4, 1))
    assert protobuf.decode(body) == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kubeadm-config", "namespace": "kube-system", "labels": {"tier": "control-plane"}},
        "data": {"ClusterConfiguration": "x: 1"}, "binaryData": {"blob": "AP8="}, "immutable": True}


def test_an_eviction_carries_its_delete_options():
    options = field(1, 30) + field(2, field(1, b"uid-1")) + field(5, b"All")
    body = envelope("policy/v1", "Eviction", field(1, field(1, b"web")) + field(2, options))
    assert protobuf.decode(body)["deleteOptions"] == {"gracePeriodSeconds": 30, "preconditions": {"uid": "uid-1"},
                                                      "dryRun": ["All"]}


def test_a_cluster_role_binding_decodes_with_its_subjects_and_role():
    # what kubectl create clusterrolebinding sends (rbac.authorization.k8s.io/v1 generated.proto)
    subject = field(1, b"User") + field(2, b"rbac.authorization.k8s.io") + field(3, b"kube-apiserver-kubelet-client")
    role = field(1, b"rbac.authorization.k8s.io") + field(2, b"ClusterRole") + field(3, b"system:kubelet-api-admin")
    body = envelope("rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
                    field(1, field(1, b"kubeadm:apiserver-kubelet-client")) + field(2, subject) + field(3, role))
    assert protobuf.decode(body) == {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "kubeadm:apiserver-kubelet-client"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "kube-apiserver-kubelet-client"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:kubelet-api-admin"}}


def test_a_cluster_role_decodes_with_its_rules():
    rule = field(1, b"get") + field(1, b"list") + field(2, b"") + field(3, b"pods") + field(3, b"pods/log")
    body = envelope("rbac.authorization.k8s.io/v1", "ClusterRole", field(1, field(1, b"pod-reader")) + field(2, rule))
    assert protobuf.decode(body)["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]}]


def test_a_negative_int64_decodes_from_its_twos_complement_varint():
    body = envelope("meta.k8s.io/v1", "DeleteOptions", field(1, (1 << 64) - 1))
    assert protobuf.decode(body)["gracePeriodSeconds"] == -1


@pytest.mark.parametrize("body, error, words", [
    (b"{}", protobuf.ProtobufError, "magic number"),
    (envelope("v1", "ConfigMap", field(2, b"")[:-1] + b"\x05"), protobuf.ProtobufError, "runs past the end"),
    (protobuf.MAGIC + b"\x08\xff", protobuf.ProtobufError, "varint runs past"),
    (envelope("v1", "ConfigMap", field(1, METADATA) + field(9, b"?")), protobuf.UnsupportedKind,
     "field 9 of ConfigMap"),
    (envelope("apps/v1", "Deployment", b""), protobuf.UnsupportedKind, "apps/v1 Deployment must be sent as JSON"),
    (envelope("v1", "ConfigMap", field(1, 7)), protobuf.ProtobufError, "metadata must be length-delimited"),
], ids=["a JSON body sent as protobuf", "a truncated field", "a truncated varint", "a field the schema lacks",
        "a kind without a schema", "a message field sent as a varint"])
def test_what_the_decoder_refuses_and_why(body, error, words):
    with pytest.raises(error, match=words):
        protobuf.decode(body)
