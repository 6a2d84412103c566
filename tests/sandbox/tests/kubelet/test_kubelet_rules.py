# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet emulation's pure parts: flags, config, manifests, back-off, and the objects it writes."""

import copy
import datetime
import re

import pytest

from kcpsim.kubelet import backoff, config, flags, manifests, objects, pods
from kcpsim.kubelet.pods import PodState
from kcpsim.runtime import network

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
LATER = NOW + datetime.timedelta(seconds=40)


# --- flags ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("release, refused", [("v1.34.8", False), ("v1.35.9", True), ("v1.37.1", True)])
def test_pod_infra_container_image_is_gone_from_the_kubelet_since_1_35(monkeypatch, release, refused):
    """kubeadm 1.34 and older write it to kubeadm-flags.env; kubelet 1.35 no longer has it (kubernetes#133779) and
    stops at start, so an upgrade that leaves it there leaves a kubelet that does not start."""
    monkeypatch.setenv("KCPSIM_VERSION", release)
    argv = ["--config=/var/lib/kubelet/config.yaml", "--pod-infra-container-image=registry.k8s.io/pause:3.10"]
    if refused:
        with pytest.raises(flags.FlagError, match="^unknown flag: --pod-infra-container-image$"):
            flags.parse(argv)
    else:
        assert flags.parse(argv).get("pod-infra-container-image") == "registry.k8s.io/pause:3.10"


def test_kubeadm_style_flags_parse_in_both_spellings():
    parsed = flags.parse(["--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
                          "--kubeconfig", "/etc/kubernetes/kubelet.conf", "--config=/var/lib/kubelet/config.yaml",
                          "--container-runtime-endpoint=unix:///run/containerd/containerd.sock",
                          "--node-ip=172.31.250.11",
                          "--fail-swap-on=false", "--register-node=false", ""])
    assert parsed.get("kubeconfig") == "/etc/kubernetes/kubelet.conf"
    assert parsed.get("node-ip") == "172.31.250.11"
    assert parsed.get("register-node") is False
    assert parsed.ignored == ["fail-swap-on"]
    assert parsed.runtime_socket == "/run/containerd/containerd.sock"


def test_flags_left_out_take_the_real_kubelets_defaults():
    parsed = flags.parse([])
    assert (parsed.get("register-node"), parsed.get("version"), parsed.get("cert-dir", "/var/lib/kubelet/pki")) == (
        True, False, "/var/lib/kubelet/pki")
    assert parsed.runtime_socket == "/run/containerd/containerd.sock"


@pytest.mark.parametrize("text, labels", [
    ("topology.kubernetes.io/zone=fd-a", {"topology.kubernetes.io/zone": "fd-a"}),
    ("node.kubernetes.io/exclude-from-external-load-balancers=,example.com/rack=r1",
     {"node.kubernetes.io/exclude-from-external-load-balancers": "", "example.com/rack": "r1"}),
    ("kubelet.kubernetes.io/role=cp", {"kubelet.kubernetes.io/role": "cp"}),
    ("", {}),
], ids=[
    "the zone label is allowed",
    "node.kubernetes.io labels and other domains are allowed, empty values too",
    "the kubelet.kubernetes.io namespace is allowed",
    "no labels is fine",
])
def test_allowed_node_labels(text, labels):
    assert flags.parse_labels(text) == labels


@pytest.mark.parametrize("argv, labels", [
    (["--node-labels=example.com/rack=r1", "--node-labels=topology.kubernetes.io/zone=fd-b"],
     {"example.com/rack": "r1", "topology.kubernetes.io/zone": "fd-b"}),
    (["--node-labels=topology.kubernetes.io/zone=fd-a,example.com/rack=r1", "--node-labels",
      "topology.kubernetes.io/zone=fd-b"], {"example.com/rack": "r1", "topology.kubernetes.io/zone": "fd-b"}),
], ids=[
    "kubeadm's flags and /etc/default/kubelet's both reach the node",
    "a key given again takes its later value",
])
def test_repeated_node_labels_merge(argv, labels):
    assert flags.parse(argv).labels == labels


