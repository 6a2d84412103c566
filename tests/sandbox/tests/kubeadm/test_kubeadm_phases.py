# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The phase runner, preflight verdicts, durations, certificate plans and node patches."""

import pytest

from kcpsim.kubeadm import certplan, clusterobjects, cmd_upgrade, config, dryrun, durations, preflight
from kcpsim.kubeadm.context import KubeadmError, Phase, phase_names, run_phases
from kcpsim.kubeadm.etcd import _retryable
from kcpsim.kubeadm.hostfs import Host
from kcpsim.kubeadm.release import Release
from kcpsim import etcdclient


def _recorder():
    ran = []

    def step(name, fail=None):
        def run(data):
            ran.append(name)
            if fail:
                raise fail
        return run
    return ran, step


def _phases(step, failing=None):
    return [
        Phase("preflight", step("preflight")),
        Phase("certs", step("certs"), [Phase("ca", step("certs/ca")),
                                       Phase("apiserver", step("certs/apiserver", failing))]),
        Phase("addon", None, [Phase("coredns", step("addon/coredns")), Phase("kube-proxy", step("addon/kube-proxy"))]),
    ]


@pytest.mark.parametrize("skip, only, expected", [
    ([], None, ["preflight", "certs", "certs/ca", "certs/apiserver", "addon/coredns", "addon/kube-proxy"]),
    (["addon/kube-proxy", "preflight"], None, ["certs", "certs/ca", "certs/apiserver", "addon/coredns"]),
    (["certs"], None, ["preflight", "addon/coredns", "addon/kube-proxy"]),
    ([], "certs/apiserver", ["certs", "certs/apiserver"]),
    ([], "addon/all", ["addon/coredns", "addon/kube-proxy"]),
], ids=["every phase runs in order", "a skipped phase or sub-phase does not run", "skipping a phase skips its children",
        "init phase certs apiserver runs only that sub-phase", "all runs every sub-phase"])
def test_phase_selection(skip, only, expected):
    ran, step = _recorder()
    run_phases(_phases(step), None, skip, only=only)
    assert ran == expected


def test_an_unknown_phase_to_skip_is_refused_before_any_phase_runs():
    """kubeadm's workflow runner checks every --skip-phases name first (workflow/runner.go computePhaseRunFlags)."""
    ran, step = _recorder()
    with pytest.raises(KubeadmError) as caught:
        run_phases(_phases(step), None, ["certs/ca", "addons"])
    assert caught.value.message == "invalid phase name: addons" and ran == []


def test_the_upgrade_workflows_have_kubeadms_phases():
    """kubeadm 1.32+ (kubeadm-reference-1.32-plus.md section 3): upgrade apply and upgrade node as phases."""
    assert phase_names(cmd_upgrade.APPLY_PHASES) == [
        "preflight", "control-plane", "upload-config", "upload-config/kubeadm", "upload-config/kubelet",
        "kubelet-config", "bootstrap-token", "addon", "addon/coredns", "addon/kube-proxy", "post-upgrade"]
    assert phase_names(cmd_upgrade.NODE_PHASES) == [
        "preflight", "control-plane", "kubelet-config", "addon", "addon/coredns", "addon/kube-proxy", "post-upgrade"]


def test_upgrade_apply_skipping_addon_applies_neither_coredns_nor_kube_proxy():
    """kubeadm upgrade apply --skip-phases addon skips both addons (its workflow's phase and every sub-phase)."""
    ran, step = _recorder()
    recording = [Phase(p.name, step(p.name) if p.run else None,
                       [Phase(c.name, step("%s/%s" % (p.name, c.name))) for c in p.children])
                 for p in cmd_upgrade.APPLY_PHASES]
    run_phases(recording, None, ["addon"])
    assert ran == ["preflight", "control-plane", "upload-config/kubeadm", "upload-config/kubelet", "kubelet-config",
                   "bootstrap-token", "post-upgrade"]


def _executable(root, path, mode=0o755):
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("#!/bin/sh\n")
    target.chmod(mode)


def test_a_node_without_losetup_or_cp_in_its_path_fails_the_file_existing_checks(tmp_path):
    """kubeadm 1.33+ (kubeadm-reference-1.32-plus.md section 4): mount, losetup and cp must be in PATH, each an error."""
    _executable(tmp_path, "/usr/bin/mount")
    _executable(tmp_path, "/usr/bin/cp", mode=0o644)
    _executable(tmp_path, "/usr/sbin/losetup")
    checks = preflight.Checks(Host(str(tmp_path)), None)
    assert [(r.name, r.kind, r.message) for r in checks.executables("/usr/local/bin:/usr/bin")] == [
        ("FileExisting-losetup", "error", "losetup not found in system path"),
        ("FileExisting-cp", "error", "cp not found in system path")]
    _executable(tmp_path, "/usr/local/bin/cp")
    assert checks.executables("/usr/local/bin:/usr/bin:/usr/sbin/") == []


