# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane spec as docs/spec.md states it: defaults, every validation rule, every error at once."""

import copy

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import (
    V1BETA3,
    V1BETA4,
    coredns_tag_version,
    default_images,
    etcd_is_external,
    normalize_health_check,
    normalize_spec,
    worker_group_errors,
)
from ansible_collections.kubeadm.control_plane.tests.unit.builders import ODD_VALUES, spec, with_field, without_field

MINIMAL = {"cluster_name": "demo", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "10.0.0.100"}}
BETA3 = with_field(MINIMAL, "kubeadm.api_version", V1BETA3)
EXTERNAL_ETCD = {
    "endpoints": ["https://10.0.0.5:2379"],
    "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
    "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
    "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key",
}
CC = "kubeadm.cluster_configuration"


def test_a_minimal_spec_gets_every_default_in_the_normalized_shape():
    normalized, errors = normalize_spec(MINIMAL)
    assert errors == []
    assert normalized == spec()


@pytest.mark.parametrize("raw,images", [
    (MINIMAL, {"etcd": "3.6.8-0", "coredns": "v1.14.2", "pause": "3.10.2"}),
    (with_field(MINIMAL, "version", "v1.37.0"), {"etcd": "3.7.0-0", "coredns": "v1.14.6", "pause": "3.10.2"}),
    (with_field(with_field(MINIMAL, CC + ".etcd.local.imageTag", "3.6.11-0"), CC + ".dns.imageTag", "v1.14.3"),
     {"etcd": "3.6.11-0", "coredns": "v1.14.3", "pause": "3.10.2"}),
], ids=["the images follow the version", "a newer version brings newer images", "tags the configuration names win"])
def test_default_images_follow_the_version_unless_the_configuration_names_a_tag(raw, images):
    assert default_images(normalize_spec(raw)[0]) == images


def test_normalizing_leaves_the_input_untouched():
    raw = with_field(MINIMAL, CC, {"kubernetesVersion": "v1.36.4", "clusterName": "demo"})
    before = copy.deepcopy(raw)
    normalize_spec(raw)
    assert raw == before


