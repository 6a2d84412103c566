# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static pod manifests, images, the kubelet's files and the release matrix (kubeadm-reference.md §0, §1.2, §1.3)."""

import pytest
import yaml

from kcpsim.kubeadm import config, images, kubeletconfig, manifests
from kcpsim.kubeadm.release import Release, parse_version

R135, R136, R137 = Release.of("v1.35.9"), Release.of("v1.36.4"), Release.of("v1.37.1")
ADV = "172.31.254.11"


def cluster(release=R136, **fields):
    return config.default_cluster(fields, release.version)


def flags(pod):
    return pod["spec"]["containers"][0]["command"][1:]


@pytest.mark.parametrize("release, etcd, coredns, pause", [
    (Release.of("v1.33.10"), "3.5.24-0", "v1.12.0", "3.10"),
    (Release.of("v1.34.8"), "3.6.5-0", "v1.12.1", "3.10.1"),
    (R135, "3.6.6-0", "v1.13.1", "3.10.1"),
    (R136, "3.6.8-0", "v1.14.2", "3.10.2"),
    (Release.of("v1.37.0"), "3.7.0-0", "v1.14.4", "3.10.2"),
    (R137, "3.7.0-0", "v1.14.6", "3.10.2"),
], ids=["1.33 targets etcd 3.5.24-0", "1.34 moves to etcd 3.6", "1.35 targets etcd 3.6.6-0",
        "1.36 targets etcd 3.6.8-0 and pause 3.10.2", "1.37.0 targets etcd 3.7.0-0",
        "1.37.1 moves CoreDNS to v1.14.6"])
def test_image_tags_per_release(release, etcd, coredns, pause):
    own_etcd = release.etcd_image_tag_for(str(release.version))
    assert (own_etcd, release.coredns_image_tag, release.pause_image_tag) == ((etcd, False), coredns, pause)


@pytest.mark.parametrize("text, v1beta3, gates", [
    ("v1.33.10", True, {"WaitForAllControlPlaneComponents": (True, False),
                        "ControlPlaneKubeletLocalMode": (True, False), "NodeLocalCRISocket": (False, False)}),
    ("v1.34.8", True, {"WaitForAllControlPlaneComponents": (True, True),
                       "ControlPlaneKubeletLocalMode": (True, False), "NodeLocalCRISocket": (True, False)}),
    ("v1.35.9", True, {"ControlPlaneKubeletLocalMode": (True, True), "NodeLocalCRISocket": (True, False)}),
    ("v1.36.4", True, {"NodeLocalCRISocket": (True, True)}),
    ("v1.37.1", False, {}),
], ids=["1.33 has the three gates in beta, NodeLocalCRISocket off",
        "1.34 locks WaitForAllControlPlaneComponents and turns NodeLocalCRISocket on",
        "1.35 removed WaitForAllControlPlaneComponents and locks ControlPlaneKubeletLocalMode",
        "1.36 locks NodeLocalCRISocket",
        "1.37 reads only v1beta4 and has none of the gates left"])
def test_release_matrix(text, v1beta3, gates):
    release = Release.of(text)
    assert ("kubeadm.k8s.io/v1beta3" in release.accepted_config_versions) is v1beta3
    assert "kubeadm.k8s.io/v1beta4" in release.accepted_config_versions
    known = {name: value for name, value in release.feature_gates.items()
             if name in ("WaitForAllControlPlaneComponents", "ControlPlaneKubeletLocalMode", "NodeLocalCRISocket")}
    assert known == gates
    for name in ("WaitForAllControlPlaneComponents", "ControlPlaneKubeletLocalMode"):
        assert release.gate(name) is True
    assert ("PublicKeysECDSA" in release.feature_gates) is v1beta3


@pytest.mark.parametrize("text, gates, expected", [
    ("v1.33.10", {}, False), ("v1.33.10", {"NodeLocalCRISocket": True}, True),
    ("v1.35.9", {"NodeLocalCRISocket": False}, False), ("v1.36.4", {"NodeLocalCRISocket": False}, True),
    ("v1.37.1", {}, True),
], ids=["off by default in 1.33", "turned on in 1.33", "turned off in 1.35", "locked on in 1.36",
        "always on once removed in 1.37"])
