# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static pod manifests, images, the kubelet's files and the release matrix (kubeadm-reference.md §0, §1.2, §1.3)."""

import pytest
import yaml

from kcpsim.kubeadm import config, images, kubeletconfig, manifests
from kcpsim.kubeadm.release import Release, parse_version

R129, R130, R131 = Release.of("v1.29.10"), Release.of("v1.30.6"), Release.of("v1.31.2")
ADV = "172.31.254.11"


def cluster(release=R130, **fields):
    return config.default_cluster(fields, release.version)


def flags(pod):
    return pod["spec"]["containers"][0]["command"][1:]


@pytest.mark.parametrize("release, etcd, coredns, pause", [
    (Release.of("v1.29.0"), "3.5.10-0", "v1.11.1", "3.9"),
    (R129, "3.5.15-0", "v1.11.3", "3.9"),
    (Release.of("v1.30.0"), "3.5.12-0", "v1.11.1", "3.9"),
    (R130, "3.5.15-0", "v1.11.3", "3.9"),
    (R131, "3.5.15-0", "v1.11.3", "3.10"),
], ids=["1.29.0 targets etcd 3.5.10-0", "1.29.10 targets etcd 3.5.15-0", "1.30.0 targets etcd 3.5.12-0",
        "1.30.6 targets etcd 3.5.15-0", "1.31.2 targets etcd 3.5.15-0 and pause 3.10"])
def test_image_tags_per_release(release, etcd, coredns, pause):
    assert (release.etcd_image_tag, release.coredns_image_tag, release.pause_image_tag) == (etcd, coredns, pause)


@pytest.mark.parametrize("release, v1beta4, stored, json_output, readyz", [
    (R129, False, "kubeadm.k8s.io/v1beta3", False, False),
    (R130, False, "kubeadm.k8s.io/v1beta3", True, False),
    (R131, True, "kubeadm.k8s.io/v1beta4", True, True),
], ids=["1.29 behaviour", "1.30 behaviour", "1.31 behaviour"])
def test_release_matrix(release, v1beta4, stored, json_output, readyz):
    assert ("kubeadm.k8s.io/v1beta4" in release.accepted_config_versions) is v1beta4
    assert release.stored_config_version == stored
    assert release.check_expiration_structured_output is json_output
    assert release.etcd_probes_use_readyz is readyz
    assert release.etcd_learner_mode() is True
    assert release.etcd_learner_mode({"EtcdLearnerMode": False}) is False


def test_releases_outside_1_29_to_1_31_are_not_emulated():
    with pytest.raises(ValueError, match="v1.29 - v1.31"):
        Release.of("v1.28.4")


def test_versions_order_with_pre_releases_first():
    assert parse_version("v1.31.0-rc.1") < parse_version("v1.31.0") < parse_version("1.31.1")


def test_images_list_in_kubeadm_order():
    assert images.all_images(cluster(R130), R130) == [
        "registry.k8s.io/kube-apiserver:v1.30.6", "registry.k8s.io/kube-controller-manager:v1.30.6",
        "registry.k8s.io/kube-scheduler:v1.30.6", "registry.k8s.io/kube-proxy:v1.30.6",
        "registry.k8s.io/coredns/coredns:v1.11.3", "registry.k8s.io/pause:3.9", "registry.k8s.io/etcd:3.5.15-0"]


def test_a_custom_repository_drops_the_coredns_path_and_external_etcd_drops_etcd():
    custom = cluster(R130, imageRepository="mirror.local/k8s",
                     etcd={"external": {"endpoints": ["https://e:2379"]}})
    listed = images.all_images(custom, R130)
    assert "mirror.local/k8s/coredns:v1.11.3" in listed
    assert not any("etcd" in image for image in listed)


def test_flags_are_sorted_and_extra_args_replace_defaults():
    c = cluster(apiServer={"extraArgs": [{"name": "authorization-mode", "value": "RBAC"},
                                         {"name": "audit-log-path", "value": "/var/log/a.log"}]})
    pod = manifests.apiserver_pod(c, R130, ADV, 6443, "IfNotPresent")
    command = pod["spec"]["containers"][0]["command"]
    assert command[0] == "kube-apiserver"
    names = [f.split("=")[0] for f in command[1:]]
    assert names == sorted(names)
    assert "--authorization-mode=RBAC" in command and "--authorization-mode=Node,RBAC" not in command
    assert "--audit-log-path=/var/log/a.log" in command
    assert "--etcd-servers=https://127.0.0.1:2379" in command
    assert "--advertise-address=%s" % ADV in command


def test_repeated_v1beta4_args_are_kept_in_order():
    command = manifests.build_command("x", {"a": "1", "b": "2"},
                                      [{"name": "b", "value": "3"}, {"name": "b", "value": "4"}])
    assert command == ["x", "--a=1", "--b=3", "--b=4"]


def test_apiserver_manifest_shape():
    pod = manifests.apiserver_pod(cluster(), R130, ADV, 6443, "IfNotPresent")
    assert pod["metadata"]["labels"] == {"component": "kube-apiserver", "tier": "control-plane"}
    assert pod["metadata"]["annotations"] == {manifests.APISERVER_ENDPOINT_ANNOTATION: ADV + ":6443"}
    spec = pod["spec"]
    assert spec["hostNetwork"] is True and spec["priorityClassName"] == "system-node-critical"
    assert spec["priority"] == 2000001000
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    container = spec["containers"][0]
    assert container["image"] == "registry.k8s.io/kube-apiserver:v1.30.6"
    assert container["livenessProbe"] == {"failureThreshold": 8, "initialDelaySeconds": 10, "periodSeconds": 10,
                                          "timeoutSeconds": 15, "httpGet": {"host": ADV, "path": "/livez",
                                                                            "port": 6443, "scheme": "HTTPS"}}
    assert container["readinessProbe"]["periodSeconds"] == 1 and container["readinessProbe"]["failureThreshold"] == 3
    assert container["startupProbe"]["failureThreshold"] == 24


