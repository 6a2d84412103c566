# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm configuration of one machine, rendered from the spec (kubeadm_config)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kubeadm_config
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec

MACHINE = {"name": "cp-2", "address": "10.0.0.12", "failure_domain": "fd-b"}
TOKEN, KEY, HASH = "abcdef.0123456789abcdef", "f" * 64, "sha256:" + "e" * 64


def spec(version="v1.37.1", **kubeadm):
    normalized, errors = normalize_spec({"cluster_name": "prod", "replicas": 3, "version": version,
                                         "endpoint": {"host": "lb.example", "port": 7443}, "kubeadm": kubeadm})
    assert errors == []
    return normalized


def test_init_renders_the_spec_documents_with_what_the_collection_sets():
    init, cluster = kubeadm_config.documents(
        spec(cluster_configuration={"networking": {"podSubnet": "10.244.0.0/16"}},
             init_configuration={"bootstrapTokens": [{"ttl": "1h"}]}), MACHINE, "init", TOKEN, KEY)
    assert cluster == {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration",
                       "kubernetesVersion": "v1.37.1", "controlPlaneEndpoint": "lb.example:7443",
                       "clusterName": "prod", "networking": {"podSubnet": "10.244.0.0/16"}}
    assert init["kind"] == "InitConfiguration"
    assert init["nodeRegistration"] == {"name": "cp-2", "kubeletExtraArgs": [
        {"name": "node-labels", "value": "topology.kubernetes.io/zone=fd-b"}]}
    assert init["localAPIEndpoint"] == {"advertiseAddress": "10.0.0.12"}
    assert init["bootstrapTokens"] == [{"ttl": "1h", "token": TOKEN}]
    assert init["certificateKey"] == KEY


def test_the_secrets_a_configuration_gave_the_cluster_are_named_by_their_public_part():
    init = kubeadm_config.documents(spec(), MACHINE, "init", TOKEN, KEY)
    assert kubeadm_config.cluster_secrets(init) == ["bootstrap-token-abcdef", "kubeadm-certs"]
    join = kubeadm_config.documents(spec(), MACHINE, "join", "zyx987.0123456789abcdef", KEY, [HASH])
    assert kubeadm_config.cluster_secrets(join) == ["bootstrap-token-zyx987", "kubeadm-certs"]
    worker = kubeadm_config.documents(spec(), dict(MACHINE, worker_group="md-0"), "worker", TOKEN, None, [HASH])
    assert kubeadm_config.cluster_secrets(worker) == ["bootstrap-token-abcdef"]
    # what is no token (a hand-edited file, a malformed one) names no Secret
    assert kubeadm_config.cluster_secrets([{"bootstrapTokens": [{"token": "--all.x"}, None]}, {"discovery": {}}]) == []


def test_join_pins_the_ca_and_joins_through_the_endpoint_as_a_control_plane():
    (join,) = kubeadm_config.documents(spec(), MACHINE, "join", TOKEN, KEY, [HASH])
    assert join["discovery"] == {"bootstrapToken": {"apiServerEndpoint": "lb.example:7443", "token": TOKEN,
                                                    "caCertHashes": [HASH]}}
    assert join["controlPlane"] == {"localAPIEndpoint": {"advertiseAddress": "10.0.0.12"}, "certificateKey": KEY}
    assert join["nodeRegistration"]["name"] == "cp-2"


WORKER = {"name": "worker-1", "address": "10.0.0.21", "failure_domain": None, "worker_group": "md-0"}


def test_a_worker_joins_without_a_control_plane_section_labelled_with_its_group():
    (join,) = kubeadm_config.documents(spec(join_configuration={"nodeRegistration": {"taints": []},
                                                                "controlPlane": {"localAPIEndpoint": {"bindPort": 7443}}}),
                                       WORKER, "worker", TOKEN, None, [HASH])
    # the spec's join_configuration is the control plane machines': none of it reaches a worker
    assert join == {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "JoinConfiguration",
                    "discovery": {"bootstrapToken": {"apiServerEndpoint": "lb.example:7443", "token": TOKEN, "caCertHashes": [HASH]}},
                    "nodeRegistration": {"name": "worker-1", "kubeletExtraArgs": [
                        {"name": "node-labels", "value": "control-plane.kubeadm.io/worker-group=md-0"}]}}