@pytest.mark.parametrize("text, message", [
    ("node-role.kubernetes.io/control-plane=", "unknown 'kubernetes.io' or 'k8s.io' labels"),
    ("foo.k8s.io/x=y", "unknown 'kubernetes.io' or 'k8s.io' labels"),
    ("novalue", "expected <name>=<value>"),
    ("bad key=1", "expected <name>=<value>"),
], ids=[
    "a node-role label is refused, as by the real kubelet",
    "any other k8s.io label is refused",
    "an entry without = is refused",
    "a key with a space is refused",
])
def test_refused_node_labels(text, message):
    with pytest.raises(flags.FlagError, match=message):
        flags.parse_labels(text)


def test_taints_parse_with_and_without_values():
    assert flags.parse_taints("node-role.kubernetes.io/control-plane:NoSchedule,dedicated=etcd:NoExecute") == [
        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "etcd", "effect": "NoExecute"}]


@pytest.mark.parametrize("argv, message", [
    (["--kubeconfig"], "flag needs an argument: --kubeconfig"),
    (["stray"], "unknown command stray"),
    (["--register-node=maybe"],
     'invalid argument "maybe" for "--register-node" flag: strconv.ParseBool: parsing "maybe": invalid syntax'),
    (["--register-with-taints=a:Sometimes"], "effect one of NoSchedule"),
], ids=[
    "a value flag at the end without its value is refused as pflag words it",
    "a positional argument is refused as the real kubelet words it",
    "a boolean flag with a non-boolean value is refused as pflag words it",
    "a taint with an unknown effect is refused",
])
def test_malformed_command_lines(argv, message):
    with pytest.raises(flags.FlagError, match=re.escape(message)):
        flags.parse(argv)


# --- config -----------------------------------------------------------------------------------------------

def test_config_defaults_are_the_real_kubelets(monkeypatch):
    monkeypatch.delenv("KCPSIM_HEARTBEAT", raising=False)
    monkeypatch.delenv("KCPSIM_PROBE_SCALE", raising=False)
    parsed = config.parse("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                          "staticPodPath: /etc/kubernetes/manifests\n", "config.yaml")
    assert (parsed.static_pod_path, parsed.heartbeat, parsed.node_lease_duration, parsed.healthz_port,
            parsed.healthz_bind_address, parsed.probe_scale) == ("/etc/kubernetes/manifests", 10.0, 40, 10248,
                                                                 "127.0.0.1", 1.0)


def test_sandbox_speedups_override_the_heartbeat_and_probe_timing(monkeypatch):
    monkeypatch.setenv("KCPSIM_HEARTBEAT", "0.5")
    monkeypatch.setenv("KCPSIM_PROBE_SCALE", "0.1")
    parsed = config.parse("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                          "nodeStatusUpdateFrequency: 20s\n", "config.yaml")
    assert (parsed.node_status_update_frequency, parsed.heartbeat, parsed.probe_scale) == (20.0, 0.5, 0.1)


@pytest.mark.parametrize("text, message", [
    ("kind: Pod\napiVersion: v1\n", "is not KubeletConfiguration"),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nnodeStatusUpdateFrequency: soon\n",
     "nodeStatusUpdateFrequency"),
    ("a: [", "failed to load kubelet config file"),
], ids=["another kind is refused", "a bad duration names its field", "broken YAML is refused"])
def test_bad_config_is_refused(text, message):
    with pytest.raises(config.ConfigError, match=message):
        config.parse(text, "config.yaml")


def test_a_missing_config_file_says_so(tmp_path):
    with pytest.raises(config.ConfigError, match="no such file or directory"):
        config.load(str(tmp_path / "config.yaml"))


# --- manifests --------------------------------------------------------------------------------------------

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd", "namespace": "kube-system"},
       "spec": {"containers": [{"name": "etcd", "image": "registry.k8s.io/etcd:3.6.8-0",
                                "command": ["etcd", "--name=cp-1"], "args": ["--snapshot-count=10000"],
                                "env": [{"name": "GOMAXPROCS", "value": 2}, {"name": "FROM_FIELD",
                                                                             "valueFrom": {}}]}]}}


def test_the_command_line_replaces_argv0_with_the_image_executable():
    assert manifests.command_line(POD["spec"]["containers"][0], "/opt/etcd") == [
        "/opt/etcd", "--name=cp-1", "--snapshot-count=10000"]


def test_the_environment_is_the_containers_env_plus_path_and_sandbox_settings():
    env = manifests.environment(POD["spec"]["containers"][0], {"HOME": "/root", "KCPSIM_HEARTBEAT": "1"})
    assert env == {"PATH": env["PATH"], "KCPSIM_HEARTBEAT": "1", "GOMAXPROCS": "2"}