def test_node_local_cri_socket_gate(text, gates, expected):
    assert Release.of(text).gate("NodeLocalCRISocket", gates) is expected


def test_releases_outside_1_33_to_1_37_are_not_emulated():
    with pytest.raises(ValueError, match="v1.33 - v1.37"):
        Release.of("v1.32.4")


def test_versions_order_with_pre_releases_first():
    assert parse_version("v1.37.0-rc.1") < parse_version("v1.37.0") < parse_version("1.37.1")


def test_images_list_in_kubeadm_order():
    assert images.all_images(cluster(R136), R136) == [
        "registry.k8s.io/kube-apiserver:v1.36.4", "registry.k8s.io/kube-controller-manager:v1.36.4",
        "registry.k8s.io/kube-scheduler:v1.36.4", "registry.k8s.io/kube-proxy:v1.36.4",
        "registry.k8s.io/coredns/coredns:v1.14.2", "registry.k8s.io/pause:3.10.2", "registry.k8s.io/etcd:3.6.8-0"]


@pytest.mark.parametrize("version,etcd,nearest", [
    ("v1.37.1", "3.7.0-0", False), ("v1.36.4", "3.6.8-0", False), ("v1.35.9", "3.6.6-0", False),
    ("v1.34.2", "3.6.6-0", True), ("v1.38.0", "3.7.0-0", True)])
def test_kubeadm_deploys_the_etcd_its_table_holds_for_the_control_planes_version(version, etcd, nearest):
    # kubeadm's constants.SupportedEtcdVersion: its own minor and the two before it, each minor's own etcd; for any
    # other version the nearest entry's, with images.go's warning (a kubeadm 1.37 listing v1.36 images lists 3.6.8-0,
    # not its own 3.7.0-0)
    wanted = cluster(R137, kubernetesVersion=version)
    assert images.all_images(wanted, R137)[-1] == "registry.k8s.io/etcd:" + etcd
    warning = images.etcd_version_warning(wanted, R137)
    assert (warning == "could not find officially supported version of etcd for Kubernetes %s, falling back to the nearest "
                       "etcd version (%s)" % (version, etcd)) if nearest else warning is None
    assert images.etcd_version_warning(cluster(R137, kubernetesVersion="v1.34.2", etcd={"local": {"imageTag": "3.6.5-0"}}), R137) is None


def test_a_custom_repository_drops_the_coredns_path_and_external_etcd_drops_etcd():
    custom = cluster(R136, imageRepository="mirror.local/k8s",
                     etcd={"external": {"endpoints": ["https://e:2379"]}})
    listed = images.all_images(custom, R136)
    assert "mirror.local/k8s/coredns:v1.14.2" in listed
    assert not any("etcd" in image for image in listed)


def test_flags_are_sorted_and_extra_args_replace_defaults():
    c = cluster(apiServer={"extraArgs": [{"name": "authorization-mode", "value": "RBAC"},
                                         {"name": "audit-log-path", "value": "/var/log/a.log"}]})
    pod = manifests.apiserver_pod(c, R136, ADV, 6443, "IfNotPresent")
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
    pod = manifests.apiserver_pod(cluster(), R136, ADV, 6443, "IfNotPresent")
    assert pod["metadata"]["labels"] == {"component": "kube-apiserver", "tier": "control-plane"}
    assert pod["metadata"]["annotations"] == {manifests.APISERVER_ENDPOINT_ANNOTATION: ADV + ":6443"}
    spec = pod["spec"]
    assert spec["hostNetwork"] is True and spec["priorityClassName"] == "system-node-critical"
    assert spec["priority"] == 2000001000
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    container = spec["containers"][0]
    assert container["image"] == "registry.k8s.io/kube-apiserver:v1.36.4"
    assert container["livenessProbe"] == {"failureThreshold": 8, "initialDelaySeconds": 10, "periodSeconds": 10,
                                          "timeoutSeconds": 15, "httpGet": {"host": ADV, "path": "/livez",
                                                                            "port": "probe-port", "scheme": "HTTPS"}}
    assert container["ports"] == [{"containerPort": 6443, "name": "probe-port", "protocol": "TCP"}]
    assert container["readinessProbe"]["periodSeconds"] == 1 and container["readinessProbe"]["failureThreshold"] == 3
    assert container["startupProbe"]["failureThreshold"] == 24


