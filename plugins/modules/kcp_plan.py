#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kcp_plan
short_description: Decide the next safe step for a kubeadm control plane
version_added: "0.1.0"
description:
  - Reads the declared control plane (O(spec)) and an observed snapshot of it (O(observed)) and returns the
    one next operation that brings the control plane closer to the declaration, or why none may run now.
    This is the decision core of Cluster API's KubeadmControlPlane and MachineHealthCheck, without a
    management cluster.
  - "The operations are tried in this order and the first one needed is returned (one operation per run;
    the playbook executes it and observes again): V(finish_delete) a machine whose removal was interrupted;
    V(remove_etcd_member) an etcd member that belongs to no machine; V(clear_external_remediation) the external
    remediation request of a machine that is healthy again; V(remediate) an unhealthy machine, or
    V(remediate_external) first when the spec's C(remediation.external) asks for the user's own remediation
    tasks (a bounded number of attempts, then V(remediate) with C(escalate), else a V(wait) for a person);
    V(rollout) outdated machines (add then remove with C(max_surge) 1, remove then add with 0), or
    V(upgrade_in_place) with the in-place upgrade strategy, one machine per step; V(scale_up) / V(scale_down)
    towards the declared replicas; with O(remediate_workers), V(remediate_worker) an unhealthy worker of a group
    whose health check allows it (or one whose remediation a stopped run left half done), V(remediate_external) first
    when its group's C(external_remediation) asks for the user's tasks, V(clear_external_remediation) once it is
    healthy again; V(roll_workers) the next
    step of a worker's rolling replacement (one the user marked with the replace-machine annotation, or, with the
    rolling strategy, one not at the spec's version); V(upgrade_workers) with
    the in-place strategy, once every control plane machine runs the spec's version, the next workers of one
    group; V(none) when nothing is needed. V(wait) says a needed operation is not safe
    now. Before a machine joins or is upgraded in place, V(update_kubeadm_config) brings the cluster's
    kubeadm-config ClusterConfiguration to the spec: its version and every field the spec may change."
  - "Nothing is concluded from no answer: when no etcd endpoint answered, the plan is V(wait) naming etcd;
    when the observation found no machine for a cluster that exists (initialized, or etcd has members), the
    plan is V(wait), never a second C(kubeadm init)."
  - Every operation that creates or removes a machine is gated by the preflight checks (every other machine
    has a Node and healthy control plane pods and etcd member, no machine is being deleted, etcd agrees on
    its members and has no alarm, the API endpoint answers), and every removal of an etcd member by a quorum
    projection. A refused operation comes back as V(wait) with RV(blocked_by) naming each rule.
  - "With the in-place strategy the request is checked first, before any machine or worker is touched: only the
    version and the etcd that goes with it may change (anything else is refused with C(upgrade.other_changes) V(refuse), or rolled out with
    V(rolling)), no downgrade, no minor skipped, and etcd reaches the new version's etcd one minor at a time from
    the release etcd requires. A refused request is a V(wait) naming the rules (C(docs/rules.md) IP)."
  - A pure computation over its arguments, measured against the snapshot's C(now), not the clock. It runs
    where the task runs (use C(delegate_to) V(localhost)), touches no host and never changes anything.
  - See C(docs/decisions.md) in the collection for each decision, the function that makes it and the rule.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  remediate_workers:
    description:
      - Plan the workers' health checks (the spec's C(workers)) too, as the remediate and reconcile flows do - one
        V(remediate_worker) a step, and a V(wait) (rule C(worker_remediation_not_allowed)) for the groups whose
        budget holds their unhealthy workers back, once the control plane has nothing to do. Other flows leave
        workers alone.
    type: bool
    default: false
  provider_makes_hosts:
    description:
      - The flow's machine provider makes hosts (C(kcp_provider) V(hook), C(docs/providers.md)) - a worker that is
        replaced or remediated then gets a new host of its group, and its own host goes back to the provider, so
        it is never rebuilt where it stands (C(docs/rules.md) WR6).
    type: bool
    default: false
  projection:
    description:
      - Also return RV(projection), the steps the flows would take one after the other if each did what it says,
        for check mode and the reconcile flow's dry run, and for a step that makes a machine to install the node
        software of the hosts the next steps make machines on with its own host's (the C(flow_step) filter's C(ahead)).
      - A projection, not a promise; each real pass observes again.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: The module never changes anything, so check mode returns the same plan.
  diff_mode:
    support: none
  platform:
    platforms: all
    description: Pure computation; run it on the controller.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.declared_spec
  - kubeadm.control_plane.observed_snapshot
