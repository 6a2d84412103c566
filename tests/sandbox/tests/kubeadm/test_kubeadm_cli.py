# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm command line against a scratch root (KCPSIM_ROOT): PKI layout and modes, kubeconfigs,
manifests on disk, check-expiration, renew, version output, exit codes and refusals.

Every address here is on loopback: nothing may leave the machine.
"""

import datetime
import io
import json
import os
import shutil
import stat

import pytest
import yaml

from kcpsim import kubeconfig, pki
from kcpsim.kubeadm import expiration
from kcpsim.kubeadm.__main__ import _build_parser, _flags_of, main
from kcpsim.kubeadm.context import Context

ADV = "127.0.0.11"
ENDPOINT = "127.0.0.100:6443"
INIT_FLAGS = ["--apiserver-advertise-address", ADV, "--control-plane-endpoint", ENDPOINT, "--node-name", "cp-1"]


class Run:
    """One kubeadm invocation's exit status and output."""

    def __init__(self, root, argv, version="v1.36.4", stdin="", extra_env=None):
        environ = {"KCPSIM_ROOT": str(root), "KCPSIM_KEY_ALGORITHM": "ECDSA-P256", "PATH": os.environ["PATH"]}
        environ.update(extra_env or {})
        self.stdout, self.stderr = io.StringIO(), io.StringIO()
        ctx = Context(stdout=self.stdout, stderr=self.stderr, stdin=io.StringIO(stdin), environ=environ,
                      version=version)
        self.code = main(argv, ctx=ctx)
        self.out, self.err = self.stdout.getvalue(), self.stderr.getvalue()


def kubeadm(root, *argv, **kwargs):
    return Run(root, list(argv), **kwargs)


@pytest.fixture(scope="module")
def node_root(tmp_path_factory):
    """A control plane node's files as init's certs, kubeconfig, etcd and control-plane phases write them."""
    root = tmp_path_factory.mktemp("cp-1")
    for phase in (["certs", "all"], ["kubeconfig", "all"], ["etcd", "local"], ["control-plane", "all"]):
        result = kubeadm(root, "init", "phase", *phase, *INIT_FLAGS)
        assert result.code == 0, result.err
    return root


def copy_of(node_root, tmp_path, name, *removed):
    """A scratch copy of the initialized node's root named ``name``, without the ``removed`` files."""
    root = tmp_path / name
    shutil.copytree(str(node_root), str(root))
    for relative in removed:
        os.unlink(str(root / relative))
    return root


def mode(root, path):
    return stat.S_IMODE(os.stat(os.path.join(str(root), path.lstrip("/"))).st_mode)


CERTS = ["ca", "apiserver", "apiserver-kubelet-client", "front-proxy-ca", "front-proxy-client",
         "apiserver-etcd-client", "etcd/ca", "etcd/server", "etcd/peer", "etcd/healthcheck-client"]


