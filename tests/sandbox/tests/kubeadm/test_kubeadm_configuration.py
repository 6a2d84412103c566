# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm's configuration files, release by release (kubeadm-reference.md §6, §1.6)."""

import pytest
import yaml

from kcpsim.kubeadm import config
from kcpsim.kubeadm.release import Release

R135, R136, R137 = Release.of("v1.35.9"), Release.of("v1.36.4"), Release.of("v1.37.1")


def doc(api_version, kind, **fields):
    return yaml.safe_dump(dict({"apiVersion": api_version, "kind": kind}, **fields))


V3 = "kubeadm.k8s.io/v1beta3"
V4 = "kubeadm.k8s.io/v1beta4"


@pytest.mark.parametrize("release, text, accepted, fragment", [
    (R135, doc(V3, "InitConfiguration"), True, ""),
    (R136, doc(V3, "ClusterConfiguration"), True, ""),
    (R137, doc(V3, "ClusterConfiguration"), False,
     'your configuration file uses an old API spec: "kubeadm.k8s.io/v1beta3" \\(kind: "ClusterConfiguration"\\). '
     "Please use kubeadm v1.36 instead and run 'kubeadm config migrate --old-config old.yaml --new-config "
     "new.yaml', which will write the new, similar spec using a newer API version."),
    (R137, doc(V4, "ClusterConfiguration"), True, ""),
    (R135, doc(V4, "JoinConfiguration"), True, ""),
    (R137, doc("kubeadm.k8s.io/v1beta2", "InitConfiguration"), False,
     'old API spec: "kubeadm.k8s.io/v1beta2" \\(kind: "InitConfiguration"\\). Please use kubeadm v1.22 instead'),
    (R136, doc(V3, "ResetConfiguration"), False, 'no kind "ResetConfiguration" is registered'),
    (R136, doc(V3, "UpgradeConfiguration"), False, 'no kind "UpgradeConfiguration" is registered'),
    (R137, doc(V4, "UpgradeConfiguration"), True, ""),
    (R137, doc(V4, "InitConfiguration") + "---\n" + doc(V4, "InitConfiguration"), False, "specified twice"),
    (R137, "kind: InitConfiguration\n", False, "kind and apiVersion are mandatory"),
], ids=[
    "1.35 reads v1beta3",
    "1.36 still reads v1beta3",
    "1.37 refuses v1beta3 with advice to migrate with kubeadm v1.36",
    "1.37 reads v1beta4",
    "1.35 reads v1beta4",
    "v1beta2 is refused with advice to migrate with kubeadm v1.22",
    "ResetConfiguration exists only in v1beta4",
    "UpgradeConfiguration exists only in v1beta4",
    "1.37 reads UpgradeConfiguration",
    "the same kind twice is refused",
    "a document without apiVersion is refused",
])
def test_which_documents_a_release_reads(release, text, accepted, fragment):
    if accepted:
        assert config.read_documents(text, release).by_kind
    else:
        with pytest.raises(config.ConfigLoadError, match=fragment):
            config.read_documents(text, release)


def test_v1beta3_is_deprecated_up_to_1_36_with_a_warning():
    docs = config.read_documents(doc(V3, "ClusterConfiguration"), R136)
    assert any("deprecated" in w for w in docs.warnings)
    assert not config.read_documents(doc(V4, "ClusterConfiguration"), R136).warnings


@pytest.mark.parametrize("release, text, expected", [
    (R136, doc(V3, "ClusterConfiguration", apiServer={"extraArgs": {"v": "2", "audit-log-path": "/a"}}),
     [{"name": "audit-log-path", "value": "/a"}, {"name": "v", "value": "2"}]),
    (R137, doc(V4, "ClusterConfiguration", apiServer={"extraArgs": [{"name": "v", "value": "2"},
                                                                    {"name": "v", "value": "3"}]}),
     [{"name": "v", "value": "2"}, {"name": "v", "value": "3"}]),
], ids=["v1beta3 extraArgs is a map, read into a sorted list",
        "v1beta4 extraArgs is a list that may repeat a name"])
def test_extra_args_become_lists(release, text, expected):
    docs = config.read_documents(text, release)
    assert docs.get("ClusterConfiguration")["apiServer"]["extraArgs"] == expected


@pytest.mark.parametrize("text, fragment", [
    (doc(V4, "ClusterConfiguration", apiServer={"extraArgs": {"v": "2"}}), "apiServer.extraArgs"),
    (doc(V4, "InitConfiguration", localAPIEndpoint={"bindPort": "6443"}), "localAPIEndpoint.bindPort"),
    (doc(V4, "ClusterConfiguration", networking=["x"]), "networking"),
    (doc(V4, "JoinConfiguration", discovery={"bootstrapToken": {"caCertHashes": "sha256:x"}}), "caCertHashes"),
], ids=["a v1beta4 extraArgs map is a decode error",
        "a port written as a string is a decode error",
        "a list where an object belongs is a decode error",
        "a string where a list belongs is a decode error"])