notes:
  - Bad input fails before anything is decided, listing every error with the path of its field
    (for example C(observed.machines[1].created) or C(spec.replicas)).
  - Ties that Cluster API v1.7.9 leaves to chance are broken as v1.10 does, then by name, so the same input
    always gives the same plan.
seealso:
  - module: kubeadm.control_plane.kcp_validate
  - module: kubeadm.control_plane.machine_health_check
  - name: Cluster API KubeadmControlPlane
    description: The Kubernetes controller whose decisions this module makes.
    link: https://cluster-api.sigs.k8s.io/developer/core/controllers/control-plane
"""

EXAMPLES = r"""
- name: Decide the next step
  kubeadm.control_plane.kcp_plan:
    spec: "{{ kcp }}"
    observed: "{{ snapshot }}"
  delegate_to: localhost
  run_once: true
  register: step

- name: Stop and say why when the next step is not safe
  ansible.builtin.fail:
    msg: "{{ step.reason }}: {{ step.blocked_by | map(attribute='message') | join('; ') }}"
  when: step.action == 'wait'

- name: Say what the next step is and which machine it concerns
  ansible.builtin.debug:
    msg: "{{ step.action }} {{ step.step or '' }} {{ step.machine or step.failure_domain or '' }}: {{ step.reason }}"
"""

RETURN = r"""
action:
  description:
    - The next operation. V(none) nothing is needed; V(wait) something is needed but not safe now (see
      RV(blocked_by)); V(scale_up) create a machine (with kubeadm init when RV(init)); V(scale_down) remove
      RV(machine); V(rollout) one step of a rolling update (RV(step) says which); V(upgrade_in_place) upgrade
      RV(machines) where they stand; V(remediate) delete the unhealthy RV(machine) (a later scale up
      replaces it); V(remediate_external) run the user's remediation tasks for the unhealthy RV(machine), attempt
      RV(attempt), within RV(timeout_seconds), recording the attempt on its Node first;
      V(clear_external_remediation) remove the external remediation request of RV(machine), healthy again;
      V(remove_etcd_member) remove the etcd RV(member) that belongs to no machine;
      V(finish_delete) finish removing RV(machine), whose removal was interrupted; V(upgrade_workers) upgrade the
      workers RV(workers) of RV(worker_group) where they stand (drain, C(kubeadm upgrade node), the kubelet,
      uncordon); V(remediate_worker) rebuild the worker RV(workers) of RV(worker_group) where it stands (drain,
      C(kubeadm reset), its Node deleted, joined again), or, with O(provider_makes_hosts), take RV(step) of its
      replacement by a new host (RV(worker_rollout)); V(remediate_external) and V(clear_external_remediation)
      also for the worker RV(workers) (RV(machine) names it too); V(roll_workers) take the next step, RV(step), of the
      rolling replacement of the worker RV(workers) (RV(worker_rollout)); V(update_kubeadm_config) set
      the kubeadm-config ConfigMap's ClusterConfiguration to the spec (C(kubernetesVersion), image repositories,
      feature gates, the apiServer, controllerManager and scheduler sections, etcd and DNS settings; RV(reason)
      names the fields that differ).
  returned: success
  type: str
  choices: [none, wait, scale_up, scale_down, rollout, upgrade_in_place, remediate, remove_etcd_member, finish_delete,
            update_kubeadm_config, remediate_external, clear_external_remediation, upgrade_workers, renew_certificates,
            remediate_worker, roll_workers]
  sample: rollout
step:
  description: For V(rollout), V(scale_up) and V(scale_down), and a V(wait) that holds one back, the scaling
    step (V(scale_up) or V(scale_down)); for V(roll_workers) and a replacing V(remediate_worker), and a V(wait) that holds one back, V(join_worker) (the
    replacement joins) or V(remove_worker) (the replaced worker is drained, reset and its Node deleted); null
    otherwise.
  returned: success
  type: str
  sample: scale_down
machine:
  description: The machine the operation removes (scale down, rollout scale down, remediate, finish_delete),
    upgrades (V(upgrade_in_place)), hands to the user's remediation tasks (V(remediate_external)) or clears the
    external remediation request of (V(clear_external_remediation)); null otherwise.
  returned: success
  type: str
  sample: cp-1
machines:
  description: For V(upgrade_in_place), every machine still to upgrade, oldest first (RV(machine) is the one
    of this step); empty otherwise.
  returned: success
  type: list
  elements: str
  sample: []
