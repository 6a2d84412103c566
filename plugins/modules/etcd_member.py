#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_member
short_description: Add, promote, lead or remove one member of a kubeadm etcd cluster, never losing quorum
version_added: "0.1.0"
description:
  - Brings one etcd member, named after its control plane node, to the declared state. V(present) adds it
    (as a learner by default, as kubeadm's EtcdLearnerMode does) when it is missing, promotes it when
    O(learner=false) and it is a learner, and hands it the leadership when O(leader=true). V(absent) removes
    it, first handing the leadership to another healthy voting member if it leads, as Cluster API does.
  - Right before each change the module asks every member how it is (as M(kubeadm.control_plane.etcd_info)
    does) and projects the change with the collection's quorum arithmetic. It refuses, with the reasons, when
    etcd has no quorum now, when the healthy voting members left would not reach the new quorum, when an
    alarm is active, when a second learner would exist, when the learner to promote does not answer, or when
    the leadership would go to a member that cannot lead. O(force=true) overrides the refusal.
  - While etcd refuses a change for a few seconds (just after a start or another change, or while a learner
    catches up with the leader), and while a learner to promote has not started answering yet, the module
    polls for up to O(retry_timeout) seconds.
  - Idempotent. A member that exists is found by name, or, before it has started and has no name yet, by
    its peer URLs. One host holds one member; adding a member whose peer URL is on the host of an existing
    member, started or not, is refused.
  - Nothing is concluded from no answer. Whether a member is absent is only concluded from a member list
    served by a voting member that answers a read through quorum; when no such member answers (nothing
    listens, a silent port, a name that does not resolve, every member hung, or only a learner given), the
    module fails and says what each endpoint answered.
  - A removal while an alarm (such as V(NOSPACE)) is active is allowed without O(force) when the member
    removed does not answer; etcd accepts it, and it is how an operator recovers. The quorum arithmetic still
    applies.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  name:
    description:
      - Member name, which kubeadm sets to the node name of the control plane machine.
      - Empty only with O(state=absent) and O(peer_urls), for a member added and never started, which has no name
        yet.
    type: str
    required: true
  peer_urls:
    description:
      - Peer URLs of the member, such as V(https://10.0.0.14:2380). Required with O(state=present); with
        O(state=absent) they find a member that was added but never started.
    type: list
    elements: str
  state:
    description:
      - V(present) to add (and promote / lead as asked), V(absent) to remove.
    type: str
    choices: [present, absent]
    default: present
  learner:
    description:
      - With O(state=present), a missing member is added as a non-voting learner unless this is V(false). Set
        V(false) to add a voting member directly, or to promote the member once it has started as a learner
        and caught up.
      - A voting member is never turned back into a learner; V(true) for a voting member gives a warning.
    type: bool
  leader:
    description:
      - With O(state=present), move the leadership to this member. It must be a healthy voting member; asking
        it for a member that does not exist yet, or that stays a learner, is refused.
    type: bool
    default: false
  force:
    description:
      - Act even when the quorum guard refuses. This can lose quorum for good; use it only to recover a
        cluster you understand.
    type: bool
    default: false
  leader_candidate:
    description:
      - With O(state=absent), the member that takes the leadership first if the member removed leads, as
        the C(leader_candidate) of a M(kubeadm.control_plane.kcp_plan) plan names it. It must be another
        healthy voting member, or the removal is refused.
      - When left out, the collection's one leadership rule picks it (C(docs/decisions.md)), a healthy voting
        member other than the one removed, the one furthest ahead in the raft log, then the largest name.
    type: str
  retry_timeout:
    description:
      - Seconds to keep polling while etcd refuses a change for now (kubeadm polls promotions for 2 minutes).
    type: float
    default: 30.0
attributes:
  check_mode:
    support: full
    description:
      - Reports the steps it would take, the quorum verdict on the first one and the member that would take
        the lead, without changing anything. Later steps (such as a leadership move after a promotion) are
        checked when they run.
  diff_mode:
    support: full
    description: The member list before and after (in check mode, as it would be), one line per member.
  platform:
    platforms: posix
    description: Runs on the controller or on a control plane host; needs only the Python standard library.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.etcd_connection
notes:
  - Bad input fails before any connection is made, listing every error with its option name; a key or
    certificate problem names the file at fault.
  - A refusal names what was asked (V(remove), V(add), V(promote)), even when the step refused is the
    leadership move that comes first.
  - To add a member the kubeadm way, add it as a learner, start etcd on the new machine with
    C(--initial-cluster-state=existing), then run this module again with O(learner=false) to promote it.
  - Peer URLs of an existing member are not changed; remove the member and add it again.
seealso:
  - module: kubeadm.control_plane.etcd_info
  - name: etcd runtime reconfiguration
    description: Why etcd adds members as learners and refuses unsafe changes.
    link: https://etcd.io/docs/v3.5/op-guide/runtime-configuration/
"""

EXAMPLES = r"""
- name: Add cp-4 as a learner
  kubeadm.control_plane.etcd_member:
    name: cp-4
    peer_urls: ["https://10.0.0.14:2380"]
    endpoints: ["https://10.0.0.11:2379"]
  register: added

- name: Promote cp-4 once its etcd has started
  kubeadm.control_plane.etcd_member:
    name: cp-4
    peer_urls: ["https://10.0.0.14:2380"]
    learner: false
    endpoints: ["https://10.0.0.11:2379"]

- name: Remove cp-1 (leadership moves away first if it leads)
  kubeadm.control_plane.etcd_member:
    name: cp-1
    state: absent
    endpoints: ["https://10.0.0.12:2379", "https://10.0.0.13:2379"]

- name: What would removing cp-2 do, and is it safe?
  kubeadm.control_plane.etcd_member:
    name: cp-2
    state: absent
    endpoints: ["https://10.0.0.11:2379"]
  check_mode: true
  register: plan
"""

RETURN = r"""
actions:
  description:
    - The steps taken, in order (in check mode, the steps that would be taken). Empty when the member is
      already as declared.
  returned: always
  type: list
  elements: str
  sample: ["move_leader", "remove"]
id:
  description:
    - The member's id in hex (for an added member, the id etcd gave in its answer; for a removed one, the id it
      had). Null when there is no such member.
  returned: always
  type: str
  sample: 8e9e05c52164694d
member:
  description:
    - The member as the cluster reports it after the change (see M(kubeadm.control_plane.etcd_info)); null
      when it does not exist. In check mode, as it is now.
  returned: always
  type: dict
new_leader:
  description:
    - Name of the member that takes the lead in the steps taken (in check mode, that would be taken); null
      when the leadership does not move.
  returned: always
  type: str
  sample: cp-2
diff:
  description: The member list before and after, one line per member (name, id, voter or learner, peer URLs).
  returned: in diff mode
  type: dict
verdict:
  description:
    - The quorum guard's verdict on the last step checked (null when there was nothing to do).
  returned: always
  type: dict
  contains:
    ok:
      description: The step keeps a quorum of healthy voting members and breaks no other rule.
      type: bool
    voters_before:
      description: Voting members now.
      type: int
    healthy_before:
      description: Healthy voting members now.
      type: int
    voters_after:
      description: Voting members after the step.
      type: int
    healthy_after:
      description: Healthy voting members after the step.
      type: int
    quorum_after:
      description: Votes needed after the step.
      type: int
    failures_tolerated_after:
      description: Further failures the cluster survives after the step (negative = quorum lost).
      type: int
    reasons:
      description: Why the step is refused (empty when it is allowed).
      type: list
      elements: str
  sample:
    ok: false
    voters_before: 3
    healthy_before: 2
    voters_after: 2
    healthy_after: 1
    quorum_after: 2
    failures_tolerated_after: -1
    reasons: ["after the change 1 of 2 voting members would be healthy, 2 are needed for quorum"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_client
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdError, EtcdUnavailable
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import change_verdict, membership_confirmed
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_membership import INTENTS, find_member, membership_text, new_leader, plan, projected

ARGUMENT_SPEC = dict(
    name=dict(type="str", required=True),
    peer_urls=dict(type="list", elements="str"),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    learner=dict(type="bool"),
    leader=dict(type="bool", default=False),
    force=dict(type="bool", default=False),
    leader_candidate=dict(type="str"),
    retry_timeout=dict(type="float", default=30.0),
    **etcd_client.CONNECTION_ARGUMENT_SPEC
)


class Refused(Exception):
    """The quorum guard said no: ``(intent, verdict, actions taken)``."""


class Unknown(Exception):
    """Nothing to conclude from: no voting member in touch with a quorum served a member list."""


def act(client, step, peer_urls, learner):
    """Carry out one step; return the id of the member it concerns."""
    if step.action in ("add", "add_learner"):
        return client.add_member(peer_urls, learner=learner)["id"]
    if step.action == "promote":
        client.promote_member(step.member_id)
    elif step.action == "move_leader":
        client.move_leader(step.member_id)
    elif step.action == "remove":
        client.remove_member(step.member_id)
    return step.member_id


def answers(section, member_id):
    return any(m["id"] == member_id and m["responsive"] and not m["error"] for m in section["members"])


def what_was_tried(observation):
    """Each endpoint asked and what it answered, for a failure message."""
    learners = {m["name"] or m["id"] for m in observation.section["members"] if m["learner"]}
    parts = []
    for report in observation.endpoints:
        if report["error"]:
            parts.append("%s: %s" % (report["url"], report["error"]))
        elif report["member"] in learners:
            parts.append("%s: learner %s, which serves no member list" % (report["url"], report["member"]))
        else:
            parts.append("%s: answered" % report["url"])
    return "; ".join(parts)


def run(client, params, check_mode):
    """Plan, then for each step: look at etcd again, ask the guard, act. Returns the module result."""
    name, peer_urls = params["name"], params["peer_urls"]
    observation = client.observe()
    members = observation.section["members"]
    found = find_member(members, name, peer_urls)
    if found is None and not membership_confirmed(observation.section):
        raise Unknown(
            "cannot tell whether member %s exists: no voting member in touch with a quorum served a member list (%s)"
            % (name, what_was_tried(observation))
        )
    steps, warnings = plan(members, name, peer_urls, params["state"], params["learner"], params["leader"],
                           params.get("leader_candidate"))
    intent = "remove" if params["state"] == "absent" else (INTENTS[steps[0].action] if steps else None)
    member_id = found["id"] if found else None
    before = members
    taken, verdict = [], None
    for index, step in enumerate(steps):
        if step.action == "promote" and not check_mode:
            # a learner started just before this task may need a moment to answer (kubeadm polls too)
            members = client.gather_until(lambda section: answers(section, step.member_id))["members"]
        elif index and not check_mode:
            members = client.gather()["members"]
        if index == 0 or not check_mode:
            verdict = change_verdict({"members": members}, **step.change)
            if not verdict["ok"] and not params["force"]:
                raise Refused(intent, verdict, taken)
        taken.append(step.action)
        if not check_mode:
            acted_on = act(client, step, peer_urls, params["learner"] is not False)
            member_id = acted_on if step.action.startswith("add") else member_id
    if taken and not check_mode:
        members = client.gather()["members"]
    after_list = projected(before, steps, peer_urls, params["learner"]) if check_mode else members
    after = next((m for m in members if m["id"] == member_id), None) if member_id else None
    return dict(
        changed=bool(taken),
        actions=taken,
        id=member_id,
        member=after,
        verdict=verdict,
        new_leader=new_leader(before, steps),
        warnings=warnings,
        diff=dict(before_header="etcd members", after_header="etcd members", before=membership_text(before), after=membership_text(after_list)),
    )


def input_problems(params):
    problems = etcd_client.connection_problems(
        params["endpoints"], params["ca_file"], params["cert_file"], params["key_file"], params["timeout"]
    )
    if not params["name"] and not (params["state"] == "absent" and params["peer_urls"]):
        problems.append("name: must not be empty, unless state is absent and peer_urls find a member never started")
    for index, url in enumerate(params["peer_urls"] or []):
        if not url.startswith("https://"):
            problems.append("peer_urls[%d]: %r must be an https:// URL such as https://10.0.0.14:2380" % (index, url))
    if params["retry_timeout"] < 0:
        problems.append("retry_timeout: must not be negative")
    return problems


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
        required_if=[("state", "present", ["peer_urls"])],
    )
    params = module.params
    problems = input_problems(params)
    if problems:
        module.fail_json(msg="invalid arguments: " + "; ".join(problems), errors=problems)
    try:
        with etcd_client.EtcdClient(
            params["endpoints"],
            params["ca_file"],
            params["cert_file"],
            params["key_file"],
            timeout=params["timeout"],
            retry_timeout=params["retry_timeout"],
        ) as client:
            result = run(client, params, module.check_mode)
    except Refused as exc:
        intent, verdict, taken = exc.args
        module.fail_json(
            msg="refused to %s member %s: %s (force: true overrides)" % (intent, params["name"], "; ".join(verdict["reasons"])),
            verdict=verdict,
            actions=taken,
            changed=bool(taken),
        )
    except Unknown as exc:
        module.fail_json(msg=str(exc))
    except ValueError as exc:
        module.fail_json(msg="invalid arguments: %s" % exc, errors=[str(exc)])
    except (EtcdError, EtcdUnavailable) as exc:
        module.fail_json(msg="etcd: %s" % exc)
    for warning in result.pop("warnings"):
        module.warn(warning)
    if not module._diff:
        result.pop("diff")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