# (id, raw spec, path in the normalized spec, expected value there)
ACCEPTED = [
    ("a version without its leading v gets one", with_field(MINIMAL, "version", "1.36.4"), "version", "v1.36.4"),
    ("a version with a pre-release and build suffix is kept", with_field(MINIMAL, "version", "v1.37.0-rc.1+k3"),
     "version", "v1.37.0-rc.1+k3"),
    ("v1.33, the oldest version upgrades start from, is accepted", with_field(MINIMAL, "version", "v1.33.10"),
     "version", "v1.33.10"),
    ("v1.37, the newest supported version, is accepted", with_field(MINIMAL, "version", "v1.37.1"), "version", "v1.37.1"),
    ("replicas default to one", without_field(MINIMAL, "replicas"), "replicas", 1),
    ("null replicas take the default", with_field(MINIMAL, "replicas", None), "replicas", 1),
    ("an odd replica count is kept with stacked etcd", with_field(MINIMAL, "replicas", 5), "replicas", 5),
    ("an even replica count is allowed with external etcd",
     with_field(with_field(MINIMAL, "replicas", 4), CC + ".etcd.external", EXTERNAL_ETCD), "replicas", 4),
    ("the endpoint port defaults to 6443", MINIMAL, "endpoint.port", 6443),
    ("the endpoint may be a DNS name", with_field(MINIMAL, "endpoint.host", "api.prod.example.com"),
     "endpoint.host", "api.prod.example.com"),
    ("the endpoint may be a fully qualified DNS name with a trailing dot",
     with_field(MINIMAL, "endpoint.host", "api.example.com."), "endpoint.host", "api.example.com."),
    ("the endpoint may be an IPv6 address", with_field(MINIMAL, "endpoint.host", "fd00::10"), "endpoint.host", "fd00::10"),
    ("the endpoint port may be any valid port", with_field(MINIMAL, "endpoint.port", 65535), "endpoint.port", 65535),
    ("the kubeadm API defaults to v1beta4", MINIMAL, "kubeadm.api_version", V1BETA4),
    ("the kubeadm API defaults to v1beta4 at v1.33 too", with_field(MINIMAL, "version", "v1.33.0"),
     "kubeadm.api_version", V1BETA4),
    ("v1beta3 may still be chosen at v1.36", BETA3, "kubeadm.api_version", V1BETA3),
    ("a feature gate kubeadm still has may be set", with_field(MINIMAL, CC + ".featureGates.RootlessControlPlane", True),
     CC + ".featureGates", {"RootlessControlPlane": True}),
    ("a gate locked on may be repeated as true", with_field(MINIMAL, CC + ".featureGates.NodeLocalCRISocket", True),
     CC + ".featureGates", {"NodeLocalCRISocket": True}),
    ("a gate may be turned off before it is locked on",
     with_field(with_field(MINIMAL, "version", "v1.35.2"), CC + ".featureGates.NodeLocalCRISocket", False),
     CC + ".featureGates", {"NodeLocalCRISocket": False}),
    ("a kubernetesVersion that agrees with version is dropped",
     with_field(MINIMAL, CC, {"kubernetesVersion": "1.36.4", "imageRepository": "registry.local"}), CC,
     {"imageRepository": "registry.local"}),
    ("a clusterName that agrees with cluster_name is dropped", with_field(MINIMAL, CC + ".clusterName", "demo"), CC, {}),
    ("a controlPlaneEndpoint with the endpoint's host and port is dropped",
     with_field(MINIMAL, CC + ".controlPlaneEndpoint", "10.0.0.100:6443"), CC, {}),
    ("a controlPlaneEndpoint without a port agrees with the default port",
     with_field(MINIMAL, CC + ".controlPlaneEndpoint", "10.0.0.100"), CC, {}),
    ("an IPv6 controlPlaneEndpoint is written in brackets",
     with_field(with_field(MINIMAL, "endpoint.host", "fd00::10"), CC + ".controlPlaneEndpoint", "[fd00::10]:6443"), CC, {}),
    ("external etcd with endpoints and all three files is accepted",
     with_field(MINIMAL, CC + ".etcd.external", EXTERNAL_ETCD), CC + ".etcd.external", EXTERNAL_ETCD),
    ("an etcd image tag of letters, digits, dots and dashes is accepted",
     with_field(MINIMAL, CC + ".etcd.local.imageTag", "3.5.15-0"), CC + ".etcd.local.imageTag", "3.5.15-0"),
    ("a CoreDNS tag without its v and patch reads as a version", with_field(MINIMAL, CC + ".dns.imageTag", "1.11"),
     CC + ".dns.imageTag", "1.11"),
    ("a CoreDNS tag with a custom suffix is accepted", with_field(MINIMAL, CC + ".dns.imageTag", "v1.11.3_custom-1"),
     CC + ".dns.imageTag", "v1.11.3_custom-1"),
    ("v1beta3 extra arguments are a map of strings",
     with_field(BETA3, CC + ".apiServer.extraArgs", {"audit-log-maxage": "30"}),
     CC + ".apiServer.extraArgs", {"audit-log-maxage": "30"}),
    ("v1beta4 extra arguments are a list of name and value",
     with_field(MINIMAL, "kubeadm.init_configuration.nodeRegistration.kubeletExtraArgs", [{"name": "v", "value": "2"}]),
     "kubeadm.init_configuration.nodeRegistration.kubeletExtraArgs", [{"name": "v", "value": "2"}]),
    ("v1beta4 accepts its own fields", with_field(MINIMAL, CC + ".encryptionAlgorithm", "ECDSA-P256"),
     CC + ".encryptionAlgorithm", "ECDSA-P256"),
    ("the machine template is free-form", with_field(MINIMAL, "machine_template", {"image": "debian-12", "cpus": 4}),
     "machine_template", {"image": "debian-12", "cpus": 4}),
    ("max surge may be zero with three replicas", with_field(MINIMAL, "rollout.max_surge", 0), "rollout.max_surge", 0),
    ("max surge given as the string 0 is read as a number", with_field(MINIMAL, "rollout.max_surge", "0"),
     "rollout.max_surge", 0),
    ("max surge given as the string 1 is read as a number", with_field(MINIMAL, "rollout.max_surge", "1"),
     "rollout.max_surge", 1),
    ("rollout after is kept as the RFC 3339 string given",
     with_field(MINIMAL, "rollout.after", "2026-11-22T11:00:00+01:00"), "rollout.after", "2026-11-22T11:00:00+01:00"),
    ("a certificate expiry trigger of seven days is accepted",
     with_field(MINIMAL, "rollout.before.certificates_expiry_days", 7), "rollout.before.certificates_expiry_days", 7),
    ("certificates are renewed by rollout by default", MINIMAL, "certificates.renewal", "rollout"),
    ("certificates renewed in place within a window",
     with_field(with_field(MINIMAL, "rollout.before.certificates_expiry_days", 30), "certificates.renewal", "in_place"),
     "certificates.renewal", "in_place"),
    ("a window just shorter than a validity the configuration sets",
     with_field(with_field(MINIMAL, "rollout.before.certificates_expiry_days", 89), "kubeadm.cluster_configuration.certificateValidityPeriod",
                "2160h0m0s"), "rollout.before.certificates_expiry_days", 89),
    ("a kubelet told not to ask for its serving certificate is fine",
     with_field(MINIMAL, "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", [{"name": "rotate-server-certificates", "value": "false"}]),
     "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", [{"name": "rotate-server-certificates", "value": "false"}]),
    ("the in-place upgrade strategy is accepted", with_field(MINIMAL, "upgrade.strategy", "in_place"),
     "upgrade.strategy", "in_place"),
    ("in place or stop is the default for other changes", MINIMAL, "upgrade.other_changes", "refuse"),
    ("other changes may be rolled out", with_field(MINIMAL, "upgrade.other_changes", "rolling"), "upgrade.other_changes", "rolling"),
    ("one worker at a time by default", MINIMAL, "upgrade.workers", {"max_unavailable": 1, "groups": {}}),
    ("a worker group's own max_unavailable is kept, a group left empty gets the default",
     with_field(MINIMAL, "upgrade.workers.groups", {"md-0": {"max_unavailable": 3}, "md_1.x": None}), "upgrade.workers.groups",
     {"md-0": {"max_unavailable": 3}, "md_1.x": {"max_unavailable": 1}}),
    ("no worker is health checked by default, and workers are replaced joining the new one first",
     MINIMAL, "workers", {"health_check": None, "drain_timeout": 300.0, "max_surge": 1, "max_unavailable": 0, "external_remediation": None,
                          "groups": {}}),
    ("a group's max_surge reads as the control plane's", with_field(MINIMAL, "workers.groups", {"gpu": {"max_surge": "0", "max_unavailable": 1}}),
     "workers.groups", {"gpu": {"health_check": None, "drain_timeout": None, "max_surge": 0, "max_unavailable": 1, "external_remediation": None}}),
    ("a worker group's health check gets the health check's defaults",
     with_field(MINIMAL, "workers.groups", {"md-0": {"health_check": {"max_unhealthy": 1}}, "gpu": None}), "workers.groups",
     {"gpu": {"health_check": None, "drain_timeout": None, "max_surge": None, "max_unavailable": None, "external_remediation": None},
      "md-0": {"drain_timeout": None, "max_surge": None, "max_unavailable": None, "external_remediation": None, "health_check": {
          "unhealthy_conditions": [{"type": "Ready", "status": "Unknown", "timeout": 300.0}, {"type": "Ready", "status": "False", "timeout": 300.0}],
          "unhealthy_machine_conditions": [], "node_startup_timeout": 600.0, "max_unhealthy": 1, "unhealthy_range": None}}}),
    ("max retry zero is kept", with_field(MINIMAL, "remediation.max_retry", 0), "remediation.max_retry", 0),
    ("a Go duration becomes seconds", with_field(MINIMAL, "remediation.retry_period", "1h30m"),
     "remediation.retry_period", 5400.0),
    ("a number of seconds is a duration", with_field(MINIMAL, "remediation.min_healthy_period", 90),
     "remediation.min_healthy_period", 90.0),
    ("an endpoint name of 253 characters is accepted",
     with_field(MINIMAL, "endpoint.host", ".".join(["a" * 63] * 3 + ["b" * 61])), "endpoint.host",
     ".".join(["a" * 63] * 3 + ["b" * 61])),
    ("an endpoint name with the root's trailing dot is accepted", with_field(MINIMAL, "endpoint.host", "lb.example."),
     "endpoint.host", "lb.example."),
    ("a node startup timeout of thirty seconds given as a number is accepted",
     with_field(MINIMAL, "health_check.node_startup_timeout", 30), "health_check.node_startup_timeout", 30.0),
    ("a node startup timeout of zero turns it off", with_field(MINIMAL, "health_check.node_startup_timeout", "0"),
     "health_check.node_startup_timeout", 0.0),
    ("a node startup timeout of thirty seconds is the shortest allowed",
     with_field(MINIMAL, "health_check.node_startup_timeout", "30s"), "health_check.node_startup_timeout", 30.0),
    ("max unhealthy may be a count", with_field(MINIMAL, "health_check.max_unhealthy", 2), "health_check.max_unhealthy", 2),
    ("max unhealthy may be a percentage", with_field(MINIMAL, "health_check.max_unhealthy", "40%"),
     "health_check.max_unhealthy", "40%"),
    ("an unhealthy range is kept as written", with_field(MINIMAL, "health_check.unhealthy_range", "[1-3]"),
     "health_check.unhealthy_range", "[1-3]"),
    ("an unhealthy range of one value is accepted", with_field(MINIMAL, "health_check.unhealthy_range", "[2-2]"),
     "health_check.unhealthy_range", "[2-2]"),
    ("unhealthy conditions replace the default ones",
     with_field(MINIMAL, "health_check.unhealthy_conditions", [{"type": "DiskPressure", "status": "True", "timeout": "1m"}]),
     "health_check.unhealthy_conditions", [{"type": "DiskPressure", "status": "True", "timeout": 60.0}]),
    # a MachineHealthCheck without unhealthyNodeConditions (optional since Cluster API v1.8): no Node condition
    # checked; left out, the default ones apply
    ("an empty list of unhealthy conditions checks none", with_field(MINIMAL, "health_check.unhealthy_conditions", []),
     "health_check.unhealthy_conditions", []),
    ("no machine condition is checked unless listed", MINIMAL, "health_check.unhealthy_machine_conditions", []),
    ("machine conditions are kept with their timeouts in seconds",
     with_field(MINIMAL, "health_check.unhealthy_machine_conditions", [{"type": "EtcdMemberHealthy", "status": "Unknown", "timeout": "5m"}]),
     "health_check.unhealthy_machine_conditions", [{"type": "EtcdMemberHealthy", "status": "Unknown", "timeout": 300.0}]),
    ("external remediation is off unless asked for", MINIMAL, "remediation.external", None),
    ("an empty external remediation turns it on with every default", with_field(MINIMAL, "remediation.external", {}),
     "remediation.external", {"attempts": 3, "timeout": 600.0, "escalate": False}),
    ("external remediation keeps what is given",
     with_field(MINIMAL, "remediation.external", {"attempts": 1, "timeout": "90s", "escalate": True}),
     "remediation.external", {"attempts": 1, "timeout": 90.0, "escalate": True}),
]