@pytest.mark.parametrize("error, message, code", [
    (KubeadmError("boom"), "error execution phase certs/apiserver: boom", 1),
    (KubeadmError("bad config", exit_code=3), "error execution phase certs/apiserver: bad config", 3),
    (OSError(13, "Permission denied"), "error execution phase certs/apiserver: [Errno 13] Permission denied", 1),
], ids=["a phase error is wrapped with the phase name", "the exit status is kept",
        "any other failure is reported the same way, without a traceback"])
def test_phase_errors_are_wrapped(error, message, code):
    ran, step = _recorder()
    with pytest.raises(KubeadmError) as caught:
        run_phases(_phases(step, failing=error), None, [])
    assert caught.value.message == message and caught.value.exit_code == code
    assert ran[-1] == "certs/apiserver"


def test_preflight_verdict():
    results = [preflight.Result("Swap", "warning", "swap on"), preflight.Result("NumCPU", "error", "1 CPU"),
               preflight.Result("Port-6443", "error", "in use")]
    fatal, warnings = preflight.classify(results, ["numcpu"])
    assert [r.name for r in fatal] == ["Port-6443"]
    assert [r.name for r in warnings] == ["Swap", "NumCPU"]
    assert preflight.classify(results, ["all"])[0] == []
    text = str(preflight.PreflightError(fatal))
    assert "[preflight] Some fatal errors occurred:" in text and "\t[ERROR Port-6443]: in use" in text


@pytest.mark.parametrize("text, seconds, rendered", [
    ("24h", 86400, "24h0m0s"), ("4m0s", 240, "4m0s"), ("1h30m", 5400, "1h30m0s"), ("500ms", 0.5, "500ms"),
    ("8760h0m0s", 8760 * 3600, "8760h0m0s"), ("0", 0, "0s"), ("1.5s", 1.5, "1.5s"),
], ids=["hours", "minutes", "hours and minutes", "milliseconds", "a year of hours", "zero", "fractions"])
def test_go_durations(text, seconds, rendered):
    assert durations.parse(text) == seconds
    assert durations.render(seconds) == rendered


