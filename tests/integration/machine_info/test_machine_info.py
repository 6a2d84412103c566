# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""machine_info run as a user runs it (`ansible localhost -m`) on a kubeadm directory built with real X.509
certificates: the earliest expiry of the leaf certificates and the kubeconfigs' client certificates, the CAs' apart,
both X.509 time encodings, the kubelet's client certificate and whether it rotates, the record, and what it says about
files it cannot read. No key is ever returned."""

import base64
import datetime
import json
import os
import sys

from ansible_run import run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "unit"))

from builders import certificate_pem  # noqa: E402  (found through the path above)

NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def stamp(days):
    return (NOW + datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubernetes_dir(tmp_path, record):
    (tmp_path / "pki" / "etcd").mkdir(parents=True)
    (tmp_path / "pki" / "apiserver.crt").write_bytes(certificate_pem(NOW, 365))
    (tmp_path / "pki" / "etcd" / "server.crt").write_bytes(certificate_pem(NOW, 30))
    (tmp_path / "pki" / "ca.crt").write_bytes(certificate_pem(NOW, 3))  # a CA: not the machine's to renew
    (tmp_path / "pki" / "etcd" / "ca.crt").write_bytes(certificate_pem(NOW, 3))
    (tmp_path / "pki" / "front-proxy-client.crt").write_bytes(certificate_pem(NOW, 365 * 30))  # GeneralizedTime (2050+)
    (tmp_path / "pki" / "broken.crt").write_bytes(b"not a certificate")
    (tmp_path / "admin.conf").write_text("users:\n- name: admin\n  user:\n    client-certificate-data: %s\n"
                                         "    client-key-data: c2VjcmV0LWtleQ==\n"
                                         % base64.b64encode(certificate_pem(NOW, 100)).decode())
    (tmp_path / "control-plane-machine.json").write_text(record)
    return str(tmp_path)


def test_the_earliest_leaf_expiry_the_record_and_nothing_secret(tmp_path):
    record = {"name": "cp-1", "created": "2026-11-26T10:00:00Z", "step": "joined"}
    outcome, result, _rc, output = run("machine_info", {"kubernetes_dir": kubernetes_dir(tmp_path, json.dumps(record))})
    assert outcome == "SUCCESS", result
    assert result["certificates_expire"] == stamp(30)
    expires = {c["name"]: c.get("expires") for c in result["certificates"]}
    assert expires == {"pki/apiserver.crt": stamp(365), "pki/broken.crt": None, "pki/front-proxy-client.crt": stamp(365 * 30),
                       "pki/etcd/server.crt": stamp(30), "admin.conf": stamp(100)}
    assert "no PEM certificate" in next(c["error"] for c in result["certificates"] if c["name"] == "pki/broken.crt")
    assert (result["record"], result["record_error"], result["admin_kubeconfig"]) == (record, None, True)
    assert result["etcd_client_credentials"] is False  # no healthcheck-client certificate and key
    assert result["certificates_expired"] is False
    assert "c2VjcmV0LWtleQ" not in output and "BEGIN" not in output


def test_a_certificate_past_its_expiry_says_the_host_s_certificates_have_expired(tmp_path):
    directory = kubernetes_dir(tmp_path, json.dumps({"name": "cp-1", "created": "2026-11-26T10:00:00Z", "step": "joined"}))
    (tmp_path / "pki" / "etcd" / "peer.crt").write_bytes(certificate_pem(NOW, -0.5))  # valid from a day ago until 12 hours ago
    outcome, result = run("machine_info", {"kubernetes_dir": directory})[:2]
    assert outcome == "SUCCESS" and result["certificates_expired"] is True
    assert result["certificates_expire"] == (NOW - datetime.timedelta(days=0.5)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_record_that_is_not_an_object_is_named_and_a_bare_host_has_nothing(tmp_path):
    outcome, result = run("machine_info", {"kubernetes_dir": kubernetes_dir(tmp_path, "[1, 2]")})[:2]
    assert outcome == "SUCCESS" and result["record"] is None and "not a JSON object" in result["record_error"]
    outcome, result = run("machine_info", {"kubernetes_dir": str(tmp_path / "absent"), "kubelet_dir": str(tmp_path / "none")})[:2]
    assert outcome == "SUCCESS"
    assert (result["record"], result["record_error"], result["admin_kubeconfig"], result["certificates_expire"],
            result["certificates"], result["certificates_expired"]) == (None, None, False, None, [], False)
    assert (result["certificate_authorities_expire"], result["certificate_authorities"], result["kubelet_certificate_expire"],
            result["kubelet_certificate_rotates"]) == (None, [], None, False)


def kubelet_dir(tmp_path, days, config):
    (tmp_path / "kubelet" / "pki").mkdir(parents=True)
    key = b"-----BEGIN EC PRIVATE KEY-----\nc2VjcmV0LWtleQ==\n-----END EC PRIVATE KEY-----\n"
    (tmp_path / "kubelet" / "pki" / "kubelet-client-current.pem").write_bytes(certificate_pem(NOW, days) + key)
    (tmp_path / "kubelet" / "config.yaml").write_text(config)
    return str(tmp_path / "kubelet")


def test_the_cas_and_the_kubelets_client_certificate_with_whether_it_rotates(tmp_path):
    directory = kubernetes_dir(tmp_path, "{}")
    (tmp_path / "pki" / "front-proxy-ca.crt").write_bytes(certificate_pem(NOW, 3650))
    config = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nrotateCertificates: true\n"
    outcome, result, _rc, output = run("machine_info", {"kubernetes_dir": directory, "kubelet_dir": kubelet_dir(tmp_path, 20, config)})
    assert outcome == "SUCCESS", result
    assert result["certificate_authorities_expire"] == stamp(3)
    assert {c["name"]: c["expires"] for c in result["certificate_authorities"]} == {
        "pki/ca.crt": stamp(3), "pki/etcd/ca.crt": stamp(3), "pki/front-proxy-ca.crt": stamp(3650)}
    assert (result["kubelet_certificate_expire"], result["kubelet_certificate_rotates"]) == (stamp(20), True)
    assert "c2VjcmV0LWtleQ" not in output and "PRIVATE" not in output


def test_a_kubelet_configured_without_rotation_does_not_rotate(tmp_path):
    directory = kubernetes_dir(tmp_path, "{}")
    config = "kind: KubeletConfiguration\nrotateCertificates: false\nstaticPodPath: /etc/kubernetes/manifests\n"
    result = run("machine_info", {"kubernetes_dir": directory, "kubelet_dir": kubelet_dir(tmp_path, 20, config)})[1]
    assert (result["kubelet_certificate_expire"], result["kubelet_certificate_rotates"]) == (stamp(20), False)


def test_the_etcd_client_credentials_are_there_until_kubeadm_reset_removes_pki(tmp_path):
    directory = kubernetes_dir(tmp_path, "{}")
    (tmp_path / "pki" / "etcd" / "healthcheck-client.crt").write_bytes(certificate_pem(NOW, 365))
    (tmp_path / "pki" / "etcd" / "healthcheck-client.key").write_text("key")
    assert run("machine_info", {"kubernetes_dir": directory})[1]["etcd_client_credentials"] is True
    (tmp_path / "pki" / "etcd" / "ca.crt").unlink()  # kubeadm reset: pki/ first, admin.conf after
    result = run("machine_info", {"kubernetes_dir": directory})[1]
    assert (result["admin_kubeconfig"], result["etcd_client_credentials"]) == (True, False)