def test_a_worker_starts_from_its_own_document_and_its_group_and_zone_win_over_the_labels_written():
    written = {"nodeRegistration": {"kubeletExtraArgs": [
        {"name": "node-labels", "value": "tier=web,control-plane.kubeadm.io/worker-group=other"}, {"name": "v", "value": "2"}]}}
    (join,) = kubeadm_config.documents(spec(), dict(WORKER, failure_domain="fd-a"), "worker", TOKEN, None, [HASH], written)
    assert join["nodeRegistration"]["kubeletExtraArgs"] == [
        {"name": "node-labels", "value": "tier=web,topology.kubernetes.io/zone=fd-a,control-plane.kubeadm.io/worker-group=md-0"},
        {"name": "v", "value": "2"}]
    assert written["nodeRegistration"]["kubeletExtraArgs"][0]["value"].endswith("=other")  # the input is not touched


def test_a_v1beta3_worker_gets_its_labels_in_the_mapping():
    (join,) = kubeadm_config.documents(spec(version="v1.36.4", api_version="kubeadm.k8s.io/v1beta3"),
                                       WORKER, "worker", TOKEN, None, [HASH], {"nodeRegistration": {"kubeletExtraArgs": {"v": "2"}}})
    assert join["nodeRegistration"]["kubeletExtraArgs"] == {"v": "2", "node-labels": "control-plane.kubeadm.io/worker-group=md-0"}


def test_a_worker_document_with_a_control_plane_section_is_refused():
    with pytest.raises(ValueError, match="no controlPlane section"):
        kubeadm_config.documents(spec(), WORKER, "worker", TOKEN, None, [HASH], {"controlPlane": {}})


def test_a_control_plane_machine_gets_no_worker_group_label():
    (join,) = kubeadm_config.documents(spec(), dict(MACHINE, worker_group=None), "join", TOKEN, KEY, [HASH])
    assert join["nodeRegistration"]["kubeletExtraArgs"] == [{"name": "node-labels", "value": "topology.kubernetes.io/zone=fd-b"}]


@pytest.mark.parametrize("written, expected", [
    ([{"name": "node-labels", "value": "tier=cp"}], "tier=cp,topology.kubernetes.io/zone=fd-b"),
    ([{"name": "node-labels", "value": "topology.kubernetes.io/zone=elsewhere,tier=cp"}],
     "tier=cp,topology.kubernetes.io/zone=fd-b"),
    ([{"name": "v", "value": "2"}], "topology.kubernetes.io/zone=fd-b"),
], ids=["the user's labels are kept", "a zone the user wrote gives way to the machine's",
        "another kubelet flag is left alone"])
def test_the_zone_label_joins_the_kubelets_node_labels(written, expected):
    (join,) = kubeadm_config.documents(spec(join_configuration={"nodeRegistration": {"kubeletExtraArgs": written}}),
                                       MACHINE, "join", TOKEN, KEY, [HASH])
    labels = [arg["value"] for arg in join["nodeRegistration"]["kubeletExtraArgs"] if arg["name"] == "node-labels"]
    assert labels == [expected]


def test_a_machine_without_a_failure_domain_gets_no_zone_label():
    init, unused = kubeadm_config.documents(spec(), dict(MACHINE, failure_domain=None), "init", TOKEN, KEY)
    assert init["nodeRegistration"] == {"name": "cp-2"}


def test_the_redacted_form_hides_every_secret_and_leaves_the_spec_alone():
    docs = kubeadm_config.documents(spec(), MACHINE, "init", TOKEN, KEY) + \
        kubeadm_config.documents(spec(), MACHINE, "join", TOKEN, KEY, [HASH])
    text = repr(kubeadm_config.redacted(docs))
    assert TOKEN not in text and KEY not in text and HASH in text
    assert docs[0]["certificateKey"] == KEY  # the rendered documents themselves are not touched


