# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the flows reach the cluster's etcd, as the spec declares it (docs/observe.md): stacked etcd answers on every
control plane host, read with kubeadm's health check client certificate; an external cluster answers at the
endpoints the spec's ``etcd.external`` names, read with the files it names on the control plane hosts (the ones its
API servers use). And how many control plane pods a machine runs: no etcd pod with external etcd. Pure."""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import etcd_is_external

STACKED_FILES = {"ca_file": "/etc/kubernetes/pki/etcd/ca.crt",
                 "cert_file": "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                 "key_file": "/etc/kubernetes/pki/etcd/healthcheck-client.key"}


def etcd_access(spec, stacked_endpoints):
    """``{external, endpoints, files: {ca_file, cert_file, key_file}}``: the external cluster of ``spec`` with its
    files, or stacked etcd at ``stacked_endpoints`` (the control plane hosts' client URLs) with kubeadm's."""
    if not etcd_is_external(spec):
        return {"external": False, "endpoints": list(stacked_endpoints), "files": dict(STACKED_FILES)}
    external = spec["kubeadm"]["cluster_configuration"]["etcd"]["external"] or {}
    return {"external": True, "endpoints": list(external.get("endpoints") or []),
            "files": {"ca_file": external.get("caFile"), "cert_file": external.get("certFile"), "key_file": external.get("keyFile")}}


def control_plane_pod_count(spec):
    """The control plane pods of one machine: the API server, the controller manager, the scheduler, and with
    stacked etcd its etcd."""
    return 3 if etcd_is_external(spec) else 4
