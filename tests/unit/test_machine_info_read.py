# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""machine_info's read: the shell command run on a kubeadm directory (what it prints goes to the controller, so it
must hold no key) and the answer made from that output, as the action plugin feeds one to the other."""

import base64
import datetime
import subprocess

from ansible_collections.kubeadm.control_plane.plugins.module_utils.machine_info_read import answer, read_command, sections
from ansible_collections.kubeadm.control_plane.tests.unit.builders import certificate_pem

NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
KEY = b"-----BEGIN EC PRIVATE KEY-----\nc2VjcmV0LWtleQ==\n-----END EC PRIVATE KEY-----\n"


def run_read(kubernetes_dir, kubelet_dir):
    return subprocess.run(["/bin/sh", "-c", read_command(str(kubernetes_dir), str(kubelet_dir)) + " && sleep 0"],
                          capture_output=True, text=True, check=True).stdout


def test_the_command_prints_certificates_and_records_but_no_key(tmp_path):
    kubernetes = tmp_path / "kube dir's"  # a space and a quote in the path
    (kubernetes / "pki" / "etcd").mkdir(parents=True)
    (kubernetes / "pki" / "apiserver.crt").write_bytes(certificate_pem(NOW, 30))
    (kubernetes / "pki" / "apiserver.key").write_bytes(KEY)
    (kubernetes / "admin.conf").write_text("users:\n- user:\n    client-certificate-data: %s\n    client-key-data: %s\n"
                                           % (base64.b64encode(certificate_pem(NOW, 10)).decode(), base64.b64encode(KEY).decode()))
    (kubernetes / "control-plane-machine.json").write_text('{"name": "cp-1", "step": "joined"}')
    kubelet = tmp_path / "kubelet"
    (kubelet / "pki").mkdir(parents=True)
    (kubelet / "pki" / "kubelet-client-current.pem").write_bytes(certificate_pem(NOW, 20) + KEY)
    (kubelet / "config.yaml").write_text("staticPodPath: /x\nrotateCertificates: true\n")
    output = run_read(kubernetes, kubelet)
    assert "PRIVATE" not in output and "c2VjcmV0LWtleQ" not in output and base64.b64encode(KEY).decode() not in output
    assert "staticPodPath" not in output
    result = answer(output)
    assert result["record"] == {"name": "cp-1", "step": "joined"} and result["admin_kubeconfig"] is True
    stamp = (NOW + datetime.timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert result["certificates_expire"] == stamp
    assert [c["name"] for c in result["certificates"]] == ["pki/apiserver.crt", "admin.conf"]
    assert result["kubelet_certificate_expire"] == (NOW + datetime.timedelta(days=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert result["kubelet_certificate_rotates"] is True


def test_a_host_with_nothing_answers_nothing(tmp_path):
    result = answer(run_read(tmp_path / "none", tmp_path / "neither"))
    assert (result["record"], result["record_error"], result["admin_kubeconfig"], result["certificates"],
            result["certificate_authorities"], result["kubelet_certificate_expire"], result["certificate_renewal"]) == (
        None, None, False, [], [], None, None)


def test_the_sections_of_the_output_keep_their_text():
    output = "#kcp-machine-info# now read now\n1700000000\n#kcp-machine-info# record error /etc/kubernetes/x y.json\nsed: can't read\n"
    assert sections(output) == [("now", "read", "now", "1700000000"), ("record", "error", "/etc/kubernetes/x y.json", "sed: can't read")]


def test_a_record_that_could_not_be_read_is_named_with_why():
    output = ("#kcp-machine-info# now read now\n1700000000\n"
              "#kcp-machine-info# record error /etc/kubernetes/control-plane-machine.json\nPermission denied\n"
              "#kcp-machine-info# kubelet absent pki/kubelet-client-current.pem\n"
              "#kcp-machine-info# kubelet-config absent config.yaml\n"
              "#kcp-machine-info# renewal read /etc/kubernetes/certificate-renewal/record.json\nnot json\n"
              "#kcp-machine-info# restore absent /var/lib/kubeadm-control-plane/restore.json\n")
    result = answer(output)
    assert result["record"] is None and result["record_error"] == "/etc/kubernetes/control-plane-machine.json: Permission denied"
    # a renewal record that cannot be read is a renewal stopped before its first step, to be finished
    assert result["certificate_renewal"]["error"].startswith("/etc/kubernetes/certificate-renewal/record.json: ")