@pytest.mark.parametrize("path, expected", [("/etc/kubernetes/pki/%s.crt" % c, 0o644) for c in CERTS]
                         + [("/etc/kubernetes/pki/%s.key" % c, 0o600) for c in CERTS]
                         + [("/etc/kubernetes/pki/sa.key", 0o600), ("/etc/kubernetes/pki/sa.pub", 0o600)]
                         + [("/etc/kubernetes/%s.conf" % k, 0o600) for k in
                            ("admin", "super-admin", "kubelet", "controller-manager", "scheduler")]
                         + [("/etc/kubernetes/manifests/%s.yaml" % m, 0o600) for m in
                            ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")]
                         + [("/etc/kubernetes/manifests", 0o700), ("/var/lib/etcd", 0o700),
                            ("/etc/kubernetes/pki", 0o755), ("/etc/kubernetes/pki/etcd", 0o755)])
def test_files_and_modes(node_root, path, expected):
    assert mode(node_root, path) == expected


def load_cert(root, name):
    return pki.load_cert(os.path.join(str(root), "etc/kubernetes/pki", name + ".crt"))


@pytest.mark.parametrize("name, common_name, orgs, usages, ca", [
    ("apiserver", "kube-apiserver", [], {"server"}, "ca"),
    ("apiserver-kubelet-client", "kube-apiserver-kubelet-client", [], {"client"}, "ca"),
    ("front-proxy-client", "front-proxy-client", [], {"client"}, "front-proxy-ca"),
    ("etcd/server", "cp-1", [], {"server", "client"}, "etcd/ca"),
    ("etcd/peer", "cp-1", [], {"server", "client"}, "etcd/ca"),
    ("etcd/healthcheck-client", "kube-etcd-healthcheck-client", [], {"client"}, "etcd/ca"),
    ("apiserver-etcd-client", "kube-apiserver-etcd-client", [], {"client"}, "etcd/ca"),
], ids=["the apiserver serves", "the apiserver's kubelet client has no organization (v1.36.1 and later)", "the front proxy client",
        "etcd serves as the node", "etcd peers as the node", "the etcd health check client",
        "the apiserver's etcd client"])
def test_leaf_subjects(node_root, name, common_name, orgs, usages, ca):
    cert = load_cert(node_root, name)
    assert pki.common_name(cert) == common_name
    assert pki.organizations(cert) == orgs
    assert pki.ext_key_usages(cert) == usages
    assert pki.signed_by(cert, load_cert(node_root, ca))
    assert pki.key_algorithm(cert.public_key()) == "ECDSA-P256"
    lifetime = pki.not_after(cert) - pki.not_before(cert)
    assert datetime.timedelta(days=364) < lifetime < datetime.timedelta(days=366)


def test_sans(node_root):
    dns, ips = pki.sans(load_cert(node_root, "apiserver"))
    assert dns == ["cp-1", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                   "kubernetes.default.svc.cluster.local"]
    assert ips == ["10.96.0.1", ADV, "127.0.0.100"]
    assert pki.sans(load_cert(node_root, "etcd/server")) == (["cp-1", "localhost"], [ADV, "127.0.0.1", "::1"])


def test_cas_last_ten_years(node_root):
    cert = load_cert(node_root, "ca")
    assert pki.is_ca(cert) and pki.common_name(cert) == "kubernetes"
    assert pki.not_after(cert) - pki.not_before(cert) > datetime.timedelta(days=3649)


@pytest.mark.parametrize("name, user, orgs, server", [
    ("admin.conf", "kubernetes-admin", ["kubeadm:cluster-admins"], "https://" + ENDPOINT),
    ("super-admin.conf", "kubernetes-super-admin", ["system:masters"], "https://" + ENDPOINT),
    ("kubelet.conf", "system:node:cp-1", ["system:nodes"], "https://%s:6443" % ADV),
    ("controller-manager.conf", "system:kube-controller-manager", [], "https://%s:6443" % ADV),
    ("scheduler.conf", "system:kube-scheduler", [], "https://%s:6443" % ADV),
], ids=["admin.conf is a cluster admin through the endpoint", "super-admin.conf is system:masters",
        "kubelet.conf is the node and talks to its own API server (ControlPlaneKubeletLocalMode)", "controller-manager.conf talks to the local API server",
        "scheduler.conf talks to the local API server"])
def test_kubeconfigs(node_root, name, user, orgs, server):
    path = os.path.join(str(node_root), "etc/kubernetes", name)
    creds = kubeconfig.load_credentials(path)
    assert creds.server == server
    cert = kubeconfig.client_certificate(path)
    assert pki.common_name(cert) == user and pki.organizations(cert) == orgs
    assert pki.signed_by(cert, load_cert(node_root, "ca"))
    assert creds.user_name == user and creds.cluster_name == "kubernetes"


def test_manifests_on_disk(node_root):
    etcd = yaml.safe_load(open(os.path.join(str(node_root), "etc/kubernetes/manifests/etcd.yaml")).read())
    assert etcd["spec"]["containers"][0]["image"] == "registry.k8s.io/etcd:3.6.8-0"
    assert "--initial-cluster=cp-1=https://%s:2380" % ADV in etcd["spec"]["containers"][0]["command"]


def test_existing_files_are_reused(node_root):
    before = open(os.path.join(str(node_root), "etc/kubernetes/pki/apiserver.crt"), "rb").read()
    result = kubeadm(node_root, "init", "phase", "certs", "all", *INIT_FLAGS)
    assert result.code == 0
    assert "Using existing ca certificate authority" in result.out
    assert "Using existing apiserver certificate and key on disk" in result.out
    assert open(os.path.join(str(node_root), "etc/kubernetes/pki/apiserver.crt"), "rb").read() == before


def test_a_leaf_missing_a_wanted_san_is_refused(node_root):
    result = kubeadm(node_root, "init", "phase", "certs", "apiserver", "--apiserver-advertise-address", ADV,
                     "--control-plane-endpoint", "127.0.0.200:6443", "--node-name", "cp-1")
    assert result.code == 1
    assert "error execution phase certs/apiserver" in result.err and "does not contain the SANs 127.0.0.200" in result.err


def test_check_expiration_table(node_root, tmp_path):
    root = copy_of(node_root, tmp_path, "joined", "etc/kubernetes/super-admin.conf")
    result = kubeadm(root, "certs", "check-expiration")
    assert result.code == 0
    lines = result.out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("CERTIFICATE "))
    rows = [line.split()[0] for line in lines[header + 1:header + 12]]
    assert rows == ["admin.conf", "apiserver", "apiserver-etcd-client", "apiserver-kubelet-client",
                    "controller-manager.conf", "etcd-healthcheck-client", "etcd-peer", "etcd-server",
                    "front-proxy-client", "scheduler.conf", "!MISSING!"]
    assert "!MISSING! super-admin.conf" in result.out
    assert "364d" in lines[header + 1] and " ca " in lines[header + 1]
    assert any(line.startswith("ca ") and "9y" in line for line in lines)
    assert "kubelet.conf" not in result.out
    assert "Falling back to default configuration" in result.err


