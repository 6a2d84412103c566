# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Refusals of kubeadm that need no API server (kubeadm-reference.md §1.7, §2.3): a control plane join without
the shared certificates and without a certificate key, a cluster without a stable endpoint, a worker that holds
the cluster CA already, and the kubelet version check of init's preflight (a kubelet newer than the control
plane it would run, or too old).

The join checks run against a scratch root (``KCPSIM_ROOT``) holding what an operator copied in; the end to end
flows (the same refusals over SSH, and a join with copied certificates) are in test_kubeadm_e2e.py.
"""

import io
import os
import types

import pytest

from kcpsim.kubeadm import cmd_join, config, preflight
from kcpsim.kubeadm.context import Context, KubeadmError
from kcpsim.kubeadm.kubelet import KubeletError
from kcpsim.kubeadm.release import Release, parse_version

SHARED = ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd/ca.crt",
          "etcd/ca.key")


def join_data(root, present, certificate_key="", endpoint="lb.example:6443", external_etcd=False):
    """What the join's preflight knows when it checks the node: the stored cluster, the flags, the host."""
    for relative in present:
        path = root / "etc/kubernetes/pki" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("copied from the first control plane\n")
    stored = {"controlPlaneEndpoint": endpoint}
    if external_etcd:
        stored["etcd"] = {"external": {"endpoints": ["https://etcd.example:2379"], "caFile": "/e/ca.crt",
                                       "certFile": "/e/c.crt", "keyFile": "/e/c.key"}}
    stderr = io.StringIO()
    ctx = Context(stdout=io.StringIO(), stderr=stderr, environ={"KCPSIM_ROOT": str(root)}, version="v1.36.4")
    data = types.SimpleNamespace(ctx=ctx, host=ctx.host, cluster=config.default_cluster(stored, ctx.version),
                                 control_plane={"certificateKey": certificate_key})
    return data, stderr


@pytest.mark.parametrize("present, missing", [
    ((), ("ca.crt", "sa.key", "sa.pub", "front-proxy-ca.crt", "etcd/ca.crt")),
    (("ca.crt", "ca.key", "sa.key", "sa.pub"), ("front-proxy-ca.crt", "etcd/ca.crt")),
    (tuple(f for f in SHARED if f != "sa.pub"), ("sa.pub",)),
], ids=["nothing copied: every shared certificate is named",
        "the front proxy and etcd CAs forgotten: both are named",
        "one half of the service account key pair forgotten"])
def test_a_control_plane_join_without_a_certificate_key_needs_the_shared_certificates(tmp_path, present, missing):
    data, unused_stderr = join_data(tmp_path, present)
    with pytest.raises(KubeadmError) as refused:
        cmd_join.check_ready_for_control_plane(data)
    message = refused.value.message
    assert "One or more conditions for hosting a new control plane instance is not satisfied" in message
    assert "The certificates that must be shared among control plane instances are provided" in message
    for relative in missing:
        assert "couldn't load /etc/kubernetes/pki/%s" % relative in message
    for relative in present:
        assert "/etc/kubernetes/pki/%s:" % relative not in message
    assert "stable controlPlaneEndpoint address" not in message.split("Please ensure that")[0]
    # Refused before anything is written: the node holds exactly what the operator copied.
    written = sorted(os.path.relpath(os.path.join(d, f), str(tmp_path)) for d, unused, files in os.walk(str(tmp_path))
                     for f in files)
    assert written == sorted("etc/kubernetes/pki/" + p for p in present)


@pytest.mark.parametrize("present, certificate_key, external_etcd", [
    (SHARED, "", False),
    ((), "a" * 64, False),
    (("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key"), "", True),
], ids=["every shared certificate copied in beforehand", "a certificate key: they come from kubeadm-certs",
        "external etcd needs no etcd CA on the node"])
def test_a_control_plane_join_with_its_certificates_or_a_key_goes_on(tmp_path, present, certificate_key,
                                                                     external_etcd):
    data, stderr = join_data(tmp_path, present, certificate_key, external_etcd=external_etcd)
    cmd_join.check_ready_for_control_plane(data)
    assert "is missing" not in stderr.getvalue()


