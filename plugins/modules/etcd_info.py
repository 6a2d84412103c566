#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_info
short_description: Ask every member of a kubeadm etcd cluster how it is
version_added: "0.1.0"
description:
  - Connects to the etcd client URLs in O(endpoints) over mutual TLS, discovers the other members from their
    member lists, and asks every member, in parallel, for its status, its own view of the member list and
    its alarms.
  - Returns the C(etcd) section of the observed snapshot (C(docs/snapshot.md)) that the decision modules read,
    and the etcd preflight verdict Cluster API's KubeadmControlPlane applies before it scales or rolls out.
  - Each member is asked under its own O(timeout), so members that do not answer cost one timeout in total.
  - Reads only; never returns a key or certificate content.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  external:
    description:
      - The etcd cluster is external to the control plane (not stacked). Its health is then judged by
        connectivity alone, as Cluster API does; members are not matched to machines.
    type: bool
    default: false
  expected_members:
    description:
      - Names of the control plane machines' nodes (member name = node name). When given, the preflight also
        checks that there are as many members as machines, that every machine has a member and that no
        member belongs to no machine. When left out, the named members themselves are taken as the machines.
    type: list
    elements: str
attributes:
  check_mode:
    support: full
    description: The module only reads, so check mode returns the same answer.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: Runs on the controller or on a control plane host; needs only the Python standard library.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.etcd_connection
notes:
  - Bad input (an endpoint that is not an C(https://) URL, a missing or unreadable certificate file, a
    non-positive timeout) fails before any connection is made, listing every error with its option name.
  - When every endpoint refuses the TLS handshake (a wrong CA, an expired client certificate or one from
    another CA), the module fails with that message instead of reporting members that do not answer.
seealso:
  - module: kubeadm.control_plane.etcd_member
  - name: etcd API reference
    description: The v3 API this module calls through etcd's JSON gateway.
    link: https://etcd.io/docs/v3.5/dev-guide/api_reference_v3/
"""

EXAMPLES = r"""
- name: Look at the stacked etcd from the first control plane host
  kubeadm.control_plane.etcd_info:
    endpoints:
      - https://127.0.0.1:2379
    expected_members: "{{ groups['control_plane'] }}"
  register: etcd

- name: Stop when etcd is not healthy enough to change anything
  ansible.builtin.assert:
    that: etcd.preflight.ok
    fail_msg: "{{ etcd.preflight.problems }}"

- name: Look at an external etcd from the controller with the API server's client certificate
  kubeadm.control_plane.etcd_info:
    endpoints:
      - https://etcd-1.example.com:2379
      - https://etcd-2.example.com:2379
    ca_file: /secure/etcd/ca.crt
    cert_file: /secure/etcd/apiserver-etcd-client.crt
    key_file: /secure/etcd/apiserver-etcd-client.key
    external: true
  delegate_to: localhost
"""

RETURN = r"""
etcd:
  description:
    - The C(etcd) section of the observed snapshot (C(docs/snapshot.md)); ids are hex, as etcdctl prints them.
  returned: success
  type: dict
  contains:
    external:
      description: The value of O(external).
      type: bool
    members:
      description:
        - Every member, sorted by name (members added but not started yet, with an empty name, last).
        - "C(responsive) says whether it answered its status call in time, C(error) why not, or what it
          reported wrong (such as C(etcdserver: no leader))."
        - C(member_ids_seen) is the member list this member reports, C(cluster_id) the cluster it belongs to,
          C(alarms) the alarms it knows of (V(NOSPACE), V(CORRUPT)).
      type: list
      elements: dict
      sample:
        - name: cp-1
          id: 8e9e05c52164694d
          peer_urls: ["https://10.0.0.11:2380"]
          client_urls: ["https://10.0.0.11:2379"]
          responsive: true
          error: null
          leader: true
          learner: false
          alarms: []
          member_ids_seen: ["8e9e05c52164694d", "91bc3c398fb3c146", "fd422379fda50e48"]
          cluster_id: cdf818194e3a8c32
          version: 3.5.15
          db_size: 20480
          raft_term: 4
          raft_index: 1234
preflight:
  description: Whether etcd is healthy enough for the control plane to scale or roll out, and if not, why.
  returned: success
  type: dict
  contains:
    ok:
      description: No check failed.
      type: bool
    problems:
      description: Every failed check, in words.
      type: list
      elements: str
      sample: ["member cp-2 did not answer: status: no answer within 5.0s"]
    members:
      description:
        - Per machine (node name), the health of its etcd member as Cluster API judges it, with
          C(status) V(true), V(false) or V(unknown) and a C(reason). Empty for external etcd.
      type: dict
      sample: {"cp-1": {"status": "true", "reason": ""}}
    strays:
      description: Names of members that belong to no machine.
      type: list
      elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_client, etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdTLSError

ARGUMENT_SPEC = dict(
    external=dict(type="bool", default=False),
    expected_members=dict(type="list", elements="str"),
    **etcd_client.CONNECTION_ARGUMENT_SPEC
)


def preflight(section, expected_members):
    """etcd_health's verdict, the machines being the expected members (or else the named members)."""
    names = expected_members if expected_members is not None else [m["name"] for m in section["members"] if m["name"]]
    machines = [{"name": name, "node": {"name": name}} for name in names]
    health = etcd_health.evaluate(section, machines)
    return {
        "ok": health["ok"],
        "problems": health["problems"],
        "members": health["members_by_machine"],
        "strays": [m["name"] for m in health["strays"]],
    }


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    problems = etcd_client.connection_problems(
        params["endpoints"], params["ca_file"], params["cert_file"], params["key_file"], params["timeout"]
    )
    if problems:
        module.fail_json(msg="invalid arguments: " + "; ".join(problems), errors=problems)
    try:
        with etcd_client.EtcdClient(
            params["endpoints"], params["ca_file"], params["cert_file"], params["key_file"], timeout=params["timeout"]
        ) as client:
            section = client.gather(external=params["external"])
    except EtcdTLSError as exc:
        module.fail_json(msg="cannot talk to etcd: %s" % exc)
    module.exit_json(changed=False, etcd=section, preflight=preflight(section, params["expected_members"]))


if __name__ == "__main__":
    main()