@pytest.mark.parametrize("version, output", [("v1.36.4", "json"), ("v1.37.1", "yaml")],
                         ids=["1.36 prints JSON", "1.37 prints YAML"])
def test_check_expiration_structured(node_root, version, output):
    result = kubeadm(node_root, "certs", "check-expiration", "-o", output, version=version)
    assert result.code == 0, result.err
    info = json.loads(result.out) if output == "json" else yaml.safe_load(result.out)  # stdout holds only the document
    assert info["kind"] == "CertificateExpirationInfo"
    assert info["apiVersion"] == "output.kubeadm.k8s.io/v1alpha3"
    assert [c["name"] for c in info["certificateAuthorities"]] == ["ca", "etcd-ca", "front-proxy-ca"]
    assert all(c["residualTime"] > 0 for c in info["certificates"])


def test_renew_resigns_and_keeps_the_key(node_root, tmp_path):
    root = copy_of(node_root, tmp_path, "renew")
    before = load_cert(root, "apiserver")
    result = kubeadm(root, "certs", "renew", "all")
    assert result.code == 0
    assert "certificate for serving the Kubernetes API renewed" in result.out
    assert "certificate embedded in the kubeconfig file for the admin to use and for kubeadm itself renewed" \
        in result.out
    assert "You must restart the kube-apiserver, kube-controller-manager, kube-scheduler and etcd" in result.out
    after = load_cert(root, "apiserver")
    assert after.serial_number != before.serial_number
    assert pki.sans(after) == pki.sans(before) and pki.matches_key(after, pki.load_key(
        str(root / "etc/kubernetes/pki/apiserver.key")))
    assert mode(root, "/etc/kubernetes/pki/apiserver.crt") == 0o644


def test_renewing_an_unknown_certificate_is_refused(node_root):
    result = kubeadm(node_root, "certs", "renew", "kubelet.conf")
    assert result.code == 1 and 'unknown command "kubelet.conf"' in result.err


def test_human_durations():
    table = {30: "30s", 150: "2m30s", 3600 * 5 + 60 * 7: "5h7m", 3600 * 30: "30h", 86400 * 3 + 3600: "3d1h",
             86400 * 364: "364d", 86400 * (365 * 6 + 362): "6y362d", 86400 * 365 * 9 + 100: "9y", -5: "<invalid>"}
    assert {k: expiration.human_duration(k) for k in table} == table


