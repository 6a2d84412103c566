# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator's manual walk with the kubeadm emulation, end to end, on a sandbox of its own
(``t-kubeadm``, subnet 172.31.254.0/24, three hosts in three failure domains): ``kubeadm init`` on cp-1,
``init phase upload-certs`` for a fresh certificate key, ``kubeadm join --control-plane`` on cp-2 with it (the
stacked etcd member goes learner -> voter), kubectl through the load balancer, a worker on cp-3, a patch upgrade
with ``upgrade apply`` / ``upgrade node``, ``kubeadm reset`` removing cp-2's etcd member, and cp-2 joining again
with the shared certificates copied in beforehand instead of a certificate key. Refusals on the way: a kubelet
newer than the control plane, an injected join fault, a second Ready node of the same name, a control plane join
with neither the shared certificates nor a key, a target newer than kubeadm. Every Node carries its host's
failure domain as ``topology.kubernetes.io/zone``.

Every kubeadm command runs over SSH, as an operator (and the collection) runs it. Needs root; the sandbox
is torn down by ``sandbox down`` even when a step fails.
"""

import base64
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import threading

import node_setup
import yaml
import pytest
from kcpsandbox import state
from kcpsandbox.commands import wait_until
from kcpsim import etcdclient

pytestmark = pytest.mark.sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
SANDBOX = os.path.join(HERE, "..", "..", "sandbox")
NAME = "t-kubeadm"
SUBNET = "172.31.254.0/24"
STATE = os.path.join(state.state_root(), NAME)
ENDPOINT = "172.31.254.100:6443"
IPS = {"cp-1": "172.31.254.11", "cp-2": "172.31.254.12", "cp-3": "172.31.254.13"}
OLD, NEW = "v1.37.0", "v1.37.1"
ZONE_LABEL = "topology.kubernetes.io/zone"
# What a control plane join without a certificate key needs on the node (kubeadm-reference.md §2.3).
SHARED_CERTS = ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd/ca.crt",
                "etcd/ca.key")


def sandbox(*argv, timeout=120):
    return subprocess.run([SANDBOX, "--name", NAME] + list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout, check=False)


class Result:
    def __init__(self, completed):
        self.code = completed.returncode
        self.out = completed.stdout
        self.err = completed.stderr

    def __repr__(self):
        return "exit %d\n--- stdout\n%s\n--- stderr\n%s" % (self.code, self.out[-3000:], self.err[-3000:])


def ssh(host, command, timeout=300, stdin=None):
    """Run ``command`` on ``host`` over SSH with the sandbox's generated configuration."""
    completed = subprocess.run(["ssh", "-F", STATE + "/ssh/ssh_config", host, command], input=stdin or "",
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                               timeout=timeout, check=False)
    return Result(completed)


def host_file(host, path):
    return "%s/hosts/%s/fs/%s" % (STATE, host, path.lstrip("/"))


def kubectl_json(host, args):
    result = ssh(host, "kubectl --kubeconfig /etc/kubernetes/admin.conf %s -o json" % args, timeout=60)
    assert result.code == 0, result
    return json.loads(result.out)


def pki_files(host):
    """The files under the host's /etc/kubernetes/pki (relative paths), none when the directory is absent."""
    top = host_file(host, "/etc/kubernetes/pki")
    return sorted(os.path.relpath(os.path.join(d, f), top) for d, unused, files in os.walk(top) for f in files)


def provisioned_zone(host):
    """The failure domain the operator left in the host's /etc/default/kubelet (the kubelet unit's
    EnvironmentFile for the operator's flags)."""
    match = re.search(ZONE_LABEL + r"=([\w.-]+)", ssh(host, "cat /etc/default/kubelet").out)
    return match and match.group(1)


def host_files(host):
    """``{path: (mode, sha256 or link target)}`` of every file and directory the host keeps (its private dirs)."""
    top = host_file(host, "/")
    out = {}
    for directory, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if os.path.islink(path):
                content = os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    content = hashlib.sha256(handle.read()).hexdigest()
            else:
                content = None
            out["/" + os.path.relpath(path, top)] = (info.st_mode, content)
    return out


