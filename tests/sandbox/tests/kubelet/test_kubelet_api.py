# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet against a real etcd and the kube-apiserver emulation, both run by the kubelet itself.

Like an init node: the kubelet starts etcd and the apiserver from their manifests before any API exists,
then registers its Node, heartbeats its Lease and mirrors its static pods. A second kubelet joins by TLS
bootstrap; the CSR approver here stands in for the controller manager (signing with the cluster CA).
Everything listens on loopback ports picked at random.
"""

import base64
import datetime
import os
import signal
import ssl
import stat
import threading
import urllib.error
import urllib.request

import pytest
import yaml

from kcpsandbox.commands import wait_until
from kcpsim import kubeclient, kubeconfig, pki, version
from kcpsim.kubeadm import clusterobjects
from kcpsim.kubelet import manifests
from kcpsim.runtime import network
from kubelet_harness import KubeletHost, Processes, free_port

pytestmark = pytest.mark.etcd

NODE = "cp-1"


def _probe(port, path, scheme, period=1):
    return {"httpGet": {"host": "127.0.0.1", "port": port, "path": path, "scheme": scheme},
            "initialDelaySeconds": 0, "periodSeconds": period, "timeoutSeconds": 15, "failureThreshold": 3}


def _pod(name, image, command, **probes):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system",
                         "labels": {"component": name, "tier": "control-plane"},
                         "annotations": {"kubeadm.kubernetes.io/%s.advertise-address.endpoint" % name: "127.0.0.1"}},
            "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical",
                     "containers": [dict({"name": name, "image": image, "command": command}, **probes)]}}


class ControlPlane:
    """PKI, manifests and clients of a one-node control plane run by ``host``'s kubelet."""

    def __init__(self, host):
        self.host = host
        self.pki = host.root / "pki"
        self.ports = {"client": free_port(), "peer": free_port(), "metrics": free_port(), "api": free_port()}
        self.server = "https://127.0.0.1:%d" % self.ports["api"]
        self._write_pki()

    def _write_pki(self):
        d, alg = str(self.pki), "ECDSA-P256"
        etcd_ca, etcd_key = pki.new_ca("etcd-ca", algorithm=alg)
        pki.write_pair(d, "etcd/ca", etcd_ca, etcd_key)
        pki.write_pair(d, "etcd/server", *pki.new_leaf(etcd_ca, etcd_key, NODE, dns_names=["localhost"],
                                                       ip_addresses=["127.0.0.1"], usages=("server", "client"),
                                                       algorithm=alg))
        pki.write_pair(d, "apiserver-etcd-client", *pki.new_leaf(etcd_ca, etcd_key, "kube-apiserver-etcd-client",
                                                                 usages=("client",), algorithm=alg))
        self.ca, self.ca_key = pki.new_ca("kubernetes", algorithm=alg)
        pki.write_pair(d, "ca", self.ca, self.ca_key)
        pki.write_pair(d, "apiserver", *pki.new_leaf(self.ca, self.ca_key, "kube-apiserver",
                                                     dns_names=["kubernetes"], ip_addresses=["127.0.0.1"],
                                                     usages=("server",), algorithm=alg))
        pki.write_sa_pair(d, pki.new_key(alg))
        self.admin = self._client_kubeconfig("admin.conf", "kubernetes-admin", ["system:masters"])
        # as kubeadm issues it since the May 2026 patches: no O, its access to kubelets comes from RBAC
        pki.write_pair(d, "apiserver-kubelet-client", *pki.new_leaf(self.ca, self.ca_key, "kube-apiserver-kubelet-client",
                                                                    usages=("client",), algorithm=alg))
        self.kubelet_conf = self._client_kubeconfig("kubelet.conf", "system:node:" + NODE, ["system:nodes"])

    def _client_kubeconfig(self, name, cn, groups):
        cert, key = pki.new_leaf(self.ca, self.ca_key, cn, groups, usages=("client",), algorithm="ECDSA-P256")
        path = str(self.host.root / name)
        kubeconfig.write(path, kubeconfig.build(self.server, pki.cert_pem(self.ca), cn,
                                                client_cert_pem=pki.cert_pem(cert), client_key_pem=pki.key_pem(key)))
        return path

    def controller_manager_pod(self):
        """kube-controller-manager as kubeadm runs it (its own kubeconfig, the cluster CA to sign with), every
        default controller but replicaset and deployment (this node has no scheduler, and its tests make a workload's
        pods by hand, named and bound to it), node monitoring at test speed."""
        d = self.pki
        kubeconfig_path = self._client_kubeconfig("controller-manager.conf", "system:kube-controller-manager", [])
        return _pod("kube-controller-manager", "registry.k8s.io/kube-controller-manager:v1.37.1", [
            "kube-controller-manager", "--kubeconfig=%s" % kubeconfig_path, "--bind-address=127.0.0.1",
            "--secure-port=%d" % free_port(), "--leader-elect=false", "--controllers=*,-replicaset,-deployment",
            "--cluster-signing-cert-file=%s/ca.crt" % d, "--cluster-signing-key-file=%s/ca.key" % d,
            "--node-monitor-period=1s", "--use-service-account-credentials=true"])

    def write_manifests(self, etcd_extra=(), controller_manager=False):
        d, p = self.pki, self.ports
        etcd = _pod("etcd", "registry.k8s.io/etcd:3.6.8-0", [
            "etcd", "--name=%s" % NODE, "--data-dir=%s" % (self.host.root / "etcd-data"),
            "--listen-client-urls=https://127.0.0.1:%d" % p["client"],
            "--advertise-client-urls=https://127.0.0.1:%d" % p["client"],
            "--listen-peer-urls=http://127.0.0.1:%d" % p["peer"],
            "--initial-advertise-peer-urls=http://127.0.0.1:%d" % p["peer"],
            "--initial-cluster=%s=http://127.0.0.1:%d" % (NODE, p["peer"]),
            "--listen-metrics-urls=http://127.0.0.1:%d" % p["metrics"],
            "--cert-file=%s/etcd/server.crt" % d, "--key-file=%s/etcd/server.key" % d,
            "--trusted-ca-file=%s/etcd/ca.crt" % d, "--client-cert-auth=true"] + list(etcd_extra),
            startupProbe=_probe(p["metrics"], "/health?serializable=false", "HTTP", period=10))
        apiserver = _pod("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.37.1", [
            "kube-apiserver", "--advertise-address=127.0.0.1", "--bind-address=127.0.0.1",
            "--secure-port=%d" % p["api"], "--etcd-servers=https://127.0.0.1:%d" % p["client"],
            "--etcd-cafile=%s/etcd/ca.crt" % d, "--etcd-certfile=%s/apiserver-etcd-client.crt" % d,
            "--etcd-keyfile=%s/apiserver-etcd-client.key" % d, "--tls-cert-file=%s/apiserver.crt" % d,
            "--tls-private-key-file=%s/apiserver.key" % d, "--client-ca-file=%s/ca.crt" % d,
            "--enable-bootstrap-token-auth=true", "--service-account-issuer=https://kubernetes.default.svc",
            "--service-account-key-file=%s/sa.pub" % d, "--service-account-signing-key-file=%s/sa.key" % d,
            "--kubelet-client-certificate=%s/apiserver-kubelet-client.crt" % d,
            "--kubelet-client-key=%s/apiserver-kubelet-client.key" % d],
            readinessProbe=_probe(p["api"], "/readyz", "HTTPS"))
        pods = {"etcd": etcd, "kube-apiserver": apiserver}
        if controller_manager:
            pods["kube-controller-manager"] = self.controller_manager_pod()
        for name, pod in pods.items():
            (self.host.manifests / (name + ".yaml")).write_text(yaml.safe_dump(pod))
        return pods

    def client(self):
        return kubeclient.KubeClient.from_kubeconfig(self.admin, timeout=5)

    def user_client(self, name):
        """A client with a certificate of the cluster CA for user ``name``, in no group."""
        return kubeclient.KubeClient.from_kubeconfig(self._client_kubeconfig(name + ".conf", name, []), timeout=5)