def test_an_ipv6_endpoint_is_bracketed():
    normalized = spec()
    normalized["endpoint"] = {"host": "fd00::10", "port": 6443}
    assert kubeadm_config.endpoint_address(normalized) == "[fd00::10]:6443"


# --- the cluster's stored ClusterConfiguration against the spec ------------------------------------------------

AUDIT = [{"name": "audit-log-maxage", "value": "30"}, {"name": "profiling", "value": "false"}]


def stored(**fields):
    """The ClusterConfiguration kubeadm 1.37 keeps in kubeadm-config after `kubeadm init` from spec(): the given
    configuration with kubeadm's defaults written in."""
    doc = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration", "kubernetesVersion": "v1.37.1",
           "clusterName": "prod", "controlPlaneEndpoint": "lb.example:7443", "certificatesDir": "/etc/kubernetes/pki",
           "imageRepository": "registry.k8s.io", "networking": {"dnsDomain": "cluster.local", "serviceSubnet": "10.96.0.0/12"},
           "etcd": {"local": {"dataDir": "/var/lib/etcd"}}, "apiServer": {}, "controllerManager": {}, "scheduler": {},
           "dns": {}, "proxy": {}, "encryptionAlgorithm": "RSA-2048", "certificateValidityPeriod": "8760h0m0s",
           "caCertificateValidityPeriod": "87600h0m0s"}
    doc.update(fields)
    return doc


def compare(cluster_configuration, observed, version="v1.37.1", **kubeadm):
    """(differences, updated, differences of the updated document) for a spec with ``cluster_configuration``."""
    the_spec = spec(version, cluster_configuration=cluster_configuration, **kubeadm)
    updated = kubeadm_config.updated_cluster_configuration(the_spec, observed)
    return (kubeadm_config.cluster_configuration_differences(the_spec, observed), updated,
            kubeadm_config.cluster_configuration_differences(the_spec, updated))


@pytest.mark.parametrize("configuration, observed", [
    ({}, stored()),
    ({"apiServer": {"extraArgs": AUDIT, "certSANs": ["api.example"]}, "featureGates": {"RootlessControlPlane": True},
      "etcd": {"local": {"imageTag": "3.6.8-0", "dataDir": "/data/etcd"}}, "dns": {"imageTag": "v1.14.2"},
      "networking": {"podSubnet": "10.244.0.0/16"}},
     stored(apiServer={"extraArgs": AUDIT, "certSANs": ["api.example"]}, featureGates={"RootlessControlPlane": True},
            etcd={"local": {"imageTag": "3.6.8-0", "dataDir": "/data/etcd"}}, dns={"imageTag": "v1.14.2"},
            networking={"dnsDomain": "cluster.local", "serviceSubnet": "10.96.0.0/12", "podSubnet": "10.244.0.0/16"})),
    ({"imageRepository": "registry.k8s.io"}, stored()),
], ids=["an empty configuration", "overrides in every managed section", "the default repository written out"])
def test_what_kubeadm_init_stored_from_the_spec_is_equal_and_updating_it_changes_nothing(configuration, observed):
    differences, updated, unused = compare(configuration, observed)
    assert differences == []
    assert updated == observed


def test_a_version_without_v_and_empty_collections_are_as_good_as_the_spec_s():
    observed = stored(kubernetesVersion="1.37.1", apiServer={"extraArgs": [], "extraVolumes": []}, featureGates={})
    differences, updated, after = compare({}, observed)
    assert (differences, after) == ([], [])
    assert updated == stored()  # had an update run all the same, it would have written the spec's form


