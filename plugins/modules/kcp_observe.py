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
  - Runs on the controller, or with O(admin_kubeconfig_on_host) on a control plane host whose kubeconfig and etcd it
    reads in the same task. Reads only, but for the lock; never returns a key, a token or a certificate.
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
      certificate_authorities_expire:
        description: The earliest expiry of the CAs kubeadm made on the host (RFC 3339), when known.
        type: str
      kubelet_certificate_expire:
        description: When the host's kubelet client certificate expires (RFC 3339), when known.
        type: str
      kubelet_certificate_rotates:
        description: Whether the host's kubelet renews its client certificate itself.
        type: bool
      certificate_renewal:
        description: The certificate renewal in place under way on the host (M(kubeadm.control_plane.machine_info) says), null when none is.
        type: dict
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
    description:
      - The control plane uses an external etcd cluster instead of stacked members; the etcd section read with
        O(etcd_endpoints) is marked so, and before the cluster exists (no etcd section) the snapshot says so.
    type: bool
    default: false
  timeout:
    description: Seconds each request (to the API server, to each etcd member) has to answer.
    type: float
    default: 5.0
  lock:
    description:
      - Also take, renew or release the cluster lock (C(docs/flows.md)), with the same kubeconfig, right after
        reading the cluster, as M(kubeadm.control_plane.kcp_lock) does with the same options. Left alone when there
        is no cluster yet (no kubeconfig).
    type: dict
    suboptions:
      holder:
        description: Who this run is, as the refusal another run gets names it.
        type: str
        required: true
      action:
        description: What the run does, recorded on the lock.
        type: str
        default: ""
      state:
        description: V(present) takes or renews the lock; V(absent) releases it.
        type: str
        choices: [present, absent]
        default: present
      duration:
        description: Seconds the lock stays valid without being renewed.
        type: int
        default: 900
  admin_kubeconfig_on_host:
    description:
      - Read the admin kubeconfig at this path on the host the task runs on (a control plane host, with
        C(delegate_to)) instead of O(kubeconfig) on the controller. The action plugin reads it over the task's
        connection into a file only this user can read (mode 0600), which lives only while the task reads the
        cluster; it is never returned. The observation itself then runs on the controller.
      - Excludes O(kubeconfig) and O(etcd).
    type: path
  etcd_endpoints:
    description:
      - With O(admin_kubeconfig_on_host), read the etcd section on the same host first, as
        M(kubeadm.control_plane.etcd_info) does from these client URLs, with that host's own etcd certificates.
    type: list
    elements: str
  etcd_files:
    description:
      - With O(etcd_endpoints), the files on the host etcd is read with; unset, kubeadm's health check client
        certificate of stacked etcd. An external cluster is read with the files its spec names (filter
        M(kubeadm.control_plane.etcd_access)), and O(external_etcd) set.
    type: dict
    suboptions:
      ca_file:
        description: The etcd CA certificate.
        type: path
      cert_file:
        description: The client certificate.
        type: path
      key_file:
        description: Its key.
        type: path
attributes:
  action:
    support: full
    description: The action plugin reads the host's kubeconfig and etcd, then observes on the controller.
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    description: The module only reads, so check mode returns the same answer; the lock says what it would do.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: Runs on the controller; needs the C(kubernetes) Python package.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
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
lock:
  description: With O(lock) and a cluster, what was done with the lock (as M(kubeadm.control_plane.kcp_lock) returns it); else null.
  returned: always
  type: dict
  contains:
    decision:
      description: What was done (or, in check mode, would be) - take, renew, take_over, release, or leave.
      type: str
    reason:
      description: Why.
      type: str
    lock:
      description: The lock as it was read before this run acted (holder, action, since, expires); null when there was none.
      type: dict
worker_nodes:
  description:
    - The names of the cluster's Nodes that are not control plane Nodes (the delete flow refuses while any remain).
    - The snapshot's C(workers) describes each of them (its group, kubelet version, creation time, Ready, cordoned)
      for the in-place upgrade of the workers.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_reader, kube_api, lock_lease
from ansible_collections.kubeadm.control_plane.plugins.module_utils.observe_answer import ARGUMENT_SPEC, observe_and_lock


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    if params["admin_kubeconfig_on_host"] or params["etcd_endpoints"] or params["etcd_files"]:
        module.fail_json(msg="admin_kubeconfig_on_host, etcd_endpoints and etcd_files are read by the action plugin on the controller")
    if cluster_reader.IMPORT_ERROR and params["kubeconfig"]:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=cluster_reader.IMPORT_ERROR)
    try:
        result = observe_and_lock(params, module.check_mode)
    except cluster_reader.Refused as exc:
        module.fail_json(msg=str(exc), errors=exc.errors)
    except kube_api.ClusterUnreadable as exc:
        module.fail_json(msg="cannot read the cluster: %s" % exc)
    except lock_lease.LockFailed as exc:
        module.fail_json(msg=str(exc), **exc.fields)
    if result["lock"] and result["lock"].pop("warning"):
        module.warn(result["lock"]["reason"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