def test_the_config_hash_ignores_formatting_and_follows_content(tmp_path):
    import json
    import yaml
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(POD))
    (tmp_path / "b.json").write_text(json.dumps(POD, indent=4))
    a = manifests.read_file(str(tmp_path / "a.yaml"))[0]
    b = manifests.read_file(str(tmp_path / "b.json"))[0]
    assert a.config_hash == b.config_hash and len(a.config_hash) == 32
    changed = json.loads(json.dumps(POD))
    changed["spec"]["containers"][0]["command"].append("--x")
    assert manifests.config_hash(changed) != a.config_hash


def test_the_directory_scan_skips_dotfiles_other_suffixes_and_duplicates(tmp_path):
    import yaml
    for name in ("etcd.yaml", ".etcd.yaml.swp", "notes.txt", "z-etcd-copy.yml"):
        (tmp_path / name).write_text(yaml.safe_dump(POD))
    pods, problems = manifests.ManifestDir(str(tmp_path)).scan()
    assert list(pods) == ["etcd"] and pods["etcd"].path.endswith("/etcd.yaml")
    assert problems == ["%s/z-etcd-copy.yml: a static pod named 'etcd' already comes from %s/etcd.yaml"
                        % (tmp_path, tmp_path)]


def test_a_half_written_manifest_keeps_the_last_good_pod(tmp_path):
    import yaml
    path = tmp_path / "etcd.yaml"
    path.write_text(yaml.safe_dump(POD))
    directory = manifests.ManifestDir(str(tmp_path))
    good = directory.scan()[0]
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: etcd\n")
    again, problems = directory.scan()
    assert again["etcd"].config_hash == good["etcd"].config_hash and problems
    path.unlink()
    assert directory.scan() == ({}, [])


def test_an_unchanged_manifest_is_parsed_again_only_after_the_full_reread_period(tmp_path, monkeypatch):
    import yaml
    path = tmp_path / "etcd.yaml"
    path.write_text(yaml.safe_dump(POD))
    reads, now = [], [100.0]
    real_read = manifests.read_file
    monkeypatch.setattr(manifests, "read_file", lambda p: reads.append(p) or real_read(p))
    directory = manifests.ManifestDir(str(tmp_path), clock=lambda: now[0])
    first = directory.scan()[0]
    assert directory.scan()[0] == first and len(reads) == 1
    now[0] += manifests.REREAD_SECONDS
    assert directory.scan()[0]["etcd"].config_hash == first["etcd"].config_hash and len(reads) == 2
    changed = copy.deepcopy(POD)
    changed["spec"]["containers"][0]["command"].append("--x")
    path.write_text(yaml.safe_dump(changed))
    assert directory.scan()[0]["etcd"].config_hash == manifests.config_hash(changed) and len(reads) == 3


@pytest.mark.parametrize("pod, problem", [
    ({"kind": "Deployment"}, "not a Pod"),
    ({"kind": "Pod", "metadata": {}}, "metadata.name is missing"),
    ({"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": []}}, "spec.containers is empty"),
    ({"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}, "image is missing"),
], ids=["a non-Pod is refused", "a nameless pod is refused", "a pod without containers is refused",
        "a container without image is refused"])
def test_unrunnable_manifests_are_reported(tmp_path, pod, problem):
    import yaml
    (tmp_path / "x.yaml").write_text(yaml.safe_dump(pod))
    manifest, reason = manifests.read_file(str(tmp_path / "x.yaml"))
    assert manifest is None and problem in reason


# --- back-off ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("failures, delay", [(1, 0), (2, 1), (3, 2), (4, 4), (5, 8), (6, 10), (50, 10)],
                         ids=["the first restart is immediate", "the second waits 1 s", "then 2 s", "then 4 s",
                              "then 8 s", "then the 10 s cap", "and never more than 10 s"])
def test_restart_back_off(failures, delay):
    assert backoff.restart_delay(failures) == delay


@pytest.mark.parametrize("failures, delay", [(1, 0.5), (2, 1), (3, 2), (6, 10), (30, 10)],
                         ids=["API retry starts at half a second", "then 1 s", "then 2 s", "up to 10 s",
                              "and stays at 10 s"])
def test_api_retry_back_off(failures, delay):
    assert backoff.api_retry_delay(failures) == delay


# --- objects ----------------------------------------------------------------------------------------------