def test_missing_ca_keys_only_warn_as_in_external_ca_mode(tmp_path):
    data, stderr = join_data(tmp_path, [f for f in SHARED if not f.endswith("ca.key")])
    cmd_join.check_ready_for_control_plane(data)
    for key in ("ca.key", "front-proxy-ca.key", "etcd/ca.key"):
        assert "the key /etc/kubernetes/pki/%s is missing" % key in stderr.getvalue()


def test_a_cluster_without_a_stable_endpoint_cannot_take_another_control_plane(tmp_path):
    data, unused_stderr = join_data(tmp_path, SHARED, endpoint="")
    with pytest.raises(KubeadmError, match="doesn't have a stable controlPlaneEndpoint address"):
        cmd_join.check_ready_for_control_plane(data)


@pytest.mark.parametrize("control_plane, refused", [
    (None, True),
    ({"certificateKey": ""}, False),
], ids=["a worker holding the cluster CA already is refused", "a control plane node may hold the copied CA"])
def test_which_joining_nodes_may_already_hold_the_ca_certificate(tmp_path, control_plane, refused):
    data, unused_stderr = join_data(tmp_path, SHARED)
    data.control_plane = control_plane
    data.node_name = "localhost"
    data.join = {"caCertPath": "/etc/kubernetes/pki/ca.crt",
                 "nodeRegistration": {"criSocket": "unix://%s/containerd.sock" % tmp_path}}
    checks = preflight.Checks(data.host, InstalledKubelet("v1.36.4"))
    names = [r.name for r in cmd_join.node_checks(data, checks) if r.kind == "error"]
    assert ("FileAvailable--etc-kubernetes-pki-ca.crt" in names) is refused
    assert "CRI" in names  # the other checks ran: no runtime socket in this scratch root


class InstalledKubelet:
    """The kubelet package on the node, as kubeadm asks it (``kubelet --version``, enabled as installed)."""

    def __init__(self, version):
        self._version = version

    @staticmethod
    def is_enabled():
        return True

    def version(self):
        if self._version is None:
            raise KubeletError('couldn\'t get kubelet version: exec: "kubelet": executable file not found in $PATH')
        return self._version


@pytest.mark.parametrize("kubeadm, kubelet, control_plane, error", [
    ("v1.36.4", "v1.37.1", "v1.36.4", 'the kubelet version is higher than the control plane version. This is not a '
                                      'supported version skew and may lead to a malfunctional cluster. Kubelet '
                                      'version: "v1.37.1" Control plane version: "v1.36.4"'),
    ("v1.36.4", "v1.36.3", "v1.35.9", "the kubelet version is higher than the control plane version"),
    ("v1.36.4", "v1.36.9", "v1.36.4", None),
    ("v1.36.4", "v1.36.3", "v1.36.4", None),
    ("v1.37.1", "v1.34.15", "v1.37.1", None),
    ("v1.37.1", "v1.33.16", "v1.37.1", 'Kubelet version "v1.33.16" is lower than kubeadm can support'),
    ("v1.36.4", "v1.37.1", None, None),
    ("v1.36.4", None, "v1.36.4", "executable file not found"),
], ids=[
    "a kubelet one minor newer than the control plane is refused",
    "a newer kubelet is refused also when the control plane is older than kubeadm",
    "a newer kubelet patch of the same minor is fine",
    "an older kubelet patch is fine",
    "a kubelet three minors behind is still supported",
    "a kubelet four minors behind is refused",
    "a worker join compares with no control plane version",
    "no kubelet on the node is an error",
])
def test_the_kubelet_version_check(kubeadm, kubelet, control_plane, error):
    checks = preflight.Checks(host=None, kubelet=InstalledKubelet(kubelet))
    results = checks.kubelet_version(Release.of(kubeadm), parse_version(control_plane) if control_plane else None)
    if error is None:
        assert results == []
    else:
        assert [(r.name, r.kind) for r in results] == [("KubeletVersion", "error")]
        assert error in results[0].message


def test_a_kubelet_version_error_stops_the_preflight_unless_ignored():
    newer = preflight.Checks(host=None, kubelet=InstalledKubelet("v1.37.1")).kubelet_version(
        Release.of("v1.36.4"), parse_version("v1.36.4"))
    fatal, warnings = preflight.classify(newer, [])
    assert [r.name for r in fatal] == ["KubeletVersion"] and warnings == []
    fatal, warnings = preflight.classify(newer, ["kubeletversion"])
    assert fatal == [] and [r.name for r in warnings] == ["KubeletVersion"]