workers:
  description:
    - For V(upgrade_workers), the workers of this step, at most the group's C(max_unavailable), in the order they
      go (those already down first, then the oldest); for a V(wait) that holds such a step back for preflight, the
      workers it would take; empty otherwise.
    - Each must be Ready and schedulable again, at the spec's version, before the next pass plans another step.
    - For V(remediate_worker), and a V(wait) that holds it back for preflight, the one worker to rebuild; for the
      V(wait) of the worker groups held back by their budget, none (RV(blocked_by) names their workers).
    - For V(roll_workers), and a V(wait) that holds it back, the one worker replaced.
    - For a worker's V(remediate_external) and V(clear_external_remediation), that worker.
  returned: success
  type: list
  elements: str
  sample: ["worker-3", "worker-1"]
worker_group:
  description: For V(upgrade_workers), V(remediate_worker) and V(roll_workers), and a V(wait) that holds one back, the workers' group (the C(group) of the
    snapshot's C(workers), their Node's C(control-plane.kubeadm.io/worker-group) label); null for the unnamed
    group and for every other action.
  returned: success
  type: str
  sample: md-0
upgrade:
  description: For V(upgrade_in_place), how RV(machine) is upgraded; null otherwise.
  returned: success
  type: dict
  sample: {"command": "node", "addons": true, "etcd_image_tag": "3.6.11-0"}
  contains:
    command:
      description: V(apply) runs C(kubeadm upgrade apply) (only on the oldest machine, first); V(node) runs
        C(kubeadm upgrade node).
      type: str
    addons:
      description: This is the last machine to upgrade, whose run upgrades CoreDNS and kube-proxy (kubeadm
        does so only once every API server runs the new version).
      type: bool
    etcd_image_tag:
      description: With stacked etcd, the etcd image tag the spec wants (C(etcd.local.imageTag), else the version's
        default), which the machine's kubeadm upgrade is to leave its etcd at (or newer; kubeadm never downgrades
        etcd); the role C(kubeadm.control_plane.node_upgrade) takes it as C(node_upgrade_etcd_image_tag). Null with
        external etcd.
      type: str
failure_domain:
  description: Where a new machine goes (scale up), or the failure domain the removed machine is taken from
    (scale down); null when no failure domain applies.
  returned: success
  type: str
  sample: fd-a
init:
  description: True when the operation creates the very first machine, with kubeadm init.
  returned: success
  type: bool
  sample: false
leader_candidate:
  description:
    - When the operation removes an etcd member, or takes it down (V(remediate_external)), the machine to which
      etcd leadership moves first if that member leads (give it to M(kubeadm.control_plane.etcd_member) as its C(leader_candidate) option);
      null otherwise, or when no machine can lead.
    - The newest other machine that is not deleting, not flagged for remediation, and whose etcd member is a
      healthy voting member (C(docs/decisions.md), etcd leadership).
  returned: success
  type: str
  sample: cp-4
member:
  description: For V(remove_etcd_member), the member to remove; null otherwise.
  returned: success
  type: dict
  sample: {"name": "cp-9", "id": "8e9e05c52164694d", "peer_urls": ["https://10.0.0.19:2380"]}
  contains:
    name:
      description: The member's name (the node it was named after); empty for a member added and never started.
      type: str
    id:
      description: The member's id, in hex.
      type: str
    peer_urls:
      description: The member's peer URLs, by which one never started (no name) is found.
      type: list
      elements: str
retry_count:
  description: For V(remediate), the retry count to record with the remediation (0 starts a new sequence);
    null otherwise.
  returned: success
  type: int
  sample: 1
attempt:
  description: For V(remediate_external), the number of this attempt (1 for the first), to record on the machine's
    Node with the time before the tasks run (C(docs/state.md)); null otherwise.
  returned: success
  type: int
  sample: 2
timeout_seconds:
  description:
    - For V(remediate_external), the seconds the attempt may take (C(remediation.external.timeout), a worker's C(external_remediation.timeout)) - until they
      have passed since the attempt began, the plan tries nothing more for that machine.
    - For V(remediate_worker) and V(roll_workers), the seconds the worker's drain may take (its group's C(drain_timeout)).
    - Null otherwise.
  returned: success
  type: float
  sample: 600.0