@pytest.mark.parametrize("text, port", [("v1.33.10", 2381), ("v1.34.8", "probe-port"), ("v1.37.1", "probe-port")],
                         ids=["1.33 probes etcd on port 2381 by number", "1.34 names the probe port",
                              "1.37 names the probe port"])
def test_etcd_probes_per_release(text, port):
    release = Release.of(text)
    container = manifests.etcd_pod(cluster(release), release, "cp-1", ADV, "IfNotPresent")["spec"]["containers"][0]
    assert [container[k]["httpGet"]["path"] for k in ("livenessProbe", "readinessProbe", "startupProbe")] == [
        "/livez", "/readyz", "/readyz"]
    assert {container[k]["httpGet"]["port"] for k in ("livenessProbe", "readinessProbe", "startupProbe")} == {port}
    assert container.get("ports") == (None if port == 2381 else [
        {"containerPort": 2381, "name": "probe-port", "protocol": "TCP"}])


@pytest.mark.parametrize("text, image_tag, expected", [
    ("v1.33.10", "", ["--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s"]),
    ("v1.34.8", "", ["--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s"]),
    ("v1.35.9", "3.5.24-0", ["--experimental-initial-corrupt-check=true",
                             "--experimental-watch-progress-notify-interval=5s"]),
    ("v1.36.4", "3.5.24-0", ["--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s"]),
], ids=["1.33 with etcd 3.5 uses the experimental flags", "1.34 with etcd 3.6 uses etcd 3.6's names",
        "1.35 keeps the experimental flags for a custom etcd 3.5 image",
        "1.36 no longer generates the experimental flags at all"])
def test_etcd_flags_follow_the_etcd_minor(text, image_tag, expected):
    release = Release.of(text)
    c = cluster(release, etcd={"local": {"imageTag": image_tag}} if image_tag else {})
    command = flags(manifests.etcd_pod(c, release, "cp-1", ADV, "IfNotPresent"))
    assert [f for f in command if "corrupt" in f.lower() or "progress" in f] == expected


def test_etcd_init_names_only_itself_and_no_cluster_state():
    pod = manifests.etcd_pod(cluster(), R136, "cp-1", ADV, "IfNotPresent")
    command = flags(pod)
    assert "--initial-cluster=cp-1=https://%s:2380" % ADV in command
    assert not any(f.startswith("--initial-cluster-state") for f in command)
    for expected in ("--listen-client-urls=https://127.0.0.1:2379,https://%s:2379" % ADV,
                     "--listen-metrics-urls=http://127.0.0.1:2381", "--client-cert-auth=true",
                     "--peer-client-cert-auth=true", "--snapshot-count=10000", "--data-dir=/var/lib/etcd"):
        assert expected in command
    assert pod["metadata"]["annotations"] == {manifests.ETCD_ENDPOINT_ANNOTATION: "https://%s:2379" % ADV}
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}


def test_etcd_join_lists_every_member_and_joins_existing():
    members = [("cp-1", "https://10.0.0.11:2380"), ("cp-2", "https://10.0.0.12:2380")]
    command = flags(manifests.etcd_pod(cluster(), R136, "cp-2", "10.0.0.12", "IfNotPresent", initial_cluster=members))
    assert "--initial-cluster=cp-1=https://10.0.0.11:2380,cp-2=https://10.0.0.12:2380" in command
    assert "--initial-cluster-state=existing" in command


def test_controller_manager_gets_cidr_flags_only_with_a_pod_subnet():
    without = flags(manifests.controller_manager_pod(cluster(), R136, "IfNotPresent"))
    assert not any(f.startswith("--allocate-node-cidrs") for f in without)
    with_subnet = flags(manifests.controller_manager_pod(cluster(networking={"podSubnet": "10.244.0.0/16"}), R136,
                                                         "IfNotPresent"))
    assert "--allocate-node-cidrs=true" in with_subnet and "--cluster-cidr=10.244.0.0/16" in with_subnet
    assert "--service-cluster-ip-range=10.96.0.0/12" in with_subnet
    assert "--controllers=*,bootstrapsigner,tokencleaner" in without
    assert "--kubeconfig=/etc/kubernetes/controller-manager.conf" in without