def start_control_plane(root, releases, procs, controller_manager=False):
    """A control plane node whose kubelet runs etcd + the apiserver (+ the controller manager); returned once
    its Node is Ready."""
    host = KubeletHost(root, releases, procs, node_name=NODE)
    plane = ControlPlane(host)
    # the kubelet API as kubeadm configures it: client certificates of the cluster CA, the API server decides
    host.write_config(authentication='{"anonymous": {"enabled": false}, "x509": {"clientCAFile": "%s/ca.crt"}}' % plane.pki,
                      authorization='{"mode": "Webhook"}')
    plane.pods = plane.write_manifests(controller_manager=controller_manager)
    host.start_containerd()
    host.start_kubelet("--kubeconfig=%s" % plane.kubelet_conf,
                       "--bootstrap-kubeconfig=%s" % (host.root / "bootstrap-kubelet.conf"),
                       "--cert-dir=%s" % (host.root / "kubelet-pki"),
                       "--node-labels=topology.kubernetes.io/zone=fd-a")
    api = plane.client()
    wait_until(lambda: _ready(api, NODE), 60, "node %s to be registered and Ready" % NODE, interval=0.2)
    return plane


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, releases):
    procs = Processes()
    try:
        yield start_control_plane(tmp_path_factory.mktemp("cp-1"), releases, procs)
    finally:
        procs.cleanup()


