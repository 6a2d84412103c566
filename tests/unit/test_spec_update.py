# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which changes to the spec in force are allowed: docs/rules.md V9-V13 mapped to our fields (docs/spec.md)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_update import (
    changed_paths,
    check_update,
    path_allowed,
)
from ansible_collections.kubeadm.control_plane.tests.unit.builders import with_field

BASE = {
    "cluster_name": "demo",
    "replicas": 3,
    "version": "v1.34.6",
    "endpoint": {"host": "10.0.0.100"},
    "kubeadm": {
        "cluster_configuration": {
            "networking": {"podSubnet": "10.244.0.0/16"},
            "etcd": {"local": {"dataDir": "/var/lib/etcd"}},
            "dns": {"imageTag": "v1.11.1"},
        },
    },
}
CC = "kubeadm.cluster_configuration"
EXTERNAL_ETCD = {
    "endpoints": ["https://10.0.0.5:2379"],
    "caFile": "/etc/etcd/ca.crt",
    "certFile": "/etc/etcd/client.crt",
    "keyFile": "/etc/etcd/client.key",
}


def normalized(raw):
    spec, errors = normalize_spec(raw)
    assert errors == []
    return spec


ALLOWED = [
    ("scaling from three to five replicas is allowed", with_field(BASE, "replicas", 5)),
    ("an upgrade by one minor is allowed", with_field(BASE, "version", "v1.35.0")),
    ("a patch upgrade is allowed", with_field(BASE, "version", "v1.34.9")),
    ("a downgrade is not refused by the minor rule", with_field(BASE, "version", "v1.33.3")),
    ("a new machine template is allowed", with_field(BASE, "machine_template.image", "debian-12.7")),
    ("rollout settings may change", with_field(with_field(BASE, "rollout.max_surge", 0), "rollout.after",
                                               "2026-12-01T00:00:00Z")),
    ("the upgrade strategy may change", with_field(BASE, "upgrade.strategy", "in_place")),
    ("remediation limits may change", with_field(BASE, "remediation.max_retry", 3)),
    ("external remediation may be turned on", with_field(BASE, "remediation.external", {"attempts": 2})),
    ("health check rules may change", with_field(BASE, "health_check.unhealthy_range", "[1-2]")),
    ("API server extra arguments may be added", with_field(BASE, CC + ".apiServer.extraArgs", [{"name": "v", "value": "2"}])),
    ("feature gates may change", with_field(BASE, CC + ".featureGates", {"SomeGate": True})),
    ("the image repository may change", with_field(BASE, CC + ".imageRepository", "registry.local")),
    ("the etcd image tag may change", with_field(BASE, CC + ".etcd.local.imageTag", "3.5.15-0")),
    ("the etcd data directory may change", with_field(BASE, CC + ".etcd.local.dataDir", "/data/etcd")),
    ("a CoreDNS upgrade is allowed", with_field(BASE, CC + ".dns.imageTag", "v1.11.3")),
    ("a CoreDNS tag that reads as the same version is allowed", with_field(BASE, CC + ".dns.imageTag", "1.11.1-custom")),
    ("init node registration may change", with_field(BASE, "kubeadm.init_configuration.nodeRegistration.taints", [])),
    ("join discovery may change", with_field(BASE, "kubeadm.join_configuration.discovery.bootstrapToken.apiServerEndpoint",
                                                   "10.0.0.100:6443")),
    ("the join control plane section may change",
     with_field(BASE, "kubeadm.join_configuration.controlPlane.localAPIEndpoint.bindPort", 6443)),
]


@pytest.mark.parametrize("new", [case[1] for case in ALLOWED], ids=[case[0] for case in ALLOWED])
def test_allowed_changes_pass(new):
    assert check_update(normalized(BASE), normalized(new)) == []


def test_moving_from_v1beta3_at_v1_36_to_v1beta4_at_v1_37_is_allowed():
    before = with_field(with_field(BASE, "version", "v1.36.4"), CC + ".apiServer.extraArgs", {"v": "2"})
    before = with_field(before, "kubeadm.api_version", "kubeadm.k8s.io/v1beta3")
    after = with_field(with_field(BASE, "version", "v1.37.1"), CC + ".apiServer.extraArgs", [{"name": "v", "value": "2"}])
    assert check_update(normalized(before), normalized(after)) == []


UPGRADE_PATH = ["v1.33.10", "v1.34.8", "v1.35.9", "v1.36.4", "v1.37.1"]


@pytest.mark.parametrize("old,new", list(zip(UPGRADE_PATH, UPGRADE_PATH[1:])),
                         ids=["an upgrade from %s to %s, one minor, is allowed" % pair for pair in zip(UPGRADE_PATH, UPGRADE_PATH[1:])])