def _at(document, path):
    for key in path.split("."):
        document = document[key]
    return document


@pytest.mark.parametrize("raw,path,expected", [case[1:] for case in ACCEPTED], ids=[case[0] for case in ACCEPTED])
def test_valid_input_is_normalized(raw, path, expected):
    normalized, errors = normalize_spec(raw)
    assert errors == []
    assert _at(normalized, path) == expected


# (id, raw spec, path of the one error, fragment of its rule)
REFUSED = [
    ("a spec that is not a mapping is refused", ["demo"], "", "must be a mapping"),
    ("a missing cluster name is refused", without_field(MINIMAL, "cluster_name"), "cluster_name", "is required"),
    ("a cluster name with capitals is refused", with_field(MINIMAL, "cluster_name", "Demo"), "cluster_name", "DNS-1123"),
    ("a cluster name ending in a dash is refused", with_field(MINIMAL, "cluster_name", "demo-"), "cluster_name", "DNS-1123"),
    ("a cluster name of 64 characters is refused", with_field(MINIMAL, "cluster_name", "a" * 64), "cluster_name", "DNS-1123"),
    ("a numeric cluster name is refused", with_field(MINIMAL, "cluster_name", 5), "cluster_name", "must be a string"),
    ("zero replicas are refused", with_field(MINIMAL, "replicas", 0), "replicas", ">= 1"),
    ("negative replicas are refused", with_field(MINIMAL, "replicas", -1), "replicas", ">= 1"),
    ("replicas as a string are refused", with_field(MINIMAL, "replicas", "3"), "replicas", "must be an integer"),
    ("replicas as a boolean are refused", with_field(MINIMAL, "replicas", True), "replicas", "must be an integer"),
    ("replicas as a float are refused", with_field(MINIMAL, "replicas", 3.0), "replicas", "must be an integer"),
    ("an even replica count is refused with stacked etcd", with_field(MINIMAL, "replicas", 4), "replicas", "odd"),
    ("a missing version is refused", without_field(MINIMAL, "version"), "version", "is required"),
    ("a version without a patch number is refused", with_field(MINIMAL, "version", "v1.30"), "version", "v<major>"),
    ("a version YAML read as a number is refused", with_field(MINIMAL, "version", 1.3), "version", "quote it"),
    ("a version with four numbers is refused", with_field(MINIMAL, "version", "v1.30.4.1"), "version", "v<major>"),
    ("a version with a leading zero is refused", with_field(MINIMAL, "version", "v1.030.4"), "version", "v<major>"),
    ("a version suffix without a dash or plus is refused", with_field(MINIMAL, "version", "v1.30.4beta"), "version",
     "-/+ suffix"),
    ("a missing endpoint is refused", without_field(MINIMAL, "endpoint"), "endpoint", "is required"),
    ("an endpoint without a host is refused", with_field(MINIMAL, "endpoint", {"port": 6443}), "endpoint.host",
     "is required"),
    ("an endpoint host with a space is refused", with_field(MINIMAL, "endpoint.host", "api server"), "endpoint.host",
     "IP address or a DNS name"),
    ("an endpoint host with an empty label is refused", with_field(MINIMAL, "endpoint.host", "api..example.com"),
     "endpoint.host", "IP address or a DNS name"),
    ("an endpoint port of zero is refused", with_field(MINIMAL, "endpoint.port", 0), "endpoint.port", ">= 1"),
    ("an endpoint port above 65535 is refused", with_field(MINIMAL, "endpoint.port", 65536), "endpoint.port", "<= 65535"),
    ("an endpoint port as a string is refused", with_field(MINIMAL, "endpoint.port", "6443"), "endpoint.port",
     "must be an integer"),
    ("an unknown endpoint field is refused", with_field(MINIMAL, "endpoint.scheme", "https"), "endpoint.scheme",
     "unknown field"),
    ("an unknown top-level field is refused", with_field(MINIMAL, "replica", 3), "replica", "unknown field"),
    ("a camelCase kubeadm section name is refused", with_field(MINIMAL, "kubeadm.clusterConfiguration", {}),
     "kubeadm.clusterConfiguration", "unknown field"),
    ("a short kubeadm API version is refused", with_field(MINIMAL, "kubeadm.api_version", "v1beta3"),
     "kubeadm.api_version", "must be one of"),
    ("v1beta3 is refused at v1.37, saying how to convert",
     with_field(with_field(MINIMAL, "version", "v1.37.0"), "kubeadm.api_version", V1BETA3), "kubeadm.api_version",
     "kubeadm config migrate"),
    ("a version below the supported range is refused, naming the range", with_field(MINIMAL, "version", "v1.32.9"),
     "version", "v1.33 to v1.37"),
    ("a version above the supported range is refused, naming the range", with_field(MINIMAL, "version", "v1.38.0"),
     "version", "v1.33 to v1.37"),
    ("a feature gate kubeadm removed is refused", with_field(MINIMAL, CC + ".featureGates.EtcdLearnerMode", True),
     CC + ".featureGates.EtcdLearnerMode", "no longer knows this feature gate"),
    ("a gate removed in v1.37 is refused at v1.37",
     with_field(with_field(MINIMAL, "version", "v1.37.0"), CC + ".featureGates.NodeLocalCRISocket", True),
     CC + ".featureGates.NodeLocalCRISocket", "removed in v1.37"),
    ("PublicKeysECDSA at v1.37 is refused, pointing at encryptionAlgorithm",
     with_field(with_field(MINIMAL, "version", "v1.37.0"), CC + ".featureGates.PublicKeysECDSA", True),
     CC + ".featureGates.PublicKeysECDSA", "encryptionAlgorithm"),
    ("a gate locked on may not be turned off", with_field(MINIMAL, CC + ".featureGates.NodeLocalCRISocket", False),
     CC + ".featureGates.NodeLocalCRISocket", "locked to true from v1.36"),
    ("a cluster configuration that is a list is refused", with_field(MINIMAL, CC, []), CC, "must be a mapping"),
    ("an API server section that is not a mapping is refused", with_field(MINIMAL, CC + ".apiServer", ["x"]),
     CC + ".apiServer", "must be a mapping"),
    ("an etcd section that is not a mapping is refused", with_field(MINIMAL, CC + ".etcd", "local"), CC + ".etcd",
     "must be a mapping"),
    ("a join node registration that is not a mapping is refused",
     with_field(MINIMAL, "kubeadm.join_configuration.nodeRegistration", "cp-1"),
     "kubeadm.join_configuration.nodeRegistration", "must be a mapping"),
    ("apiVersion inside a kubeadm configuration is refused", with_field(MINIMAL, CC + ".apiVersion", V1BETA3),
     CC + ".apiVersion", "set by the collection"),
    ("kind inside a kubeadm configuration is refused",
     with_field(MINIMAL, "kubeadm.join_configuration.kind", "JoinConfiguration"), "kubeadm.join_configuration.kind",
     "set by the collection"),
    ("a kubernetesVersion that disagrees with version is refused",
     with_field(MINIMAL, CC + ".kubernetesVersion", "v1.35.0"), CC + ".kubernetesVersion", "must agree with version"),
    ("a clusterName that disagrees with cluster_name is refused", with_field(MINIMAL, CC + ".clusterName", "other"),
     CC + ".clusterName", "must agree with cluster_name"),
    ("a controlPlaneEndpoint that disagrees with endpoint is refused",
     with_field(MINIMAL, CC + ".controlPlaneEndpoint", "10.0.0.101:6443"), CC + ".controlPlaneEndpoint",
     "must agree with endpoint"),
    ("a controlPlaneEndpoint without a port is refused when the port is not 6443",
     with_field(with_field(MINIMAL, "endpoint.port", 7443), CC + ".controlPlaneEndpoint", "10.0.0.100"),
     CC + ".controlPlaneEndpoint", "10.0.0.100:7443"),
    ("local and external etcd together are refused",
     with_field(with_field(MINIMAL, CC + ".etcd.external", EXTERNAL_ETCD), CC + ".etcd.local", {}), CC + ".etcd",
     "exclude each other"),
    ("external etcd without a CA file is refused",
     with_field(MINIMAL, CC + ".etcd.external", without_field(EXTERNAL_ETCD, "caFile")), CC + ".etcd.external.caFile",
     "needs caFile"),
    ("external etcd without endpoints is refused",
     with_field(MINIMAL, CC + ".etcd.external", with_field(EXTERNAL_ETCD, "endpoints", [])),
     CC + ".etcd.external.endpoints", "at least one endpoint"),
    ("an external etcd endpoint that is not a URL is refused",
     with_field(MINIMAL, CC + ".etcd.external", with_field(EXTERNAL_ETCD, "endpoints", ["10.0.0.5:2379"])),
     CC + ".etcd.external.endpoints[0]", "must be a URL"),
    ("an etcd image tag with a colon is refused", with_field(MINIMAL, CC + ".etcd.local.imageTag", "3.5:15"),
     CC + ".etcd.local.imageTag", "may hold only"),
    ("a CoreDNS tag with a plus is refused", with_field(MINIMAL, CC + ".dns.imageTag", "v1.11.3+x"),
     CC + ".dns.imageTag", "may hold only"),
    ("a CoreDNS tag that is not a version is refused", with_field(MINIMAL, CC + ".dns.imageTag", "latest"),
     CC + ".dns.imageTag", "CoreDNS version"),
    ("v1beta3 extra arguments as a list are refused",
     with_field(BETA3, CC + ".apiServer.extraArgs", [{"name": "v", "value": "2"}]), CC + ".apiServer.extraArgs",
     "map of strings"),
    ("v1beta3 extra argument values that are numbers are refused",
     with_field(BETA3, CC + ".scheduler.extraArgs", {"v": 2}), CC + ".scheduler.extraArgs", "map of strings"),
    ("v1beta4 extra arguments as a map are refused",
     with_field(MINIMAL, CC + ".controllerManager.extraArgs", {"v": "2"}), CC + ".controllerManager.extraArgs",
     "list of {name, value}"),
    ("a v1beta4 kubelet extra argument without a value is refused",
     with_field(MINIMAL, "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", [{"name": "v"}]),
     "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", "list of {name, value}"),
    ("a v1beta4-only field is refused with v1beta3", with_field(BETA3, CC + ".encryptionAlgorithm", "RSA-2048"),
     CC + ".encryptionAlgorithm", "needs kubeadm.api_version kubeadm.k8s.io/v1beta4"),
    ("a field v1beta4 dropped is refused with v1beta4", with_field(MINIMAL, CC + ".apiServer.timeoutForControlPlane", "4m"),
     CC + ".apiServer.timeoutForControlPlane", "needs kubeadm.api_version kubeadm.k8s.io/v1beta3"),
    ("an unknown encryption algorithm is refused", with_field(MINIMAL, CC + ".encryptionAlgorithm", "RSA-1024"),
     CC + ".encryptionAlgorithm", "must be one of"),
    ("a certificate key in the init configuration is refused",
     with_field(MINIMAL, "kubeadm.init_configuration.certificateKey", "ab" * 32),
     "kubeadm.init_configuration.certificateKey", "is a secret"),
    ("a bootstrap token value is refused",
     with_field(MINIMAL, "kubeadm.init_configuration.bootstrapTokens", [{"ttl": "1h"}, {"token": "abcdef.0123456789abcdef"}]),
     "kubeadm.init_configuration.bootstrapTokens[1].token", "is a secret"),
    ("a discovery token in the join configuration is refused",
     with_field(MINIMAL, "kubeadm.join_configuration.discovery.bootstrapToken.token", "abcdef.0123456789abcdef"),
     "kubeadm.join_configuration.discovery.bootstrapToken.token", "is a secret"),
    ("a machine template that is a list is refused", with_field(MINIMAL, "machine_template", ["debian"]),
     "machine_template", "must be a mapping"),
    ("a rollout strategy other than RollingUpdate is refused", with_field(MINIMAL, "rollout.strategy", "OnDelete"),
     "rollout.strategy", "RollingUpdate"),
    ("a max surge of two is refused", with_field(MINIMAL, "rollout.max_surge", 2), "rollout.max_surge", "0 or 1"),
    ("a max surge percentage is refused", with_field(MINIMAL, "rollout.max_surge", "50%"), "rollout.max_surge", "0 or 1"),
    ("a max surge given as a boolean is refused", with_field(MINIMAL, "rollout.max_surge", True), "rollout.max_surge",
     "0 or 1"),
    ("a max surge of zero with one replica is refused",
     with_field(with_field(MINIMAL, "replicas", 1), "rollout.max_surge", 0), "rollout.max_surge", "replicas >= 3"),
    ("rollout after in words is refused", with_field(MINIMAL, "rollout.after", "tomorrow"), "rollout.after", "RFC 3339"),
    ("rollout after without a time is refused", with_field(MINIMAL, "rollout.after", "2026-11-22"), "rollout.after",
     "RFC 3339"),
    ("a certificate expiry trigger of six days is refused",
     with_field(MINIMAL, "rollout.before.certificates_expiry_days", 6), "rollout.before.certificates_expiry_days", ">= 7"),
    ("a certificate expiry trigger as a string is refused",
     with_field(MINIMAL, "rollout.before.certificates_expiry_days", "30"), "rollout.before.certificates_expiry_days",
     "must be an integer"),
    ("an unknown rollout trigger is refused", with_field(MINIMAL, "rollout.before.days", 30), "rollout.before.days",
     "unknown field"),
    ("certificates renewed in place need the window to renew them in", with_field(MINIMAL, "certificates.renewal", "in_place"),
     "certificates.renewal", "in_place needs rollout.before.certificates_expiry_days: the window in which a machine's certificates are renewed"),
    ("a kubelet asking for its serving certificate is refused, as nothing approves it",
     with_field(MINIMAL, "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", [{"name": "rotate-server-certificates", "value": "true"}]),
     "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs", "rotate-server-certificates: the kubelet would request its serving"),
    ("a kubelet asking for its serving certificate is refused in a v1beta3 map too",
     with_field(with_field(MINIMAL, "kubeadm.api_version", "kubeadm.k8s.io/v1beta3"), "kubeadm.init_configuration.nodeRegistration.kubeletExtraArgs",
                {"rotate-server-certificates": "true"}),
     "kubeadm.init_configuration.nodeRegistration.kubeletExtraArgs", "nothing approves"),
    ("an unknown renewal is refused", with_field(MINIMAL, "certificates.renewal", "renew"), "certificates.renewal", "rollout, in_place"),
    ("a window as long as the certificates' validity never ends", with_field(MINIMAL, "rollout.before.certificates_expiry_days", 365),
     "rollout.before.certificates_expiry_days", "must be less than the certificates' validity (365 days): new certificates would be within it already"),
    ("a window as long as a validity the configuration sets never ends",
     with_field(with_field(MINIMAL, "rollout.before.certificates_expiry_days", 90), "kubeadm.cluster_configuration.certificateValidityPeriod",
                "2160h0m0s"), "rollout.before.certificates_expiry_days", "(90 days)"),
    ("an unknown upgrade strategy is refused", with_field(MINIMAL, "upgrade.strategy", "inplace"), "upgrade.strategy",
     "rolling, in_place"),
    ("other changes neither refused nor rolled out are refused", with_field(MINIMAL, "upgrade.other_changes", "fallback"),
     "upgrade.other_changes", "refuse, rolling"),
    ("no worker at a time is refused", with_field(MINIMAL, "upgrade.workers.max_unavailable", 0), "upgrade.workers.max_unavailable",
     ">= 1"),
    ("a percentage of workers is refused", with_field(MINIMAL, "upgrade.workers.max_unavailable", "25%"),
     "upgrade.workers.max_unavailable", "must be an integer"),
    ("worker groups as a list are refused", with_field(MINIMAL, "upgrade.workers.groups", ["md-0"]), "upgrade.workers.groups",
     "must be a mapping"),
    ("a worker group name that is no label value is refused", with_field(MINIMAL, "upgrade.workers.groups", {"md 0": {}}),
     "upgrade.workers.groups.md 0", "label value"),
    ("a worker group's zero max_unavailable is refused", with_field(MINIMAL, "upgrade.workers.groups", {"md-0": {"max_unavailable": 0}}),
     "upgrade.workers.groups.md-0.max_unavailable", ">= 1"),
    ("an unknown worker group setting is refused", with_field(MINIMAL, "upgrade.workers.groups", {"md-0": {"max_surge": 1}}),
     "upgrade.workers.groups.md-0.max_surge", "unknown field"),
    ("a worker group's external remediation of no attempt is refused",
     with_field(MINIMAL, "workers.groups", {"md-0": {"external_remediation": {"attempts": 0}}}),
     "workers.groups.md-0.external_remediation.attempts", ">= 1"),
    ("the workers' external remediation with a zero timeout is refused", with_field(MINIMAL, "workers.external_remediation", {"timeout": "0s"}),
     "workers.external_remediation.timeout", "longer than 0s"),
    ("a workers' health check on machine conditions is refused: a worker runs no control plane pods",
     with_field(MINIMAL, "workers.health_check", {"unhealthy_machine_conditions": [{"type": "EtcdMemberHealthy", "status": "False", "timeout": "5m"}]}),
     "workers.health_check.unhealthy_machine_conditions", "a worker runs no control plane pods"),
    ("a worker group's bad health check budget is refused", with_field(MINIMAL, "workers.groups", {"md-0": {"health_check": {"max_unhealthy": "10"}}}),
     "workers.groups.md-0.health_check.max_unhealthy", "percentage"),
    ("an unknown workers setting is refused", with_field(MINIMAL, "workers.max_unhealthy", 1), "workers.max_unhealthy", "unknown field"),
    ("a negative max retry is refused", with_field(MINIMAL, "remediation.max_retry", -1), "remediation.max_retry", ">= 0"),
    ("a negative retry period is refused", with_field(MINIMAL, "remediation.retry_period", "-5m"),
     "remediation.retry_period", "must be a duration"),
    ("a duration in days is refused", with_field(MINIMAL, "remediation.min_healthy_period", "1d"),
     "remediation.min_healthy_period", "must be a duration"),
    ("no external remediation attempt at all is refused", with_field(MINIMAL, "remediation.external.attempts", 0),
     "remediation.external.attempts", ">= 1"),
    ("an external remediation attempt count as a string is refused",
     with_field(MINIMAL, "remediation.external.attempts", "3"), "remediation.external.attempts", "must be an integer"),
    ("an external remediation timeout that is not a duration is refused",
     with_field(MINIMAL, "remediation.external.timeout", "ten minutes"), "remediation.external.timeout", "must be a duration"),
    ("an external remediation timeout of zero is refused", with_field(MINIMAL, "remediation.external.timeout", "0s"),
     "remediation.external.timeout", "longer than 0s"),
    ("an external remediation escalation as a string is refused",
     with_field(MINIMAL, "remediation.external.escalate", "yes"), "remediation.external.escalate", "true or false"),
    ("an unknown external remediation field is refused", with_field(MINIMAL, "remediation.external.tasks", "power.yml"),
     "remediation.external.tasks", "unknown field"),
    ("external remediation as a list is refused", with_field(MINIMAL, "remediation.external", ["power_cycle"]),
     "remediation.external", "must be a mapping"),
    ("a condition status YAML read as a boolean is refused",
     with_field(MINIMAL, "health_check.unhealthy_conditions", [{"type": "Ready", "status": True, "timeout": "5m"}]),
     "health_check.unhealthy_conditions[0].status", "quote it"),
    ("a lower-case condition status is refused",
     with_field(MINIMAL, "health_check.unhealthy_conditions", [{"type": "Ready", "status": "false", "timeout": "5m"}]),
     "health_check.unhealthy_conditions[0].status", "True, False or Unknown"),
    ("a condition without a timeout is refused",
     with_field(MINIMAL, "health_check.unhealthy_conditions",
                [{"type": "Ready", "status": "False", "timeout": "5m"}, {"type": "Ready", "status": "Unknown"}]),
     "health_check.unhealthy_conditions[1].timeout", "is required"),
    ("a machine condition the health check itself sets is refused",
     with_field(MINIMAL, "health_check.unhealthy_machine_conditions", [{"type": "HealthCheckSucceeded", "status": "False", "timeout": "5m"}]),
     "health_check.unhealthy_machine_conditions[0].type", "its own verdicts or summaries"),
    ("a machine condition the collection does not set is refused",
     with_field(MINIMAL, "health_check.unhealthy_machine_conditions", [{"type": "InfrastructureReady", "status": "False", "timeout": "5m"}]),
     "health_check.unhealthy_machine_conditions[0].type", "must be a machine condition the collection sets: APIServerPodHealthy"),
    ("a condition with an empty type is refused",
     with_field(MINIMAL, "health_check.unhealthy_conditions", [{"type": "", "status": "False", "timeout": "5m"}]),
     "health_check.unhealthy_conditions[0].type", "must not be empty"),
    ("a condition with an unknown field is refused",
     with_field(MINIMAL, "health_check.unhealthy_conditions",
                [{"type": "Ready", "status": "False", "timeout": "5m", "reason": "x"}]),
     "health_check.unhealthy_conditions[0].reason", "unknown field"),
    ("an endpoint name of 254 characters is refused",
     with_field(MINIMAL, "endpoint.host", ".".join(["a" * 63] * 3 + ["b" * 62])), "endpoint.host",
     "must be an IP address or a DNS name"),
    ("a node startup timeout of one second is refused", with_field(MINIMAL, "health_check.node_startup_timeout", 1),
     "health_check.node_startup_timeout", "at least 30s"),
    ("a node startup timeout under thirty seconds is refused",
     with_field(MINIMAL, "health_check.node_startup_timeout", "10s"), "health_check.node_startup_timeout", "at least 30s"),
    ("a negative node startup timeout is refused", with_field(MINIMAL, "health_check.node_startup_timeout", -1),
     "health_check.node_startup_timeout", "must be a duration"),
    ("max unhealthy as a bare number string is refused", with_field(MINIMAL, "health_check.max_unhealthy", "10"),
     "health_check.max_unhealthy", "percentage"),
    ("a negative max unhealthy is refused", with_field(MINIMAL, "health_check.max_unhealthy", -1),
     "health_check.max_unhealthy", "integer >= 0"),
    ("an unhealthy range without brackets is refused", with_field(MINIMAL, "health_check.unhealthy_range", "1-3"),
     "health_check.unhealthy_range", "[a-b]"),
    ("an unhealthy range that runs backwards is refused", with_field(MINIMAL, "health_check.unhealthy_range", "[3-1]"),
     "health_check.unhealthy_range", "a <= b"),
    ("an unhealthy range with a negative bound is refused", with_field(MINIMAL, "health_check.unhealthy_range", "[-1-3]"),
     "health_check.unhealthy_range", "[a-b]"),
]


