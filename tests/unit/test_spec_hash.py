# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The spec hash changes exactly when a machine would be built differently (docs/spec.md "The spec hash")."""

import hashlib
import re

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash, spec_hashes
from ansible_collections.kubeadm.control_plane.tests.unit.builders import spec, with_field

CC = "kubeadm.cluster_configuration"
BASE = with_field(spec(), CC, {"networking": {"podSubnet": "10.244.0.0/16"}, "apiServer": {"certSANs": ["api.local"]}})


def reversed_keys(value):
    """The same document with every mapping's keys inserted in reverse order."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(v) for v in value]
    return value


def test_each_hash_is_sixteen_hex_digits():
    assert all(re.fullmatch(r"[0-9a-f]{16}", h) for h in spec_hashes(BASE).values())


def test_the_hashes_do_not_depend_on_key_order():
    assert spec_hashes(reversed_keys(BASE)) == spec_hashes(BASE)


@pytest.mark.parametrize(
    "part,text",
    [
        ("init", '{"cluster_configuration":{},"init_configuration":{},"machine_template":{}}'),
        ("join", '{"cluster_configuration":{},"join_configuration":{},"machine_template":{}}'),
    ],
    ids=["the init hash is the documented digest of its part", "the join hash is the documented digest of its part"],
)
def test_each_hash_is_the_documented_digest_of_its_part(part, text):
    # Every Node records the hash it was built from: a new way of hashing the same spec would roll out every
    # machine, so the format is pinned here as docs/spec.md states it.
    assert spec_hash(spec(), part) == hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    "path,changed",
    [
        ("kubeadm.init_configuration.nodeRegistration.taints", {"init"}),
        ("kubeadm.join_configuration.nodeRegistration.taints", {"join"}),
        (CC + ".apiServer.certSANs", {"init", "join"}),
        ("machine_template.image", {"init", "join"}),
    ],
    ids=[
        "an init configuration change changes only the init hash: joined machines are not rolled out",
        "a join configuration change changes only the join hash: the init machine is not rolled out",
        "a cluster configuration change changes both",
        "a machine template change changes both",
    ],
)
def test_a_change_moves_only_the_hash_of_the_part_it_belongs_to(path, changed):
    before, after = spec_hashes(BASE), spec_hashes(with_field(BASE, path, ["x"]))
    assert {part for part in before if before[part] != after[part]} == changed


CHANGES = [
    ("the machine template", "machine_template.image", "debian-12.7"),
    ("the cluster configuration", CC + ".apiServer.certSANs", ["api.local", "api.example.com"]),
    ("a feature gate", CC + ".featureGates", {"SomeGate": True}),
    ("the init configuration", "kubeadm.init_configuration.nodeRegistration.taints", []),
    ("the join configuration", "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", {"v": "2"}),
    ("an extra argument's value", CC + ".apiServer.extraArgs", {"audit-log-maxage": "31"}),
]


@pytest.mark.parametrize("path,value", [c[1:] for c in CHANGES], ids=["changes with " + c[0] for c in CHANGES])
def test_the_hash_changes_with_what_a_machine_is_built_from(path, value):
    assert spec_hashes(with_field(BASE, path, value)) != spec_hashes(BASE)


SAME = [
    ("replicas", "replicas", 5),
    ("the version", "version", "v1.31.0"),
    ("the kubeadm config API version", "kubeadm.api_version", "kubeadm.k8s.io/v1beta4"),
    ("the rollout settings", "rollout", {"strategy": "RollingUpdate", "max_surge": 0, "after": "2026-12-01T00:00:00Z",
                                         "before": {"certificates_expiry_days": 30}}),
    ("the upgrade strategy", "upgrade.strategy", "in_place"),
    ("the remediation limits", "remediation.max_retry", 3),
    ("external remediation", "remediation.external", {"attempts": 5, "timeout": 300.0, "escalate": True}),
    ("the health check", "health_check.max_unhealthy", 1),
    ("the CoreDNS settings", CC + ".dns", {"imageTag": "v1.11.3"}),
    ("an etcd image tag where there was no etcd section", CC + ".etcd", {"local": {"imageTag": "3.6.11-0"}}),
    ("the join discovery", "kubeadm.join_configuration.discovery", {"timeout": "10m"}),
]


@pytest.mark.parametrize("path,value", [c[1:] for c in SAME], ids=["is unchanged by " + c[0] for c in SAME])
def test_the_hash_ignores_what_does_not_rebuild_a_machine(path, value):
    assert spec_hashes(with_field(BASE, path, value)) == spec_hashes(BASE)


def test_the_etcd_image_tag_is_left_out_and_the_rest_of_etcd_local_is_not():
    # the tag is what an in-place upgrade changes, compared on its own (rollout reason etcd); the data directory is not
    local = with_field(BASE, CC + ".etcd", {"local": {"dataDir": "/var/lib/etcd", "imageTag": "3.6.8-0"}})
    assert spec_hashes(with_field(local, CC + ".etcd.local.imageTag", "3.6.11-0")) == spec_hashes(local)
    assert spec_hashes(with_field(local, CC + ".etcd.local", {"dataDir": "/var/lib/etcd"})) == spec_hashes(local)
    assert spec_hashes(with_field(local, CC + ".etcd.local.dataDir", "/srv/etcd")) != spec_hashes(local)


def test_extra_arguments_hash_alike_as_a_v1beta3_map_or_a_v1beta4_list():
    as_map = with_field(BASE, CC + ".apiServer.extraArgs", {"b": "2", "a": "1"})
    as_list = with_field(with_field(BASE, "kubeadm.api_version", "kubeadm.k8s.io/v1beta4"), CC + ".apiServer.extraArgs",
                         [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}])
    assert spec_hashes(as_map) == spec_hashes(as_list)


def test_the_hash_of_a_normalized_spec_ignores_fields_repeated_from_the_spec():
    raw = {"cluster_name": "demo", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "10.0.0.100"}}
    repeated = with_field(raw, CC, {"kubernetesVersion": "v1.36.4", "clusterName": "demo",
                                    "controlPlaneEndpoint": "10.0.0.100:6443"})
    assert spec_hashes(normalize_spec(repeated)[0]) == spec_hashes(normalize_spec(raw)[0])


def test_the_order_of_differently_named_extra_arguments_does_not_move_the_hash():
    v1beta4 = with_field(BASE, "kubeadm.api_version", "kubeadm.k8s.io/v1beta4")
    ordered = with_field(v1beta4, CC + ".apiServer.extraArgs", [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}])
    reordered = with_field(v1beta4, CC + ".apiServer.extraArgs", [{"name": "b", "value": "2"}, {"name": "a", "value": "1"}])
    assert spec_hashes(ordered) == spec_hashes(reordered)