@pytest.mark.parametrize("configuration, observed, fields", [
    ({"apiServer": {"extraArgs": [AUDIT[0], {"name": "profiling", "value": "true"}]}}, stored(apiServer={"extraArgs": AUDIT}),
     ["apiServer.extraArgs"]),
    ({"apiServer": {"extraArgs": AUDIT[:1]}}, stored(apiServer={"extraArgs": AUDIT}), ["apiServer.extraArgs"]),
    ({}, stored(apiServer={"extraArgs": AUDIT}), ["apiServer.extraArgs"]),
    ({"scheduler": {"extraArgs": AUDIT}}, stored(), ["scheduler.extraArgs"]),
    ({"apiServer": {"extraArgs": [{"name": "service-account-issuer", "value": "b"}, {"name": "service-account-issuer", "value": "a"}]}},
     stored(apiServer={"extraArgs": [{"name": "service-account-issuer", "value": "a"}, {"name": "service-account-issuer", "value": "b"}]}),
     ["apiServer.extraArgs"]),
    ({"controllerManager": {"extraVolumes": [{"name": "cloud", "hostPath": "/etc/cloud", "mountPath": "/etc/cloud"}]}}, stored(),
     ["controllerManager.extraVolumes"]),
    ({"apiServer": {"certSANs": ["api.example"], "extraArgs": AUDIT}}, stored(apiServer={"certSANs": ["old.example"]}),
     ["apiServer.certSANs", "apiServer.extraArgs"]),
    ({"featureGates": {"RootlessControlPlane": True}}, stored(), ["featureGates"]),
    ({"imageRepository": "mirror.example/k8s"}, stored(), ["imageRepository"]),
    ({}, stored(imageRepository="mirror.example/k8s"), ["imageRepository"]),
    ({"etcd": {"local": {"imageTag": "3.6.8-0", "extraArgs": AUDIT[:1]}}}, stored(), ["etcd.local.imageTag", "etcd.local.extraArgs"]),
    ({}, stored(etcd={"local": {"dataDir": "/var/lib/etcd", "imageRepository": "mirror.example/etcd"}}),
     ["etcd.local.imageRepository"]),
    ({"etcd": {"local": {"serverCertSANs": ["etcd.example"]}}}, stored(), ["etcd.local.serverCertSANs"]),
    ({"dns": {"imageRepository": "mirror.example/coredns", "imageTag": "v1.14.6"}}, stored(),
     ["dns.imageRepository", "dns.imageTag"]),
    ({}, stored(kubernetesVersion="v1.36.4", apiServer={"extraArgs": AUDIT}), ["kubernetesVersion", "apiServer.extraArgs"]),
], ids=["a changed extraArg", "a removed extraArg", "every extraArg removed", "an extraArg added to a section kubeadm left empty",
        "a repeated flag in another order", "an extra volume", "two fields of one section",
        "a feature gate", "an image repository override", "a removed image repository override",
        "the etcd image tag and arguments", "a removed etcd image repository override", "etcd server certificate SANs",
        "the CoreDNS image", "the version and an argument"])
def test_a_changed_managed_field_differs_and_the_update_makes_it_equal(configuration, observed, fields):
    differences, updated, after = compare(configuration, observed)
    assert differences == fields
    assert after == []


def test_the_update_sets_the_managed_fields_and_keeps_the_rest_as_kubeadm_stored_it():
    observed = stored(kubernetesVersion="v1.36.4", imageRepository="mirror.example/k8s",
                      apiServer={"extraArgs": AUDIT, "certSANs": ["old.example"]},
                      etcd={"local": {"dataDir": "/var/lib/etcd", "imageTag": "3.6.6-0", "extraArgs": AUDIT}},
                      dns={"imageTag": "v1.13.1"})
    configuration = {"apiServer": {"extraArgs": AUDIT[:1]}, "networking": {"podSubnet": "10.244.0.0/16"},
                     "etcd": {"local": {"dataDir": "/data/etcd"}}, "certificatesDir": "/elsewhere"}
    differences, updated, after = compare(configuration, observed)
    assert differences == ["kubernetesVersion", "imageRepository", "apiServer.certSANs", "apiServer.extraArgs",
                           "etcd.local.imageTag", "etcd.local.extraArgs", "dns.imageTag"]
    assert updated == stored(apiServer={"extraArgs": AUDIT[:1]}, etcd={"local": {"dataDir": "/var/lib/etcd"}}, dns={})
    assert observed["kubernetesVersion"] == "v1.36.4"  # the observed document itself is left alone