@pytest.mark.parametrize("raw,path,rule", [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_bad_input_is_refused_naming_the_field_and_the_rule(raw, path, rule):
    normalized, errors = normalize_spec(raw)
    assert normalized is None
    assert [e["path"] for e in errors] == [path]
    assert rule in errors[0]["rule"]


def test_every_error_is_reported_at_once():
    raw = with_field(MINIMAL, "cluster_name", "Bad_Name")
    raw = with_field(raw, "replicas", 2)
    raw = with_field(raw, "endpoint.port", 0)
    raw = with_field(raw, "rollout.max_surge", 3)
    raw = with_field(raw, "health_check.unhealthy_conditions", [{"type": "Ready", "status": "maybe", "timeout": "soon"}])
    raw = with_field(raw, "colour", "blue")
    errors = normalize_spec(raw)[1]
    assert sorted(e["path"] for e in errors) == [
        "cluster_name",
        "colour",
        "endpoint.port",
        "health_check.unhealthy_conditions[0].status",
        "health_check.unhealthy_conditions[0].timeout",
        "replicas",
        "rollout.max_surge",
    ]


def test_an_error_carries_the_value_given():
    errors = normalize_spec(with_field(MINIMAL, "rollout.max_surge", 2))[1]
    assert errors == [{"path": "rollout.max_surge", "rule": "must be 0 or 1", "value": 2}]


def test_a_refused_secret_is_not_echoed_in_the_error():
    errors = normalize_spec(with_field(MINIMAL, "kubeadm.init_configuration.certificateKey", "ab" * 32))[1]
    assert "ab" * 32 not in repr(errors)


FIELDS = [
    "cluster_name", "replicas", "version", "endpoint", "endpoint.host", "endpoint.port", "kubeadm", "kubeadm.api_version",
    CC, CC + ".etcd", CC + ".etcd.local", CC + ".etcd.external", CC + ".etcd.external.endpoints", CC + ".dns",
    CC + ".dns.imageTag", CC + ".apiServer", CC + ".apiServer.extraArgs", CC + ".kubernetesVersion",
    "kubeadm.init_configuration", "kubeadm.init_configuration.bootstrapTokens", "kubeadm.join_configuration",
    "kubeadm.join_configuration.nodeRegistration", "machine_template", "rollout", "rollout.max_surge", "rollout.after",
    "rollout.before", "upgrade", "upgrade.other_changes", "certificates", "certificates.renewal", "upgrade.workers", "upgrade.workers.groups", "remediation",
    "remediation.retry_period", "remediation.external",
    "remediation.external.attempts", "remediation.external.timeout", "remediation.external.escalate", "health_check",
    "health_check.unhealthy_conditions", "health_check.max_unhealthy", "health_check.unhealthy_range",
]


@pytest.mark.parametrize("path", FIELDS)
def test_no_value_of_any_type_makes_validation_crash(path):
    for value in ODD_VALUES:
        normalized, errors = normalize_spec(with_field(MINIMAL, path, value))
        assert (normalized is None) == bool(errors)
        assert all(e["path"] for e in errors)


@pytest.mark.parametrize(
    "etcd,external",
    [(None, False), ({}, False), ({"local": {"dataDir": "/var/lib/etcd"}}, False), ({"external": EXTERNAL_ETCD}, True)],
    ids=["without an etcd section", "with an empty etcd section", "with local etcd", "with external etcd"],
)
def test_etcd_is_external_only_when_the_cluster_configuration_says_so(etcd, external):
    config = {} if etcd is None else {"etcd": etcd}
    normalized = spec(kubeadm={"api_version": V1BETA3, "cluster_configuration": config,
                               "init_configuration": {}, "join_configuration": {}})
    assert etcd_is_external(normalized) is external


def test_the_health_check_alone_gets_the_default_rules():
    rules, errors = normalize_health_check(None)
    assert errors == []
    assert rules == spec()["health_check"]


def test_the_health_check_alone_reports_paths_under_the_prefix_given():
    rules, errors = normalize_health_check({"max_unhealthy": "10", "unhealthy_range": "[1-2]"}, path="rules")
    assert rules is None
    assert [(e["path"], e["value"]) for e in errors] == [("rules.max_unhealthy", "10")]


def test_the_worked_example_of_the_docs_is_a_valid_spec():
    """docs/spec.md's worked example, its inventory variables filled in as the sandbox's inventory fills them."""
    import os
    import re

    import yaml

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "spec.md"), encoding="utf-8") as handle:
        text = handle.read()
    block = re.search(r"## A worked example.*?```yaml\n(.*?)```", text, re.S).group(1)
    variables = yaml.safe_load(block.replace("{{ sandbox_endpoint_host }}", "172.31.250.100")
                               .replace("{{ sandbox_mirror_dir }}", "/srv/kcp-sandbox/kcp/mirror"))
    normalized, errors = normalize_spec(variables["kcp"])
    assert errors == [] and normalized["replicas"] == 3 and normalized["endpoint"] == {"host": "172.31.250.100", "port": 6443}


