# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the flows reach etcd as the spec declares it, and how many control plane pods a machine runs
(module_utils/etcd_access.py)."""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_access import control_plane_pod_count, etcd_access

STACKED = {"cluster_name": "demo", "kubeadm": {"cluster_configuration": {}}}
EXTERNAL = {"cluster_name": "demo", "kubeadm": {"cluster_configuration": {"etcd": {"external": {
    "endpoints": ["https://10.0.0.21:2379", "https://10.0.0.22:2379"], "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
    "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt", "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}}}}


def test_stacked_etcd_is_read_on_the_control_plane_hosts_with_the_health_check_certificate():
    assert etcd_access(STACKED, ["https://10.0.0.11:2379"]) == {
        "external": False, "endpoints": ["https://10.0.0.11:2379"],
        "files": {"ca_file": "/etc/kubernetes/pki/etcd/ca.crt", "cert_file": "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                  "key_file": "/etc/kubernetes/pki/etcd/healthcheck-client.key"}}
    assert control_plane_pod_count(STACKED) == 4


def test_an_external_cluster_is_read_at_its_endpoints_with_the_files_the_spec_names():
    assert etcd_access(EXTERNAL, ["https://10.0.0.11:2379"]) == {
        "external": True, "endpoints": ["https://10.0.0.21:2379", "https://10.0.0.22:2379"],
        "files": {"ca_file": "/etc/kubernetes/pki/etcd/ca.crt", "cert_file": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                  "key_file": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}
    assert control_plane_pod_count(EXTERNAL) == 3