def changes_outside(before, after, allowed):
    """The paths added, removed or changed between two ``host_files`` snapshots that match none of ``allowed``."""
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    return sorted(p for p in changed if not any(fnmatch.fnmatch(p, pattern) for pattern in allowed))


def join_flags(cluster):
    """``<endpoint> --token <t> --discovery-token-ca-cert-hash <h>`` of the printed join command."""
    return cluster["join"].split("kubeadm join ")[1].split(" --control-plane")[0].strip()


def etcd_members(via="cp-1"):
    pki = host_file(via, "/etc/kubernetes/pki")
    client = etcdclient.Etcd.connect("https://%s:2379" % IPS[via], pki + "/etcd/ca.crt",
                                     pki + "/apiserver-etcd-client.crt", pki + "/apiserver-etcd-client.key",
                                     timeout=3.0)
    try:
        return client.members()
    finally:
        client.close()


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        pytest.skip("the sandbox needs root")
    if not os.path.exists(os.path.join(HERE, "..", "..", "kcpsim", "build.py")):
        pytest.skip("the release bundles cannot be built yet (kcpsim/build.py is missing)")
    with state.lock_for_test_run(NAME):
        sandbox("down", timeout=60)
        up = sandbox("up", "--machines", "3", "--failure-domains", "3", "--subnet", SUBNET, timeout=180)
        try:
            assert up.returncode == 0, up.stdout
            status = sandbox("status", "--json")
            assert status.returncode == 0, status.stdout
            zones = {h["name"]: h["failure_domain"] for h in json.loads(status.stdout)["hosts"]}
            assert sorted(zones) == sorted(IPS) and len(set(zones.values())) == 3, zones
            for index, host in enumerate(sorted(IPS)):
                # The operator's own steps on a bare host: node software of OLD from the mirror, the zone label,
                # forwarding (kubeadm's preflight checks it), the pod network's config (no network, no Ready node).
                node = node_setup.Node(STATE + "/ssh/ssh_config", host)
                node.prepare(STATE + "/mirror", OLD, zones[host])
                node.install_pod_network(STATE + "/mirror", OLD, index + 1)
                assert provisioned_zone(host) == zones[host]
            yield {"zones": zones}
        finally:
            down = sandbox("down", timeout=60)
            assert down.returncode == 0, down.stdout


def test_00_init_refuses_a_kubelet_newer_than_the_control_plane(cluster):
    result = ssh("cp-1", "kubeadm init --kubernetes-version v1.36.4 --control-plane-endpoint %s" % ENDPOINT)
    assert result.code == 1, result
    assert "[ERROR KubeletVersion]: the kubelet version is higher than the control plane version" in result.err
    assert 'Kubelet version: "%s" Control plane version: "v1.36.4"' % OLD in result.err
    assert pki_files("cp-1") == []
    assert not os.path.exists(host_file("cp-1", "/etc/kubernetes/admin.conf"))


def test_00b_init_dry_run_writes_only_its_dry_run_directory(cluster):
    before = host_files("cp-1")
    result = ssh("cp-1", "kubeadm init --dry-run --control-plane-endpoint %s --upload-certs" % ENDPOINT)
    assert result.code == 0, result
    after = host_files("cp-1")
    assert changes_outside(before, after, ["/etc/kubernetes/tmp", "/etc/kubernetes/tmp/kubeadm-init-dryrun*"]) == []
    dry_dirs = [p for p in after if fnmatch.fnmatch(p, "/etc/kubernetes/tmp/kubeadm-init-dryrun*")
                and p.count("/") == 4]
    assert len(dry_dirs) == 1, dry_dirs
    written = {p[len(dry_dirs[0]) + 1:] for p in after if p.startswith(dry_dirs[0] + "/")}
    for name in ("ca.crt", "etcd/ca.key", "admin.conf", "super-admin.conf", "kube-apiserver.yaml", "etcd.yaml",
                 "kubeadm-flags.env", "config.yaml"):
        assert name in written, sorted(written)
    assert 'Would perform action CREATE on resource "configmaps" in API group "core/v1"' in result.out
    assert '[dryrun] Would write file "/etc/kubernetes/manifests/etcd.yaml" with content:' in result.out
    assert "[dryrun] Finished dry-running successfully" in result.out
    assert not os.path.exists(host_file("cp-1", "/etc/kubernetes/admin.conf"))
    assert ssh("cp-1", "systemctl is-active kubelet").code != 0