TAG_CHARACTERS = "may hold only a-z, A-Z, 0-9, '-', '_' and '.'"
GROUP_RULE = ("must be a worker group name: a Kubernetes label value (at most 63 characters a-z, A-Z, 0-9, '-', '_' and '.', "
              "starting and ending with a letter or digit)")
EXTERNAL_ETCD_SPEC = with_field(MINIMAL, "replicas", 2)

# (id, raw spec, every error as (path, rule, value))
EXACT = [
    ("a cluster name that is no DNS-1123 label", with_field(MINIMAL, "cluster_name", "Demo"),
     [("cluster_name", "must be a DNS-1123 label: at most 63 characters a-z, 0-9 and '-', starting and ending with a letter or digit",
       "Demo")]),
    ("a version YAML read as a number", with_field(MINIMAL, "version", 1.3),
     [("version", "must be a string such as v1.36.4 (quote it in YAML)", 1.3)]),
    ("a version without a patch", with_field(MINIMAL, "version", "v1.30"),
     [("version", "must be v<major>.<minor>.<patch> with an optional -/+ suffix", "v1.30")]),
    ("a version older than the supported ones", with_field(MINIMAL, "version", "v1.32.0"),
     [("version", "must be a supported Kubernetes version: v1.33 to v1.37", "v1.32.0")]),
    ("an empty endpoint host", with_field(MINIMAL, "endpoint.host", ""), [("endpoint.host", "must be an IP address or a DNS name", "")]),
    ("an endpoint host with a space", with_field(MINIMAL, "endpoint.host", "api server"),
     [("endpoint.host", "must be an IP address or a DNS name", "api server")]),
    ("a label ending in a dash before the root's dot", with_field(MINIMAL, "endpoint.host", "api.example-."),
     [("endpoint.host", "must be an IP address or a DNS name", "api.example-.")]),
    ("a node startup timeout under thirty seconds", with_field(MINIMAL, "health_check.node_startup_timeout", "10s"),
     [("health_check.node_startup_timeout", "must be 0 (off) or at least 30s", "10s")]),
    ("an external remediation timeout of zero", with_field(MINIMAL, "remediation.external.timeout", "0s"),
     [("remediation.external.timeout", "must be longer than 0s", "0s")]),
    ("a lower-case condition status",
     with_field(MINIMAL, "health_check.unhealthy_conditions", [{"type": "Ready", "status": "false", "timeout": "5m"}]),
     [("health_check.unhealthy_conditions[0].status", "must be the string True, False or Unknown (quote it in YAML)", "false")]),
    ("worker groups as a list", with_field(MINIMAL, "upgrade.workers.groups", ["md-0"]),
     [("upgrade.workers.groups", "must be a mapping of worker group names to their settings", ["md-0"])]),
    ("worker group names that are no label values, in name order",
     with_field(MINIMAL, "upgrade.workers.groups", {"md 1": None, "md 0": {"max_unavailable": 2}}),
     [("upgrade.workers.groups.md 0", GROUP_RULE, "md 0"), ("upgrade.workers.groups.md 1", GROUP_RULE, "md 1")]),
    ("local and external etcd together", with_field(MINIMAL, CC + ".etcd", {"local": {}, "external": EXTERNAL_ETCD}),
     [(CC + ".etcd", "local and external exclude each other: set one of them", ["external", "local"])]),
    ("local etcd that is no mapping", with_field(MINIMAL, CC + ".etcd.local", "stacked"),
     [(CC + ".etcd.local", "must be a mapping", "stacked")]),
    ("external etcd that is no mapping", with_field(EXTERNAL_ETCD_SPEC, CC + ".etcd.external", "remote"),
     [(CC + ".etcd.external", "must be a mapping", "remote")]),
    ("external etcd without endpoints or a key file",
     with_field(EXTERNAL_ETCD_SPEC, CC + ".etcd.external", dict(without_field(EXTERNAL_ETCD, "keyFile"), endpoints=[])),
     [(CC + ".etcd.external.endpoints", "external etcd needs at least one endpoint URL", []),
      (CC + ".etcd.external.keyFile", "external etcd needs keyFile (a path on the machines)", None)]),
    ("an external etcd endpoint without its scheme",
     with_field(EXTERNAL_ETCD_SPEC, CC + ".etcd.external", dict(EXTERNAL_ETCD, endpoints=["10.0.0.5:2379"])),
     [(CC + ".etcd.external.endpoints[0]", "must be a URL such as https://10.0.0.5:2379", "10.0.0.5:2379")]),
    ("an etcd image tag with a colon", with_field(MINIMAL, CC + ".etcd.local.imageTag", "3.5:15"),
     [(CC + ".etcd.local.imageTag", TAG_CHARACTERS, "3.5:15")]),
    ("a CoreDNS tag with a plus", with_field(MINIMAL, CC + ".dns.imageTag", "v1.11.3+x"), [(CC + ".dns.imageTag", TAG_CHARACTERS, "v1.11.3+x")]),
    ("a CoreDNS tag that is no version", with_field(MINIMAL, CC + ".dns.imageTag", "latest"),
     [(CC + ".dns.imageTag", "must read as a CoreDNS version such as v1.11.3", "latest")]),
    ("an even replica count with stacked etcd", with_field(MINIMAL, "replicas", 4),
     [("replicas", "must be odd with stacked etcd (an even count tolerates no more failures than one less); any count is allowed "
                   "with external etcd", 4)]),
    ("a max surge of zero with one replica", with_field(with_field(MINIMAL, "replicas", 1), "rollout.max_surge", 0),
     [("rollout.max_surge", "0 needs replicas >= 3 (removing first must keep etcd quorum)", 0)]),
    ("a kubernetesVersion other than version", with_field(MINIMAL, CC + ".kubernetesVersion", "v1.36.5"),
     [(CC + ".kubernetesVersion", "must agree with version (v1.36.4) or be left out", "v1.36.5")]),
    ("a clusterName other than cluster_name", with_field(MINIMAL, CC + ".clusterName", "other"),
     [(CC + ".clusterName", "must agree with cluster_name (demo) or be left out", "other")]),
    ("a controlPlaneEndpoint on another port", with_field(MINIMAL, CC + ".controlPlaneEndpoint", "10.0.0.100:7443"),
     [(CC + ".controlPlaneEndpoint", "must agree with endpoint (10.0.0.100:6443) or be left out", "10.0.0.100:7443")]),
    ("v1beta3 extra arguments as a list", with_field(BETA3, CC + ".apiServer.extraArgs", [{"name": "v", "value": "2"}]),
     [(CC + ".apiServer.extraArgs", "with kubeadm.k8s.io/v1beta3 must be a map of strings (a list of {name, value} needs "
                                    "kubeadm.k8s.io/v1beta4)", [{"name": "v", "value": "2"}])]),
    ("v1beta4 extra arguments as a map", with_field(MINIMAL, CC + ".apiServer.extraArgs", {"v": "2"}),
     [(CC + ".apiServer.extraArgs", "with kubeadm.k8s.io/v1beta4 must be a list of {name, value} strings (or set "
                                    "kubeadm.api_version to kubeadm.k8s.io/v1beta3 to write a map)", {"v": "2"})]),
    ("v1beta3 with a kubeadm that no longer reads it", with_field(with_field(MINIMAL, "version", "v1.37.1"), "kubeadm.api_version", V1BETA3),
     [("kubeadm.api_version", "kubeadm v1.37.1 no longer reads kubeadm.k8s.io/v1beta3: convert the configuration with `kubeadm "
                              "config migrate` (kubeadm v1.36 reads both) and set kubeadm.api_version to kubeadm.k8s.io/v1beta4",
       V1BETA3)]),
    ("a kind the collection sets", with_field(MINIMAL, "kubeadm.init_configuration.kind", "InitConfiguration"),
     [("kubeadm.init_configuration.kind", "is set by the collection from kubeadm.api_version: leave it out", "InitConfiguration")]),
    ("a secret, without its value", with_field(MINIMAL, "kubeadm.join_configuration.controlPlane.certificateKey", "ab" * 32),
     [("kubeadm.join_configuration.controlPlane.certificateKey",
       "is a secret: leave it out, the collection makes tokens and certificate keys for each run", None)]),
    ("a v1beta4 field with v1beta3", with_field(BETA3, CC + ".encryptionAlgorithm", "RSA-2048"),
     [(CC + ".encryptionAlgorithm", "needs kubeadm.api_version kubeadm.k8s.io/v1beta4 (this spec uses kubeadm.k8s.io/v1beta3)",
       "RSA-2048")]),
]