@pytest.mark.parametrize("version, argv, out", [
    ("v1.36.4", ["version", "-o", "short"], "v1.36.4\n"),
    ("v1.35.9", ["version", "-o", "short"], "v1.35.9\n"),
], ids=["version -o short prints only the version", "each release prints its own"])
def test_version_short(tmp_path, version, argv, out):
    assert kubeadm(tmp_path, *argv, version=version).out == out


def test_version_json_and_bare(tmp_path):
    info = json.loads(kubeadm(tmp_path, "version", "-o", "json").out)["clientVersion"]
    assert info["gitVersion"] == "v1.36.4" and info["minor"] == "36"
    assert kubeadm(tmp_path, "version").out.startswith('kubeadm version: &version.Info{Major:"1", Minor:"36"')


def test_certificate_key_is_64_hex(tmp_path):
    key = kubeadm(tmp_path, "certs", "certificate-key").out.strip()
    assert len(key) == 64 and int(key, 16) >= 0


@pytest.mark.parametrize("argv, code, fragment", [
    (["frobnicate"], 1, 'unknown command "frobnicate"'),
    (["init", "--no-such-flag"], 1, "unknown flag"),
    (["init", "--config", "/c.yaml", "--certificate-key", "a" * 64], 1, "can not mix '--config' with arguments"),
    (["init", "--apiserver-advertise-address", "nope", "--node-name", "Bad_Name", "--certificate-key", "12"], 3,
     "localAPIEndpoint.advertiseAddress"),
    (["init", "--kubernetes-version", "v1.34.9", "--apiserver-advertise-address", ADV], 1,
     "only supports deploying clusters with the control plane version >= v1.35.0"),
    (["join", "127.0.0.100:6443", "--token", "abcdef.0123456789abcdef"], 3, "without caCertHashes can be unsafe"),
    (["token", "create", "--certificate-key", "a" * 64], 1, "cannot use --certificate-key without --print-join-command"),
    (["upgrade", "apply", "v1.37.1"], 1, "failed to load admin kubeconfig"),
    (["init", "--skip-phases", "addons", "--apiserver-advertise-address", ADV], 1, "invalid phase name: addons"),
    (["reset", "-f", "--skip-phases", "cleanup-nodes"], 1, "invalid phase name: cleanup-nodes"),
], ids=["an unknown command exits 1", "an unknown flag exits 1", "mixing --config with flags exits 1",
        "invalid init configuration exits 3 naming every field", "a control plane below kubeadm's minor-1 is refused",
        "an unpinned token join exits 3", "--certificate-key alone is refused by token create",
        "upgrade without an admin kubeconfig fails", "init refuses a phase it does not have",
        "reset refuses a phase it does not have"])
def test_refusals(tmp_path, argv, code, fragment):
    result = kubeadm(tmp_path, *argv)
    assert result.code == code, result.err
    assert fragment in result.err
    assert "To see the stack trace of this error execute with --v=5 or higher" in result.err
    assert "Traceback" not in result.err


def test_validation_reports_every_error_at_once(tmp_path):
    result = kubeadm(tmp_path, "init", "--apiserver-advertise-address", "nope", "--node-name", "Bad_Name",
                     "--certificate-key", "12", "--pod-network-cidr", "x")
    for field in ("localAPIEndpoint.advertiseAddress", "nodeRegistration.name", "certificateKey",
                  "networking.podSubnet"):
        assert field in result.err
    assert not os.listdir(str(tmp_path))