def test_a_v1beta3_map_compares_with_the_stored_list_and_is_written_as_kubeadm_converts_it():
    args = {"profiling": "false", "audit-log-maxage": "30"}
    differences, updated, after = compare({"apiServer": {"extraArgs": args, "timeoutForControlPlane": "4m0s"}},
                                          stored(apiServer={"extraArgs": AUDIT}, kubernetesVersion="v1.36.4"),
                                          version="v1.36.4", api_version="kubeadm.k8s.io/v1beta3")
    assert differences == []
    assert updated["apiServer"] == {"extraArgs": AUDIT}
    differences, updated, after = compare({"apiServer": {"extraArgs": args}}, stored(kubernetesVersion="v1.36.4"),
                                          version="v1.36.4", api_version="kubeadm.k8s.io/v1beta3")
    assert (differences, updated["apiServer"], after) == (["apiServer.extraArgs"], {"extraArgs": AUDIT}, [])


def test_a_stored_v1beta3_document_gets_maps_and_keeps_its_start_up_timeout():
    observed = stored(apiVersion="kubeadm.k8s.io/v1beta3", apiServer={"timeoutForControlPlane": "4m0s"})
    differences, updated, after = compare({"apiServer": {"extraArgs": AUDIT}}, observed)
    assert differences == ["apiServer.extraArgs"]
    assert updated["apiServer"] == {"extraArgs": {"audit-log-maxage": "30", "profiling": "false"}, "timeoutForControlPlane": "4m0s"}
    assert after == []


def test_external_etcd_compares_its_endpoints_and_files_and_leaves_a_local_etcd_alone():
    external = {"endpoints": ["https://10.0.0.5:2379"], "caFile": "/etc/etcd/ca.crt", "certFile": "/etc/etcd/c.crt",
                "keyFile": "/etc/etcd/c.key"}
    observed = stored(etcd={"external": dict(external, endpoints=["https://10.0.0.4:2379"])})
    differences, updated, after = compare({"etcd": {"external": external}}, observed)
    assert (differences, updated["etcd"], after) == (["etcd.external.endpoints"], {"external": external}, [])
    # the topology may not switch: a stored local etcd is not the external etcd's to rewrite
    differences, updated, after = compare({"etcd": {"external": external}}, stored())
    assert (differences, updated["etcd"]) == ([], {"local": {"dataDir": "/var/lib/etcd"}})


def test_the_redacted_form_writes_redacted_in_place_of_each_secret():
    init, cluster = kubeadm_config.documents(spec(), MACHINE, "init", TOKEN, KEY)
    (join,) = kubeadm_config.documents(spec(), MACHINE, "join", TOKEN, KEY, [HASH])
    hidden_init, hidden_cluster, hidden_join = kubeadm_config.redacted([init, cluster, join])
    assert (hidden_init["certificateKey"], hidden_init["bootstrapTokens"]) == ("<redacted>", [{"token": "<redacted>"}])
    assert hidden_cluster == cluster
    assert hidden_join["controlPlane"]["certificateKey"] == "<redacted>"
    assert hidden_join["discovery"]["bootstrapToken"] == {"apiServerEndpoint": "lb.example:7443", "token": "<redacted>",
                                                          "caCertHashes": [HASH]}


def test_a_worker_document_with_a_control_plane_section_is_refused_saying_why():
    with pytest.raises(ValueError) as refused:
        kubeadm_config.documents(spec(), WORKER, "worker", TOKEN, None, [HASH], {"controlPlane": {}})
    assert str(refused.value) == "a worker's JoinConfiguration has no controlPlane section: a worker runs no control plane"


def test_what_the_spec_writes_in_the_bootstrap_token_discovery_is_kept_beside_what_the_collection_sets():
    written = {"discovery": {"bootstrapToken": {"unsafeSkipCAVerification": False}}}
    (join,) = kubeadm_config.documents(spec(join_configuration=written), MACHINE, "join", TOKEN, KEY, [HASH])
    assert join["discovery"] == {"bootstrapToken": {
        "unsafeSkipCAVerification": False, "apiServerEndpoint": "lb.example:7443", "token": TOKEN, "caCertHashes": [HASH]}}


