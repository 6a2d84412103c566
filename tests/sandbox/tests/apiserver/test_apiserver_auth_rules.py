# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who a request authenticates as (kcpsim.apiserver.auth) and what each may do: the Node authorizer, RBAC with
the API server's bootstrap policy and kubeadm's bindings, NodeRestriction (kcpsim.apiserver.authz)."""

import datetime

import pytest

import apiserver_harness as harness
from kcpsim.apiserver import auth, authz, bootstrap_policy
from kcpsim.kubeadm import clusterobjects

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
LATER = "2026-01-02T00:00:00Z"
EARLIER = "2025-12-31T00:00:00Z"


def test_a_client_certificate_gives_the_common_name_and_organizations():
    peer = {"subject": ((("organizationName", "system:nodes"),), (("commonName", "system:node:cp-1"),))}
    assert auth.certificate_user(peer) == auth.User("system:node:cp-1", ("system:nodes", "system:authenticated"), "")


def test_no_certificate_is_no_user():
    assert auth.certificate_user(None) is None and auth.certificate_user({}) is None


@pytest.mark.parametrize("secret, token, expected", [
    (harness.token_secret("abcdef", "0123456789abcdef", LATER), ("abcdef", "0123456789abcdef"),
     ("system:bootstrap:abcdef", ("system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token",
                                  "system:authenticated"))),
    (harness.token_secret("abcdef", "0123456789abcdef", LATER, extra_groups=None), ("abcdef", "0123456789abcdef"),
     ("system:bootstrap:abcdef", ("system:bootstrappers", "system:authenticated"))),
    (harness.token_secret("abcdef", "0123456789abcdef", EARLIER), ("abcdef", "0123456789abcdef"), None),
    (harness.token_secret("abcdef", "0123456789abcdef", "tomorrow"), ("abcdef", "0123456789abcdef"), None),
    (harness.token_secret("abcdef", "0123456789abcdef", LATER), ("abcdef", "fedcba9876543210"), None),
    (harness.token_secret("abcdef", "0123456789abcdef", LATER, usages=("signing",)),
     ("abcdef", "0123456789abcdef"), None),
    (harness.token_secret("abcdef", "0123456789abcdef", LATER, extra_groups="system:masters"),
     ("abcdef", "0123456789abcdef"), None),
    (dict(harness.token_secret("abcdef", "0123456789abcdef", LATER), type="Opaque"),
     ("abcdef", "0123456789abcdef"), None),
    (None, ("abcdef", "0123456789abcdef"), None),
], ids=["a live token with kubeadm's extra group", "a live token without extra groups", "an expired token",
        "an unreadable expiration counts as expired", "a wrong secret", "no authentication usage",
        "an extra group outside system:bootstrappers", "a Secret of another type", "no Secret at all"])
def test_bootstrap_token_user(secret, token, expected):
    user = auth.bootstrap_token_user(secret, token[0], token[1], NOW)
    assert (None if user is None else (user.name, user.groups)) == expected


@pytest.mark.parametrize("bearer, expected", [
    ("abcdef.0123456789abcdef", ("abcdef", "0123456789abcdef")),
    ("ABCDEF.0123456789abcdef", None),
    ("abcdef.0123456789abcde", None),
    ("eyJhbGciOiJSUzI1NiJ9.e30.sig", None),
], ids=["the bootstrap token form", "upper case is not", "a short secret is not", "a service account JWT is not"])
def test_bootstrap_token_form(bearer, expected):
    assert auth.bootstrap_token_id(bearer) == expected


def _policy(extra=()):
    """The bootstrap policy the API server creates, plus ``extra`` objects (as kubeadm creates them)."""
    found = bootstrap_policy.objects() + [(plural, namespace, body) for api_version, plural, namespace, body in extra]

    def pick(plural):
        return [body for kind, namespace, body in found if kind == plural]
    return authz.Policy({role["metadata"]["name"]: role["rules"] for role in pick("clusterroles")},
                        {(role["metadata"]["namespace"], role["metadata"]["name"]): role["rules"]
                         for role in pick("roles")}, pick("clusterrolebindings"), pick("rolebindings"))


KUBEADM_POLICY = _policy(clusterobjects.bootstrap_token_rbac("https://10.0.0.1:6443", b"ca")
                         + clusterobjects.upload_kubeadm_config("cfg") + clusterobjects.kubeadm_certs_rbac()
                         + [clusterobjects.cluster_admins_binding()])


def _attrs(verb, resource="", namespace=None, name=None, group="", subresource="", path=None, fields=None):
    return authz.Attributes(verb, group, resource, subresource, namespace, name, path, fields)


@pytest.mark.parametrize("attrs, allowed", [
    (_attrs("get", path="/livez"), True),
    (_attrs("get", path="/version"), True),
    (_attrs("get", path="/readyz/etcd"), False),
    (_attrs("get", path="/healthzfoo"), False),
    (_attrs("post", path="/livez"), False),
    (_attrs("get", path="/api"), False),
    (_attrs("get", "configmaps", "kube-public", "cluster-info"), True),
    (_attrs("update", "configmaps", "kube-public", "cluster-info"), False),
    (_attrs("get", "configmaps", "kube-public", "other"), False),
    (_attrs("get", "secrets", "kube-public", "cluster-info"), False),
], ids=["livez", "version", "a single readyz check is not public", "a path that only starts like healthz",
        "a write to livez", "discovery", "reading cluster-info", "writing cluster-info", "another ConfigMap",
        "a Secret named cluster-info"])
def test_what_anonymous_may_do(attrs, allowed):
    assert authz.decide(auth.ANONYMOUS, attrs, KUBEADM_POLICY, list)[0] is allowed


TOKEN_GROUPS = ("system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated")
TOKEN_USER = auth.User("system:bootstrap:abcdef", TOKEN_GROUPS, "")
NODE_USER = auth.User("system:node:cp-1", ("system:nodes", "system:authenticated"), "")
ADMIN_USER = auth.User("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"), "")
OTHER_ADMIN = auth.User("kubernetes-admin", ("system:authenticated",), "")
KCM_USER = auth.User("system:kube-controller-manager", ("system:authenticated",), "")


@pytest.mark.parametrize("attrs, allowed", [
    (_attrs("create", "certificatesigningrequests", group="certificates.k8s.io"), True),
    (_attrs("get", "configmaps", "kube-system", "kubeadm-config"), True),
    (_attrs("get", "secrets", "kube-system", "kubeadm-certs"), True),
    (_attrs("get", "nodes", name="cp-2"), True),
    (_attrs("list", "nodes"), False),
    (_attrs("get", "configmaps", "kube-system", "coredns"), False),
    (_attrs("get", "secrets", "kube-system", "bootstrap-token-abcdef"), False),
    (_attrs("patch", "nodes", name="cp-2"), False),
], ids=["a token may ask for a kubelet certificate", "a token may read kubeadm-config",
        "a token may read kubeadm-certs", "a token may get a Node", "a token may not list Nodes",
        "a token may not read other ConfigMaps", "a token may not read token Secrets", "a token may not patch Nodes"])
def test_what_a_bootstrap_token_may_do_is_what_kubeadms_bindings_grant(attrs, allowed):
    assert authz.decide(TOKEN_USER, attrs, KUBEADM_POLICY, list)[0] is allowed


POD_ON_CP1 = {"metadata": {"name": "web", "namespace": "default"},
              "spec": {"nodeName": "cp-1", "volumes": [{"name": "v", "configMap": {"name": "web-config"}}]}}


@pytest.mark.parametrize("attrs, allowed, reason", [
    (_attrs("get", "nodes", name="cp-1"), True, ""),
    (_attrs("get", "nodes", name="cp-2"), False, "node 'cp-1' cannot read 'cp-2', only its own Node object"),
    (_attrs("list", "nodes"), False, "node 'cp-1' cannot read all nodes, only its own Node object"),
    (_attrs("list", "pods", fields=[("spec.nodeName", "=", "cp-1")]), True, ""),
    (_attrs("list", "pods", fields=[("spec.nodeName", "=", "cp-2")]), False,
     "can only list/watch pods with spec.nodeName field selector"),
    (_attrs("get", "pods", "default", "web"), True, ""),
    (_attrs("update", "pods", "default", "web", subresource="status"), True, ""),
    (_attrs("get", "configmaps", "default", "web-config"), True, ""),
    (_attrs("get", "configmaps", "default", "other"), False,
     "no relationship found between node 'cp-1' and this object"),
    (_attrs("get", "secrets", "kube-system", "kubeadm-certs"), False,
     "no relationship found between node 'cp-1' and this object"),
    (_attrs("update", "leases", "kube-node-lease", "cp-1", group="coordination.k8s.io"), True, ""),
    (_attrs("update", "leases", "kube-node-lease", "cp-2", group="coordination.k8s.io"), False,
     "can only access node lease with the same name as the requesting node"),
    (_attrs("create", "certificatesigningrequests", group="certificates.k8s.io"), True, ""),
    (_attrs("get", "configmaps", "kube-system", "kubelet-config"), False,
     "no relationship found between node 'cp-1' and this object"),
    (_attrs("delete", "deployments", "default", "web", group="apps"), False, ""),
], ids=["a node reads its own Node", "a node may not read another Node", "a node may not list all Nodes",
        "a node lists the pods bound to it", "a node may not list another node's pods",
        "a node gets a pod bound to it", "a node writes a pod's status", "a node reads a ConfigMap its pod mounts",
        "a node may not read other ConfigMaps", "a node may not read kubeadm-certs", "a node renews its own Lease",
        "a node may not touch another node's Lease", "a node may ask for a certificate",
        "kubelet-config needs kubeadm's RBAC binding, which this policy lacks", "a node may not delete workloads"])
def test_what_a_node_may_do(attrs, allowed, reason):
    assert authz.decide(NODE_USER, attrs, _policy(), lambda: [POD_ON_CP1]) == (allowed, reason)


def test_kubeadms_kubelet_config_binding_lets_every_node_read_it():
    attrs = _attrs("get", "configmaps", "kube-system", "kubelet-config")
    policy = _policy(clusterobjects.upload_kubelet_config("kind: KubeletConfiguration"))
    assert authz.decide(NODE_USER, attrs, policy, list) == (True, "")


@pytest.mark.parametrize("user, allowed", [
    (ADMIN_USER, True), (OTHER_ADMIN, False),
    (auth.User("kubernetes-super-admin", ("system:masters", "system:authenticated"), ""), True),
], ids=["admin.conf's group is a cluster admin through kubeadm:cluster-admins",
        "the same user without that group is nobody", "system:masters may do anything without any binding"])
def test_admin_credentials(user, allowed):
    attrs = _attrs("delete", "secrets", "kube-system", "anything")
    assert authz.decide(user, attrs, KUBEADM_POLICY, list)[0] is allowed


CONTROLLER_ACCOUNTS = tuple(auth.User("system:serviceaccount:kube-system:" + account, ("system:serviceaccounts",), "")
                            for account in sorted(set(bootstrap_policy.CONTROLLER_ACCOUNTS.values())))


@pytest.mark.parametrize("attrs, allowed", [
    (_attrs("list", "pods"), True),
    (_attrs("update", "leases", "kube-system", "kube-controller-manager", group="coordination.k8s.io"), True),
    (_attrs("update", "certificatesigningrequests", name="csr-1", group="certificates.k8s.io",
            subresource="approval"), True),
    (_attrs("update", "poddisruptionbudgets", "default", "web", group="policy", subresource="status"), True),
    (_attrs("update", "configmaps", "kube-public", "cluster-info"), True),
    (_attrs("update", "configmaps", "kube-system", "kubeadm-config"), True),
    (_attrs("create", "clusterrolebindings", group="rbac.authorization.k8s.io"), False),
    (_attrs("create", "pods/exec", "default", "web"), False),
], ids=["the controller manager reads everything", "it renews its own lease", "its CSR approver approves",
        "its disruption controller writes budget status", "its bootstrap signer updates cluster-info",
        "its garbage collector may update anything", "it may not grant itself rights",
        "it may not exec into pods"])
def test_the_controller_manager_has_its_role_and_its_controllers_roles(attrs, allowed):
    assert authz.decide(KCM_USER, attrs, _policy(), list, CONTROLLER_ACCOUNTS)[0] is allowed


MIRROR = {"metadata": {"name": "etcd-cp-1", "annotations": {"kubernetes.io/config.mirror": "h"},
                       "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "cp-1", "uid": "u",
                                            "controller": True}]},
          "spec": {"nodeName": "cp-1"}}


def _with(obj, **changes):
    copied = {"metadata": dict(obj["metadata"]), "spec": dict(obj["spec"])}
    for path, value in changes.items():
        part, field = path.split("__")
        copied[part][field] = value
    return copied


@pytest.mark.parametrize("verb, resource, subresource, name, old, new, refusal", [
    ("create", "pods", "", "etcd-cp-1", None, MIRROR, None),
    ("create", "pods", "", "web", None, _with(MIRROR, metadata__annotations={}),
     'pod does not have "kubernetes.io/config.mirror" annotation, node "cp-1" can only create mirror pods'),
    ("create", "pods", "", "etcd-cp-2", None, _with(MIRROR, spec__nodeName="cp-2"),
     'node "cp-1" can only create pods with spec.nodeName set to itself'),
    ("create", "pods", "", "etcd-cp-1", None, _with(MIRROR, spec__volumes=[{"name": "s", "secret": {"secretName": "x"}}]),
     'node "cp-1" can not create pods that reference secrets'),
    ("delete", "pods", "", "web", {"spec": {"nodeName": "cp-2"}}, None,
     'node "cp-1" can only delete pods with spec.nodeName set to itself'),
    ("update", "pods", "status", "web", {"spec": {"nodeName": "cp-2"}}, {},
     'node "cp-1" can only update pod status for pods with spec.nodeName set to itself'),
    ("update", "nodes", "", "cp-2", {}, {}, 'node "cp-1" is not allowed to modify node "cp-2"'),
    ("patch", "nodes", "", "cp-1", {"metadata": {"labels": {}}},
     {"metadata": {"labels": {"node-role.kubernetes.io/control-plane": ""}}},
     'node "cp-1" is not allowed to modify labels: node-role.kubernetes.io/control-plane'),
    ("patch", "nodes", "", "cp-1", {"metadata": {"labels": {}}},
     {"metadata": {"labels": {"topology.kubernetes.io/zone": "fd-1", "example.com/rack": "r1"}}}, None),
], ids=["a node creates its mirror pod", "a node may not create an ordinary pod",
        "a node may not create a pod on another node", "a node may not create a pod that mounts a secret",
        "a node may not delete another node's pod", "a node may not write another node's pod status",
        "a node may not modify another Node", "a node may not give itself a role label",
        "a node may set its zone and labels of other domains"])
def test_node_restriction(verb, resource, subresource, name, old, new, refusal):
    assert authz.node_restriction("cp-1", verb, resource, subresource, name, old, new) == refusal
