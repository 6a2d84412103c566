#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kcp_observe
short_description: Read a kubeadm control plane's observed snapshot from the cluster, etcd and its hosts
version_added: "0.1.0"
description:
  - Reads everything the decision modules need, as one observed snapshot (C(docs/snapshot.md) in the
    collection), which M(kubeadm.control_plane.kcp_plan), M(kubeadm.control_plane.kcp_status) and
    M(kubeadm.control_plane.machine_health_check) accept verbatim as their C(observed) option.
  - The cluster is read through the Kubernetes Python client with O(kubeconfig) (the Nodes, the control
    plane's mirror pods in C(kube-system), kubeadm's C(kubeadm-config) ConfigMap and this collection's
    C(kube-system/control-plane-kubeadm-io) ConfigMap); the stable endpoint's C(/readyz) is asked through
    the same client; the etcd section is M(kubeadm.control_plane.etcd_info)'s, passed in as O(etcd).
  - The hosts that hold or may hold control plane machines come from the inventory (O(hosts)), each with
    the machine record kept on the host itself (C(/etc/kubernetes/control-plane-machine.json)), read by an
    earlier task. Where each fact lives and which source wins is C(docs/state.md).
  - The snapshot's C(workers) are the Nodes without the control plane role, each with its group (its
    C(control-plane.kubeadm.io/worker-group) label), kubelet version, creation time, Ready condition and
    whether it is cordoned.
  - It only fetches. The one reading it makes, a pod's state, is the decision core's rule.
  - Runs on the controller. Reads only; never returns a key, a token or a certificate.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  kubeconfig:
    description:
      - An admin kubeconfig of the cluster, such as a copy of a control plane host's
        C(/etc/kubernetes/admin.conf). Its server should be the stable control plane endpoint (kubeadm writes
        the C(controlPlaneEndpoint) there).
      - Leave it out only when there is no cluster yet; the snapshot then has C(initialized=false) and the
        machines the host records name. When a host record says its machine joined a cluster, leaving it out
        is an error.
    type: path
  hosts:
    description:
      - The inventory's control plane candidates. A host with neither a Node nor a record is a free host, not
        a machine.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The inventory name, which is also the machine's and the Node's name.
        type: str
        required: true
      address:
        description: The address Ansible reaches the host at.
        type: str
      failure_domain:
        description: The failure domain the inventory puts the host in.
        type: str
      record:
        description:
          - The host's machine record, as a JSON string or an object; empty or left out when the host has none.
        type: raw
      record_error:
        description: Why the host's record could not be read (M(kubeadm.control_plane.machine_info) says); the observation fails naming the host.
        type: str
      certificates_expire:
        description: The earliest expiry of the host's kubeadm certificates (RFC 3339), when known.
        type: str
  failure_domains:
    description:
      - The failure domains control plane machines may go to. Defaults to those of O(hosts), in order.
    type: list
    elements: str
  etcd:
    description:
      - The etcd section, as M(kubeadm.control_plane.etcd_info) returns it (its C(etcd) result), read on a control
        plane host with that host's own etcd client certificate, so etcd's credentials never leave the hosts.
      - Required once the cluster exists (kubeadm's C(kubeadm-config) is there); the snapshot of a cluster whose
        etcd was not read would say nothing about quorum, and nothing is concluded from no answer.
    type: dict
  external_etcd:
    description: The control plane uses an external etcd cluster instead of stacked members (used before the cluster exists, when there is no etcd section).
    type: bool
    default: false
  timeout:
    description: Seconds each request (to the API server, to each etcd member) has to answer.
    type: float
    default: 5.0
attributes:
  check_mode:
    support: full
    description: The module only reads, so check mode returns the same answer.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: Runs on the controller; needs the C(kubernetes) Python package.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
requirements:
  - kubernetes (the Kubernetes Python client)
notes:
  - Nothing is concluded from no answer. When the API server does not answer, or answers with an error, the
    module fails saying where it asked and what came back, rather than reporting a cluster without machines.
  - TLS is verified as the kubeconfig says.
seealso:
  - module: kubeadm.control_plane.kcp_plan
  - module: kubeadm.control_plane.etcd_info
"""

EXAMPLES = r"""
- name: Read etcd on a control plane host, with its own certificate
  kubeadm.control_plane.etcd_info:
    endpoints: ["https://10.0.0.11:2379"]
  register: etcd
  delegate_to: cp-1

- name: Observe the control plane (the kubeconfig was copied from cp-1)
  kubeadm.control_plane.kcp_observe:
    kubeconfig: "{{ work_dir }}/admin.conf"
    hosts: "{{ groups['control_plane_candidates'] | map('extract', hostvars) | map(attribute='machine') }}"
    etcd: "{{ etcd.etcd }}"
  register: observe

- name: Plan the next step from it
  kubeadm.control_plane.kcp_plan:
    spec: "{{ spec }}"
    observed: "{{ observe.observed }}"
"""

RETURN = r"""
observed:
  description: The observed snapshot, as C(docs/snapshot.md) describes it.
  returned: always
  type: dict
api_server:
  description: The server the cluster was read through (from the kubeconfig); null without one.
  returned: always
  type: str
unrecorded:
  description:
    - The control plane Nodes this collection has recorded nothing on (an adopted control plane), each with what
      a flow records on it - C(created), the Node's creation time, and C(failure_domain), the inventory's, when
      the Node has no zone label (else null).
  returned: always
  type: list
  elements: dict
worker_nodes:
  description:
    - The names of the cluster's Nodes that are not control plane Nodes (the delete flow refuses while any remain).
    - The snapshot's C(workers) describes each of them (its group, kubelet version, creation time, Ready, cordoned)
      for the in-place upgrade of the workers.
  returned: always
  type: list
  elements: str
"""

import json
import traceback
from datetime import datetime, timezone

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api, observation

try:
    import yaml
    from kubernetes import client as k8s_client
except ImportError:
    KUBERNETES_IMPORT_ERROR = traceback.format_exc()
else:
    KUBERNETES_IMPORT_ERROR = kube_api.IMPORT_ERROR

ARGUMENT_SPEC = dict(
    kubeconfig=dict(type="path"),
    hosts=dict(
        type="list",
        elements="dict",
        default=[],
        options=dict(
            name=dict(type="str", required=True),
            address=dict(type="str"),
            failure_domain=dict(type="str"),
            record=dict(type="raw"),
            record_error=dict(type="str"),
            certificates_expire=dict(type="str"),
        ),
    ),
    failure_domains=dict(type="list", elements="str"),
    etcd=dict(type="dict"),
    external_etcd=dict(type="bool", default=False),
    timeout=dict(type="float", default=5.0),
)


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
    api = kube_api.client(kubeconfig)
    try:
        core = k8s_client.CoreV1Api(api)
        plain = api.sanitize_for_serialization
        with kube_api.answers(api):
            nodes = [plain(n) for n in core.list_node(_request_timeout=timeout).items]
            pods = [plain(p) for p in core.list_namespaced_pod("kube-system", label_selector="tier=control-plane",
                                                               _request_timeout=timeout).items]
        kubeadm_config = optional_config_map(api, core, "kubeadm-config", timeout)
        state = optional_config_map(api, core, observation.STATE_OBJECT, timeout)
        if kubeadm_config is not None:
            kubeadm_config = kubeadm_config_of(kubeadm_config)
        return api.configuration.host, nodes, pods, kubeadm_config, state, endpoint_ready(api, timeout)
    finally:
        api.close()


def kubeadm_config_of(data):
    """The snapshot's ``kubeadm_config`` from the data of the kubeadm-config ConfigMap: its ClusterConfiguration
    as a mapping, and the version it names. A ClusterConfiguration that is not a YAML mapping is not observed
    (null), so the plan waits rather than compare against it."""
    cluster_configuration = yaml.safe_load(data.get("ClusterConfiguration") or "") or {}
    if not isinstance(cluster_configuration, dict):
        return {"kubernetes_version": None, "cluster_configuration": None}
    return {"kubernetes_version": cluster_configuration.get("kubernetesVersion"), "cluster_configuration": cluster_configuration}


def optional_config_map(api, core, name, timeout):
    """The data of kube-system/<name>, or None when it does not exist."""
    try:
        with kube_api.answers(api):
            return core.read_namespaced_config_map(name, "kube-system", _request_timeout=timeout).data or {}
    except kube_api.ClusterUnreadable as exc:
        if kube_api.not_found(exc):
            return None
        raise


def endpoint_ready(api, timeout):
    """Whether the endpoint answers /readyz with 200; any other answer or none is not ready."""
    headers = {}
    token = (api.configuration.api_key or {}).get("authorization")
    if token:  # a token kubeconfig; a certificate one authenticates in the TLS handshake
        headers["Authorization"] = token
    try:
        response = api.call_api("GET", api.configuration.host + "/readyz", header_params=headers, _request_timeout=timeout)
        return response.status == 200
    except Exception:  # not ready: a refused connection, a TLS failure, a timeout
        return False


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    hosts, problems = host_records(params["hosts"])
    failure_domains = params["failure_domains"]
    if failure_domains is None:
        failure_domains = []
        for host in hosts:
            if host.get("failure_domain") and host["failure_domain"] not in failure_domains:
                failure_domains.append(host["failure_domain"])
    if not params["kubeconfig"]:
        # a "deleting" record without a cluster is the last machine a killed delete run had started to reset
        joined = sorted(h["name"] for h in hosts if h["record"] and h["record"].get("step") == "joined")
        if joined:
            problems.append("kubeconfig: required, the host records of %s say they joined a cluster" % ", ".join(joined))
    if problems:
        module.fail_json(msg="invalid arguments: " + "; ".join(problems), errors=problems)
    if KUBERNETES_IMPORT_ERROR and params["kubeconfig"]:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=KUBERNETES_IMPORT_ERROR)

    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    server, nodes, pods, kubeadm_config, state, ready = None, [], [], None, None, False
    if params["kubeconfig"]:
        try:
            server, nodes, pods, kubeadm_config, state, ready = read_cluster(params["kubeconfig"], params["timeout"])
        except kube_api.ClusterUnreadable as exc:
            module.fail_json(msg="cannot read the cluster: %s" % exc)
    etcd = params["etcd"] if kubeadm_config is not None else None
    if kubeadm_config is not None and etcd is None:
        module.fail_json(msg="etcd: required, the cluster at %s exists (read it with kubeadm.control_plane.etcd_info on a "
                             "control plane host)" % server)

    observed = observation.assemble(
        now, hosts, failure_domains, nodes=nodes, pods=pods, kubeadm_config=kubeadm_config, state_config_map=state,
        etcd=etcd, endpoint_ready=ready, external_etcd=params["external_etcd"],
    )
    module.exit_json(changed=False, observed=observed, api_server=server, worker_nodes=[w["name"] for w in observed["workers"]],
                     unrecorded=observation.unrecorded(nodes, hosts))


if __name__ == "__main__":
    main()