@pytest.mark.parametrize("text", ["", "5", "1d", "h1", "1h-5m"], ids=[
    "empty", "a bare number", "days are not Go units", "a unit without a number", "a sign inside"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        durations.parse(text)


@pytest.mark.parametrize("configured, environment, expected", [
    ("", "", "RSA-2048"), ("", "ECDSA-P256", "ECDSA-P256"), ("RSA-2048", "ECDSA-P256", "ECDSA-P256"),
    ("RSA-3072", "ECDSA-P256", "RSA-3072"), ("", "RSA-4096", "RSA-2048"),
], ids=["RSA-2048 by default", "the sandbox speed-up makes ECDSA keys instead",
        "the speed-up also replaces a configured RSA-2048", "any other configured algorithm wins",
        "the speed-up knows only ECDSA-P256"])
def test_key_algorithm(configured, environment, expected):
    assert certplan.key_algorithm(configured, environment) == expected


def test_join_writes_no_super_admin_or_kubelet_kubeconfig():
    cluster = config.default_cluster({"controlPlaneEndpoint": "lb.example:7443"}, "v1.36.4")
    init = certplan.kubeconfigs(cluster, "cp-1", "10.0.0.11", 6443, with_super_admin=True, with_kubelet=True)
    join = certplan.kubeconfigs(cluster, "cp-2", "10.0.0.12", 6443, with_super_admin=False, with_kubelet=False)
    assert [k.name for k in init] == ["admin.conf", "super-admin.conf", "kubelet.conf", "controller-manager.conf",
                                      "scheduler.conf"]
    assert [k.name for k in join] == ["admin.conf", "controller-manager.conf", "scheduler.conf"]
    assert join[0].server == "https://lb.example:7443" and join[1].server == "https://10.0.0.12:6443"


def test_external_etcd_drops_the_etcd_pki():
    cluster = config.default_cluster({"etcd": {"external": {"endpoints": ["https://e:2379"]}}}, "v1.36.4")
    assert [ca.name for ca in certplan.cas(cluster)] == ["ca", "front-proxy-ca"]
    assert [leaf.name for leaf in certplan.leaves(cluster, "cp-1", "10.0.0.11", Release.of("v1.37.1"))] == [
        "apiserver", "apiserver-kubelet-client", "front-proxy-client"]
    assert "etcd/ca.crt" not in certplan.shared_files(cluster)


def test_mark_control_plane_keeps_existing_taints():
    existing = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    wanted = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    patch = clusterobjects.control_plane_node_patch(existing, wanted)
    assert patch["spec"]["taints"] == existing + wanted
    assert patch["metadata"]["labels"] == {"node-role.kubernetes.io/control-plane": "",
                                           "node.kubernetes.io/exclude-from-external-load-balancers": ""}
    assert clusterobjects.control_plane_node_patch(existing + wanted, wanted)["spec"]["taints"] == existing + wanted


@pytest.mark.parametrize("error, retry", [
    (etcdclient.EtcdError("e", 14, "etcdserver: unhealthy cluster"), True),
    (etcdclient.EtcdError("e", 9, "etcdserver: can only promote a learner member which is in sync with leader"), True),
    (etcdclient.EtcdError("e", 9, "etcdserver: too many learner members in cluster"), True),
    (etcdclient.EtcdUnavailable("e", "connection refused"), True),
    (etcdclient.EtcdError("e", 6, "etcdserver: Peer URLs already exists"), False),
], ids=["a cluster just reconfigured is retried", "a learner not yet in sync is retried",
        "a second learner waits for the first", "an unreachable member is retried",
        "a duplicate peer URL is final"])
def test_which_etcd_errors_kubeadm_retries(error, retry):
    assert _retryable(error) is retry


@pytest.mark.parametrize("path, expected", [
    ("/etc/kubernetes/pki/etcd/ca.crt", "/etc/kubernetes/tmp/kubeadm-init-dryrun1/etcd/ca.crt"),
    ("/etc/kubernetes/manifests/etcd.yaml", "/etc/kubernetes/tmp/kubeadm-init-dryrun1/etcd.yaml"),
    ("/etc/kubernetes/admin.conf", "/etc/kubernetes/tmp/kubeadm-init-dryrun1/admin.conf"),
    ("/var/lib/kubelet/config.yaml", "/etc/kubernetes/tmp/kubeadm-init-dryrun1/config.yaml"),
    ("/var/lib/etcd", None),
    ("/etc/kubernetes/tmp/kubeadm-backup", None),
], ids=["certificates go flat into the dry-run directory", "so do the static Pod manifests",
        "and the kubeconfig files", "and the kubelet's files", "the etcd data directory is not created",
        "kubeadm's own tmp directory is not redirected"])
def test_a_dry_run_writes_into_its_own_directory(path, expected):
    host = dryrun.DryRunHost(Host("/"), "/etc/kubernetes/tmp/kubeadm-init-dryrun1")
    assert host.redirected(path) == expected


def test_a_dry_run_client_prints_writes_and_hides_secret_values():
    lines = []
    client = dryrun.cluster(lines.append)
    client.apply([("v1", "secrets", "kube-system", {"apiVersion": "v1", "kind": "Secret",
                                                    "metadata": {"name": "bootstrap-token-abcdef"},
                                                    "data": {"token-secret": "c2VjcmV0"}})])
    text = "\n".join(lines)
    assert 'Would perform action CREATE on resource "secrets" in API group "core/v1"' in text
    assert "token-secret: <redacted>" in text and "c2VjcmV0" not in text
    assert client.node("cp-9")["metadata"]["name"] == "cp-9"


@pytest.mark.parametrize("text, organizations", [
    ("v1.33.10", ("kubeadm:cluster-admins",)), ("v1.34.7", ("kubeadm:cluster-admins",)), ("v1.34.8", ()),
    ("v1.35.4", ("kubeadm:cluster-admins",)), ("v1.35.5", ()),
    ("v1.36.0", ("kubeadm:cluster-admins",)), ("v1.36.1", ()), ("v1.37.0", ()),
], ids=["1.33.10 still puts the API server in kubeadm:cluster-admins", "so does 1.34.7",
        "1.34.8 issues it without an organization", "1.35.4 still in the group", "1.35.5 without",
        "1.36.0 still in the group", "1.36.1 without", "1.37 without"])
def test_apiserver_kubelet_client_certificate_per_release(text, organizations):
    release = Release.of(text)
    cluster = config.default_cluster({}, release.version)
    leaf = certplan.leaf_by_name(cluster, "cp-1", "10.0.0.11", release, "apiserver-kubelet-client")
    assert tuple(leaf.organizations) == organizations
    assert release.binds_apiserver_kubelet_client is (organizations == ())


def test_the_apiserver_kubelet_client_binding_grants_kubelet_api_admin_to_the_apiservers_user():
    (api_version, resource, namespace, body), = clusterobjects.apiserver_kubelet_client_binding()
    assert (api_version, resource, namespace) == ("rbac.authorization.k8s.io/v1", "clusterrolebindings", None)
    assert body["metadata"]["name"] == "kubeadm:apiserver-kubelet-client"
    assert body["roleRef"]["name"] == "system:kubelet-api-admin"
    assert body["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                 "name": "kube-apiserver-kubelet-client"}]


@pytest.mark.parametrize("text, unanswered, refused", [
    ("v1.36.4", 0, False), ("v1.36.4", 1, True), ("v1.37.1", 1, False), ("v1.37.1", 2, True),
], ids=["1.36 passes when every member answers", "1.36 refuses one member of three not answering",
        "1.37 passes with a quorum of three answering", "1.37 refuses two members of three not answering"])
def test_etcd_health_check_of_join_and_upgrade(text, unanswered, refused):
    endpoints = ["https://10.0.0.%d:2379" % i for i in (11, 12, 13)]
    bad = [(endpoint, "context deadline exceeded") for endpoint in endpoints[:unanswered]]
    assert Release.of(text).etcd_unhealthy(endpoints, bad) is refused


def test_a_port_check_on_an_address_ignores_a_listener_on_another():
    """kubeadm 1.37 binds the Port-* checks to the configured address; earlier ones to every address."""
    import socket
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        assert preflight.Checks.port(port, "127.0.0.2") == []
        assert [r.name for r in preflight.Checks.port(port)] == ["Port-%d" % port]
        assert [r.message for r in preflight.Checks.port(port, "127.0.0.1")] == ["Port %d is in use" % port]
    finally:
        listener.close()


@pytest.mark.parametrize("release, expected", [
    ("v1.36.4", None),
    ("v1.37.1", {"kube-apiserver": "10.0.0.11", "etcd": "10.0.0.11", "kube-controller-manager": "0.0.0.0",
                 "kube-scheduler": "127.0.0.1"}),
], ids=["before 1.37 every address", "1.37 the address each component serves on"])
def test_where_the_control_plane_port_checks_bind(release, expected):
    cluster = config.default_cluster({"controllerManager": {"extraArgs": [{"name": "bind-address", "value": "0.0.0.0"}]}},
                                     Release.of(release).version)
    assert preflight.port_addresses(Release.of(release), cluster, "10.0.0.11") == expected


@pytest.mark.parametrize("name, release, expected", [
    ("kube-apiserver.yaml", "v1.36.4", ("kube-apiserver", "application/strategic-merge-patch+json")),
    ("kube-controller-manager0+merge.json", "v1.36.4", ("kube-controller-manager", "application/merge-patch+json")),
    ("kubeletconfiguration-a+json.yaml", "v1.36.4", ("kubeletconfiguration", "application/json-patch+json")),
    ("corednsdeployment.yaml", "v1.36.4", ("corednsdeployment", "application/strategic-merge-patch+json")),
    ("kubeproxydaemonset.yaml", "v1.36.4", None),
    ("kubeproxydaemonset.yaml", "v1.37.1", ("kubeproxydaemonset", "application/strategic-merge-patch+json")),
    ("etcd+apply.yaml", "v1.36.4", None),
    ("etcd.yml", "v1.36.4", None),
], ids=["the default type is strategic", "a suffix orders, a type chooses", "the kubelet configuration is a target",
        "CoreDNS is a target", "kube-proxy is no target before 1.37", "and one from 1.37", "an unknown patch type is no patch",
        "only json and yaml extensions"])
def test_a_patch_files_name_says_its_target_and_type(name, release, expected):
    from kcpsim.kubeadm import patches
    assert patches.parse_name(name, patches.targets(Release.of(release))) == expected


def test_a_kubelet_configuration_patch_and_an_addon_patch_apply_to_their_targets():
    from kcpsim.kubeadm.patches import PatchSet, patched_objects
    said = []
    patch_set = PatchSet([("kubeletconfiguration", "application/merge-patch+json", "k.yaml", {"maxPods": 50}),
                          ("corednsdeployment", "application/strategic-merge-patch+json", "c.yaml", {"spec": {"replicas": 3}})])
    assert patch_set.apply("kubeletconfiguration", {"kind": "KubeletConfiguration", "maxPods": 110}, said.append)["maxPods"] == 50
    objects = patched_objects(patch_set, "corednsdeployment", [("apps/v1", "deployments", "kube-system", {"kind": "Deployment", "spec": {}}),
                                                               ("v1", "services", "kube-system", {"kind": "Service", "spec": {}})],
                              "Deployment", said.append)
    assert [o[3]["spec"] for o in objects] == [{"replicas": 3}, {}]
    assert said == ['[patches] Applied patch of type "application/merge-patch+json" to target "kubeletconfiguration"',
                    '[patches] Applied patch of type "application/strategic-merge-patch+json" to target "corednsdeployment"']