@pytest.mark.parametrize("raw,expected", [case[1:] for case in EXACT], ids=["%s is refused with its exact rule" % case[0] for case in EXACT])
def test_each_refusal_names_the_path_the_exact_rule_and_the_value_given(raw, expected):
    normalized, errors = normalize_spec(raw)
    assert normalized is None
    assert [(e["path"], e["rule"], e["value"]) for e in errors] == expected


SECTIONS = [CC + "." + key for key in ("apiServer", "controllerManager", "scheduler", "etcd", "dns", "networking", "featureGates")] + [
    "kubeadm.init_configuration." + key for key in ("nodeRegistration", "localAPIEndpoint", "patches")] + [
    "kubeadm.join_configuration." + key for key in ("nodeRegistration", "discovery", "controlPlane", "patches")]


@pytest.mark.parametrize("path", SECTIONS, ids=["%s must be a mapping" % path for path in SECTIONS])
def test_every_section_kubeadm_reads_as_a_mapping_must_be_one(path):
    assert normalize_spec(with_field(MINIMAL, path, ["x"]))[1] == [{"path": path, "rule": "must be a mapping", "value": ["x"]}]


ONLY_V1BETA4 = [CC + "." + key for key in ("encryptionAlgorithm", "certificateValidityPeriod", "caCertificateValidityPeriod", "proxy",
                                           "dns.disabled", "apiServer.extraEnvs", "controllerManager.extraEnvs",
                                           "scheduler.extraEnvs", "etcd.local.extraEnvs")] + [
    "kubeadm.%s.%s" % (config, key) for config in ("init_configuration", "join_configuration")
    for key in ("dryRun", "timeouts", "nodeRegistration.imagePullSerial")]