def test_a_v1beta3_file_is_read_by_1_36_and_refused_by_1_37(tmp_path):
    path = tmp_path / "init.yaml"
    path.write_text("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.1\n")
    root = tmp_path / "root"
    root.mkdir()
    accepted = kubeadm(root, "config", "images", "list", "--config", str(path), version="v1.37.1")
    assert accepted.code == 1
    assert ('your configuration file uses an old API spec: "kubeadm.k8s.io/v1beta3" (kind: "ClusterConfiguration"). '
            "Please use kubeadm v1.36 instead and run 'kubeadm config migrate --old-config old.yaml --new-config "
            "new.yaml', which will write the new, similar spec using a newer API version.") in accepted.err
    path.write_text("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.4\n")
    deprecated = kubeadm(root, "config", "images", "list", "--config", str(path), version="v1.36.4")
    assert deprecated.code == 0 and "registry.k8s.io/kube-apiserver:v1.36.4" in deprecated.out
    assert 'The "kubeadm.k8s.io/v1beta3" API is deprecated' in deprecated.err


def test_images_list_for_an_older_control_plane_names_the_etcd_of_that_version(tmp_path):
    # kubeadm 1.37 deploys v1.36 and v1.35 control planes with their own etcd (its etcd table), v1.34 with the
    # nearest, warning that it falls back
    older = kubeadm(tmp_path, "config", "images", "list", "--kubernetes-version", "v1.36.4", version="v1.37.1")
    assert older.code == 0 and "registry.k8s.io/etcd:3.6.8-0" in older.out.split() and "falling back" not in older.err
    oldest = kubeadm(tmp_path, "config", "images", "list", "--kubernetes-version", "v1.34.2", version="v1.37.1")
    assert "registry.k8s.io/etcd:3.6.6-0" in oldest.out.split()
    assert "could not find officially supported version of etcd for Kubernetes v1.34.2, falling back to the nearest etcd version (3.6.6-0)" in oldest.err


def test_reset_without_force_aborts_on_eof_and_removes_nothing(node_root, tmp_path):
    root = copy_of(node_root, tmp_path, "reset", "etc/kubernetes/kubelet.conf")  # no node identity: no API call
    result = kubeadm(root, "reset", stdin="")
    assert result.code == 1
    assert "won't proceed; the user didn't answer (Y|y) in order to continue" in result.err
    assert "Unable to fetch the kubeadm-config ConfigMap from cluster" in result.err
    assert (root / "etc/kubernetes/pki/ca.key").exists() and (root / "etc/kubernetes/manifests/etcd.yaml").exists()


def test_reset_with_a_kubeconfig_that_gives_no_client_reads_nothing_from_the_cluster(node_root, tmp_path):
    # What the flows run once they removed the member themselves: admin.conf's endpoint (nothing listens there)
    # is never dialled, so there is no fetch warning, and the data directory comes from the etcd manifest.
    root = copy_of(node_root, tmp_path, "reset-local")
    result = kubeadm(root, "reset", "-f", "--kubeconfig=/dev/null", "--cert-dir=/etc/kubernetes/pki")
    assert result.code == 0, result.err
    assert "Unable to fetch" not in result.err and "Failed to remove etcd member" not in result.err
    assert "[reset] No kubeadm config, using etcd pod spec to get data directory" in result.err
    assert "Deleted contents of the etcd data directory: /var/lib/etcd" in result.out
    assert not (root / "etc/kubernetes/pki/ca.key").exists() and not (root / "etc/kubernetes/admin.conf").exists()


def test_reset_refuses_to_drive_the_real_kubelet_from_a_scratch_root(node_root, tmp_path):
    root = copy_of(node_root, tmp_path, "reset-f", "etc/kubernetes/kubelet.conf")
    result = kubeadm(root, "reset", "-f")
    assert result.code == 0
    assert "refusing to drive the real kubelet while KCPSIM_ROOT" in result.err
    assert not (root / "etc/kubernetes/pki/ca.key").exists() and (root / "etc/kubernetes/pki").is_dir()
    assert not (root / "etc/kubernetes/admin.conf").exists()
    assert not os.listdir(str(root / "etc/kubernetes/manifests"))
    assert "Deleted contents of the etcd data directory: /var/lib/etcd" in result.out


