# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the observed snapshot's sources through the Kubernetes API (docs/observe.md): the Nodes, the control
plane's mirror pods, kubeadm-config, the collection's state ConfigMap and the endpoint's /readyz, put together
with the host records and the etcd section by ``observation.assemble``. I/O only; every judgement is the decision
core's. Shared by the kcp_observe module and its action plugin."""

from __future__ import annotations

import json
import traceback
from datetime import datetime, timezone

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api, observation

try:
    import yaml
except ImportError:
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = kube_api.IMPORT_ERROR


class Refused(Exception):
    """The observation cannot be made from what it was given; ``errors`` lists each problem, naming the host."""

    def __init__(self, message, errors=None):
        super().__init__(message)
        self.errors = errors or []


def host_records(hosts):
    """``hosts`` with each record parsed; (hosts, problems) where each problem names the host."""
    parsed, problems = [], []
    for host in hosts:
        if host.get("record_error"):
            problems.append("hosts[%s].record: %s" % (host["name"], host["record_error"]))
        record = host.get("record")
        if isinstance(record, str):
            try:
                record = json.loads(record) if record.strip() else None
            except ValueError as exc:
                problems.append("hosts[%s].record: not JSON (%s)" % (host["name"], exc))
                record = None
        if record is not None and not isinstance(record, dict):
            problems.append("hosts[%s].record: must be a JSON object" % host["name"])
            record = None
        entry = dict((k, v) for k, v in host.items() if k != "record_error")
        entry["record"] = record or None
        parsed.append(entry)
    return parsed, problems


def read_cluster(kubeconfig, timeout):
    """(server, nodes, pods, kubeadm_config, state data, endpoint_ready) read through the API server."""
    with kube_api.connected(kubeconfig) as api:
        nodes = kube_api.request(api, "GET", "/api/v1/nodes", timeout).get("items") or []
        pods = kube_api.request(api, "GET", "/api/v1/namespaces/kube-system/pods", timeout,
                                query={"labelSelector": "tier=control-plane"}).get("items") or []
        kubeadm_config = optional_config_map(api, "kubeadm-config", timeout)
        state = optional_config_map(api, observation.STATE_OBJECT, timeout)
        if kubeadm_config is not None:
            kubeadm_config = kubeadm_config_of(kubeadm_config)
        return api.configuration.host, nodes, pods, kubeadm_config, state, endpoint_ready(api, timeout)


def kubeadm_config_of(data):
    """The snapshot's ``kubeadm_config`` from the data of the kubeadm-config ConfigMap: its ClusterConfiguration
    as a mapping, and the version it names. A ClusterConfiguration that is not a YAML mapping is not observed
    (null), so the plan waits rather than compare against it."""
    cluster_configuration = yaml.safe_load(data.get("ClusterConfiguration") or "") or {}
    if not isinstance(cluster_configuration, dict):
        return {"kubernetes_version": None, "cluster_configuration": None}
    return {"kubernetes_version": cluster_configuration.get("kubernetesVersion"), "cluster_configuration": cluster_configuration}


def optional_config_map(api, name, timeout):
    """The data of kube-system/<name>, or None when it does not exist."""
    config_map = kube_api.read_optional(api, "/api/v1/namespaces/kube-system/configmaps/" + name, timeout)
    return None if config_map is None else config_map.get("data") or {}


def endpoint_ready(api, timeout):
    """Whether the endpoint answers /readyz with 200; any other answer or none is not ready."""
    try:
        kube_api.request(api, "GET", "/readyz", timeout)
    except kube_api.ClusterUnreadable:  # not ready: an error answer, a refused connection, a TLS failure, a timeout
        return False
    return True


def observe(kubeconfig, hosts, failure_domains, etcd, external_etcd, timeout, cluster=None):
    """The kcp_observe result (``observed``, ``api_server``, ``worker_nodes``, ``unrecorded``). ``cluster``: what
    read_cluster answered for ``kubeconfig``, when the caller read it already (while etcd was read on a host); read
    here otherwise. Raises Refused for input that cannot be observed from, kube_api.ClusterUnreadable when the
    cluster did not answer."""
    hosts, problems = host_records(hosts)
    if failure_domains is None:
        failure_domains = []
        for host in hosts:
            if host.get("failure_domain") and host["failure_domain"] not in failure_domains:
                failure_domains.append(host["failure_domain"])
    if not kubeconfig:
        # a "deleting" record without a cluster is the last machine a killed delete run had started to reset
        joined = sorted(h["name"] for h in hosts if h["record"] and h["record"].get("step") == "joined")
        if joined:
            problems.append("kubeconfig: required, the host records of %s say they joined a cluster" % ", ".join(joined))
    if problems:
        raise Refused("invalid arguments: " + "; ".join(problems), problems)

    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    server, nodes, pods, kubeadm_config, state, ready = None, [], [], None, None, False
    if kubeconfig:
        server, nodes, pods, kubeadm_config, state, ready = cluster or read_cluster(kubeconfig, timeout)
    etcd = etcd if kubeadm_config is not None else None
    if kubeadm_config is not None and etcd is None:
        raise Refused("etcd: required, the cluster at %s exists (read it with kubeadm.control_plane.etcd_info on a "
                      "control plane host)" % server)
    observed = observation.assemble(
        now, hosts, failure_domains, nodes=nodes, pods=pods, kubeadm_config=kubeadm_config, state_config_map=state,
        etcd=etcd, endpoint_ready=ready, external_etcd=external_etcd,
    )
    return {"observed": observed, "api_server": server, "worker_nodes": [w["name"] for w in observed["workers"]],
            "unrecorded": observation.unrecorded(nodes, hosts)}