ONLY_V1BETA3 = [CC + ".apiServer.timeoutForControlPlane", "kubeadm.join_configuration.discovery.timeout"]


@pytest.mark.parametrize(
    "raw,path,needed,used",
    [(BETA3, path, V1BETA4, V1BETA3) for path in ONLY_V1BETA4] + [(MINIMAL, path, V1BETA3, V1BETA4) for path in ONLY_V1BETA3],
    ids=["%s needs v1beta4" % path for path in ONLY_V1BETA4] + ["%s needs v1beta3" % path for path in ONLY_V1BETA3],
)
def test_a_field_of_one_kubeadm_api_version_is_refused_under_the_other(raw, path, needed, used):
    assert normalize_spec(with_field(raw, path, "RSA-2048"))[1] == [
        {"path": path, "rule": "needs kubeadm.api_version %s (this spec uses %s)" % (needed, used), "value": "RSA-2048"}]


SECRETS = ["kubeadm.init_configuration.certificateKey", "kubeadm.init_configuration.bootstrapTokens[0].token",
           "kubeadm.join_configuration.controlPlane.certificateKey", "kubeadm.join_configuration.discovery.bootstrapToken.token",
           "kubeadm.join_configuration.discovery.tlsBootstrapToken"]


@pytest.mark.parametrize("path", SECRETS, ids=["%s is a secret" % path for path in SECRETS])
def test_every_secret_the_collection_makes_is_refused(path):
    raw = with_field(MINIMAL, "kubeadm.init_configuration.bootstrapTokens", [{}]) if "[0]" in path else MINIMAL
    errors = normalize_spec(with_field(raw, path, "abcdef.0123456789abcdef"))[1]
    assert [(e["path"], e["rule"]) for e in errors] == [(path, "is a secret: leave it out, the collection makes tokens and certificate "
                                                               "keys for each run")]