def test_00b2_a_host_without_losetup_in_its_path_fails_preflight(cluster):
    result = ssh("cp-1", "env PATH=/usr/local/bin:/usr/bin:/bin kubeadm init phase preflight")
    assert result.code == 1, result
    assert "[ERROR FileExisting-losetup]: losetup not found in system path" in result.err, result
    assert "FileExisting-mount" not in result.err and "FileExisting-cp" not in result.err


def test_00c_a_scheduler_flag_the_binary_lacks_fails_init_at_the_control_plane_check(cluster):
    """A real kube-scheduler stops at an unknown flag, its static pod crash-loops, and init fails waiting for it
    (tests/sandbox/DESIGN.md, "Component flags"); reset leaves the host bare for the next init."""
    document = yaml.safe_dump_all([
        {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "InitConfiguration",
         "timeouts": {"controlPlaneComponentHealthCheck": "20s"}},
        {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration", "controlPlaneEndpoint": ENDPOINT,
         "kubernetesVersion": OLD, "scheduler": {"extraArgs": [{"name": "no-such-flag", "value": "1"}]}}])
    encoded = base64.b64encode(document.encode()).decode()
    assert ssh("cp-1", "echo %s | base64 -d > /root/bad-flag.yaml" % encoded).code == 0
    result = ssh("cp-1", "kubeadm init --config /root/bad-flag.yaml", timeout=180)
    assert result.code == 1, result
    assert "[control-plane-check] kube-scheduler is not healthy after 20s" in result.out, result
    assert "[control-plane-check] kube-apiserver is healthy after" in result.out, result
    assert ssh("cp-1", "kubeadm reset -f && rm /root/bad-flag.yaml", timeout=180).code == 0
    assert pki_files("cp-1") == []