@pytest.mark.parametrize("argv, expected", [
    (["join", "lb:6443", "--token", "abcdef.0123456789abcdef", "--discovery-token-ca-cert-hash", "sha256:a,sha256:b",
      "--control-plane"],
     {"token": "abcdef.0123456789abcdef", "discovery-token-ca-cert-hash": ["sha256:a", "sha256:b"],
      "control-plane": True}),
    (["token", "create", "--print-join-command", "--certificate-key", "k"],
     {"print-join-command": True, "certificate-key": "k"}),
    (["init", "--skip-phases=addon/kube-proxy", "--skip-phases", "addon/coredns", "--ignore-preflight-errors=all"],
     {"skip-phases": ["addon/kube-proxy", "addon/coredns"], "ignore-preflight-errors": ["all"]}),
    (["upgrade", "apply", "v1.37.1", "-y", "--etcd-upgrade=false"], {"yes": True, "etcd-upgrade": False}),
], ids=["join flags keep --token apart from positionals", "token create keeps --print-join-command",
        "list flags take commas and repeats", "upgrade apply takes -y and boolean values"])
def test_command_line_flags(argv, expected):
    assert _flags_of(_build_parser().parse_args(argv)) == expected


def test_join_gives_up_on_an_unreachable_endpoint_after_the_discovery_timeout(tmp_path):
    config_file = tmp_path / "join.yaml"
    config_file.write_text(yaml.safe_dump({
        "apiVersion": "kubeadm.k8s.io/v1beta3", "kind": "JoinConfiguration",
        "nodeRegistration": {"name": "cp-9"},
        "discovery": {"timeout": "2s", "bootstrapToken": {
            "token": "abcdef.0123456789abcdef", "apiServerEndpoint": "127.0.0.1:1",
            "caCertHashes": ["sha256:" + "0" * 64]}}}))
    root = tmp_path / "root"
    root.mkdir()
    result = kubeadm(root, "join", "--config", str(config_file), "--ignore-preflight-errors=all")
    assert result.code == 1, result.err
    assert "error execution phase preflight: couldn't validate the identity of the API Server" in result.err
    assert "timed out after 2s" in result.err
    assert not (root / "etc").exists()


@pytest.mark.parametrize("argv", [
    ["upgrade", "apply", "v1.36.4", "--dry-run"],
    ["reset", "-f", "--dry-run"],
], ids=["upgrade --dry-run is refused", "reset --dry-run is refused"])
def test_what_is_not_emulated_is_refused(tmp_path, argv):
    result = kubeadm(tmp_path, *argv)
    assert result.code == 1
    assert "not emulated by the sandbox's kubeadm" in result.err
    assert not os.listdir(str(tmp_path))


def test_init_dry_run_writes_nothing_but_its_dry_run_directory(tmp_path):
    result = kubeadm(tmp_path, "init", "--dry-run", "--ignore-preflight-errors=all", *INIT_FLAGS, version="v1.37.1")
    assert result.code == 0, result.err
    everything = sorted(os.path.relpath(os.path.join(d, name), str(tmp_path))
                        for d, dirs, files in os.walk(str(tmp_path)) for name in dirs + files)
    assert everything[:3] == ["etc", "etc/kubernetes", "etc/kubernetes/tmp"], everything
    dry_dir = everything[3]
    assert dry_dir.startswith("etc/kubernetes/tmp/kubeadm-init-dryrun")
    assert all(p.startswith(dry_dir + "/") for p in everything[4:]), everything
    assert {"etc/kubernetes/tmp/" + os.path.basename(dry_dir) + "/" + name for name in (
        "ca.key", "admin.conf", "etcd.yaml", "kubeadm-flags.env")} <= set(everything)
    assert '[dryrun] Would write file "/etc/kubernetes/manifests/kube-apiserver.yaml" with content:' in result.out
    assert "[dryrun] Would restart the kubelet" in result.out


def test_ecdsa_p384_makes_p384_keys_signed_with_sha384(tmp_path):
    config_file = tmp_path / "c.yaml"
    config_file.write_text("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nencryptionAlgorithm: ECDSA-P384\n"
                           "---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n"
                           "localAPIEndpoint:\n  advertiseAddress: %s\n" % ADV)
    root = tmp_path / "root"
    result = kubeadm(root, "init", "phase", "certs", "ca", "--config", str(config_file), extra_env={"KCPSIM_KEY_ALGORITHM": ""})
    assert result.code == 0, result.err
    ca = load_cert(root, "ca")
    assert pki.key_algorithm(ca.public_key()) == "ECDSA-P384" and ca.signature_hash_algorithm.name == "sha384"


