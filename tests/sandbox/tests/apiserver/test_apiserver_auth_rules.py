# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who a request authenticates as, and what the anonymous user may do (kcpsim.apiserver.auth)."""

import datetime

import pytest

import apiserver_harness as harness
from kcpsim.apiserver import auth, resources

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


CLUSTER_INFO = ("configmaps", "kube-public", "cluster-info")


@pytest.mark.parametrize("method, path, target, allowed", [
    ("GET", "/livez", None, True),
    ("GET", "/readyz/etcd", None, True),
    ("GET", "/version", None, True),
    ("GET", "/healthzfoo", None, False),
    ("POST", "/livez", None, False),
    ("GET", "/api", None, False),
    ("GET", "", CLUSTER_INFO, True),
    ("PUT", "", CLUSTER_INFO, False),
    ("GET", "", ("configmaps", "kube-public", "other"), False),
    ("GET", "", ("secrets", "kube-public", "cluster-info"), False),
], ids=["livez", "a single readyz check", "version", "a path that only starts like healthz", "a write to livez",
        "discovery", "reading cluster-info", "writing cluster-info", "another ConfigMap",
        "a Secret named cluster-info"])
def test_what_anonymous_may_do(method, path, target, allowed):
    if target is None:
        assert auth.anonymous_allowed(method, path) is allowed
    else:
        resource = resources.lookup("", "v1", target[0])
        assert auth.anonymous_allowed(method, path, resource, target[1], target[2]) is allowed