worker_rollout:
  description:
    - For V(roll_workers) and a replacing V(remediate_worker), and a V(wait) that holds one back, the replacement, as the flow records it in the state
      ConfigMap (key C(worker-rollout)) before its first step - the worker replaced (C(worker)) and its Node's
      C(uid), its C(group), the host its replacement joins on (C(replacement); null when it is yet to be picked, a
      free worker host of the group), whether the replacement joins first (C(surge), the group's C(max_surge) 1), and
      when the replacement began (C(timestamp); null when it begins with this step, and the flow records it), and
      whether it is the health check's remediation (C(remediation)).
    - Null otherwise.
  returned: success
  type: dict
  sample: {"worker": "worker-1", "uid": "6a1d0f5e-0c8e-4d43-9b1c-5c0f8f0d2b1a", "group": "md-0", "replacement": null, "surge": true, "timestamp": null,
           "remediation": false}
remediation_for:
  description: For V(scale_up) while a remediation awaits its replacement, the record the new machine
    inherits (C(machine), C(timestamp), C(retry_count)); null otherwise.
  returned: success
  type: dict
  sample: {"machine": "cp-2", "timestamp": "2026-11-22T09:50:00Z", "retry_count": 0}
retry_after_seconds:
  description:
    - With V(wait) and V(none), the seconds until the soonest moment at which the same observation would give
      another answer (a pending health check condition or node startup timing out, a remediation's retry
      period or C(min_healthy_period) ending, an external remediation attempt's timeout running out,
      C(rollout.after) or a certificate expiry threshold passing), so
      a reconcile loop can observe again then instead of sleeping a fixed time.
    - Null when only a change in the cluster can change the answer, and with every other action (observe
      again as soon as the operation is done).
  returned: success
  type: float
  sample: 181.0
reason:
  description: One short sentence for people saying what the operation is and why.
  returned: success
  type: str
  sample: "rolling out cp-1, cp-2, cp-3: remove an outdated machine: cp-1"
details:
  description: The decision trail for logs (priority level, failure domain rule, etcd hand-over).
  returned: success
  type: list
  elements: str
  sample: ["SD1 priority 4 (outdated): cp-1, cp-2, cp-3; FD5: fd-a holds the most machines (2) among domains
            with eligible machines; FD6: cp-1 is the oldest eligible there"]
blocked_by:
  description:
    - The rules that stop an operation right now, each with a message and the machines it concerns; empty
      when acting is safe. With V(none), the preflight failures of the control plane as it is.
    - "Rules: V(etcd_unreachable) (no etcd endpoint answered), V(no_machine_observed) (no machine observed for a
      cluster that exists), V(etcd_topology), V(endpoint_not_ready), V(machines_deleting), V(machines_without_node),
      V(components_not_healthy), V(etcd_members_not_healthy), V(etcd_cluster) (preflight); V(etcd_quorum),
      V(too_few_machines) (etcd membership); V(kubeadm_config_not_observed) (the kubeadm-config version is
      needed); V(remediation_not_allowed), V(remediation_in_progress),
      V(retry_period), V(max_retries), V(machine_provisioning), V(machine_deleting), V(no_leader_candidate),
      V(external_remediation_in_progress), V(external_remediation_exhausted), V(external_remediation_no_node)
      (remediation held back); V(in_place_other_changes), V(in_place_version_unknown), V(in_place_downgrade),
      V(in_place_minor_skip), V(in_place_etcd_path) (an in-place request refused), V(workers_unavailable) (a worker
      group has as many workers down as it may)."
  returned: success
  type: list
  elements: dict
  sample: [{"rule": "components_not_healthy", "message": "cp-2: api_server false (pod unhealthy)",
            "machines": ["cp-2"]}]
  contains:
    rule:
      description: The rule's name.
      type: str
    message:
      description: What fails, for people.
      type: str
    machines:
      description: The machines concerned (may be empty).
      type: list
      elements: str
outdated:
  description: Every outdated machine with its reasons (certificates, rollout.after, version, an etcd behind the spec's, spec hash).
  returned: success
  type: dict
  sample: {"cp-1": ["runs v1.29.8, the spec wants v1.30.4"]}
flagged:
  description: The machines flagged for remediation (unhealthy, and the health check's budget allows it).
  returned: success
  type: list
  elements: str
  sample: []
remediation:
  description: What the remediation rules decided this pass, whether or not it is the operation returned.
  returned: success
  type: dict
  contains:
    status:
      description: V(none) nothing flagged; V(remediate); V(remediate_external) the user's remediation tasks
        first; V(skip) held back; V(fail) no machine can take over etcd leadership.
      type: str
    machine:
      description: The machine selected for remediation, or null.
      type: str
    rule:
      description: The rule that held it back, or null.
      type: str
    reason:
      description: Why, in one sentence.
      type: str
    retry_count:
      description: The retry count the remediation would record.
      type: int
  sample: {"status": "skip", "machine": "cp-1", "rule": "etcd_quorum", "retry_count": 0,
           "reason": "removing cp-1 would lose etcd quorum: after the change 1 of 2 voting members would be
           healthy, 2 are needed for quorum"}
quorum:
  description: For an operation that adds or removes an etcd member, or takes it down (V(remediate_external)), the
    quorum projection behind it; null otherwise.
  returned: success
  type: dict
  sample: {"ok": true, "voters_before": 3, "healthy_before": 3, "voters_after": 2, "healthy_after": 2,
           "quorum_after": 2, "failures_tolerated_after": 0, "reasons": []}
preflight:
  description: The preflight report the decision used (for a scale down, without the machine it removes), or
    the report for the control plane as it is.
  returned: success
  type: dict
  sample: {"ok": false, "excluded": [], "failures": [{"rule": "machines_without_node",
           "message": "cp-4 has no node yet", "machines": ["cp-4"]}]}
  contains:
    ok:
      description: True when no check fails.
      type: bool
    excluded:
      description: The machine left out of the checks, if any.
      type: list
      elements: str
    failures:
      description: Each failing check, as in RV(blocked_by).
      type: list
      elements: dict
health_check:
  description: The machine health check summary the remediation used.
  returned: success
  type: dict
  sample: {"unhealthy": ["cp-2"], "remediation_allowed": true,
           "reason": "Remediation is allowed: 1 of 3 machines not healthy, and max_unhealthy 100% allows 3."}
etcd:
  description: etcd health as the control plane sees it (always healthy-looking for external etcd when an
    endpoint answers).
  returned: success
  type: dict
  sample: {"ok": true, "problems": []}
spec_hashes:
  description: The hash of each part of the spec; the machine V(scale_up) creates records C(init) when
    RV(init) is true and C(join) otherwise. A machine recorded with another hash than its part's is outdated.
  returned: success
  type: dict
  sample: {"init": "3f1c0a9d2b7e4c55", "join": "a81d3f0c92b4e617"}
  contains:
    init:
      description: The hash of the part kubeadm init reads.
      type: str
    join:
      description: The hash of the part kubeadm join reads.
      type: str
projection:
  description:
    - With O(projection=true), the steps from this plan on, one after the other, as the flows would take them
      if each did what it says; its first entry is this plan. Each step's expected effect is applied to a copy
      of the snapshot and the planner asked again, with every check it makes (C(docs/decisions.md), the whole
      plan).
    - The last entry is the V(none) or V(wait) the projection ends on, or V(stopped) after 16 steps, whose
      reason names the step that would come next.
    - A machine that a scale up creates is called V(new-1), V(new-2), and so on, since its host is picked only
      when the step runs. Such names show up only in later steps and reasons.
  returned: when O(projection) is true
  type: list
  elements: dict
  sample: [{"action": "remediate", "step": null, "machine": "cp-2", "failure_domain": null, "init": false,
            "member": null, "blocked_by": [], "reason": "cp-2 is unhealthy and etcd keeps quorum without it"},
           {"action": "scale_up", "step": "scale_up", "machine": null, "failure_domain": "fd-b", "init": false,
            "member": null, "blocked_by": [], "reason": "2 of 3 machines: add one"},
           {"action": "none", "step": null, "machine": null, "failure_domain": null, "init": false, "member": null,
            "blocked_by": [], "reason": "the control plane is as declared"}]
  contains:
    action:
      description: As RV(action), or V(stopped) when the projection reached its limit.
      type: str
    step:
      description: As RV(step).
      type: str
    machine:
      description: As RV(machine); may be a placeholder (V(new-1)) for a machine an earlier step creates.
      type: str
    workers:
      description: As RV(workers).
      type: list
      elements: str
    failure_domain:
      description: As RV(failure_domain).
      type: str
    init:
      description: As RV(init).
      type: bool
    member:
      description: As RV(member).
      type: dict
    reason:
      description: As RV(reason); for V(stopped), the step that would come next.
      type: str
    blocked_by:
      description: As RV(blocked_by).
      type: list
      elements: dict
errors:
  description: Every input error, each with the path of the field, the rule it breaks and the value given.
  returned: failure
  type: list
  elements: dict
  sample: [{"path": "observed.machines[0].created", "rule": "is required", "value": null}]
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import run_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_answer import ARGUMENT_SPEC, answer


def main():
    run_module(ARGUMENT_SPEC, answer)


if __name__ == "__main__":
    main()
