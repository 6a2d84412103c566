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
  fail_when_no_answer:
    description:
      - Fail when no endpoint answers (connection refused, a silent port, a name that does not resolve, every
        member hung). The result still carries the C(etcd) section, C(summary) and C(endpoints), saying what
        was tried and why it failed.
      - When V(false), the module returns with C(summary.answered=false) and a warning instead.
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
  - Nothing is concluded from no answer. When no endpoint answers, the preflight reports that alone (not a
    member count), C(summary.quorum) and the counts are null, and O(fail_when_no_answer) decides whether the
    task fails.
  - Every key or certificate problem (an encrypted key, a key that does not belong to the certificate, a file
    that is not PEM) fails before any connection is made, naming the file at fault.
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
    - Returned also when no endpoint answered, each endpoint then as a nameless, unresponsive member with its
      error, so the decisions read that nothing is known.
  returned: always
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
summary:
  description:
    - What an operator reads first. C(quorum) comes from health reads through quorum (a linearizable read of
      the key C(health) on every voting member, as C(etcdctl endpoint health) does), not only from each
      member's own status. C(quorum), C(voters), C(healthy_voters), C(quorum_size) and C(failures_tolerated)
      are null when no voting member answered.
  returned: always
  type: dict
  contains:
    answered:
      description: At least one endpoint answered.
      type: bool
    membership_confirmed:
      description: The member list comes from a voting member that answered a read through quorum.
      type: bool
    leader:
      description: Name (or id) of the leader, null when no healthy member leads.
      type: str
    quorum:
      description: The healthy voting members reach a quorum.
      type: bool
    voters:
      description: Voting members in the member list.
      type: int
    healthy_voters:
      description: Voting members that answered every call, including the read through quorum, without error.
      type: int
    quorum_size:
      description: Votes needed for a majority of the voters.
      type: int
    failures_tolerated:
      description: Healthy voting members that may still fail before quorum is lost.
      type: int
    learners:
      description: Names (or ids, when not started yet) of learners.
      type: list
      elements: str
    alarms:
      description: Active alarms on any member (V(NOSPACE), V(CORRUPT)).
      type: list
      elements: str
    cluster_version:
      description: The cluster version a member reports (C(GET /version)).
      type: str
    storage_version:
      description: The storage version a member reports (etcd 3.6 and later; null before).
      type: str
    members:
      description:
        - Per member, C(healthy) and C(reason), C(leader), C(learner), C(answer_seconds) (how long its answers
          took), C(raft_applied_index), C(db_size), C(db_size_in_use) and C(version).
      type: list
      elements: dict
  sample:
    answered: true
    membership_confirmed: true
    leader: cp-1
    quorum: true
    voters: 3
    healthy_voters: 2
    quorum_size: 2
    failures_tolerated: 0
    learners: []
    alarms: []
    cluster_version: 3.5.0
    storage_version: null
    members:
      - {name: cp-1, id: 8e9e05c52164694d, healthy: true, reason: null, leader: true, learner: false,
         answer_seconds: 0.011, raft_applied_index: 1234, db_size: 20480, db_size_in_use: 16384, version: 3.5.15}
endpoints:
  description:
    - Every endpoint asked, given in O(endpoints) (C(given=true)) or found in a member list, with what it
      answered. An endpoint that is not an etcd member (another service, a wrong port) shows up here with its
      error, and a warning is given.
  returned: always
  type: list
  elements: dict
  sample:
    - url: https://10.0.0.11:2379
      given: true
      answered: true
      member: cp-1
      error: null
      seconds: 0.011
      raft_applied_index: 1234
      db_size_in_use: 16384
      storage_version: null
      cluster_version: 3.5.0
preflight:
  description: Whether etcd is healthy enough for the control plane to scale or roll out, and if not, why.
  returned: always
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
    fail_when_no_answer=dict(type="bool", default=False),
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
            observation = client.observe(external=params["external"])
    except EtcdTLSError as exc:
        module.fail_json(msg="cannot talk to etcd: %s" % exc)
    section = observation.section
    result = dict(
        changed=False,
        etcd=section,
        summary=etcd_health.summary(section, observation.endpoints),
        endpoints=observation.endpoints,
        preflight=preflight(section, params["expected_members"]),
    )
    if not result["summary"]["answered"]:
        message = etcd_health.nothing_answered(section["members"])
        if params["fail_when_no_answer"]:
            module.fail_json(msg=message, **result)
        module.warn(message)
    for report in observation.endpoints:
        if report["given"] and not report["answered"] and result["summary"]["answered"]:
            module.warn("endpoint %s did not answer as an etcd member: %s" % (report["url"], report["error"]))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