def test_type_errors_are_decode_errors(text, fragment):
    with pytest.raises(config.ConfigLoadError, match=fragment):
        config.read_documents(text, R137)


def test_unknown_fields_and_kinds_only_warn():
    text = doc(V3, "ClusterConfiguration", bogus=1, apiServer={"timeoutForControlPlane": "4m0s", "nope": "x"})
    text += "---\n" + doc("example.com/v1", "Whatever")
    docs = config.read_documents(text, R136)
    assert 'strict decoding error: unknown field "bogus"' in docs.warnings
    assert 'strict decoding error: unknown field "apiServer.nope"' in docs.warnings
    assert any("Ignored configuration document" in w and "Whatever" in w for w in docs.warnings)
    assert docs.get("ClusterConfiguration")["apiServer"]["timeoutForControlPlane"] == 240.0


def test_a_v1beta3_only_field_is_unknown_in_v1beta4():
    docs = config.read_documents(doc(V4, "ClusterConfiguration", apiServer={"timeoutForControlPlane": "4m"}), R137)
    assert 'strict decoding error: unknown field "apiServer.timeoutForControlPlane"' in docs.warnings


def test_kubelet_and_kube_proxy_documents_are_kept_as_written():
    text = doc(V3, "ClusterConfiguration") + "---\n" + yaml.safe_dump(
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "maxPods": 10})
    docs = config.read_documents(text, R136)
    assert docs.kubelet["maxPods"] == 10


def _init(flags, text="", release=R136):
    docs = config.read_documents(text, release) if text else None
    return config.init_settings(docs, flags, release.version, "CP-1", "10.0.0.11")


def test_init_defaults():
    settings = _init({})
    cluster, init = settings.cluster, settings.init
    assert cluster["kubernetesVersion"] == "v1.36.4"
    assert cluster["networking"] == {"serviceSubnet": "10.96.0.0/12", "dnsDomain": "cluster.local", "podSubnet": ""}
    assert cluster["etcd"]["local"]["dataDir"] == "/var/lib/etcd"
    assert init["nodeRegistration"]["name"] == "cp-1"
    assert init["nodeRegistration"]["taints"] == [{"key": "node-role.kubernetes.io/control-plane",
                                                   "effect": "NoSchedule"}]
    assert init["localAPIEndpoint"] == {"advertiseAddress": "10.0.0.11", "bindPort": 6443}
    assert init["bootstrapTokens"][0]["ttl"] == 86400.0
    assert init["bootstrapTokens"][0]["groups"] == ["system:bootstrappers:kubeadm:default-node-token"]
    assert init["timeouts"]["controlPlaneComponentHealthCheck"] == 240.0