EXTRA_ARGS = [CC + ".apiServer.extraArgs", CC + ".controllerManager.extraArgs", CC + ".scheduler.extraArgs", CC + ".etcd.local.extraArgs",
              "kubeadm.init_configuration.nodeRegistration.kubeletExtraArgs", "kubeadm.join_configuration.nodeRegistration.kubeletExtraArgs"]


@pytest.mark.parametrize("path", EXTRA_ARGS, ids=["%s follows the kubeadm API version" % path for path in EXTRA_ARGS])
def test_every_place_kubeadm_takes_extra_arguments_follows_the_api_version(path):
    assert normalize_spec(with_field(MINIMAL, path, [{"name": "v", "value": "2"}]))[1] == []
    assert normalize_spec(with_field(BETA3, path, {"v": "2"}))[1] == []
    assert [e["path"] for e in normalize_spec(with_field(MINIMAL, path, {"v": "2"}))[1]] == [path]
    assert [e["path"] for e in normalize_spec(with_field(BETA3, path, [{"name": "v", "value": "2"}]))[1]] == [path]


@pytest.mark.parametrize("algorithm", ["RSA-2048", "RSA-3072", "RSA-4096", "ECDSA-P256"])
def test_every_encryption_algorithm_kubeadm_knows_is_accepted(algorithm):
    normalized, errors = normalize_spec(with_field(MINIMAL, CC + ".encryptionAlgorithm", algorithm))
    assert errors == [] and normalized["kubeadm"]["cluster_configuration"]["encryptionAlgorithm"] == algorithm


def test_an_external_remediation_timeout_of_one_second_is_longer_than_zero():
    normalized, errors = normalize_spec(with_field(MINIMAL, "remediation.external.timeout", "1s"))
    assert errors == [] and normalized["remediation"]["external"]["timeout"] == 1.0


@pytest.mark.parametrize("tag,version", [("v1.11.3", (1, 11, 3)), ("1.11", (1, 11, 0)), ("v1.12.0_custom-1", (1, 12, 0)), ("latest", None),
                                         (None, None)],
                         ids=["a full tag", "a tag without its v and patch has patch 0", "a custom suffix is ignored",
                              "a tag that is no version", "no tag"])
def test_a_coredns_tag_reads_as_major_minor_patch(tag, version):
    assert coredns_tag_version(tag) == version


@pytest.mark.parametrize(
    "workers,path,expected",
    [
        ({"w-1": "md-0", "gpu-1": "gpu_pool.a"}, "workers", []),
        ({"w-1": "z z", "w-2": "a a", "w-3": "md-0"}, "workers", [("workers.w-1", GROUP_RULE, "z z"), ("workers.w-2", GROUP_RULE, "a a")]),
        ({"w-1": None}, "kcp_workers", [("kcp_workers.w-1", GROUP_RULE, None)]),
        (["w-1"], "workers", [("workers", "must be a mapping of inventory hosts to their worker group", ["w-1"])]),
    ],
    ids=["label values name groups", "each bad group at its host, in host order", "a host without a group, under the path given",
         "a list is no mapping of hosts"],
)
def test_the_worker_groups_of_the_inventory(workers, path, expected):
    assert [(e["path"], e["rule"], e["value"]) for e in worker_group_errors(workers, path)] == expected


def test_the_worker_groups_of_the_inventory_are_placed_under_workers_by_default():
    assert [e["path"] for e in worker_group_errors({"w-1": "md 0"})] == ["workers.w-1"]


def test_the_health_check_alone_reports_paths_under_health_check_by_default():
    assert [e["path"] for e in normalize_health_check({"max_unhealthy": "10"})[1]] == ["health_check.max_unhealthy"]
