# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controllers' decisions, without an API server: placement, node lifecycle, CSR approval, bootstrap
signing and token cleaning, garbage collection, jobs, leader election, and --controllers."""

import base64
import datetime

import pytest

import apiserver_harness as harness
from kcpsim import pki
from kcpsim.apiserver import resources
from kcpsim.controllers import bootstrap, controller_manager, csr, gc, jobs, leaderelection, nodelifecycle, placement, workloads

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
STAMP = "2026-01-01T12:00:00Z"
CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
CP_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}


def ago(seconds):
    return (NOW - datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def node(name="n", ready="True", heartbeat=0, taints=(), unschedulable=False, labels=None, created=3600):
    conditions = [] if ready is None else [{"type": "Ready", "status": ready, "lastHeartbeatTime": ago(heartbeat),
                                            "lastTransitionTime": ago(3000)}]
    return {"metadata": {"name": name, "labels": labels or {}, "creationTimestamp": ago(created)},
            "spec": {"taints": list(taints), "unschedulable": unschedulable}, "status": {"conditions": conditions}}


def lease(renewed):
    return {"spec": {"renewTime": (NOW - datetime.timedelta(seconds=renewed)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}


# --- placement ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("candidate, pod_spec, fits", [
    (node(), {}, True),
    (node(ready="False"), {}, False),
    (node(taints=[CP_TAINT]), {}, False),
    (node(taints=[CP_TAINT]), {"tolerations": [CP_TOLERATION]}, True),
    (node(taints=[CP_TAINT]), {"tolerations": [{"operator": "Exists"}]}, True),
    (node(taints=[{"key": "k", "value": "a", "effect": "NoExecute"}]),
     {"tolerations": [{"key": "k", "value": "b", "effect": "NoExecute"}]}, False),
    (node(taints=[{"key": "k", "effect": "PreferNoSchedule"}]), {}, True),
    (node(unschedulable=True), {}, False),
    (node(unschedulable=True), {"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]},
     True),
    (node(labels={"disk": "ssd"}), {"nodeSelector": {"disk": "ssd"}}, True),
    (node(), {"nodeSelector": {"disk": "ssd"}}, False),
], ids=["a ready untainted node", "a NotReady node", "an untolerated control-plane taint",
        "a tolerated control-plane taint", "an Exists toleration without key tolerates everything",
        "a toleration with another value", "PreferNoSchedule does not block", "a cordoned node",
        "a pod tolerating unschedulable", "a matching node selector", "a node selector the node lacks"])
def test_a_node_fits_a_pod(candidate, pod_spec, fits):
    assert placement.fits(candidate, pod_spec) is fits


def test_the_least_loaded_fitting_node_wins_and_ties_go_by_name():
    nodes = [node("b"), node("a"), node("c", ready="False")]
    assert placement.choose(nodes, {}, {"a": 2, "b": 1}) == "b"
    assert placement.choose(nodes, {}, {}) == "a"
    assert placement.choose([node("c", ready="False")], {}, {}) is None


# --- node lifecycle -----------------------------------------------------------------------------------------

GRACE, STARTUP = datetime.timedelta(seconds=40), datetime.timedelta(seconds=60)


@pytest.mark.parametrize("candidate, node_lease, changes", [
    (node(heartbeat=10), None, False),
    (node(heartbeat=100), None, True),
    (node(heartbeat=100), lease(5), False),
    (node(heartbeat=100, ready="Unknown"), None, True),
    (node(ready=None, created=30), None, False),
    (node(ready=None, created=120), None, True),
], ids=["a fresh heartbeat", "a heartbeat older than the grace period", "a fresh Lease renewal counts",
        "an already Unknown node still gets its missing pressure conditions",
        "a new node within the startup grace", "a node that never posted status after the startup grace"])
def test_silence_is_judged_from_the_later_of_heartbeat_and_lease(candidate, node_lease, changes):
    result = nodelifecycle.silenced_conditions(candidate, node_lease, NOW, GRACE, STARTUP, STAMP)
    assert (result is not None) is changes


def test_a_silent_node_gets_every_condition_unknown_with_the_real_reasons():
    conditions = nodelifecycle.silenced_conditions(node(heartbeat=100), None, NOW, GRACE, STARTUP, STAMP)
    by_type = {c["type"]: c for c in conditions}
    assert set(by_type) == set(nodelifecycle.CONDITION_TYPES)
    assert all(c["status"] == "Unknown" and c["lastTransitionTime"] == STAMP for c in conditions)
    assert by_type["Ready"]["reason"] == "NodeStatusUnknown"
    assert by_type["Ready"]["lastHeartbeatTime"] == ago(100), "the last heartbeat is kept"
    assert by_type["DiskPressure"]["reason"] == "NodeStatusNeverUpdated"
    again = dict(node(heartbeat=100), status={"conditions": conditions})
    assert nodelifecycle.silenced_conditions(again, None, NOW, GRACE, STARTUP, STAMP) is None


@pytest.mark.parametrize("ready, before, after", [
    ("Unknown", [CP_TAINT], {("node-role.kubernetes.io/control-plane", "NoSchedule"),
                             ("node.kubernetes.io/unreachable", "NoSchedule"),
                             ("node.kubernetes.io/unreachable", "NoExecute")}),
    ("False", [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}],
     {("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute")}),
    ("True", [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}, CP_TAINT],
     {("node-role.kubernetes.io/control-plane", "NoSchedule")}),
], ids=["Unknown adds the unreachable taints and keeps others", "False swaps unreachable for not-ready",
        "True removes them"])
def test_taints_follow_the_ready_condition(ready, before, after):
    taints = nodelifecycle.wanted_taints(node(ready=ready, taints=before), STAMP)
    assert {(t["key"], t["effect"]) for t in taints} == after
    assert nodelifecycle.wanted_taints(node(ready=ready, taints=taints), STAMP) is None


def test_pods_of_a_node_that_went_unknown_are_marked_not_ready():
    pods = [{"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}]
    marked = nodelifecycle.pods_to_mark_not_ready(pods, STAMP)
    assert len(marked) == 1
    assert marked[0][1]["conditions"][0] == {"type": "Ready", "status": "False", "lastTransitionTime": STAMP}


# --- CSR approval and signing ------------------------------------------------------------------------------

def kubelet_csr(common_name="system:node:cp-1", organizations=("system:nodes",), groups=("system:bootstrappers",),
                username="system:bootstrap:abcdef", usages=("digital signature", "client auth"),
                signer="kubernetes.io/kube-apiserver-client-kubelet", conditions=()):
    request = pki.new_csr(pki.new_key("ECDSA-P256"), common_name, organizations)
    return {"spec": {"request": base64.b64encode(request).decode(), "signerName": signer, "usages": list(usages),
                     "groups": list(groups), "username": username},
            "status": {"conditions": list(conditions)}}


@pytest.mark.parametrize("request_body, reason", [
    (kubelet_csr(), "nodeclient"),
    (kubelet_csr(groups=("system:nodes",), username="system:node:cp-1"), "selfnodeclient"),
    (kubelet_csr(groups=("system:nodes",), username="system:node:cp-2"), None),
    (kubelet_csr(groups=("kubeadm:cluster-admins",), username="kubernetes-admin"), None),
    (kubelet_csr(organizations=("system:masters",)), None),
    (kubelet_csr(common_name="admin"), None),
    (kubelet_csr(usages=("client auth", "server auth")), None),
    (kubelet_csr(signer="kubernetes.io/kubelet-serving"), None),
    (kubelet_csr(conditions=[{"type": "Denied", "status": "True"}]), None),
], ids=["a bootstrapper asking for a node client certificate", "a node renewing its own certificate",
        "a node asking for another node's certificate", "an admin asking for a node certificate",
        "a subject outside system:nodes", "a common name without system:node:", "server auth requested",
        "another signer", "an already denied CSR"])
def test_which_csrs_are_approved_automatically(request_body, reason):
    assert csr.approval_reason(request_body) == reason


@pytest.mark.parametrize("request_body, signs", [
    (kubelet_csr(conditions=[{"type": "Approved", "status": "True"}]), True),
    (kubelet_csr(), False),
    (kubelet_csr(conditions=[{"type": "Approved", "status": "True"}, {"type": "Failed", "status": "True"}]), False),
    (kubelet_csr(signer="example.com/custom", conditions=[{"type": "Approved", "status": "True"}]), False),
], ids=["approved", "not approved", "approved but failed", "a signer this controller does not serve"])
def test_which_csrs_the_signer_signs(request_body, signs):
    assert csr.wants_signing(request_body) is signs


@pytest.mark.parametrize("expiration, days", [(None, 365), (86400 * 7, 7), (60, 600 / 86400)],
                         ids=["the signing duration by default", "a shorter request wins",
                              "never under ten minutes"])
def test_certificate_validity(expiration, days):
    request_body = kubelet_csr()
    request_body["spec"]["expirationSeconds"] = expiration
    assert csr.validity(request_body, datetime.timedelta(days=365)) == datetime.timedelta(days=days)


def test_an_unreadable_request_is_refused():
    request_body = kubelet_csr()
    request_body["spec"]["request"] = base64.b64encode(b"not a csr").decode()
    with pytest.raises(csr.BadRequest):
        csr.approval_reason(request_body)


# --- bootstrap signer and token cleaner --------------------------------------------------------------------

def test_detached_jws_matches_the_cluster_bootstrap_test_vector():
    # The published vector of k8s.io/cluster-bootstrap's jws tests: kubeadm's discovery compares strings.
    assert bootstrap.detached_jws("Hello from the other side. I must have called a thousand times.", "joshua",
                                  "my voice is my passcode") == \
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8"


LIVE = "2026-01-02T00:00:00Z"
DEAD = "2025-12-31T00:00:00Z"


@pytest.mark.parametrize("secrets, data, expected_keys", [
    ([harness.token_secret("abcdef", "0123456789abcdef", LIVE)], {"kubeconfig": "k"},
     {"kubeconfig", "jws-kubeconfig-abcdef"}),
    ([harness.token_secret("abcdef", "0123456789abcdef", DEAD)], {"kubeconfig": "k", "jws-kubeconfig-abcdef": "x"},
     {"kubeconfig"}),
    ([harness.token_secret("abcdef", "0123456789abcdef", LIVE, usages=("authentication",))], {"kubeconfig": "k"},
     None),
    ([], {"kubeconfig": "k", "jws-kubeconfig-gone00": "x"}, {"kubeconfig"}),
    ([harness.token_secret("abcdef", "0123456789abcdef", LIVE)], {}, None),
], ids=["a live signing token is added", "an expired token's signature is removed",
        "a token without the signing usage signs nothing", "a deleted token's signature is removed",
        "nothing to sign without a kubeconfig"])
def test_cluster_info_carries_exactly_the_live_signatures(secrets, data, expected_keys):
    result = bootstrap.signed_cluster_info(data, bootstrap.signing_tokens(secrets, NOW))
    assert (None if result is None else set(result)) == expected_keys


def test_a_correct_signature_is_left_alone():
    data = {"kubeconfig": "k", "jws-kubeconfig-abcdef": bootstrap.detached_jws("k", "abcdef", "0123456789abcdef")}
    tokens = bootstrap.signing_tokens([harness.token_secret("abcdef", "0123456789abcdef", LIVE)], NOW)
    assert bootstrap.signed_cluster_info(data, tokens) is None


def test_the_cleaner_deletes_only_expired_bootstrap_tokens():
    secrets = [harness.token_secret("live00", "0123456789abcdef", LIVE),
               harness.token_secret("dead00", "0123456789abcdef", DEAD),
               dict(harness.token_secret("other0", "0123456789abcdef", DEAD), type="Opaque")]
    assert [s["metadata"]["name"] for s in bootstrap.expired_tokens(secrets, NOW)] == ["bootstrap-token-dead00"]


# --- garbage collector -------------------------------------------------------------------------------------

def dependent(*owners):
    return {"metadata": {"namespace": "kube-system", "ownerReferences": [
        {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid} for api_version, kind, name, uid in owners]}}


LIVE_OWNERS = {("secrets", "kube-system", "bootstrap-token-abcdef"): "uid-1", ("nodes", None, "cp-1"): "uid-n"}


@pytest.mark.parametrize("obj, orphan", [
    (dependent(("v1", "Secret", "bootstrap-token-abcdef", "uid-1")), False),
    (dependent(("v1", "Secret", "bootstrap-token-gone00", "uid-2")), True),
    (dependent(("v1", "Secret", "bootstrap-token-abcdef", "uid-old")), True),
    (dependent(("v1", "Secret", "gone", "u"), ("v1", "Node", "cp-1", "uid-n")), False),
    (dependent(("example.com/v1", "Widget", "w", "u")), False),
    ({"metadata": {"namespace": "kube-system"}}, False),
], ids=["its owner lives", "its owner is gone", "its owner was re-created with another uid",
        "one owner of two still lives (a cluster-scoped one)", "an owner kind the server does not serve",
        "no owners at all"])
def test_an_object_is_collected_when_every_owner_is_gone(obj, orphan):
    def owner_uid(resource, namespace, name):
        return LIVE_OWNERS.get((resource.plural, namespace, name))
    assert gc.is_orphan(obj, owner_uid) is orphan


def test_owner_references_resolve_through_the_served_kinds():
    assert resources.by_kind("batch/v1", "Job").plural == "jobs"
    assert resources.by_kind("v1", "Widget") is None


# --- jobs --------------------------------------------------------------------------------------------------

def job(tolerations=(), ttl=None, status=None, suspend=False, completions=None):
    spec = {"template": {"spec": {"tolerations": list(tolerations), "containers": [{"name": "c"}]}},
            "suspend": suspend}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    if completions:
        spec["completions"] = completions
    return {"metadata": {"name": "j"}, "spec": spec, "status": status or {}}


def test_a_job_whose_pod_fits_somewhere_completes():
    status = jobs.next_status(job(tolerations=[CP_TOLERATION], completions=2), [node(taints=[CP_TAINT])], STAMP)
    assert status["succeeded"] == 2 and status["completionTime"] == STAMP
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert jobs.next_status(dict(job(), status=status), [node()], STAMP) is None


@pytest.mark.parametrize("nodes", [[node(taints=[CP_TAINT])], [node(ready="False")], []],
                         ids=["only a control-plane node it does not tolerate", "only a NotReady node", "no nodes"])
def test_a_job_whose_pod_fits_nowhere_stays_active(nodes):
    status = jobs.next_status(job(), nodes, STAMP)
    assert status == {"startTime": STAMP, "active": 1}
    assert jobs.next_status(job(status=status), nodes, STAMP) is None


def test_a_suspended_job_is_left_alone():
    assert jobs.next_status(job(suspend=True), [node()], STAMP) is None


@pytest.mark.parametrize("candidate, expired", [
    (job(ttl=30, status={"completionTime": ago(60), "conditions": [{"type": "Complete", "status": "True"}]}), True),
    (job(ttl=300, status={"completionTime": ago(60), "conditions": [{"type": "Complete", "status": "True"}]}), False),
    (job(ttl=30, status={"conditions": [{"type": "Failed", "status": "True", "lastTransitionTime": ago(60)}]}), True),
    (job(ttl=30, status={"active": 1}), False),
    (job(status={"completionTime": ago(60), "conditions": [{"type": "Complete", "status": "True"}]}), False),
], ids=["finished longer ago than its ttl", "finished more recently", "failed longer ago than its ttl",
        "still running", "no ttl"])
def test_ttl_after_finished(candidate, expired):
    assert jobs.ttl_expired(candidate, NOW) is expired


# --- leader election and --controllers ---------------------------------------------------------------------

@pytest.mark.parametrize("spec, action", [
    (None, "acquire"),
    ({"holderIdentity": ""}, "acquire"),
    ({"holderIdentity": "me", "renewTime": ago(100), "leaseDurationSeconds": 15}, "renew"),
    ({"holderIdentity": "other", "renewTime": ago(5), "leaseDurationSeconds": 15}, "wait"),
    ({"holderIdentity": "other", "renewTime": ago(20), "leaseDurationSeconds": 15}, "acquire"),
], ids=["no Lease yet", "a released Lease", "our own Lease, even late", "someone else's live Lease",
        "someone else's expired Lease"])
def test_lease_action(spec, action):
    assert leaderelection.lease_action(spec, "me", NOW) == action


def test_taking_over_counts_a_transition_and_renewing_does_not():
    taken = leaderelection.next_spec({"holderIdentity": "other", "leaseTransitions": 3}, "me", NOW, 15)
    assert (taken["holderIdentity"], taken["leaseTransitions"], taken["leaseDurationSeconds"]) == ("me", 4, 15)
    renewed = leaderelection.next_spec(taken, "me", NOW + datetime.timedelta(seconds=2), 15)
    assert renewed["leaseTransitions"] == 4 and renewed["acquireTime"] == taken["acquireTime"]
    assert renewed["renewTime"] != taken["renewTime"]


@pytest.mark.parametrize("names, enabled", [
    (["*"], set(controller_manager.DEFAULT_ON)),
    (["*", "bootstrapsigner", "tokencleaner"], set(controller_manager.DEFAULT_ON) | {"bootstrapsigner", "tokencleaner"}),
    (["*", "-garbagecollector"], set(controller_manager.DEFAULT_ON) - {"garbagecollector"}),
    (["job-controller"], {"job"}),
    (["-job", "*"], set(controller_manager.DEFAULT_ON) - {"job"}),
], ids=["star is every default controller", "kubeadm's flag adds the two default-off ones",
        "a minus removes one", "long names are aliases", "a removal holds whatever its position"])
def test_controllers_flag(names, enabled):
    assert controller_manager.enabled_controllers(names) == enabled


def _pod(name, created, node=None, phase="Pending", ready=False, owner="rs-uid", deleting=False):
    metadata = {"name": name, "namespace": "default", "uid": name + "-uid", "creationTimestamp": created,
                "ownerReferences": [{"kind": "ReplicaSet", "uid": owner, "controller": True}]}
    if deleting:
        metadata["deletionTimestamp"] = created
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {"metadata": metadata, "spec": {"nodeName": node} if node else {}, "status": {"phase": phase, "conditions": conditions}}


def _replica_set(replicas, uid="rs-uid"):
    return {"metadata": {"name": "web-abc", "namespace": "default", "uid": uid},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}}}


def test_a_replica_set_makes_what_it_lacks_and_counts_neither_terminating_pods_nor_others():
    pods = [_pod("a", "2026-01-01T00:00:00Z", "n1", "Running", True), _pod("b", "2026-01-01T00:00:01Z", deleting=True),
            _pod("c", "2026-01-01T00:00:02Z", owner="other")]
    assert workloads.replica_changes(_replica_set(3), pods) == (2, [])
    made = workloads.new_pod(_replica_set(3))
    assert made["metadata"]["generateName"] == "web-abc-" and made["metadata"]["labels"] == {"app": "web"}
    assert made["metadata"]["ownerReferences"][0]["uid"] == "rs-uid" and made["metadata"]["ownerReferences"][0]["controller"]


def test_a_replica_set_deletes_its_least_useful_pods_first():
    pods = [_pod("ready-old", "2026-01-01T00:00:00Z", "n1", "Running", True),
            _pod("ready-new", "2026-01-01T00:00:05Z", "n1", "Running", True),
            _pod("running-not-ready", "2026-01-01T00:00:01Z", "n2", "Running", False),
            _pod("unscheduled", "2026-01-01T00:00:00Z")]
    _create, deleted = workloads.replica_changes(_replica_set(1), pods)
    assert [pod["metadata"]["name"] for pod in deleted] == ["unscheduled", "running-not-ready", "ready-new"]


def test_the_pod_template_hash_is_stable_and_in_the_safe_alphabet():
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    first = workloads.template_hash(template)
    assert first == workloads.template_hash(json_copy(template)) and set(first) <= set(workloads.SAFE_ALPHABET)
    template["spec"]["containers"][0]["image"] = "pause:2"
    assert workloads.template_hash(template) != first


def json_copy(obj):
    import json
    return json.loads(json.dumps(obj))


def _owned_rs(name, replicas, available, created):
    return {"metadata": {"name": name, "namespace": "default", "uid": name, "creationTimestamp": created},
            "spec": {"replicas": replicas}, "status": {"availableReplicas": available}}


@pytest.mark.parametrize("strategy, new, olds, scales", [
    # 25 % of 4: 1 more, 1 fewer
    ({}, (0, 0), [(4, 4)], {"new": 1, "old": 3}),
    ({}, (1, 0), [(3, 3)], {"new": 2}),               # 4 of 5: the new one grows; 3 available, 3 needed: the old waits
    ({}, (1, 1), [(3, 3)], {"new": 2, "old": 2}),
    ({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}, (0, 0), [(4, 4)], {"old": 3}),  # both 0: 1 unavailable
    ({}, (0, 0), [(4, 1)], {"new": 1, "old": 1}),    # unavailable old pods cost nothing to remove, the available one stays
    ({"type": "Recreate"}, (0, 0), [(4, 4)], {"old": 0}),
    ({"type": "Recreate"}, (0, 0), [(0, 0)], {"new": 4}),
], ids=["surge one", "the old waits for the new pod", "next step", "both zero", "unavailable first", "recreate: old first", "recreate: then new"])
def test_a_deployment_rolls_within_its_surge_and_unavailability(strategy, new, olds, scales):
    deployment = {"metadata": {"name": "web", "namespace": "default", "uid": "d"}, "spec": {"replicas": 4, "strategy": strategy}}
    current = _owned_rs("new", new[0], new[1], "2026-01-02T00:00:00Z")
    old = [_owned_rs("old", replicas, available, "2026-01-01T00:00:00Z") for replicas, available in olds]
    assert workloads.rollout_scales(deployment, current, old, []) == scales


def test_a_deployment_s_replica_set_carries_the_hash_in_its_name_selector_and_pods():
    deployment = {"metadata": {"name": "web", "namespace": "default", "uid": "d"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}}}}
    made = workloads.new_replica_set(deployment, "5d4f8")
    assert made["metadata"]["name"] == "web-5d4f8" and made["spec"]["replicas"] == 0
    assert made["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": "5d4f8"}
    assert made["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": "5d4f8"}
    assert made["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