@pytest.mark.parametrize("taints, expected", [
    (None, [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
    ([], []),
    ([{"key": "a", "effect": "NoExecute"}], [{"key": "a", "effect": "NoExecute"}]),
], ids=["nil taints mean the control plane taint", "an empty list means no taint",
        "a list replaces the default"])
def test_init_taints(taints, expected):
    text = doc(V3, "InitConfiguration", nodeRegistration={"taints": taints})
    assert _init({}, text).init["nodeRegistration"]["taints"] == expected


def test_flags_fill_the_configuration():
    settings = _init({"control-plane-endpoint": "lb:6443", "pod-network-cidr": "10.244.0.0/16",
                      "apiserver-advertise-address": "10.0.0.12", "node-name": "cp-9",
                      "skip-phases": ["addon/kube-proxy"], "ignore-preflight-errors": ["Swap,NumCPU"],
                      "apiserver-cert-extra-sans": "a.example,10.1.1.1", "kubernetes-version": "v1.36.3"})
    assert settings.cluster["controlPlaneEndpoint"] == "lb:6443"
    assert settings.cluster["networking"]["podSubnet"] == "10.244.0.0/16"
    assert settings.cluster["apiServer"]["certSANs"] == ["a.example", "10.1.1.1"]
    assert settings.cluster["kubernetesVersion"] == "v1.36.3"
    assert settings.cluster["proxy"]["disabled"] is True
    assert settings.advertise_address == "10.0.0.12"
    assert settings.node_name == "cp-9"
    assert settings.init["nodeRegistration"]["ignorePreflightErrors"] == ["Swap", "NumCPU"]


@pytest.mark.parametrize("changed, refused", [
    (["node-name", "ignore-preflight-errors", "upload-certs", "skip-phases"], None),
    (["certificate-key"], "[certificate-key]"),
    (["apiserver-advertise-address", "token"], "[apiserver-advertise-address token]"),
], ids=["--config mixes with node-name, ignore-preflight-errors, upload-certs and skip-*",
        "--config does not mix with --certificate-key",
        "--config does not mix with address or token flags"])
def test_config_flag_mixing(changed, refused):
    message = config.check_mixed_flags("/tmp/c.yaml", changed)
    if refused is None:
        assert message is None
    else:
        assert message == "can not mix '--config' with arguments %s" % refused
    assert config.check_mixed_flags(None, changed) is None


@pytest.mark.parametrize("fields, flags, expected_fields", [
    ({"nodeRegistration": {"name": "Bad_Name"}}, {}, ["nodeRegistration.name"]),
    ({"localAPIEndpoint": {"advertiseAddress": "not-an-ip", "bindPort": 70000}}, {},
     ["localAPIEndpoint.advertiseAddress", "localAPIEndpoint.bindPort"]),
    ({"certificateKey": "abc"}, {}, ["certificateKey"]),
    ({"bootstrapTokens": [{"token": "short.token"}]}, {}, ["bootstrapTokens[0].token"]),
    ({}, {"pod-network-cidr": "10.0.0.0", "service-dns-domain": "Bad_Domain"},
     ["networking.podSubnet", "networking.dnsDomain"]),
    ({}, {"control-plane-endpoint": "lb:99999", "kubernetes-version": "1.30"},
     ["kubernetesVersion", "controlPlaneEndpoint"]),
    ({"nodeRegistration": {"criSocket": "tcp://x", "taints": [{"key": "k", "effect": "Bogus"}]}}, {},
     ["nodeRegistration.criSocket", "nodeRegistration.taints[0].effect"]),
], ids=["a node name must be a lowercase RFC 1123 subdomain",
        "advertise address and bind port are checked together",
        "a certificate key must be 64 hex characters",
        "a bootstrap token must look like [a-z0-9]{6}.[a-z0-9]{16}",
        "subnets and the DNS domain are checked",
        "the version and the endpoint port are checked",
        "cri socket scheme and taint effect are checked"])
def test_init_validation_names_every_field(fields, flags, expected_fields):
    settings = _init(flags, doc(V3, "InitConfiguration", **fields))
    errors = config.validate_init(settings, R136)
    assert sorted(e.field for e in errors) == sorted(expected_fields)
    assert all(str(e).startswith(e.field + ": ") for e in errors)


def test_a_valid_init_configuration_has_no_errors():
    settings = _init({"control-plane-endpoint": "172.31.254.100:6443", "pod-network-cidr": "10.244.0.0/16"})
    assert config.validate_init(settings, R136) == []


def test_encryption_algorithm_is_checked_in_v1beta4():
    text = doc(V4, "ClusterConfiguration", encryptionAlgorithm="DSA-1024")
    settings = _init({}, text, release=R137)
    errors = config.validate_init(settings, R137)
    assert [e.field for e in errors] == ["encryptionAlgorithm"]
    assert "Unsupported value" in str(errors[0])


@pytest.mark.parametrize("release, accepted", [("v1.33.10", False), ("v1.34.8", True), ("v1.37.1", True)])
def test_ecdsa_p384_is_an_encryption_algorithm_from_1_34(release, accepted):
    """kubeadm 1.34 added ECDSA-P384 to encryptionAlgorithm (kubeadm-reference-1.32-plus.md section 1)."""
    text = doc(V4, "ClusterConfiguration", encryptionAlgorithm="ECDSA-P384")
    errors = config.validate_init(_init({}, text, release=Release.of(release)), Release.of(release))
    assert [e.field for e in errors] == ([] if accepted else ["encryptionAlgorithm"])


def _join(flags, text="", endpoint=None, release=R136):
    docs = config.read_documents(text, release) if text else None
    return config.join_settings(docs, flags, endpoint, "cp-2", "10.0.0.12")


TOKEN = "abcdef.0123456789abcdef"
HASH = "sha256:" + "a" * 64


def test_join_flags_make_a_control_plane_join():
    settings = _join({"token": TOKEN, "discovery-token-ca-cert-hash": [HASH], "control-plane": True,
                      "certificate-key": "f" * 64}, endpoint="lb:6443")
    join = settings.join
    assert join["discovery"]["bootstrapToken"] == {"token": TOKEN, "apiServerEndpoint": "lb:6443",
                                                   "caCertHashes": [HASH], "unsafeSkipCAVerification": False}
    assert join["discovery"]["tlsBootstrapToken"] == TOKEN
    assert settings.control_plane == {"localAPIEndpoint": {"advertiseAddress": "10.0.0.12", "bindPort": 6443},
                                      "certificateKey": "f" * 64}
    assert join["nodeRegistration"]["taints"][0]["key"] == "node-role.kubernetes.io/control-plane"
    assert config.validate_join(settings) == []


JOIN_DISCOVERY = {"bootstrapToken": {"token": TOKEN, "apiServerEndpoint": "lb:6443", "caCertHashes": [HASH]}}


@pytest.mark.parametrize("release, text", [
    (R136, doc(V3, "JoinConfiguration", discovery=dict(JOIN_DISCOVERY, timeout="2m"),
               nodeRegistration={"name": "cp-2", "kubeletExtraArgs": {"node-labels": "example.com/rack=r1"}},
               controlPlane={"certificateKey": "f" * 64, "localAPIEndpoint": {"advertiseAddress": "10.0.0.12"}})),
    (R137, doc(V4, "JoinConfiguration", discovery=JOIN_DISCOVERY, timeouts={"discovery": "2m"},
               nodeRegistration={"name": "cp-2", "kubeletExtraArgs": [{"name": "node-labels",
                                                                       "value": "example.com/rack=r1"}]},
               controlPlane={"certificateKey": "f" * 64, "localAPIEndpoint": {"advertiseAddress": "10.0.0.12"}})),
], ids=["1.30 reads a v1beta3 JoinConfiguration (discovery.timeout, kubeletExtraArgs map)",
        "1.31 reads a v1beta4 JoinConfiguration (timeouts.discovery, kubeletExtraArgs list)"])
def test_a_join_configuration_file_reads_the_same_in_both_versions(release, text):
    settings = _join({}, text, release=release)
    assert config.validate_join(settings) == []
    join = settings.join
    assert join["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "lb:6443"
    assert join["discovery"]["tlsBootstrapToken"] == TOKEN
    assert join["timeouts"]["discovery"] == 120.0
    assert join["nodeRegistration"]["kubeletExtraArgs"] == [{"name": "node-labels", "value": "example.com/rack=r1"}]
    assert settings.control_plane["certificateKey"] == "f" * 64
    assert settings.control_plane["localAPIEndpoint"] == {"advertiseAddress": "10.0.0.12", "bindPort": 6443}


@pytest.mark.parametrize("release, text", [
    (R136, doc(V3, "InitConfiguration", localAPIEndpoint={"advertiseAddress": "10.0.0.11"},
               nodeRegistration={"kubeletExtraArgs": {"node-labels": "example.com/rack=r1"}})
     + "---\n" + doc(V3, "ClusterConfiguration", controlPlaneEndpoint="lb:6443",
                     apiServer={"timeoutForControlPlane": "2m"})),
    (R137, doc(V4, "InitConfiguration", localAPIEndpoint={"advertiseAddress": "10.0.0.11"},
               nodeRegistration={"kubeletExtraArgs": [{"name": "node-labels", "value": "example.com/rack=r1"}]},
               timeouts={"controlPlaneComponentHealthCheck": "2m"})
     + "---\n" + doc(V4, "ClusterConfiguration", controlPlaneEndpoint="lb:6443")),
], ids=["1.30 reads v1beta3 Init and ClusterConfiguration (timeoutForControlPlane, kubeletExtraArgs map)",
        "1.31 reads v1beta4 Init and ClusterConfiguration (timeouts, kubeletExtraArgs list)"])
def test_an_init_configuration_file_reads_the_same_in_both_versions(release, text):
    settings = _init({}, text, release=release)
    assert config.validate_init(settings, release) == []
    assert settings.advertise_address == "10.0.0.11"
    assert settings.cluster["controlPlaneEndpoint"] == "lb:6443"
    assert settings.init["timeouts"]["controlPlaneComponentHealthCheck"] == 120.0
    assert settings.init["nodeRegistration"]["kubeletExtraArgs"] == [
        {"name": "node-labels", "value": "example.com/rack=r1"}]


def test_a_worker_join_gets_no_taint_and_no_control_plane():
    settings = _join({"token": TOKEN, "discovery-token-ca-cert-hash": [HASH]}, endpoint="lb:6443")
    assert settings.control_plane is None
    assert settings.join["nodeRegistration"]["taints"] == []


@pytest.mark.parametrize("flags, endpoint, expected_fields", [
    ({}, None, ["discovery"]),
    ({"token": TOKEN}, "lb:6443", ["discovery.bootstrapToken"]),
    ({"token": "bad", "discovery-token-ca-cert-hash": ["md5:1"]}, None,
     ["discovery.bootstrapToken.token", "discovery.bootstrapToken.apiServerEndpoint",
      "discovery.bootstrapToken.caCertHashes[0]", "discovery.tlsBootstrapToken"]),
    ({"token": TOKEN, "discovery-token-unsafe-skip-ca-verification": True, "control-plane": True,
      "certificate-key": "zz", "apiserver-advertise-address": "x"}, "lb:6443",
     ["controlPlane.localAPIEndpoint.advertiseAddress", "controlPlane.certificateKey"]),
], ids=["a join without discovery is refused",
        "token discovery without a CA pin is refused unless unsafe skip is asked for",
        "every malformed discovery field is reported at once",
        "control plane fields are checked"])
def test_join_validation(flags, endpoint, expected_fields):
    errors = config.validate_join(_join(flags, endpoint=endpoint))
    assert sorted(e.field for e in errors) == sorted(expected_fields)


def test_secrets_never_appear_in_validation_messages():
    settings = _join({"token": "abcdef.BADBADBADBADBADB", "discovery-token-ca-cert-hash": [HASH],
                      "control-plane": True, "certificate-key": "secretkey"}, endpoint="lb:6443")
    text = str(config.ValidationError(config.validate_join(settings)))
    assert "BADBAD" not in text and "secretkey" not in text


def test_stored_cluster_configuration_is_v1beta4_with_list_extra_args():
    cluster = config.default_cluster({"controlPlaneEndpoint": "lb:6443", "apiServer": {
        "extraArgs": [{"name": "v", "value": "2"}]}}, R137.version)
    text = config.stored_cluster_document(cluster)
    stored = yaml.safe_load(text)
    assert stored["apiVersion"] == V4
    assert stored["kind"] == "ClusterConfiguration"
    assert stored["apiServer"]["extraArgs"] == [{"name": "v", "value": "2"}]
    assert stored["encryptionAlgorithm"] == "RSA-2048"
    assert "localAPIEndpoint" not in stored and "nodeRegistration" not in stored and "bootstrapTokens" not in stored
    assert list(stored) == sorted(stored)
    again = config.read_stored_cluster(text, R137)
    assert again["controlPlaneEndpoint"] == "lb:6443"
    assert config.args_dict(again["apiServer"]["extraArgs"])["v"] == "2"


def test_1_37_reads_a_cluster_stored_by_1_36():
    text = config.stored_cluster_document(config.default_cluster({}, R136.version))
    assert config.read_stored_cluster(text, R137)["kubernetesVersion"] == "v1.36.4"


@pytest.mark.parametrize("release, version, supported", [
    (R137, "v1.36.0", True), (R137, "v1.35.9", False), (R136, "v1.35.0", True), (R135, "v1.33.9", False),
], ids=["1.37 deploys 1.36", "1.37 refuses 1.35", "1.36 deploys 1.35", "1.35 refuses 1.33"])
def test_oldest_supported_control_plane(release, version, supported):
    parsed = config.cluster_version({"kubernetesVersion": version})
    assert config.is_control_plane_version_supported(parsed, release) is supported
    if not supported:
        assert "only supports deploying clusters with the control plane version >=" in \
            config.describe_unsupported_version(parsed, release)


@pytest.mark.parametrize("release, gates, refused", [
    (R135, {"NodeLocalCRISocket": False, "ControlPlaneKubeletLocalMode": True}, []),
    (R135, {"WaitForAllControlPlaneComponents": True}, ["unrecognized feature-gate key: WaitForAllControlPlaneComponents"]),
    (R135, {"ControlPlaneKubeletLocalMode": False},
     ["cannot set feature gate ControlPlaneKubeletLocalMode to false, feature is locked to true"]),
    (R137, {"EtcdLearnerMode": True, "Bogus": True},
     ["unrecognized feature-gate key: Bogus", "unrecognized feature-gate key: EtcdLearnerMode"]),
    (R137, {"PublicKeysECDSA": True}, ["unrecognized feature-gate key: PublicKeysECDSA"]),
], ids=["a beta gate may be set either way", "a removed gate is unknown", "a locked GA gate cannot be turned off",
        "removed and made-up gates are unknown", "1.37 removed PublicKeysECDSA"])
def test_kubeadm_feature_gates(release, gates, refused):
    settings = _init({}, doc(V4, "ClusterConfiguration", featureGates=gates), release=release)
    errors = config.validate_init(settings, release)
    assert sorted(e.rule for e in errors) == refused
    assert all(e.field == "featureGates" for e in errors)