def test_clusters_on_v1_33_and_later_upgrade_one_minor_at_a_time(old, new):
    assert check_update(normalized(with_field(BASE, "version", old)), normalized(with_field(BASE, "version", new))) == []


@pytest.mark.parametrize("old,new", list(zip(UPGRADE_PATH, UPGRADE_PATH[2:])),
                         ids=["an upgrade from %s straight to %s is refused" % pair for pair in zip(UPGRADE_PATH, UPGRADE_PATH[2:])])
def test_an_upgrade_from_a_supported_version_may_not_skip_a_minor(old, new):
    errors = check_update(normalized(with_field(BASE, "version", old)), normalized(with_field(BASE, "version", new)))
    assert [e["path"] for e in errors] == ["version"] and "may not skip a minor" in errors[0]["rule"]


def test_switching_external_etcd_endpoints_is_allowed():
    before = with_field(with_field(BASE, CC + ".etcd", {"external": EXTERNAL_ETCD}), "replicas", 2)
    after = with_field(before, CC + ".etcd.external.endpoints", ["https://10.0.0.6:2379", "https://10.0.0.7:2379"])
    assert check_update(normalized(before), normalized(after)) == []


REFUSED = [
    ("renaming the cluster is refused", with_field(BASE, "cluster_name", "other"), [("cluster_name", "may not change")]),
    ("moving the endpoint is refused", with_field(BASE, "endpoint.host", "10.0.0.101"),
     [("endpoint.host", "may not change")]),
    ("changing the endpoint port is refused", with_field(BASE, "endpoint.port", 7443), [("endpoint.port", "may not change")]),
    ("changing the pod subnet is refused", with_field(BASE, CC + ".networking.podSubnet", "10.32.0.0/12"),
     [(CC + ".networking.podSubnet", "may not change")]),
    ("changing the certificates directory is refused", with_field(BASE, CC + ".certificatesDir", "/etc/pki"),
     [(CC + ".certificatesDir", "may not change")]),
    ("removing the local etcd section is refused", with_field(BASE, CC + ".etcd", {}),
     [(CC + ".etcd.local", "may not change")]),
    ("switching from local to external etcd is refused", with_field(BASE, CC + ".etcd", {"external": EXTERNAL_ETCD}),
     [(CC + ".etcd", "stacked (local) and external"), (CC + ".etcd.local", "may not change")]),
    ("a CoreDNS downgrade is refused", with_field(BASE, CC + ".dns.imageTag", "v1.10.1"),
     [(CC + ".dns.imageTag", "may not downgrade CoreDNS")]),
    ("skipping a minor version is refused", with_field(BASE, "version", "v1.36.0"), [("version", "upgrade to v1.35")]),
    ("skipping to a pre-release of the minor after next is refused", with_field(BASE, "version", "v1.36.0-rc.1"),
     [("version", "may not skip a minor")]),
]