def test_a_v1beta3_machine_keeps_the_node_labels_written_in_the_mapping_beside_its_zone():
    written = {"nodeRegistration": {"kubeletExtraArgs": {"node-labels": "tier=cp,topology.kubernetes.io/zone=elsewhere", "v": "2"}}}
    (join,) = kubeadm_config.documents(spec(version="v1.36.4", api_version="kubeadm.k8s.io/v1beta3", join_configuration=written),
                                       MACHINE, "join", TOKEN, KEY, [HASH])
    assert join["nodeRegistration"]["kubeletExtraArgs"] == {"node-labels": "tier=cp,topology.kubernetes.io/zone=fd-b", "v": "2"}


def test_a_token_used_by_two_documents_names_its_secret_once():
    docs = kubeadm_config.documents(spec(), MACHINE, "init", TOKEN, KEY) + \
        kubeadm_config.documents(spec(), MACHINE, "join", TOKEN, KEY, [HASH])
    assert kubeadm_config.cluster_secrets(docs) == ["bootstrap-token-abcdef", "kubeadm-certs"]


EXTERNAL_ETCD = {"endpoints": ["https://10.0.0.5:2379"], "caFile": "/etc/etcd/ca.crt", "certFile": "/etc/etcd/c.crt",
                 "keyFile": "/etc/etcd/c.key"}


@pytest.mark.parametrize("configuration, observed, fields, etcd", [
    ({"etcd": {"local": {"peerCertSANs": ["etcd.example"]}}}, stored(), ["etcd.local.peerCertSANs"],
     {"local": {"dataDir": "/var/lib/etcd", "peerCertSANs": ["etcd.example"]}}),
    ({"etcd": {"external": EXTERNAL_ETCD}},
     stored(etcd={"external": dict(EXTERNAL_ETCD, caFile="/old/ca.crt", certFile="/old/c.crt", keyFile="/old/c.key")}),
     ["etcd.external.caFile", "etcd.external.certFile", "etcd.external.keyFile"], {"external": EXTERNAL_ETCD}),
    ({"etcd": {"external": EXTERNAL_ETCD}}, stored(etcd={"external": dict(EXTERNAL_ETCD, keyFile="/old/c.key")}),
     ["etcd.external.keyFile"], {"external": EXTERNAL_ETCD}),
], ids=["etcd peer certificate SANs", "the external etcd's client files", "the external etcd's key file alone"])
def test_the_etcd_fields_a_joining_member_reads_differ_and_the_update_makes_them_equal(configuration, observed, fields, etcd):
    differences, updated, after = compare(configuration, observed)
    assert (differences, updated["etcd"], after) == (fields, etcd, [])


def test_a_local_etcd_spec_leaves_a_stored_external_etcd_alone():
    observed = stored(etcd={"external": EXTERNAL_ETCD})
    differences, updated, unused = compare({"etcd": {"local": {"imageTag": "3.6.8-0", "extraArgs": AUDIT}}}, observed)
    assert (differences, updated) == ([], observed)


def test_a_stored_v1beta3_document_gets_its_etcd_and_other_fields_written_its_way():
    observed = stored(apiVersion="kubeadm.k8s.io/v1beta3")
    configuration = {"etcd": {"local": {"extraArgs": AUDIT}}, "apiServer": {"certSANs": ["api.example"]}}
    differences, updated, after = compare(configuration, observed)
    assert differences == ["apiServer.certSANs", "etcd.local.extraArgs"]
    assert updated["etcd"] == {"local": {"dataDir": "/var/lib/etcd", "extraArgs": {"audit-log-maxage": "30", "profiling": "false"}}}
    assert updated["apiServer"] == {"certSANs": ["api.example"]}
    assert after == []


def test_the_update_creates_a_section_kubeadm_did_not_store_only_to_set_a_field_in_it():
    observed = stored()
    del observed["dns"]
    unused, updated, after = compare({"dns": {"imageTag": "v1.14.6"}}, observed)
    assert (updated["dns"], after) == ({"imageTag": "v1.14.6"}, [])
    differences, updated, unused = compare({}, observed)
    assert (differences, updated) == ([], observed)