def test_public_keys_ecdsa_gate_makes_ecdsa_keys(tmp_path):
    config_file = tmp_path / "c.yaml"
    config_file.write_text("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
                           "featureGates:\n  PublicKeysECDSA: true\n---\n"
                           "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n"
                           "localAPIEndpoint:\n  advertiseAddress: %s\n" % ADV)
    root = tmp_path / "root"
    result = kubeadm(root, "init", "phase", "certs", "ca", "--config", str(config_file),
                     extra_env={"KCPSIM_KEY_ALGORITHM": ""})
    assert result.code == 0, result.err
    assert pki.key_algorithm(load_cert(root, "ca").public_key()) == "ECDSA-P256"


V3_INIT = ("apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: %s\n"
           "nodeRegistration:\n  kubeletExtraArgs:\n    node-labels: a=b\n---\n"
           "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\ncontrolPlaneEndpoint: %s\n"
           "apiServer:\n  timeoutForControlPlane: 2m0s\n  extraArgs:\n    audit-log-maxage: \"7\"\n" % (ADV, ENDPOINT))


def _file(tmp_path, text):
    path = tmp_path / "kubeadm.yaml"
    path.write_text(text)
    return str(path)


def test_config_validate_says_ok_for_a_valid_file(tmp_path):
    text = V3_INIT.replace("v1beta3", "v1beta4").replace("node-labels: a=b", "- name: node-labels\n      value: a=b")
    text = text.replace("  timeoutForControlPlane: 2m0s\n", "").replace("    audit-log-maxage: \"7\"", "  - name: audit-log-maxage\n    value: \"7\"")
    result = kubeadm(tmp_path, "config", "validate", "--config", _file(tmp_path, text))
    assert (result.code, result.out, result.err) == (0, "ok\n", "")


@pytest.mark.parametrize("text, code, fragment", [
    ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterNam: x\n", 1,
     'strict decoding error: unknown field "clusterNam"'),
    ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking:\n  podSubnet: x\n", 3,
     "networking.podSubnet"),
], ids=["an unknown field is an error, not the warning init prints", "an invalid value is named by its field"])
def test_config_validate_refuses_what_init_would_refuse_and_more(tmp_path, text, code, fragment):
    result = kubeadm(tmp_path, "config", "validate", "--config", _file(tmp_path, text))
    assert result.code == code and fragment in result.err, result.err


@pytest.mark.parametrize("version, argv, warned, code", [
    ("v1.36.4", [], True, 0),
    ("v1.36.4", ["--allow-deprecated-api"], False, 0),
    ("v1.35.9", ["--allow-deprecated-api"], False, 1),
], ids=["1.36 warns about v1beta3", "unless the deprecated API is allowed", "a flag 1.35 does not have"])
def test_config_validate_and_the_deprecated_api(tmp_path, version, argv, warned, code):
    result = kubeadm(tmp_path, "config", "validate", "--config", _file(tmp_path, V3_INIT), *argv, version=version)
    assert result.code == code, result.err
    assert ('The "kubeadm.k8s.io/v1beta3" API is deprecated' in result.err) is warned


def test_config_migrate_writes_v1beta4_with_the_moved_fields(tmp_path):
    result = kubeadm(tmp_path, "config", "migrate", "--old-config", _file(tmp_path, V3_INIT))
    assert result.code == 0, result.err
    init, cluster = list(yaml.safe_load_all(result.out))
    assert (init["apiVersion"], init["kind"], cluster["kind"]) == ("kubeadm.k8s.io/v1beta4", "InitConfiguration",
                                                                   "ClusterConfiguration")
    assert init["timeouts"] == {"controlPlaneComponentHealthCheck": "2m0s"}
    assert init["nodeRegistration"]["kubeletExtraArgs"] == [{"name": "node-labels", "value": "a=b"}]
    assert cluster["apiServer"] == {"extraArgs": [{"name": "audit-log-maxage", "value": "7"}]}
    assert cluster["controlPlaneEndpoint"] == ENDPOINT and cluster["networking"]["dnsDomain"] == "cluster.local"
    migrated = kubeadm(tmp_path, "config", "validate", "--config", _file(tmp_path, result.out))
    assert migrated.code == 0 and migrated.err == "", migrated.err