MACHINE = {"hostname": "cp-1", "node_ip": "172.31.250.11", "runtime_socket": "/run/containerd/containerd.sock",
           "cpus": 2, "memory_kib": 1024, "storage_kib": 2048, "os_image": "Debian GNU/Linux 12 (bookworm)",
           "kernel": "6.1.0", "machine_id": "m", "boot_id": "b", "kubelet_version": "v1.37.1"}


CRI_VERSION = {"version": "0.1.0", "runtimeName": "containerd", "runtimeVersion": "v1.7.22", "runtimeApiVersion": "v1"}


@pytest.mark.parametrize("answer, reported", [
    (CRI_VERSION, "containerd://1.7.22"),
    (dict(CRI_VERSION, runtimeVersion="1.7.23"), "containerd://1.7.23"),
    (None, ""),
    ({"runtimeName": "containerd"}, ""),
], ids=["the runtime's name and version without the v", "a version without a v is taken as is",
        "no answer from the runtime yet", "an answer without a version"])
def test_the_container_runtime_version_comes_from_the_runtimes_answer(answer, reported):
    assert objects.node_status(MACHINE, True, answer, [], NOW)["nodeInfo"]["containerRuntimeVersion"] == reported


def _ready(status):
    return objects.by_type(status["conditions"])["Ready"]