def _get(api, *args):
    try:
        return api.get(*args)
    except (kubeclient.ApiError, kubeclient.ApiUnavailable):
        return None


def _ready(api, node):
    found = _get(api, "v1", "nodes", node)
    conditions = {c["type"]: c for c in ((found or {}).get("status") or {}).get("conditions") or []}
    return found if conditions.get("Ready", {}).get("status") == "True" else None


def _mirror(api, name, want=lambda pod: True):
    pod = _get(api, "v1", "pods", "%s-%s" % (name, NODE), "kube-system")
    return pod if pod and want(pod) else None


def _pod_ready(pod):
    conditions = {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions") or []}
    return pod["status"].get("phase") == "Running" and conditions.get("Ready") == "True"


def test_the_node_is_registered_with_its_version_labels_and_address(cluster):
    node = cluster.client().get("v1", "nodes", NODE)
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == NODE
    assert labels["topology.kubernetes.io/zone"] == "fd-a"
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.37.1"
    assert {"type": "InternalIP", "address": "127.0.0.1"} in node["status"]["addresses"]


def test_the_lease_is_renewed(cluster):
    api = cluster.client()
    first = wait_until(lambda: _get(api, "coordination.k8s.io/v1", "leases", NODE, "kube-node-lease"), 15,
                       "the node's lease")
    assert first["spec"]["holderIdentity"] == NODE
    assert first["metadata"]["ownerReferences"][0]["name"] == NODE
    wait_until(lambda: api.get("coordination.k8s.io/v1", "leases", NODE, "kube-node-lease")["spec"]["renewTime"]
               != first["spec"]["renewTime"], 10, "the lease to be renewed")


def test_an_unchanged_node_status_is_not_written_again_while_the_lease_is_renewed(cluster):
    """As the real kubelet: the Lease is renewed every heartbeat (every second here); the Node's status only when it
    changed, or once nodeStatusReportFrequency (5 min) has passed."""
    api = cluster.client()

    def ready_heartbeat():
        conditions = {c["type"]: c for c in api.get("v1", "nodes", NODE)["status"]["conditions"]}
        return conditions["Ready"]["lastHeartbeatTime"]

    def renewed():
        return api.get("coordination.k8s.io/v1", "leases", NODE, "kube-node-lease")["spec"]["renewTime"]
    beat = ready_heartbeat()
    for _renewal in range(3):
        before = renewed()
        wait_until(lambda: renewed() != before, 10, "the lease to be renewed")
    assert ready_heartbeat() == beat


def test_a_node_changed_elsewhere_keeps_the_change_and_gets_the_kubelets_status_back(cluster):
    """The kubelet reads its Node from the API server's cache and patches only the status: what the node
    lifecycle controller (Ready Unknown) and the operator (a label) wrote meanwhile is not lost or fought."""
    api = cluster.client()
    api.patch("v1", "nodes", NODE, {"metadata": {"labels": {"example.com/changed-elsewhere": "yes"}}})
    node = api.get("v1", "nodes", NODE)
    for condition in node["status"]["conditions"]:
        condition.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
    api.update("v1", "nodes", node, subresource="status")
    node = wait_until(lambda: _ready(api, NODE), 15, "the kubelet to report Ready again")
    assert node["metadata"]["labels"]["example.com/changed-elsewhere"] == "yes"
    ready = {c["type"]: c for c in node["status"]["conditions"]}["Ready"]
    assert ready["reason"] == "KubeletReady"


@pytest.mark.parametrize("component", ["etcd", "kube-apiserver"],
                         ids=["etcd has a Running, Ready mirror pod", "the apiserver has a Running, Ready mirror pod"])
def test_static_pods_are_mirrored_with_labels_hash_and_readiness(cluster, component):
    pod = wait_until(lambda: _mirror(cluster.client(), component, _pod_ready), 30, "mirror pod %s ready" % component)
    annotations = pod["metadata"]["annotations"]
    assert pod["metadata"]["labels"] == {"component": component, "tier": "control-plane"}
    assert annotations["kubernetes.io/config.hash"] == manifests.config_hash(cluster.pods[component])
    assert annotations["kubernetes.io/config.source"] == "file"
    assert "kubeadm.kubernetes.io/%s.advertise-address.endpoint" % component in annotations
    assert pod["spec"]["nodeName"] == NODE
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Node"


def test_the_embedded_client_cert_seeds_the_kubelet_cert_store(cluster):
    current = cluster.host.root / "kubelet-pki" / "kubelet-client-current.pem"
    assert stat.S_IMODE(os.stat(current).st_mode) == 0o600
    cert = pki.load_cert_pems(current.read_bytes())[0]
    assert pki.common_name(cert) == "system:node:" + NODE


def test_a_changed_manifest_gives_a_new_mirror_pod_hash(cluster):
    api = cluster.client()
    old = wait_until(lambda: _mirror(api, "etcd", _pod_ready), 30, "etcd's mirror pod")
    changed = cluster.write_manifests(etcd_extra=["--snapshot-count=5000"])["etcd"]
    new_hash = manifests.config_hash(changed)
    assert new_hash != old["metadata"]["annotations"]["kubernetes.io/config.hash"]
    pod = wait_until(lambda: _mirror(api, "etcd", lambda p: p["metadata"]["annotations"]["kubernetes.io/config.hash"]
                                     == new_hash and _pod_ready(p)), 60, "etcd's mirror pod with the new hash, Ready")
    assert pod["metadata"]["uid"] != old["metadata"]["uid"]
    cluster.pods["etcd"] = changed


def _delete_mirror_and_wait_for_a_new_one(api, component):
    old = wait_until(lambda: _mirror(api, component, _pod_ready), 30, "%s's mirror pod" % component)
    api.delete("v1", "pods", old["metadata"]["name"], "kube-system", body={"gracePeriodSeconds": 0})
    # The kubelet hears of the deletion through its watch and creates the mirror pod again at once (it no
    # longer lists its pods every second).
    new = wait_until(lambda: _mirror(api, component, lambda p: p["metadata"]["uid"] != old["metadata"]["uid"]), 10,
                     "a new %s mirror pod" % component, interval=0.2)
    assert new["metadata"]["annotations"]["kubernetes.io/config.hash"] == \
        old["metadata"]["annotations"]["kubernetes.io/config.hash"]
    wait_until(lambda: _mirror(api, component, _pod_ready), 30, "the new %s mirror pod Running and Ready" % component)


def test_a_deleted_mirror_pod_is_recreated_from_the_kubelets_watch(cluster):
    _delete_mirror_and_wait_for_a_new_one(cluster.client(), "etcd")


def test_the_kubelets_watch_survives_an_api_server_restart_by_listing_again(cluster):
    """The API server the kubelet watches through is killed (its watch breaks); the kubelet restarts it, lists
    its pods again and watches anew, so a mirror pod deleted afterwards is still recreated."""
    api = cluster.client()
    pid = cluster.host.pid("kube-apiserver")
    os.killpg(pid, signal.SIGKILL)
    wait_until(lambda: cluster.host.pid("kube-apiserver") not in (None, pid) and _mirror(
        api, "kube-apiserver", _pod_ready), 60, "the apiserver restarted and its mirror pod Ready", interval=0.2)
    wait_until(lambda: "pods informer" in cluster.host.log() and "listing again" in cluster.host.log(), 30,
               "the kubelet's informer to list again after its watch broke")
    _delete_mirror_and_wait_for_a_new_one(api, "etcd")


def test_the_node_reports_the_running_containerds_version(cluster):
    node = cluster.client().get("v1", "nodes", NODE)
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"] == "containerd://" + version.CONTAINERD_VERSIONS[-1]


def test_the_node_is_not_ready_while_the_runtime_is_down_and_reports_the_runtime_that_replaced_it(cluster):
    api = cluster.client()
    containerd = cluster.host.procs.started[0]
    cluster.host.procs.stop(containerd)

    def not_ready():
        node = _get(api, "v1", "nodes", NODE)
        conditions = {c["type"]: c for c in ((node or {}).get("status") or {}).get("conditions") or []}
        ready = conditions.get("Ready", {})
        return ready if ready.get("status") == "False" else None
    ready = wait_until(not_ready, 15, "the node to report NotReady")
    assert ready["reason"] == "KubeletNotReady"
    # What an in-place upgrade does to the runtime: another containerd release on the same socket.
    replacement = version.CONTAINERD_VERSIONS[0]
    cluster.host.start_containerd(release=replacement)
    node = wait_until(lambda: _ready(api, NODE), 15, "the node to be Ready again")
    node = wait_until(lambda: node if node["status"]["nodeInfo"]["containerRuntimeVersion"] ==
                      "containerd://" + replacement else _ready(api, NODE), 15, "the replacement runtime's version")
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"] == "containerd://" + replacement


def test_the_node_is_not_ready_without_a_pod_network_and_its_static_pods_keep_running(cluster):
    api = cluster.client()
    config = cluster.host.cni_conf_dir / "10-bridge.conflist"
    config.unlink()
    try:
        def not_ready():
            node = _get(api, "v1", "nodes", NODE)
            conditions = {c["type"]: c for c in ((node or {}).get("status") or {}).get("conditions") or []}
            ready = conditions.get("Ready", {})
            return ready if ready.get("status") == "False" else None
        ready = wait_until(not_ready, 15, "the node to report NotReady without a CNI config")
        assert (ready["reason"], ready["message"]) == ("KubeletNotReady", network.NOT_READY)
        # Static pods use the host's network: a node without a pod network still runs its control plane.
        assert all(_pod_ready(_get(api, "v1", "pods", "%s-%s" % (name, NODE), "kube-system") or {})
                   for name in ("etcd", "kube-apiserver"))
    finally:
        cluster.host.install_pod_network()
    wait_until(lambda: _ready(api, NODE), 15, "the node to be Ready once the network config is back")


class _Approver(threading.Thread):
    """Stands in for the controller manager's CSR approver and signer (kubelet client certificates)."""

    def __init__(self, plane):
        super().__init__(daemon=True)
        self.api = plane.client()
        self.plane = plane
        self.stop = threading.Event()
        self.signed = []

    def run(self):
        while not self.stop.wait(0.2):
            try:
                items = self.api.list("certificates.k8s.io/v1", "certificatesigningrequests")["items"]
            except (kubeclient.ApiError, kubeclient.ApiUnavailable):
                continue
            for csr in items:
                if (csr.get("status") or {}).get("certificate"):
                    continue
                now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                csr.setdefault("status", {})["conditions"] = [{"type": "Approved", "status": "True",
                                                               "reason": "AutoApproved", "lastUpdateTime": now}]
                csr = self.api.update("certificates.k8s.io/v1", "certificatesigningrequests", csr,
                                      subresource="approval")
                cert = pki.sign_csr(base64.b64decode(csr["spec"]["request"]), self.plane.ca, self.plane.ca_key)
                csr["status"]["certificate"] = base64.b64encode(pki.cert_pem(cert)).decode()
                self.api.update("certificates.k8s.io/v1", "certificatesigningrequests", csr, subresource="status")
                self.signed.append(csr)


def test_a_joining_kubelet_bootstraps_through_a_csr_and_registers(cluster, tmp_path):
    api = cluster.client()
    token_id, token_secret = "abcdef", "0123456789abcdef"
    expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    data = {"token-id": token_id, "token-secret": token_secret, "expiration": expires,
            "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
            "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token"}
    api.create("v1", "secrets", {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                                 "metadata": {"name": "bootstrap-token-" + token_id, "namespace": "kube-system"},
                                 "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}},
               "kube-system")
    # kubeadm's binding that lets the token's group ask for a kubelet certificate.
    api_version, plural, namespace, binding = clusterobjects.bootstrap_token_rbac(cluster.server, b"ca")[0]
    api.create(api_version, plural, binding, namespace)
    approver = _Approver(cluster)
    approver.start()
    procs = Processes()
    try:
        joiner = KubeletHost(tmp_path, cluster.host.releases, procs, node_name="cp-2")
        bootstrap = str(tmp_path / "bootstrap-kubelet.conf")
        kubeconfig.write(bootstrap, kubeconfig.build(cluster.server, pki.cert_pem(cluster.ca),
                                                     "tls-bootstrap-token-user",
                                                     token="%s.%s" % (token_id, token_secret)))
        joiner.start_containerd()
        joiner.start_kubelet("--kubeconfig=%s" % (tmp_path / "kubelet.conf"), "--bootstrap-kubeconfig=%s" % bootstrap,
                             "--cert-dir=%s" % (tmp_path / "kubelet-pki"),
                             "--node-labels=topology.kubernetes.io/zone=fd-b", version="v1.36.4")
        node = wait_until(lambda: _ready(api, "cp-2"), 60, "the joining node to be registered and Ready", interval=0.2)
    finally:
        approver.stop.set()
        procs.cleanup()
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.36.4"
    assert node["metadata"]["labels"]["topology.kubernetes.io/zone"] == "fd-b"
    csr = approver.signed[0]
    assert csr["spec"]["signerName"] == "kubernetes.io/kube-apiserver-client-kubelet"
    assert csr["spec"]["usages"] == ["digital signature", "client auth"]
    creds = kubeconfig.load_credentials(str(tmp_path / "kubelet.conf"))
    current = str(tmp_path / "kubelet-pki" / "kubelet-client-current.pem")
    assert kubeconfig.load(str(tmp_path / "kubelet.conf"))["users"][0]["user"] == {
        "client-certificate": current, "client-key": current}
    cert = pki.load_cert_pems(creds.client_cert_pem)[0]
    assert (pki.common_name(cert), pki.organizations(cert)) == ("system:node:cp-2", ["system:nodes"])
    assert stat.S_IMODE(os.stat(os.path.realpath(current)).st_mode) == 0o600


def test_a_restarted_kubelet_reconciles_the_zone_of_its_existing_node(cluster):
    api = cluster.client()
    api.patch("v1", "nodes", NODE, {"metadata": {"labels": {"node-role.kubernetes.io/control-plane": ""}}})
    cluster.host.procs.stop(cluster.host.kubelet)
    # As the unit's ExecStart passes them: kubeadm's flags, then the operator's /etc/default/kubelet.
    cluster.host.start_kubelet("--kubeconfig=%s" % cluster.kubelet_conf,
                               "--cert-dir=%s" % (cluster.host.root / "kubelet-pki"),
                               "--node-labels=example.com/rack=r1",
                               "--node-labels=topology.kubernetes.io/zone=fd-c")
    node = wait_until(lambda: _get(api, "v1", "nodes", NODE) if (_get(api, "v1", "nodes", NODE) or {}).get(
        "metadata", {}).get("labels", {}).get("topology.kubernetes.io/zone") == "fd-c" else None, 30,
        "the restarted kubelet to move its node to zone fd-c", interval=0.2)
    labels = node["metadata"]["labels"]
    assert labels["node-role.kubernetes.io/control-plane"] == ""
    assert "example.com/rack" not in labels  # not a default label: only set when the Node is registered


def test_pod_logs_come_from_the_kubelet_which_lets_the_api_server_read_them_only_once_rbac_allows(cluster):
    api = cluster.client()
    pod = "kube-apiserver-" + NODE
    path = "/api/v1/namespaces/kube-system/pods/%s/log" % pod
    # kubeadm's binding is not there: the kubelet asks the API server (a SubjectAccessReview) and refuses
    with pytest.raises(kubeclient.ApiError) as refused:
        api.request("GET", path)
    assert refused.value.status == 403
    assert refused.value.message == ("Forbidden (user=kube-apiserver-kubelet-client, verb=get, resource=nodes, "
                                     "subresource(s)=[proxy]) ( pods/log %s)" % pod)
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "kubeadm:apiserver-kubelet-client"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:kubelet-api-admin"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "kube-apiserver-kubelet-client"}]}
    api.create("rbac.authorization.k8s.io/v1", "clusterrolebindings", binding)
    try:
        # the component's own output (the emulated API server says where it serves), not the runtime's start line
        logs = wait_until(lambda: _get_text(api, path), 10, "the API server's logs through its kubelet")
        assert "Serving securely on 127.0.0.1:%d" % cluster.ports["api"] in logs and "kcpsim kubelet" not in logs
        assert _get_text(api, path + "?tailLines=1").count("\n") == 1
        with pytest.raises(kubeclient.ApiError) as unknown:
            api.request("GET", path + "?container=sidecar")
        assert (unknown.value.status, unknown.value.message) == (400, "container sidecar is not valid for pod %s" % pod)
        # pods/log is an RBAC resource of its own: a user who may read pods may not read their logs
        reader = cluster.user_client("pod-reader")
        api.create("rbac.authorization.k8s.io/v1", "clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
        api.create("rbac.authorization.k8s.io/v1", "clusterrolebindings", dict(
            binding, metadata={"name": "pod-reader"}, roleRef=dict(binding["roleRef"], name="pod-reader"),
            subjects=[dict(binding["subjects"][0], name="pod-reader")]))
        assert wait_until(lambda: _get(reader, "v1", "pods", pod, "kube-system"), 10, "the reader's binding in force")
        with pytest.raises(kubeclient.ApiError) as forbidden:
            reader.request("GET", path)
        assert forbidden.value.status == 403 and 'cannot get resource "pods/log"' in forbidden.value.message
    finally:
        for name in ("kubeadm:apiserver-kubelet-client", "pod-reader"):
            try:
                api.delete("rbac.authorization.k8s.io/v1", "clusterrolebindings", name)
            except kubeclient.ApiError:
                pass


def test_the_kubelet_api_wants_a_client_certificate_of_the_cluster_ca(cluster):
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as anonymous:
        urllib.request.urlopen("https://127.0.0.1:%d/containerLogs/kube-system/kube-apiserver-%s/kube-apiserver"
                               % (cluster.host.api_port, NODE), context=context, timeout=5)
    assert anonymous.value.code == 401


def _get_text(api, path):
    try:
        return api.request("GET", path)
    except kubeclient.ApiError:
        return None