@pytest.mark.parametrize("release, liveness, startup, readiness", [
    (R130, "/health?exclude=NOSPACE&serializable=true", "/health?serializable=false", None),
    (R131, "/livez", "/readyz", "/readyz"),
], ids=["up to 1.30 etcd probes /health", "1.31 etcd probes /livez and /readyz"])
def test_etcd_probes_per_release(release, liveness, startup, readiness):
    container = manifests.etcd_pod(cluster(release), release, "cp-1", ADV, "IfNotPresent")["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == liveness
    assert container["livenessProbe"]["httpGet"]["port"] == 2381
    assert container["startupProbe"]["httpGet"]["path"] == startup
    assert (container.get("readinessProbe") or {}).get("httpGet", {}).get("path") == readiness


def test_etcd_init_names_only_itself_and_no_cluster_state():
    pod = manifests.etcd_pod(cluster(), R130, "cp-1", ADV, "IfNotPresent")
    command = flags(pod)
    assert "--initial-cluster=cp-1=https://%s:2380" % ADV in command
    assert not any(f.startswith("--initial-cluster-state") for f in command)
    for expected in ("--listen-client-urls=https://127.0.0.1:2379,https://%s:2379" % ADV,
                     "--listen-metrics-urls=http://127.0.0.1:2381", "--client-cert-auth=true",
                     "--peer-client-cert-auth=true", "--snapshot-count=10000", "--data-dir=/var/lib/etcd",
                     "--experimental-initial-corrupt-check=true",
                     "--experimental-watch-progress-notify-interval=5s"):
        assert expected in command
    assert pod["metadata"]["annotations"] == {manifests.ETCD_ENDPOINT_ANNOTATION: "https://%s:2379" % ADV}
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}


def test_etcd_join_lists_every_member_and_joins_existing():
    members = [("cp-1", "https://10.0.0.11:2380"), ("cp-2", "https://10.0.0.12:2380")]
    command = flags(manifests.etcd_pod(cluster(), R130, "cp-2", "10.0.0.12", "IfNotPresent", initial_cluster=members))
    assert "--initial-cluster=cp-1=https://10.0.0.11:2380,cp-2=https://10.0.0.12:2380" in command
    assert "--initial-cluster-state=existing" in command


def test_controller_manager_gets_cidr_flags_only_with_a_pod_subnet():
    without = flags(manifests.controller_manager_pod(cluster(), "IfNotPresent"))
    assert not any(f.startswith("--allocate-node-cidrs") for f in without)
    with_subnet = flags(manifests.controller_manager_pod(cluster(networking={"podSubnet": "10.244.0.0/16"}),
                                                         "IfNotPresent"))
    assert "--allocate-node-cidrs=true" in with_subnet and "--cluster-cidr=10.244.0.0/16" in with_subnet
    assert "--service-cluster-ip-range=10.96.0.0/12" in with_subnet
    assert "--controllers=*,bootstrapsigner,tokencleaner" in without
    assert "--kubeconfig=/etc/kubernetes/controller-manager.conf" in without


def test_scheduler_probes_its_local_port():
    container = manifests.scheduler_pod(cluster(), "IfNotPresent")["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"] == {"host": "127.0.0.1", "path": "/healthz", "port": 10259,
                                                     "scheme": "HTTPS"}


def test_rendering_is_stable_sorted_yaml():
    pod = manifests.etcd_pod(cluster(), R130, "cp-1", ADV, "IfNotPresent")
    text = manifests.render(pod)
    assert text == manifests.render(manifests.load(text))
    assert text.startswith("apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:")
    assert "creationTimestamp: null" in text and text.endswith("status: {}\n")
    assert manifests.image_tag(pod) == "3.5.15-0"


def test_kubelet_configuration_defaults_and_user_fields():
    document = kubeletconfig.kubelet_configuration(cluster(), {"maxPods": 50, "authentication": {
        "anonymous": {"enabled": True}}})
    assert document["clusterDNS"] == ["10.96.0.10"]
    assert document["staticPodPath"] == "/etc/kubernetes/manifests"
    assert document["healthzPort"] == 10248 and document["rotateCertificates"] is True
    assert document["maxPods"] == 50
    assert document["authentication"]["anonymous"]["enabled"] is True
    assert document["authentication"]["x509"]["clientCAFile"] == "/etc/kubernetes/pki/ca.crt"
    assert kubeletconfig.parse(kubeletconfig.render(document)) == document


@pytest.mark.parametrize("name, extra, expected", [
    ("cp-1", [], 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock '
                 '--pod-infra-container-image=registry.k8s.io/pause:3.9"\n'),
    ("cp-9", [{"name": "node-labels", "value": "topology.kubernetes.io/zone=fd-1"}],
     'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock '
     '--hostname-override=cp-9 --node-labels=topology.kubernetes.io/zone=fd-1 '
     '--pod-infra-container-image=registry.k8s.io/pause:3.9"\n'),
], ids=["the default flags on one line", "a renamed node gets --hostname-override and extra args sorted in"])
def test_kubeadm_flags_env(name, extra, expected):
    registration = {"name": name, "criSocket": config.DEFAULT_CRI_SOCKET, "kubeletExtraArgs": extra}
    assert kubeletconfig.flags_env(registration, "cp-1", "registry.k8s.io/pause:3.9") == expected


def test_stored_yaml_parses_back():
    assert yaml.safe_load(manifests.render(manifests.scheduler_pod(cluster(), "Always")))["spec"]["containers"][0][
        "imagePullPolicy"] == "Always"