def test_01_init_on_the_first_host(cluster):
    result = ssh("cp-1", "kubeadm init --control-plane-endpoint %s --upload-certs" % ENDPOINT)
    assert result.code == 0, result
    assert "Your Kubernetes control-plane has initialized successfully!" in result.out
    lines = result.out.splitlines()
    key = lines[lines.index("[upload-certs] Using certificate key:") + 1]
    assert re.match(r"^[0-9a-f]{64}$", key)
    cluster["certificate_key"] = key
    assert "--control-plane --certificate-key %s" % key in result.out
    stored = kubectl_json("cp-1", "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "apiVersion: kubeadm.k8s.io/v1beta4" in stored and "controlPlaneEndpoint: %s" % ENDPOINT in stored
    assert "kubernetesVersion: %s" % OLD in stored
    # The May 2026 patches: the API server reaches kubelets through its own ClusterRoleBinding.
    binding = kubectl_json("cp-1", "get clusterrolebinding kubeadm:apiserver-kubelet-client")
    assert binding["roleRef"]["name"] == "system:kubelet-api-admin"
    # NodeLocalCRISocket: the socket is the node's own kubelet configuration, not a flag or a Node annotation.
    with open(host_file("cp-1", "/var/lib/kubelet/instance-config.yaml")) as handle:
        assert "containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock" in handle.read()
    with open(host_file("cp-1", "/var/lib/kubelet/kubeadm-flags.env")) as handle:
        flags = handle.read()
    assert "--container-runtime-endpoint" not in flags and "--pod-infra-container-image" not in flags
    node = kubectl_json("cp-1", "get node cp-1")
    assert "kubeadm.alpha.kubernetes.io/cri-socket" not in (node["metadata"].get("annotations") or {})
    assert "[control-plane-check] kube-scheduler is healthy after" in result.out


def test_01b_upload_certs_phase_stores_the_certificates_under_a_new_key(cluster):
    result = ssh("cp-1", "kubeadm init phase upload-certs --upload-certs")
    assert result.code == 0, result
    assert '[upload-certs] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace' \
        in result.out
    lines = result.out.splitlines()
    key = lines[lines.index("[upload-certs] Using certificate key:") + 1]
    assert re.match(r"^[0-9a-f]{64}$", key) and key != cluster["certificate_key"]
    secret = kubectl_json("cp-1", "-n kube-system get secret kubeadm-certs")
    assert {"ca.crt", "ca.key", "sa.key", "sa.pub", "etcd-ca.crt", "etcd-ca.key", "front-proxy-ca.crt",
            "front-proxy-ca.key"} == set(secret["data"])
    # Only the new key opens the re-uploaded Secret: cp-2's join (test_04) proves it.
    cluster["certificate_key"] = key


def test_02_print_join_command_is_one_line(cluster):
    result = ssh("cp-1", "kubeadm token create --print-join-command --certificate-key %s" % cluster["certificate_key"])
    assert result.code == 0, result
    line = result.out.strip()
    assert "\n" not in line
    assert re.match(r"^kubeadm join %s --token [a-z0-9]{6}\.[a-z0-9]{16} --discovery-token-ca-cert-hash "
                    r"sha256:[0-9a-f]{64} --control-plane --certificate-key [0-9a-f]{64}$" % re.escape(ENDPOINT), line)
    cluster["join"] = line


def test_03_an_injected_join_fault_fails_after_preflight_and_changes_nothing(cluster):
    assert sandbox("fault", "join-fail-next", "cp-2").returncode == 0
    result = ssh("cp-2", cluster["join"])
    assert result.code == 1, result
    assert "sandbox fault injection" in result.err and "error execution phase preflight" in result.err
    assert not os.path.exists(host_file("cp-2", "/var/lib/kcpsim/faults/join-fail-next"))
    manifests = host_file("cp-2", "/etc/kubernetes/manifests")
    assert not os.path.isdir(manifests) or not os.listdir(manifests)
    assert [m.name for m in etcd_members()] == ["cp-1"]


def test_03b_control_plane_join_dry_run_writes_only_its_dry_run_directory(cluster):
    before = host_files("cp-2")
    members_before = sorted((m.name, m.is_learner) for m in etcd_members())
    result = ssh("cp-2", cluster["join"] + " --dry-run")
    assert result.code == 0, result
    after = host_files("cp-2")
    assert changes_outside(before, after, ["/etc/kubernetes/tmp", "/etc/kubernetes/tmp/kubeadm-join-dryrun*"]) == []
    written = [p for p in after if fnmatch.fnmatch(p, "/etc/kubernetes/tmp/kubeadm-join-dryrun*/*")]
    for name in ("etcd.yaml", "kube-apiserver.yaml", "apiserver.crt", "ca.key", "admin.conf", "bootstrap-kubelet.conf"):
        assert any(p.endswith("/" + name) for p in written), written
    assert "[dryrun] Would add etcd member cp-2" in result.out
    assert 'Would perform action PATCH on resource "nodes"' in result.out
    assert sorted((m.name, m.is_learner) for m in etcd_members()) == members_before
    assert kubectl_json("cp-1", "get nodes")["items"][0]["metadata"]["name"] == "cp-1"
    assert len(kubectl_json("cp-1", "get nodes")["items"]) == 1


def test_04_control_plane_join_adds_a_learner_then_promotes_it(cluster):
    seen = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                seen.extend((m.name or m.peer_urls[0], m.is_learner) for m in etcd_members())
            except (etcdclient.EtcdUnavailable, etcdclient.EtcdError):
                pass
            stop.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = ssh("cp-2", cluster["join"])
    finally:
        stop.set()
        watcher.join(5)
    assert result.code == 0, result
    assert "This node has joined the cluster and a new control plane instance was created" in result.out
    assert "[etcd] Announced new etcd member joining to the existing etcd cluster" in result.out
    # ControlPlaneKubeletLocalMode (1.33+): the kubelet bootstraps against cp-2's own API server, which needs the
    # local etcd member first, so etcd-join comes before the wait for the TLS bootstrap; then all three
    # components are checked (WaitForAllControlPlaneComponents).
    order = [result.out.index(line) for line in (
        "[etcd] Announced new etcd member joining to the existing etcd cluster",
        "[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap",
        "[mark-control-plane] Marking the node cp-2 as control-plane",
        "[control-plane-check] Checking kube-scheduler at https://127.0.0.1:10259/livez")]
    assert order == sorted(order), result.out
    with open(host_file("cp-2", "/etc/kubernetes/kubelet.conf")) as handle:
        assert "server: https://%s:6443" % IPS["cp-2"] in handle.read()
    assert any(learner for member, learner in seen), "cp-2's member was never seen as a learner"
    members = wait_until(lambda: [m for m in etcd_members() if m.name] if len(
        [m for m in etcd_members() if m.name and not m.is_learner]) == 2 else None, 30, "two voting members",
        interval=0.5)
    assert sorted(m.name for m in members) == ["cp-1", "cp-2"]
    assert not any(m.is_learner for m in members)


def test_05_nodes_are_registered_as_control_planes(cluster):
    nodes = {n["metadata"]["name"]: n for n in kubectl_json("cp-1", "get nodes")["items"]}
    assert sorted(nodes) == ["cp-1", "cp-2"]
    for node in nodes.values():
        labels = node["metadata"]["labels"]
        assert labels["node-role.kubernetes.io/control-plane"] == ""
        assert labels["node.kubernetes.io/exclude-from-external-load-balancers"] == ""
        assert {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"} in node["spec"]["taints"]
        # NodeLocalCRISocket (1.34+): no cri-socket annotation, the socket is each node's instance-config.yaml.
        assert "kubeadm.alpha.kubernetes.io/cri-socket" not in (node["metadata"].get("annotations") or {})
        assert labels[ZONE_LABEL] == cluster["zones"][node["metadata"]["name"]]
    wait_until(lambda: all(any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
                           for n in kubectl_json("cp-1", "get nodes")["items"]), 60, "both nodes Ready", interval=0.5)
    assert not os.path.exists(host_file("cp-2", "/etc/kubernetes/super-admin.conf"))
    assert not os.path.exists(host_file("cp-2", "/etc/kubernetes/bootstrap-kubelet.conf"))


def test_06_kubectl_get_nodes_through_the_load_balancer(cluster, tmp_path):
    config = tmp_path / "admin.conf"
    config.write_bytes(open(host_file("cp-1", "/etc/kubernetes/admin.conf"), "rb").read())
    os.chmod(str(config), 0o600)
    result = subprocess.run(["kubectl", "--kubeconfig", str(config), "get", "nodes"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, universal_newlines=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^cp-1\s+Ready\s+control-plane", result.stdout, re.M)
    assert re.search(r"^cp-2\s+Ready\s+control-plane", result.stdout, re.M)


def test_07_a_second_ready_node_with_the_same_name_is_refused(cluster):
    result = ssh("cp-3", "kubeadm join %s --node-name cp-2" % join_flags(cluster))
    assert result.code == 1, result
    assert 'a Node with name "cp-2" and status "Ready" already exists in the cluster' in result.err


def test_07b_a_control_plane_join_without_shared_certificates_or_a_key_is_refused(cluster):
    result = ssh("cp-3", "kubeadm join %s --control-plane" % join_flags(cluster))
    assert result.code == 1, result
    assert "error execution phase preflight: " in result.err
    assert "One or more conditions for hosting a new control plane instance is not satisfied" in result.err
    for relative in ("ca.crt", "sa.key", "sa.pub", "front-proxy-ca.crt", "etcd/ca.crt"):
        assert "couldn't load /etc/kubernetes/pki/%s" % relative in result.err
    assert pki_files("cp-3") == []
    assert not os.path.exists(host_file("cp-3", "/etc/kubernetes/bootstrap-kubelet.conf"))
    manifests = host_file("cp-3", "/etc/kubernetes/manifests")
    assert not os.path.isdir(manifests) or not os.listdir(manifests)
    assert sorted(m.name for m in etcd_members()) == ["cp-1", "cp-2"]


def test_07c_a_cgroup_v1_host_is_refused_by_kubelet_1_35_and_newer(cluster):
    """A cgroup v1 host has a tmpfs at /sys/fs/cgroup (one hierarchy per controller under it), not cgroup2."""
    ok = ssh("cp-3", "mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup")
    assert ok.code == 0, ok
    try:
        result = ssh("cp-3", "kubeadm join %s" % join_flags(cluster))
    finally:
        assert ssh("cp-3", "umount /sys/fs/cgroup").code == 0
    assert result.code == 1, result
    assert "[ERROR SystemVerification]: cgroups v1 support is deprecated and will be removed in a future release. " \
           "Please migrate to cgroups v2." in result.err
    assert not os.path.exists(host_file("cp-3", "/etc/kubernetes/kubelet.conf"))


def test_08_a_worker_joins_without_control_plane_labels(cluster):
    result = ssh("cp-3", "kubeadm join %s" % join_flags(cluster))
    assert result.code == 0, result
    assert "This node has joined the cluster:" in result.out
    node = kubectl_json("cp-1", "get node cp-3")
    assert "node-role.kubernetes.io/control-plane" not in node["metadata"]["labels"]
    assert node["metadata"]["labels"][ZONE_LABEL] == cluster["zones"]["cp-3"]
    assert not node["spec"].get("taints")
    assert [m.name for m in etcd_members() if m.name == "cp-3"] == []


def test_09_upgrade_refuses_a_version_newer_than_kubeadm(cluster):
    result = ssh("cp-1", "kubeadm upgrade apply v1.38.0 -y")
    assert result.code == 1, result
    assert "at least one minor release higher than the kubeadm minor release" in result.err


def test_10_upgrade_apply_then_upgrade_node(cluster):
    for host in ("cp-1", "cp-2", "cp-3"):
        install = ssh(host, "install -m 0755 /opt/kcpsim/releases/%s/bin/kubeadm /usr/local/bin/kubeadm" % NEW)
        assert install.code == 0, install
    plan = ssh("cp-1", "kubeadm upgrade plan")
    assert plan.code == 0, plan
    assert "kubeadm upgrade apply %s" % NEW in plan.out
    manifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
    with open(host_file("cp-1", manifest)) as handle:
        before = handle.read()
    unknown = ssh("cp-1", "kubeadm upgrade apply %s -y --skip-phases addons" % NEW)
    assert unknown.code == 1 and "invalid phase name: addons" in unknown.err, unknown
    with open(host_file("cp-1", manifest)) as handle:
        assert handle.read() == before
    apply = ssh("cp-1", "kubeadm upgrade apply %s -y" % NEW, timeout=600)
    assert apply.code == 0, apply
    assert '[upgrade/successful] SUCCESS! Your cluster was upgraded to "%s"' % NEW in apply.out
    assert "skip upgrade addons because control plane instances [cp-2] have not been upgraded" in apply.out
    coredns = "-n kube-system get deployment coredns"
    assert kubectl_json("cp-1", coredns)["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":v1.14.4")
    patch = "metadata:\n  annotations:\n    patched-by: upgrade\n"
    assert ssh("cp-2", "mkdir -p /root/patches && echo %s | base64 -d > /root/patches/kube-scheduler.yaml"
               % base64.b64encode(patch.encode()).decode()).code == 0
    node = ssh("cp-2", "kubeadm upgrade node --skip-phases addon --patches /root/patches", timeout=600)
    assert node.code == 0, node
    assert "[upgrade] The control plane instance for this node was successfully upgraded!" in node.out
    # kubeadm's patches apply to what the upgrade writes again
    assert '[patches] Applied patch of type "application/strategic-merge-patch+json" to target "kube-scheduler"' in node.out
    with open(host_file("cp-2", "/etc/kubernetes/manifests/kube-scheduler.yaml")) as handle:
        assert yaml.safe_load(handle)["metadata"]["annotations"]["patched-by"] == "upgrade"
    # A skipped phase does not run: every API server is upgraded now, and still the addons stay where they were.
    assert "Applied essential addon" not in node.out
    assert kubectl_json("cp-1", coredns)["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":v1.14.4")
    # The last control plane node's upgrade node finds every API server upgraded and moves the addons.
    node = ssh("cp-2", "kubeadm upgrade node --skip-phases preflight,control-plane,kubelet-config", timeout=300)
    assert node.code == 0, node
    assert "[addons] Applied essential addon: CoreDNS" in node.out and "[upgrade/control-plane]" not in node.out
    assert kubectl_json("cp-1", coredns)["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":v1.14.6")
    # ControlPlaneKubeletLocalMode: the joined control plane's kubelet now talks to its own API server.
    with open(host_file("cp-2", "/etc/kubernetes/kubelet.conf")) as handle:
        assert "server: https://%s:6443" % IPS["cp-2"] in handle.read()
    worker = ssh("cp-3", "kubeadm upgrade node", timeout=300)
    assert worker.code == 0, worker
    assert "[upgrade/control-plane] Skipping phase. Not a control plane node." in worker.out
    for host in ("cp-1", "cp-2"):
        pod = kubectl_json("cp-1", "-n kube-system get pod kube-apiserver-%s" % host)
        assert pod["spec"]["containers"][0]["image"] == "registry.k8s.io/kube-apiserver:%s" % NEW
    stored = kubectl_json("cp-1", "-n kube-system get configmap kubeadm-config")["data"]["ClusterConfiguration"]
    assert "kubernetesVersion: %s" % NEW in stored
    backups = os.listdir(host_file("cp-1", "/etc/kubernetes/tmp"))
    assert any(b.startswith("kubeadm-backup-manifests-") for b in backups)
    assert any(b.startswith("kubeadm-backup-etcd-") for b in backups)


def test_11_reset_removes_the_member_and_the_files(cluster):
    result = ssh("cp-2", "kubeadm reset -f")
    assert result.code == 0, result
    assert "Deleted contents of the etcd data directory" in result.out
    members = wait_until(lambda: etcd_members() if len(etcd_members()) == 1 else None, 30, "cp-2's member to go",
                         interval=0.5)
    assert [m.name for m in members] == ["cp-1"]
    assert not os.path.exists(host_file("cp-2", "/etc/kubernetes/admin.conf"))
    assert not os.listdir(host_file("cp-2", "/etc/kubernetes/manifests"))
    assert not os.listdir(host_file("cp-2", "/var/lib/etcd"))
    assert not os.path.exists(host_file("cp-2", "/etc/kubernetes/pki/ca.key"))


def test_12_a_control_plane_joins_again_with_certificates_copied_in_beforehand(cluster):
    # The operator's way back after a reset: delete the old Node (a Ready one blocks the join), copy the shared
    # CAs and the service account key pair from a control plane, join with no certificate key.
    assert ssh("cp-1", "kubectl --kubeconfig /etc/kubernetes/admin.conf delete node cp-2").code == 0
    for relative in SHARED_CERTS:
        with open(host_file("cp-1", "/etc/kubernetes/pki/" + relative)) as source:
            content = source.read()
        mode = "0600" if relative.endswith(".key") or relative == "sa.pub" else "0644"
        copied = ssh("cp-2", "install -D -m %s /dev/stdin /etc/kubernetes/pki/%s" % (mode, relative), stdin=content)
        assert copied.code == 0, copied
    result = ssh("cp-2", "kubeadm join %s --control-plane" % join_flags(cluster), timeout=600)
    assert result.code == 0, result
    assert "This node has joined the cluster and a new control plane instance was created" in result.out
    for relative in SHARED_CERTS:
        with open(host_file("cp-1", "/etc/kubernetes/pki/" + relative), "rb") as one, \
                open(host_file("cp-2", "/etc/kubernetes/pki/" + relative), "rb") as two:
            assert one.read() == two.read(), relative
    assert "apiserver.crt" in pki_files("cp-2") and "etcd/peer.crt" in pki_files("cp-2")
    members = wait_until(lambda: etcd_members() if sorted(
        m.name for m in etcd_members() if m.name and not m.is_learner) == ["cp-1", "cp-2"] else None, 60,
        "cp-2 to be a voting etcd member again", interval=0.5)
    assert len(members) == 2
    node = wait_until(lambda: next((n for n in kubectl_json("cp-1", "get nodes")["items"]
                                    if n["metadata"]["name"] == "cp-2" and any(
                                        c["type"] == "Ready" and c["status"] == "True"
                                        for c in n["status"]["conditions"])), None), 60, "cp-2 Ready again",
                      interval=0.5)
    assert node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    assert node["metadata"]["labels"][ZONE_LABEL] == cluster["zones"]["cp-2"]
