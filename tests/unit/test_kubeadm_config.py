# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm configuration of one machine, rendered from the spec (kubeadm_config)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kubeadm_config
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec

MACHINE = {"name": "cp-2", "address": "10.0.0.12", "failure_domain": "fd-b"}
TOKEN, KEY, HASH = "abcdef.0123456789abcdef", "f" * 64, "sha256:" + "e" * 64


def spec(**kubeadm):
    normalized, errors = normalize_spec({"cluster_name": "prod", "replicas": 3, "version": "v1.37.1",
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


def test_join_pins_the_ca_and_joins_through_the_endpoint_as_a_control_plane():
    (join,) = kubeadm_config.documents(spec(), MACHINE, "join", TOKEN, KEY, [HASH])
    assert join["discovery"] == {"bootstrapToken": {"apiServerEndpoint": "lb.example:7443", "token": TOKEN,
                                                    "caCertHashes": [HASH]}}
    assert join["controlPlane"] == {"localAPIEndpoint": {"advertiseAddress": "10.0.0.12"}, "certificateKey": KEY}
    assert join["nodeRegistration"]["name"] == "cp-2"


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
