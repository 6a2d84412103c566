#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_maintenance
short_description: Compact and defragment a kubeadm etcd cluster one member at a time, and clear NOSPACE once the space is back
version_added: "0.2.0"
description:
  - Asks every member how it is first, and refuses while any does not answer, answers with an error, is a learner,
    disagrees on the member list or has an alarm other than NOSPACE (CORRUPT), naming each.
  - Compacts the keyspace's history up to its current revision (O(compact)), as the API server does every few
    minutes, so that defragmentation has space to free.
  - Defragments one member at a time, the followers first and the leader last, and asks every member again after
    each one; it stops, naming the member that is not well and the ones not defragmented yet, when one is not.
  - Reports every member's database size before and after.
  - Clears a NOSPACE alarm only once every member's database leaves a fifth of the space quota free (the
    C(--quota-backend-bytes) of O(manifest), else etcd's 2 GiB), since etcd would otherwise raise it again within a
    few writes. While it does not, the alarm stays and the module fails saying so.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  compact:
    description: Compact the history up to the current revision before defragmenting.
    type: bool
    default: true
  manifest:
    description: The etcd static pod manifest on the host the task runs on, whose C(--quota-backend-bytes) is the quota.
    type: path
    default: /etc/kubernetes/manifests/etcd.yaml
  defrag_timeout:
    description: Seconds each member's defragmentation may take (a member of several GiB takes tens of seconds).
    type: float
    default: 300.0
  retry_timeout:
    description: Seconds to wait after a defragmentation for every member to answer well again.
    type: float
    default: 60.0
attributes:
  check_mode:
    support: full
    description: Asks the members and says what it would do, in which order; changes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.etcd_connection
seealso:
  - module: kubeadm.control_plane.etcd_info
  - name: etcd maintenance
    description: Compaction, defragmentation and the space quota.
    link: https://etcd.io/docs/v3.5/op-guide/maintenance/
"""

EXAMPLES = r"""
- name: Compact and defragment etcd, then clear NOSPACE when the space is back
  kubeadm.control_plane.etcd_maintenance:
    endpoints: ["https://{{ ansible_host }}:2379"]
  delegate_to: cp-1
"""

RETURN = r"""
members:
  description: Each member in the order it was (in check mode, would be) defragmented, with its database size before and after.
  returned: always
  type: list
  elements: dict
  sample: [{name: cp-2, leader: false, db_size_before: 104857600, db_size_after: 20971520}]
compacted:
  description: The revision the history was compacted to; null when it was not.
  returned: always
  type: int
quota_bytes:
  description: The space quota the databases were measured against.
  returned: always
  type: int
disarmed:
  description:
    - The members whose NOSPACE alarm was (in check mode, would be, once the space is back) cleared, as etcd lists its
      alarms by the member that raised each (every member reports every alarm of the cluster).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_client, etcd_maintenance
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdError, EtcdUnavailable

ARGUMENT_SPEC = dict(
    compact=dict(type="bool", default=True),
    manifest=dict(type="path", default="/etc/kubernetes/manifests/etcd.yaml"),
    defrag_timeout=dict(type="float", default=300.0),
    retry_timeout=dict(type="float", default=60.0),
    **etcd_client.CONNECTION_ARGUMENT_SPEC
)


class Stopped(Exception):
    """Maintenance refused or stopped; the message says why, ``result`` what was done."""

    def __init__(self, message, result):
        super(Stopped, self).__init__(message)
        self.result = result


def sizes(members):
    return {member["id"]: member.get("db_size") for member in members}


def maintain(client, params, quota, check_mode):
    """Compact, defragment member by member and clear NOSPACE when it may be; the result."""
    members = client.gather()["members"]
    order = etcd_maintenance.defrag_order(members)
    result = dict(changed=False, compacted=None, quota_bytes=quota, disarmed=[],
                  members=[dict(name=m["name"], leader=m["leader"], db_size_before=m.get("db_size"), db_size_after=None) for m in order])
    refusal = etcd_maintenance.maintenance_refusal(members)
    if refusal:
        raise Stopped("refused: %s" % refusal, result)
    names = {m["id"]: m["name"] for m in members}
    nospace = [member_id for member_id, alarm in client.alarms() if alarm == etcd_maintenance.NOSPACE]
    if check_mode:
        return dict(result, changed=True, disarmed=[names.get(member_id, member_id) for member_id in nospace])
    if params["compact"]:
        result["compacted"] = client.revision()
        client.compact(result["compacted"])
        result["changed"] = True
    done = []
    for member in order:
        client.defragment(member["client_urls"][0], params["defrag_timeout"])
        done.append(member["name"])
        result["changed"] = True
        members = client.gather_until(lambda section: etcd_maintenance.maintenance_refusal(section["members"]) is None)["members"]
        after = sizes(members)
        for entry, listed in zip(result["members"], order):
            entry["db_size_after"] = after.get(listed["id"]) if listed["name"] in done else None
        refusal = etcd_maintenance.maintenance_refusal(members)
        if refusal:
            left = [m["name"] for m in order if m["name"] not in done]
            raise Stopped("stopped after defragmenting %s: %s; not defragmented: %s" % (
                member["name"], refusal, ", ".join(left) or "none"), result)
    if nospace:
        refusal = etcd_maintenance.disarm_refusal(members, quota)
        if refusal:
            raise Stopped("NOSPACE stays: %s" % refusal, result)
        for member_id in nospace:
            client.disarm(member_id, etcd_maintenance.NOSPACE)
            result["disarmed"].append(names.get(member_id, member_id))
    return result


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    problems = etcd_client.connection_problems(params["endpoints"], params["ca_file"], params["cert_file"], params["key_file"], params["timeout"])
    if problems:
        module.fail_json(msg="invalid arguments: " + "; ".join(problems))
    manifest = ""
    if os.path.exists(params["manifest"]):
        with open(params["manifest"]) as text:
            manifest = text.read()
    quota = etcd_maintenance.quota_bytes(manifest)
    try:
        with etcd_client.EtcdClient(params["endpoints"], params["ca_file"], params["cert_file"], params["key_file"],
                                    timeout=params["timeout"], retry_timeout=params["retry_timeout"]) as client:
            module.exit_json(**maintain(client, params, quota, module.check_mode))
    except Stopped as exc:
        module.fail_json(msg=str(exc), **exc.result)
    except (EtcdError, EtcdUnavailable) as exc:
        module.fail_json(msg="etcd: %s" % exc)


if __name__ == "__main__":
    main()