@pytest.mark.parametrize("text, port", [("v1.33.10", 10259), ("v1.36.4", "probe-port")],
                         ids=["1.33 by number", "1.34 and later by the named port"])
def test_scheduler_probes_livez_and_readyz_on_its_local_port(text, port):
    container = manifests.scheduler_pod(cluster(), Release.of(text), "IfNotPresent")["spec"]["containers"][0]
    assert [container[k]["httpGet"] for k in ("livenessProbe", "readinessProbe", "startupProbe")] == [
        {"host": "127.0.0.1", "path": path, "port": port, "scheme": "HTTPS"} for path in ("/livez", "/readyz", "/livez")]


@pytest.mark.parametrize("text, mounted", [("v1.35.9", True), ("v1.36.4", False)],
                         ids=["1.35 mounts the flex-volume directory", "1.36 no longer mounts it"])
def test_controller_manager_flex_volume_mount(text, mounted):
    pod = manifests.controller_manager_pod(cluster(), Release.of(text), "IfNotPresent")
    assert ("flexvolume-dir" in [v["name"] for v in pod["spec"]["volumes"]]) is mounted


def test_rendering_is_stable_sorted_yaml():
    pod = manifests.etcd_pod(cluster(), R136, "cp-1", ADV, "IfNotPresent")
    text = manifests.render(pod)
    assert text == manifests.render(manifests.load(text))
    assert text.startswith("apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:")
    assert "creationTimestamp: null" in text and text.endswith("status: {}\n")
    assert manifests.image_tag(pod) == "3.6.8-0"


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


@pytest.mark.parametrize("name, extra, pause, cri_in_flags, expected", [
    ("cp-1", [], "registry.k8s.io/pause:3.10", True,
     'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock '
     '--pod-infra-container-image=registry.k8s.io/pause:3.10"\n'),
    ("cp-9", [{"name": "node-labels", "value": "topology.kubernetes.io/zone=fd-1"}], "registry.k8s.io/pause:3.10.1",
     False, 'KUBELET_KUBEADM_ARGS="--hostname-override=cp-9 --node-labels=topology.kubernetes.io/zone=fd-1 '
            '--pod-infra-container-image=registry.k8s.io/pause:3.10.1"\n'),
    ("cp-1", [], None, False, 'KUBELET_KUBEADM_ARGS=""\n'),
], ids=["1.33 writes the CRI socket and the pause image",
        "1.34 keeps the socket out (NodeLocalCRISocket); a renamed node gets --hostname-override, extra args sorted in",
        "1.35 and later write neither: an empty line"])
def test_kubeadm_flags_env(name, extra, pause, cri_in_flags, expected):
    registration = {"name": name, "criSocket": config.DEFAULT_CRI_SOCKET, "kubeletExtraArgs": extra}
    assert kubeletconfig.flags_env(registration, "cp-1", pause, cri_in_flags) == expected


def test_instance_config_holds_the_nodes_cri_socket_only():
    assert yaml.safe_load(kubeletconfig.instance_config("/run/containerd/containerd.sock")) == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock"}


def test_an_upgrade_strips_flags_kubeadm_no_longer_writes():
    text = ('KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock '
            '--node-labels=a=b --pod-infra-container-image=registry.k8s.io/pause:3.10"\n')
    assert kubeletconfig.flag_value(text, "container-runtime-endpoint") == "unix:///var/run/containerd/containerd.sock"
    assert kubeletconfig.flags_without(text, ("container-runtime-endpoint", "pod-infra-container-image")) == \
        'KUBELET_KUBEADM_ARGS="--node-labels=a=b"\n'


def test_stored_yaml_parses_back():
    assert yaml.safe_load(manifests.render(manifests.scheduler_pod(cluster(), R136, "Always")))["spec"]["containers"][0][
        "imagePullPolicy"] == "Always"