def test_config_migrate_to_a_file_and_1_37_sends_v1beta3_back_to_1_36(tmp_path):
    old = _file(tmp_path, V3_INIT)
    result = kubeadm(tmp_path, "config", "migrate", "--old-config", old, "--new-config", "/new.yaml")
    assert result.code == 0 and result.out == "" and "kind: ClusterConfiguration" in (tmp_path / "new.yaml").read_text()
    refused = kubeadm(tmp_path, "config", "migrate", "--old-config", old, version="v1.37.1")
    assert refused.code == 1 and "Please use kubeadm v1.36 instead" in refused.err


def _patches(root, files):
    directory = root / "etc" / "kubeadm-patches"
    directory.mkdir(parents=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return "/etc/kubeadm-patches"


def test_init_applies_the_patches_of_a_directory_to_the_manifests_it_writes_in_name_order(tmp_path):
    """kubeadm's patches: target[suffix][+patchtype].extension, strategic by default, applied in name order."""
    root = tmp_path / "root"
    directory = _patches(root, {
        "kube-apiserver1+merge.yaml": "metadata:\n  annotations:\n    patched: second\n",
        "kube-apiserver0.yaml": "metadata:\n  annotations:\n    patched: first\n    only-first: 'yes'\n",
        "kube-scheduler.yaml": "spec:\n  containers:\n  - name: kube-scheduler\n    resources:\n      limits:\n        cpu: 500m\n",
        "etcd+json.json": '[{"op": "add", "path": "/metadata/labels/patched", "value": "json"}]',
        "README.md": "not a patch: ignored",
        "unknowntarget.yaml": "metadata: {}\n",
    })
    for phase in (["certs", "all"], ["etcd", "local"], ["control-plane", "all"]):
        result = kubeadm(root, "init", "phase", *phase, *INIT_FLAGS, "--patches", directory)
        assert result.code == 0, result.err
    manifests_dir = root / "etc" / "kubernetes" / "manifests"
    apiserver = yaml.safe_load((manifests_dir / "kube-apiserver.yaml").read_text())
    assert apiserver["metadata"]["annotations"]["patched"] == "second"
    assert apiserver["metadata"]["annotations"]["only-first"] == "yes"
    scheduler = yaml.safe_load((manifests_dir / "kube-scheduler.yaml").read_text())["spec"]["containers"][0]
    assert scheduler["resources"]["limits"] == {"cpu": "500m"} and scheduler["command"][0] == "kube-scheduler"
    assert yaml.safe_load((manifests_dir / "etcd.yaml").read_text())["metadata"]["labels"]["patched"] == "json"
    assert '[patches] Applied patch of type "application/merge-patch+json" to target "kube-apiserver"' in result.out


@pytest.mark.parametrize("files, fragment", [
    ({"kube-apiserver+json.yaml": "- {op: remove, path: /no/such/field}\n"}, 'could not apply the patch "kube-apiserver+json.yaml"'),
    ({"kube-scheduler.json": "{not json"}, 'could not parse patch file "kube-scheduler.json"'),
], ids=["a patch that does not apply stops init", "a patch file that is not JSON stops init"])
def test_a_patch_that_cannot_be_applied_stops_the_command(tmp_path, files, fragment):
    root = tmp_path / "root"
    directory = _patches(root, files)
    result = kubeadm(root, "init", "phase", "control-plane", "all", *INIT_FLAGS, "--patches", directory)
    assert result.code == 1 and fragment in result.err, result.err


def test_a_patches_directory_that_is_not_there_stops_the_command(tmp_path):
    result = kubeadm(tmp_path, "init", "phase", "control-plane", "all", *INIT_FLAGS, "--patches", "/nowhere")
    assert result.code == 1 and 'could not list patch files for path "/nowhere"' in result.err, result.err
