# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options every etcd module takes to reach the cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  endpoints:
    description:
      - etcd client URLs to start from, such as V(https://10.0.0.11:2379). One is enough; the others are
        discovered from the member list. Give several so that a dead member does not hide the cluster.
    type: list
    elements: str
    required: true
  ca_file:
    description:
      - The etcd CA certificate. It is the only trust anchor; C(SSL_CERT_FILE), C(REQUESTS_CA_BUNDLE) and the
        system store are never consulted.
    type: path
    default: /etc/kubernetes/pki/etcd/ca.crt
  cert_file:
    description:
      - Client certificate signed by the etcd CA, such as kubeadm's C(healthcheck-client.crt) or
        C(/etc/kubernetes/pki/apiserver-etcd-client.crt).
    type: path
    default: /etc/kubernetes/pki/etcd/healthcheck-client.crt
  key_file:
    description:
      - Private key of O(cert_file). It is read, never logged or returned.
    type: path
    default: /etc/kubernetes/pki/etcd/healthcheck-client.key
  timeout:
    description:
      - Seconds each member has to answer its status and member-list calls.
    type: float
    default: 5.0
"""
