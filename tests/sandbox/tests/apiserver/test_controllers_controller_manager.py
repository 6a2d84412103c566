# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulated kube-controller-manager against the emulated API server and a real etcd: what kubeadm and the
collection read back from it (kubeadm-reference.md §8)."""

import base64
import datetime
import threading

import pytest

import apiserver_harness as harness
from kcpsim import kubeclient, pki
from kcpsim.controllers import bootstrap
from kcpsim.kubeadm import clusterobjects

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 5

GRACE = 3  # --node-monitor-grace-period, seconds
LEASE = "coordination.k8s.io/v1"


def stamp(delta=datetime.timedelta(0), micro=False):
    moment = datetime.datetime.now(datetime.timezone.utc) + delta
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def manager_argv(cluster, offset):
    return ["--kubeconfig=" + cluster.kubeconfig("controller-manager", cluster.ip(4)),
            "--authentication-kubeconfig=" + cluster.kubeconfig("controller-manager", cluster.ip(4)),
            "--bind-address=" + cluster.ip(offset), "--leader-elect=true",
            "--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms",
            "--controllers=*,bootstrapsigner,tokencleaner", "--cluster-signing-cert-file=" + cluster.path("ca.crt"),
            "--cluster-signing-key-file=" + cluster.path("ca.key"), "--node-monitor-grace-period=%ds" % GRACE,
            "--node-monitor-period=500ms", "--use-service-account-credentials=true", "--allocate-node-cidrs=true"]


@pytest.fixture(scope="module")
def manager(cluster):
    process = cluster.component("kcpsim.controllers.controller_manager", "kube-controller-manager-1",
                                manager_argv(cluster, 5))
    yield process
    process.stop()


@pytest.fixture(scope="module")
def bootstrapper(cluster, admin):
    """A client authenticated by a live bootstrap token, as a joining kubelet is, with the right to ask for a
    certificate that kubeadm's binding gives the token's group."""
    admin.create("v1", "secrets", harness.token_secret("csrtok", "0123456789abcdef",
                                                       stamp(datetime.timedelta(hours=1))), "kube-system")
    api_version, plural, namespace, binding = clusterobjects.bootstrap_token_rbac("https://10.0.0.1:6443", b"ca")[0]
    assert binding["metadata"]["name"] == "kubeadm:kubelet-bootstrap"
    admin.create(api_version, plural, binding, namespace)
    client = cluster.anonymous_client(cluster.ip(4), token="csrtok.0123456789abcdef")
    harness.wait_until_allowed(client, "certificates.k8s.io/v1", "certificatesigningrequests",
                               _kubelet_csr("rbac-probe", "n-probe"))
    yield client
    client.close()


def holder(admin, name):
    try:
        return admin.get(LEASE, "leases", name, "kube-system")["spec"].get("holderIdentity")
    except kubeclient.NotFound:
        return None


def heartbeat(admin, name, ready="True"):
    """What a kubelet does: renew its Lease and post a fresh Ready condition."""
    lease = {"apiVersion": LEASE, "kind": "Lease", "metadata": {"name": name, "namespace": "kube-node-lease"},
             "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": stamp(micro=True)}}
    try:
        current = admin.get(LEASE, "leases", name, "kube-node-lease")
        current["spec"] = lease["spec"]
        admin.update(LEASE, "leases", current, "kube-node-lease")
    except kubeclient.NotFound:
        admin.create(LEASE, "leases", lease, "kube-node-lease")
    node = admin.get("v1", "nodes", name)
    node["status"]["conditions"] = [{"type": "Ready", "status": ready, "reason": "KubeletReady",
                                     "lastHeartbeatTime": stamp(), "lastTransitionTime": stamp()}]
    admin.update("v1", "nodes", node, subresource="status")


def make_node(admin, name, control_plane=True):
    labels = {"node-role.kubernetes.io/control-plane": ""} if control_plane else {}
    taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}] if control_plane else []
    admin.create("v1", "nodes", {"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints},
                                 "status": {"conditions": []}})
    heartbeat(admin, name)


def test_the_leader_holds_the_lease_and_serves_healthz(cluster, admin, manager):
    harness.wait_until(lambda: holder(admin, "kube-controller-manager"), 20, what="a leader")
    assert harness.healthz("%s:10257" % cluster.ip(5)) == "ok"


def test_a_silent_node_goes_unknown_tainted_unreachable_and_its_pods_not_ready(admin, manager):
    make_node(admin, "silent")
    admin.create("v1", "pods", {"metadata": {"name": "etcd-silent"}, "spec": {
        "nodeName": "silent", "containers": [{"name": "etcd", "image": "etcd"}]}}, "kube-system")
    pod = admin.get("v1", "pods", "etcd-silent", "kube-system")
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    admin.update("v1", "pods", pod, "kube-system", subresource="status")

    def ready_status():
        return [c for c in admin.get("v1", "nodes", "silent")["status"]["conditions"] if c["type"] == "Ready"][0]

    def unknown_ready():
        condition = ready_status()
        return condition if condition["status"] == "Unknown" else None

    unknown = harness.wait_until(unknown_ready, GRACE + 15, what="Ready=Unknown")
    assert unknown["reason"] == "NodeStatusUnknown" and unknown["message"] == "Kubelet stopped posting node status."
    unreachable = {("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")}

    def taints():
        return {(t["key"], t["effect"]) for t in admin.get("v1", "nodes", "silent")["spec"].get("taints") or []}

    harness.wait_until(lambda: taints() >= unreachable, 10, what="the unreachable taints")
    assert ("node-role.kubernetes.io/control-plane", "NoSchedule") in taints(), "other taints are kept"
    pod_ready = admin.get("v1", "pods", "etcd-silent", "kube-system")["status"]["conditions"][0]
    assert pod_ready["status"] == "False"

    heartbeat(admin, "silent")
    harness.wait_until(lambda: not any(t["key"].startswith("node.kubernetes.io/")
                                       for t in admin.get("v1", "nodes", "silent")["spec"].get("taints") or []),
                       10, what="unreachable taints removed")


def test_a_node_that_keeps_heartbeating_stays_ready(admin, manager):
    make_node(admin, "lively")
    pace = threading.Event()
    seen = set()
    for beat in range(GRACE * 3):  # a kubelet beating every half second, for one and a half grace periods
        heartbeat(admin, "lively")
        pace.wait(0.5)
        conditions = admin.get("v1", "nodes", "lively")["status"]["conditions"]
        seen.update(c["status"] for c in conditions if c["type"] == "Ready")
    assert seen == {"True"}


def _kubelet_csr(name, node):
    key = pki.new_key("ECDSA-P256")
    request = pki.new_csr(key, "system:node:" + node, ("system:nodes",))
    return {"metadata": {"name": name}, "spec": {
        "request": base64.b64encode(request).decode(), "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
        "usages": ["digital signature", "client auth"]}}


def test_a_kubelet_csr_from_a_bootstrap_token_is_approved_and_signed_for_a_year(cluster, admin, manager, bootstrapper):
    bootstrapper.create("certificates.k8s.io/v1", "certificatesigningrequests", _kubelet_csr("node-csr-a", "n-a"))
    signed = harness.wait_until(lambda: admin.get("certificates.k8s.io/v1", "certificatesigningrequests",
                                                  "node-csr-a")["status"].get("certificate"), 15, what="a certificate")
    csr = admin.get("certificates.k8s.io/v1", "certificatesigningrequests", "node-csr-a")
    assert [(c["type"], c["reason"]) for c in csr["status"]["conditions"]] == [("Approved", "AutoApproved")]
    cert = pki.load_cert_pem(base64.b64decode(signed))
    assert pki.common_name(cert) == "system:node:n-a" and pki.organizations(cert) == ["system:nodes"]
    assert pki.signed_by(cert, pki.load_cert(cluster.path("ca.crt")))
    assert pki.ext_key_usages(cert) == {"client"}
    lifetime = pki.not_after(cert) - pki.not_before(cert)
    assert datetime.timedelta(days=364) < lifetime < datetime.timedelta(days=366)


def test_a_kubelet_csr_from_a_user_who_is_neither_bootstrapper_nor_that_node_stays_pending(admin, manager, bootstrapper):
    admin.create("certificates.k8s.io/v1", "certificatesigningrequests", _kubelet_csr("by-admin", "n-b"))
    bootstrapper.create("certificates.k8s.io/v1", "certificatesigningrequests", _kubelet_csr("control", "n-c"))
    # Once the later CSR is approved, the approver has looked at the earlier one too.
    harness.wait_until(lambda: admin.get("certificates.k8s.io/v1", "certificatesigningrequests",
                                         "control")["status"].get("conditions"), 15, what="the control CSR approved")
    csr = admin.get("certificates.k8s.io/v1", "certificatesigningrequests", "by-admin")
    assert not csr["status"].get("conditions") and not csr["status"].get("certificate")


def test_the_bootstrap_signer_signs_cluster_info_for_live_signing_tokens_only(admin, manager):
    kubeconfig_text = "apiVersion: v1\nkind: Config\nclusters: []\n"
    admin.create("v1", "configmaps", {"metadata": {"name": "cluster-info"}, "data": {"kubeconfig": kubeconfig_text}},
                 "kube-public")
    admin.create("v1", "secrets", harness.token_secret("sign01", "abcdefabcdefabcd", stamp(datetime.timedelta(hours=1))),
                 "kube-system")
    admin.create("v1", "secrets", harness.token_secret("auth01", "abcdefabcdefabcd", stamp(datetime.timedelta(hours=1)),
                                                       usages=("authentication",)), "kube-system")

    def data():
        return admin.get("v1", "configmaps", "cluster-info", "kube-public")["data"]

    harness.wait_until(lambda: "jws-kubeconfig-sign01" in data(), 15, what="the signature")
    assert data()["jws-kubeconfig-sign01"] == bootstrap.detached_jws(kubeconfig_text, "sign01", "abcdefabcdefabcd")
    assert "jws-kubeconfig-auth01" not in data()
    admin.delete("v1", "secrets", "bootstrap-token-sign01", "kube-system")
    harness.wait_until(lambda: "jws-kubeconfig-sign01" not in data(), 15, what="the signature removed")


def test_an_expired_token_is_deleted_and_kubeadm_certs_it_owns_is_collected(admin, manager):
    soon = stamp(datetime.timedelta(seconds=2))
    proxy = admin.create("v1", "secrets", harness.token_secret("prxy01", "0123456789abcdef", soon, usages=(),
                                                               extra_groups=None,
                                                               description="Proxy for managing TTL for the "
                                                                           "kubeadm-certs secret"), "kube-system")
    admin.create("v1", "secrets", {"metadata": {"name": "kubeadm-certs", "ownerReferences": [{
        "apiVersion": "v1", "kind": "Secret", "name": "bootstrap-token-prxy01", "uid": proxy["metadata"]["uid"],
        "controller": True}]}, "type": "Opaque", "data": {"ca.crt": "Y2E="}}, "kube-system")
    admin.create("v1", "secrets", {"metadata": {"name": "owner-never-existed", "ownerReferences": [{
        "apiVersion": "v1", "kind": "Secret", "name": "kubeadm-unrelated", "uid": "not-this-uid"}]}}, "kube-system")

    def gone(name):
        try:
            admin.get("v1", "secrets", name, "kube-system")
            return False
        except kubeclient.NotFound:
            return True

    harness.wait_until(lambda: gone("bootstrap-token-prxy01"), 20, what="the token cleaner")
    harness.wait_until(lambda: gone("kubeadm-certs"), 20, what="garbage collection of kubeadm-certs")
    harness.wait_until(lambda: gone("owner-never-existed"), 20, what="an object whose owner never existed")


def test_a_job_completes_when_a_node_can_run_it_and_its_ttl_then_removes_it(admin, manager):
    make_node(admin, "job-node")
    job = {"metadata": {"name": "upgrade-health-check-abc12"}, "spec": {
        "ttlSecondsAfterFinished": 3, "backoffLimit": 0, "activeDeadlineSeconds": 15,
        "template": {"spec": {"restartPolicy": "Never", "securityContext": {"runAsUser": 999},
                              "tolerations": [{"key": "node-role.kubernetes.io/control-plane",
                                               "effect": "NoSchedule"}],
                              "containers": [{"name": "upgrade-health-check", "image": "registry.k8s.io/pause:3.10"}]}}}}
    admin.create("batch/v1", "jobs", job, "kube-system")

    def status():
        try:
            return admin.get("batch/v1", "jobs", job["metadata"]["name"], "kube-system").get("status") or {}
        except kubeclient.NotFound:
            return {"deleted": True}

    def completed():
        current = status()
        return current if current.get("succeeded") else None

    done = harness.wait_until(completed, 15, what="the Job completing")
    assert done["succeeded"] == 1
    assert ("Complete", "True") in [(c["type"], c["status"]) for c in done["conditions"]]
    harness.wait_until(lambda: status().get("deleted"), 15, what="ttl-after-finished")


def test_a_job_no_node_can_run_stays_active(admin, manager):
    admin.create("batch/v1", "jobs", {"metadata": {"name": "needs-gpu"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "nodeSelector": {"gpu": "yes"},
        "containers": [{"name": "c", "image": "pause"}]}}}}, "default")
    status = harness.wait_until(lambda: admin.get("batch/v1", "jobs", "needs-gpu", "default").get("status") or None,
                                15, what="the Job status")
    assert status["active"] == 1 and not status.get("succeeded")


def test_a_deployment_gets_its_replica_set_and_its_pods_and_an_evicted_pod_is_made_again(admin, manager):
    # no scheduler and no kubelet here: the pods stay unbound and Pending, which is all the controllers need
    deployment = {"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}
    admin.create("apps/v1", "deployments", deployment, "default")

    def pods():
        return [pod for pod in admin.list("v1", "pods", "default")["items"]
                if pod["metadata"].get("labels", {}).get("app") == "web" and not pod["metadata"].get("deletionTimestamp")]

    made = harness.wait_until(lambda: pods() if len(pods()) == 2 else None, 15, what="the Deployment's 2 pods")
    owners = {pod["metadata"]["ownerReferences"][0]["name"] for pod in made}
    assert len(owners) == 1 and owners.pop().startswith("web-")
    assert all(pod["metadata"]["labels"]["pod-template-hash"] for pod in made)
    admin.delete("v1", "pods", made[0]["metadata"]["name"], "default", body={"gracePeriodSeconds": 0})
    again = harness.wait_until(lambda: pods() if len(pods()) == 2 and made[0]["metadata"]["name"] not in
                               [p["metadata"]["name"] for p in pods()] else None, 15, what="a pod made again")
    assert made[1]["metadata"]["name"] in [pod["metadata"]["name"] for pod in again]
    status = harness.wait_until(lambda: admin.get("apps/v1", "deployments", "web", "default").get("status") or None, 15,
                                what="the Deployment's status")
    assert status["replicas"] == 2 and status["availableReplicas"] == 0


def test_a_standby_takes_over_when_the_leader_dies(cluster, admin, manager):
    first = harness.wait_until(lambda: holder(admin, "kube-controller-manager"), 20, what="a leader")
    standby = cluster.component("kcpsim.controllers.controller_manager", "kube-controller-manager-2",
                                manager_argv(cluster, 6))
    try:
        manager.stop(kill=True)
        second = harness.wait_until(lambda: (holder(admin, "kube-controller-manager") or first) != first
                                    and holder(admin, "kube-controller-manager"), 20, what="the standby leading")
        assert second != first
    finally:
        standby.stop()