def test_the_node_has_the_kubelet_default_labels_plus_flag_labels_and_taints():
    node = objects.node("cp-1", {"topology.kubernetes.io/zone": "fd-a"},
                        [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
    assert node["metadata"]["labels"] == {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": "cp-1", "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": "fd-a"}
    assert node["spec"]["taints"] == [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]


ROLE = {"node-role.kubernetes.io/control-plane": ""}


@pytest.mark.parametrize("initial, existing, updates", [
    (objects.node_labels("cp-1", {"topology.kubernetes.io/zone": "fd-b"}),
     dict(objects.node_labels("cp-1", {"topology.kubernetes.io/zone": "fd-a"}), **ROLE),
     {"topology.kubernetes.io/zone": "fd-b"}),
    (objects.node_labels("cp-1", {}), dict(objects.node_labels("cp-1", {"topology.kubernetes.io/zone": "fd-a"}), **ROLE),
     {}),
    (objects.node_labels("cp-1", {"topology.kubernetes.io/zone": ""}),
     objects.node_labels("cp-1", {"topology.kubernetes.io/zone": "fd-a"}), {"topology.kubernetes.io/zone": None}),
    (objects.node_labels("cp-1", {"example.com/rack": "r2"}), objects.node_labels("cp-1", {"example.com/rack": "r1"}),
     {}),
    (objects.node_labels("cp-1", {}), {"kubernetes.io/hostname": "old", "kubernetes.io/os": "linux"},
     {"kubernetes.io/hostname": "cp-1", "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
      "beta.kubernetes.io/arch": "amd64"}),
], ids=[
    "a restarted kubelet with another zone moves the node to it and keeps kubeadm's role label",
    "a kubelet that names no zone leaves the node's zone alone",
    "a zone given empty removes the label",
    "a label that is not a default one is only set at registration",
    "missing or stale default labels are brought back",
])
def test_an_existing_node_gets_its_default_labels_back(initial, existing, updates):
    assert objects.default_label_updates(initial, existing) == updates


@pytest.mark.parametrize("runtime_up, status, reason", [
    (True, "True", "KubeletReady"), (False, "False", "KubeletNotReady"),
], ids=["the node is Ready while the runtime socket exists", "the node is NotReady without the runtime socket"])
def test_node_readiness_follows_the_runtime(runtime_up, status, reason):
    result = objects.node_status(MACHINE, runtime_up, CRI_VERSION, [], NOW)
    assert (_ready(result)["status"], _ready(result)["reason"]) == (status, reason)
    assert result["nodeInfo"]["kubeletVersion"] == "v1.37.1"
    assert result["nodeInfo"]["containerRuntimeVersion"] == "containerd://1.7.22"


@pytest.mark.parametrize("runtime_up, network_not_ready, message", [
    (True, network.NOT_READY, network.NOT_READY),
    (False, network.NOT_READY, "container runtime is down: /run/containerd/containerd.sock is missing"),
], ids=["a node without a pod network is NotReady in the runtime's words",
        "a missing runtime is named before a missing network"])
def test_node_readiness_waits_for_the_pod_network(runtime_up, network_not_ready, message):
    ready = _ready(objects.node_status(MACHINE, runtime_up, CRI_VERSION, [], NOW, network_not_ready))
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "KubeletNotReady", message)


def _network_dirs(tmp_path, files, plugins):
    conf, bins = tmp_path / "net.d", tmp_path / "bin"
    conf.mkdir()
    bins.mkdir()
    for name, text in files.items():
        (conf / name).write_text(text)
    for plugin in plugins:
        (bins / plugin).write_text("#!/bin/sh\n")
        (bins / plugin).chmod(0o755)
    return str(conf), str(bins)


BRIDGE = '{"cniVersion": "1.0.0", "name": "b", "plugins": [{"type": "bridge"}, {"type": "portmap"}]}'


@pytest.mark.parametrize("files, plugins, ready", [
    ({}, [], False),
    ({"10-bridge.conflist": BRIDGE}, ["bridge", "portmap"], True),
    ({"10-bridge.conflist": BRIDGE}, ["bridge"], False),
    ({"10-bridge.conf": '{"cniVersion": "0.4.0", "name": "b", "type": "bridge"}'}, ["bridge"], True),
    ({"05-broken.conflist": "{", "10-bridge.conflist": BRIDGE}, ["bridge", "portmap"], True),
    ({".10-bridge.conflist": BRIDGE, "10-bridge.conflist.bak": BRIDGE}, ["bridge", "portmap"], False),
    ({"10-empty.conflist": '{"name": "b", "plugins": []}'}, [], False),
], ids=["no network config: not ready", "a conflist whose every plugin is installed: ready",
        "a plugin of the chain missing from /opt/cni/bin: not ready", "a single-plugin .conf: ready",
        "an unreadable config is skipped for the next one", "hidden files and other extensions are not configs",
        "a config naming no plugin: not ready"])
def test_the_pod_network_is_ready_once_a_config_and_its_plugins_exist(tmp_path, files, plugins, ready):
    reason = network.not_ready_reason(*_network_dirs(tmp_path, files, plugins))
    assert reason == (None if ready else network.NOT_READY)


def test_a_condition_keeps_its_transition_time_until_its_status_changes():
    first = objects.node_status(MACHINE, True, CRI_VERSION, [], NOW)
    same = objects.node_status(MACHINE, True, CRI_VERSION, first["conditions"], LATER)
    flipped = objects.node_status(MACHINE, False, CRI_VERSION, same["conditions"], LATER)
    assert _ready(same)["lastTransitionTime"] == "2026-03-01T12:00:00Z"
    assert _ready(same)["lastHeartbeatTime"] == "2026-03-01T12:00:40Z"
    assert _ready(flipped)["lastTransitionTime"] == "2026-03-01T12:00:40Z"


def test_the_lease_is_held_by_the_node_and_owned_by_it():
    lease = objects.lease("cp-1", "uid-1", 40, NOW)
    assert lease["metadata"]["namespace"] == "kube-node-lease"
    assert lease["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "cp-1",
                                                     "uid": "uid-1"}]
    assert lease["spec"] == {"holderIdentity": "cp-1", "leaseDurationSeconds": 40,
                             "renewTime": "2026-03-01T12:00:00.000000Z"}


def _manifest():
    pod = copy.deepcopy(POD)
    pod["metadata"]["labels"] = {"component": "etcd", "tier": "control-plane"}
    pod["metadata"]["annotations"] = {"kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://10.0.0.1:2379"}
    return manifests.Manifest("/etc/kubernetes/manifests/etcd.yaml", pod)


def test_the_mirror_pod_carries_the_manifest_metadata_and_config_annotations():
    manifest = _manifest()
    pod = objects.mirror_pod(manifest, "cp-1", "uid-1", NOW)
    assert pod["metadata"]["name"] == "etcd-cp-1"
    assert pod["metadata"]["labels"] == {"component": "etcd", "tier": "control-plane"}
    annotations = pod["metadata"]["annotations"]
    assert annotations["kubeadm.kubernetes.io/etcd.advertise-client-urls"] == "https://10.0.0.1:2379"
    assert annotations["kubernetes.io/config.hash"] == annotations["kubernetes.io/config.mirror"] == \
        manifest.config_hash
    assert pod["spec"]["nodeName"] == "cp-1"
    assert pod["metadata"]["ownerReferences"][0]["controller"] is True


@pytest.mark.parametrize("running, has_run, ready, phase, state", [
    (True, True, True, "Running", "running"),
    (True, True, False, "Running", "running"),
    (False, True, False, "Running", "waiting"),
    (False, False, False, "Pending", "waiting"),
], ids=[
    "a running, ready container makes a Running, Ready pod",
    "a running container that is not ready yet makes a Running pod that is not Ready",
    "a crash-looping container keeps its pod Running but not Ready",
    "a container that never ran leaves its pod Pending",
])
def test_mirror_pod_status(running, has_run, ready, phase, state):
    started = NOW.timestamp() if running else None
    pod_state = PodState(_manifest(), running, has_run, ready, 2, started, None if running else "CrashLoopBackOff",
                         "", 1 if has_run and not running else None)
    status = objects.pod_status(pod_state, "10.0.0.1", [], NOW, NOW)
    conditions = objects.by_type(status["conditions"])
    assert status["phase"] == phase
    assert conditions["Ready"]["status"] == ("True" if ready else "False")
    assert list(status["containerStatuses"][0]["state"]) == [state]
    assert status["containerStatuses"][0]["restartCount"] == 2
    assert status["podIP"] == status["hostIP"] == "10.0.0.1"


def test_the_status_fingerprint_changes_with_readiness_and_restarts_only():
    manifest = _manifest()
    base = objects.pod_status(PodState(manifest, True, True, True, 0, NOW.timestamp(), None, "", None),
                              "10.0.0.1", [], NOW, NOW)
    later = objects.pod_status(PodState(manifest, True, True, True, 0, NOW.timestamp(), None, "", None),
                               "10.0.0.1", base["conditions"], LATER, NOW)
    not_ready = objects.pod_status(PodState(manifest, True, True, False, 0, NOW.timestamp(), None, "", None),
                                   "10.0.0.1", base["conditions"], LATER, NOW)
    assert objects.status_fingerprint(later) == objects.status_fingerprint(base)
    assert objects.status_fingerprint(not_ready) != objects.status_fingerprint(base)


def test_the_csr_asks_the_kubelet_client_signer_for_client_auth():
    csr = objects.csr("csr-abcde", b"PEM", ["digital signature", "client auth"])
    assert csr["spec"] == {"request": "UEVN", "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                           "usages": ["digital signature", "client auth"]}


class _Container:
    def __init__(self, pid, config_hash):
        self.pid, self.config_hash, self.started_at, self.alive = pid, config_hash, 0.0, True

    def running(self):
        return self.alive

    def exit_code(self):
        return None if self.alive else 0


class _Runtime:
    """The runtime's side of the pod workers, in memory: which containers ran, and stops."""

    def __init__(self):
        self.spawned = []

    def spawn(self, name, argv, env, config_hash, restarts):
        self.spawned.append(_Container(100 + len(self.spawned), config_hash))
        return self.spawned[-1]

    @staticmethod
    def stop(container, grace):
        container.alive = False
        return True

    @staticmethod
    def held(name):
        return False


class _Images:
    @staticmethod
    def resolve(image):
        return "/opt/" + image


def test_a_changed_manifest_starts_a_new_pod_only_after_the_old_sandbox_is_replaced(monkeypatch):
    """An upgrade's etcd restart costs seconds (the old pod's termination, then a new sandbox), as on a real node."""
    monkeypatch.setattr(pods.probes.Prober, "start", lambda self: None)
    now = [1000.0]
    runtime = _Runtime()
    workers = pods.PodWorkers(runtime, _Images(), "10.0.0.1", environ={}, clock=lambda: now[0])
    workers.sync({"etcd": _manifest()}, True)
    assert [c.alive for c in runtime.spawned] == [True]
    changed = copy.deepcopy(_manifest().pod)
    changed["spec"]["containers"][0]["image"] = "registry.k8s.io/etcd:3.6.9-0"
    upgraded = manifests.Manifest("/etc/kubernetes/manifests/etcd.yaml", changed)
    workers.sync({"etcd": upgraded}, True)
    assert [c.alive for c in runtime.spawned] == [False]
    assert workers.snapshot()["etcd"].waiting_reason == "ContainerCreating"
    now[0] += pods.RECREATE_SECONDS - 0.1
    workers.sync({"etcd": upgraded}, True)
    assert len(runtime.spawned) == 1
    now[0] += 0.1
    workers.sync({"etcd": upgraded}, True)
    assert [c.alive for c in runtime.spawned] == [False, True]
    assert runtime.spawned[1].config_hash == upgraded.config_hash