@pytest.mark.parametrize("new,expected", [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_immutable_changes_fail(new, expected):
    errors = check_update(normalized(BASE), normalized(new))
    assert sorted(e["path"] for e in errors) == sorted(path for path, _fragment in expected)
    for path, fragment in expected:
        assert any(e["path"] == path and fragment in e["rule"] for e in errors), (path, fragment, errors)


def test_a_v1beta4_field_outside_the_mutable_list_is_refused_on_update():
    before = BASE
    after = with_field(before, "kubeadm.init_configuration.timeouts", {"discovery": "10m"})
    errors = check_update(normalized(before), normalized(after))
    assert [(e["path"], e["value"]) for e in errors] == [("kubeadm.init_configuration.timeouts.discovery", "10m")]


def test_every_refused_change_is_reported_at_once():
    new = with_field(with_field(BASE, "cluster_name", "other"), "version", "v1.36.2")
    new = with_field(new, CC + ".networking.serviceSubnet", "10.96.0.0/16")
    errors = check_update(normalized(BASE), normalized(new))
    assert sorted(e["path"] for e in errors) == ["cluster_name", CC + ".networking.serviceSubnet", "version"]


@pytest.mark.parametrize(
    "old,new,paths",
    [
        ({"a": {"b": 1}}, {"a": {"b": 1}}, []),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, [("a", "c")]),
        ({"a": {"b": {"c": 1}}}, {"a": {}}, [("a", "b")]),
        ({"a": {}}, {"a": {"b": {"c": 1, "d": 2}}}, [("a", "b", "c"), ("a", "b", "d")]),
        ({"a": 1}, {"a": {"b": 2}}, [("a", "b")]),
        ({"a": [1, 2]}, {"a": [2, 1]}, [("a",)]),
        ({"a": {}}, {"a": {"b": {}}}, []),
    ],
    ids=[
        "equal documents have no changed path",
        "a removed key is one path",
        "a removed mapping is one path ending at it",
        "an added mapping contributes each of its leaves",
        "a scalar replaced by a mapping contributes the mapping's leaves",
        "a list is compared whole",
        "an added empty mapping changes nothing",
    ],
)
def test_changed_paths_follow_a_json_merge_patch(old, new, paths):
    assert changed_paths(old, new) == paths


@pytest.mark.parametrize(
    "path,pattern,allowed",
    [
        ("a.b", "a.b", True),
        ("a.b.c.d", "a.b.*", True),
        ("a.b", "a.b.*", False),
        ("a", "a.b", False),
        ("a.b.c", "a.b", False),
        ("a.x", "a.b", False),
    ],
    ids=[
        "a path equal to the pattern matches",
        "a longer path matches once a star is reached",
        "a path ending where the star begins does not match",
        "a path shorter than the pattern does not match",
        "a path longer than a pattern without a star does not match",
        "a different key does not match",
    ],
)
def test_allow_list_patterns_match_like_kcp(path, pattern, allowed):
    assert path_allowed(tuple(path.split(".")), tuple(pattern.split("."))) is allowed


MUTABLE_LEAVES = [
    CC + ".etcd.local.imageRepository",
    CC + ".etcd.local.extraArgs",
    CC + ".etcd.local.extraArgs.quota-backend-bytes",
    CC + ".etcd.local.peerCertSANs",
    CC + ".etcd.local.serverCertSANs",
    CC + ".dns.imageRepository",
    CC + ".featureGates",
    CC + ".featureGates.SomeGate",
    CC + ".apiServer",
    CC + ".apiServer.certSANs",
    CC + ".controllerManager",
    CC + ".controllerManager.extraArgs",
    CC + ".scheduler",
    CC + ".scheduler.extraArgs",
    "kubeadm.api_version",
    "kubeadm.init_configuration.nodeRegistration",
    "kubeadm.init_configuration.nodeRegistration.name",
    "kubeadm.init_configuration.patches.directory",
    "kubeadm.init_configuration.patches",
    "kubeadm.init_configuration.skipPhases",
    "kubeadm.init_configuration.bootstrapTokens",
    "kubeadm.init_configuration.localAPIEndpoint",
    "kubeadm.init_configuration.localAPIEndpoint.bindPort",
    "kubeadm.join_configuration.nodeRegistration",
    "kubeadm.join_configuration.nodeRegistration.name",
    "kubeadm.join_configuration.patches.directory",
    "kubeadm.join_configuration.patches",
    "kubeadm.join_configuration.skipPhases",
    "kubeadm.join_configuration.caCertPath",
    "kubeadm.join_configuration.controlPlane",
    "kubeadm.join_configuration.discovery",
]


@pytest.mark.parametrize("path", MUTABLE_LEAVES, ids=["%s may change" % path for path in MUTABLE_LEAVES])
def test_every_field_on_the_mutable_list_may_change(path):
    before = normalized(BASE)
    assert check_update(before, with_field(before, path, ["changed"])) == []


@pytest.mark.parametrize("field", ["endpoints", "caFile", "certFile", "keyFile"],
                         ids=["the external etcd %s may change" % field for field in ["endpoints", "caFile", "certFile", "keyFile"]])
def test_every_external_etcd_connection_field_may_change(field):
    before = normalized(with_field(with_field(BASE, CC + ".etcd", {"external": EXTERNAL_ETCD}), "replicas", 2))
    assert check_update(before, with_field(before, CC + ".etcd.external." + field, ["changed"])) == []


@pytest.mark.parametrize(
    "new,expected",
    [
        (with_field(BASE, "cluster_name", "other"), [("cluster_name", "may not change once the control plane exists", "other")]),
        (with_field(BASE, CC + ".etcd", {"external": EXTERNAL_ETCD}),
         [("kubeadm.cluster_configuration.etcd.local", "may not change once the control plane exists", None),
          ("kubeadm.cluster_configuration.etcd", "may not switch between stacked (local) and external etcd", {"external": EXTERNAL_ETCD})]),
        (with_field(BASE, "version", "v1.36.0"),
         [("version", "may not skip a minor version: from v1.34.6 upgrade to v1.35 first", "v1.36.0")]),
        (with_field(BASE, CC + ".dns.imageTag", "v1.10.1"),
         [("kubeadm.cluster_configuration.dns.imageTag", "may not downgrade CoreDNS (from v1.11.1)", "v1.10.1")]),
    ],
    ids=["an immutable field names its new value", "a switch to external etcd names the new etcd section",
         "a skipped minor names the minor to upgrade to first", "a CoreDNS downgrade names the tag in force"],
)
def test_each_refused_change_names_the_path_the_rule_and_the_new_value(new, expected):
    errors = check_update(normalized(BASE), normalized(new))
    assert [(e["path"], e["rule"], e["value"]) for e in errors] == expected
