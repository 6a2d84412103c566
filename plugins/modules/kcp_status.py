#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kcp_status
short_description: Report a kubeadm control plane's status as KubeadmControlPlane conditions
version_added: "0.1.0"
description:
  - Reads the declared control plane (O(spec)) and an observed snapshot of it (O(observed)) and returns its
    status as the conditions Cluster API's KubeadmControlPlane shows, for the control plane and for each
    machine, each with a status (V(True), V(False), V(Unknown)), a reason, a message and, when V(False), a
    severity (V(Error), V(Warning), V(Info)).
  - "Control plane conditions: V(Available), V(MachinesReady), V(MachinesUpToDate), V(RollingOut), V(Resized),
    V(ScalingUp), V(ScalingDown), V(ControlPlaneComponentsHealthy), V(EtcdClusterHealthy),
    V(CertificatesNotExpiring), V(RemediationAllowed), V(Remediating), V(Deleting) and V(Ready), which
    summarizes the others but for those of work under way (V(RollingOut), V(ScalingUp), V(ScalingDown),
    V(Remediating), V(Deleting): V(True) while the work goes on, V(False) at rest)."
  - "Machine conditions: V(NodeHealthy), V(APIServerPodHealthy), V(ControllerManagerPodHealthy),
    V(SchedulerPodHealthy), with stacked etcd V(EtcdPodHealthy) and V(EtcdMemberHealthy), and V(Ready)."
  - V(Unknown) means nothing answered that could tell (a stale Node, an etcd member that did not answer, a
    certificate expiry not observed). Nothing is concluded from no answer.
  - A pure computation over its arguments, measured against the snapshot's C(now). It touches no host and
    never changes anything. See C(docs/status.md) in the collection for each condition and its reasons.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
attributes:
  check_mode:
    support: full
    description: The module never changes anything, so check mode returns the same status.
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
  - Bad input fails before anything is reported, listing every error with the path of its field.
seealso:
  - module: kubeadm.control_plane.kcp_plan
  - module: kubeadm.control_plane.machine_health_check
  - name: Cluster API KubeadmControlPlane
    description: The Kubernetes controller whose conditions this module reports.
    link: https://cluster-api.sigs.k8s.io/developer/core/controllers/control-plane
"""

EXAMPLES = r"""
- name: Read the control plane's status
  kubeadm.control_plane.kcp_status:
    spec: "{{ kcp }}"
    observed: "{{ snapshot }}"
  delegate_to: localhost
  run_once: true
  register: kcp_status

- name: Say why the control plane is not ready
  ansible.builtin.debug:
    msg: "{{ item.type }}: {{ item.reason }} ({{ item.severity }}) {{ item.message }}"
  loop: "{{ kcp_status.conditions | selectattr('status', '!=', 'True') | list }}"
  loop_control:
    label: "{{ item.type }}"
"""

RETURN = r"""
conditions:
  description:
    - The control plane's conditions, in the order listed above, V(Ready) last.
    - Each has C(type), C(status) (V(True), V(False), V(Unknown)), C(reason) (empty when V(True)),
      C(message) and C(severity) (V(Error), V(Warning) or V(Info) when V(False), else null).
  returned: success
  type: list
  elements: dict
  sample:
    - {type: Available, status: "True", reason: "", message: "", severity: null}
    - type: EtcdClusterHealthy
      status: "False"
      reason: EtcdMemberUnhealthy
      message: "cp-2/EtcdMemberHealthy: member cp-2 has alarms: NOSPACE"
      severity: Error
machines:
  description: Each machine's conditions by machine name, shaped as RV(conditions), V(Ready) last.
  returned: success
  type: dict
  sample:
    cp-1:
      - {type: NodeHealthy, status: "True", reason: "", message: "", severity: null}
      - {type: APIServerPodHealthy, status: "False", reason: PodFailed, message: pod unhealthy, severity: Error}
upgrade:
  description:
    - How far the cluster is on its way to the spec's version (C(docs/status.md)) - C(version), the spec's;
      C(control_plane) and C(workers), each C(upgraded) (the names that run it) and C(to_upgrade) (those that do
      not yet); C(nodes), by name, the upgrade record of each node whose in-place upgrade is under way or failed
      (C(version), C(step) the last step done, C(failed_step) and C(error)).
  returned: success
  type: dict
  sample:
    version: v1.37.1
    control_plane: {upgraded: [cp-1], to_upgrade: [cp-2, cp-3]}
    workers: {upgraded: [], to_upgrade: [w-1]}
    nodes:
      cp-2: {version: v1.37.1, step: kubeadm-upgrade, failed_step: drain, error: the drain of cp-2 did not finish}
certificates:
  description:
    - By machine, what its host said of its certificates (C(docs/snapshot.md)) - C(certificates_expire), the
      earliest expiry of its kubeadm certificates and kubeconfigs; C(certificate_authorities_expire), its CAs'
      earliest; C(kubelet_certificate_expire), its kubelet's client certificate; C(kubelet_certificate_rotates),
      whether the kubelet renews that certificate itself. Null where it is not known.
  returned: success
  type: dict
  sample:
    cp-1: {certificates_expire: "2027-11-20T09:00:00Z", certificate_authorities_expire: "2035-11-18T09:00:00Z",
           kubelet_certificate_expire: "2027-11-20T09:01:00Z", kubelet_certificate_rotates: true}
workers_health:
  description:
    - The health check of each worker group that has one (the spec's C(workers), C(docs/health-check.md)), by group
      name, the workers without a group (C(group) null) last - C(workers), each worker's C(state) (V(healthy),
      V(unhealthy), V(pending)) and C(reason); C(remediation_allowed) and C(reason), the group's budget.
  returned: success
  type: list
  elements: dict
  sample:
    - group: md-0
      remediation_allowed: true
      reason: "Remediation is allowed: 1 of 3 machines not healthy, and max_unhealthy 1 allows 1."
      workers:
        w-1: {state: unhealthy, reason: "node condition Ready has been Unknown since 2026-11-30T03:01:12Z, longer than 5m"}
table:
  description:
    - The compact table an operator reads first, one line a string. The first line lists the control plane's
      conditions that are not V(True) (or says C(Ready)); then one line a machine with its failure domain,
      version, etcd role (leader, voter, learner, or - for none), the day its first certificate expires (? when
      not known) and its conditions that are not V(True), and,
      while a machine's in-place upgrade is under way or failed, a last column saying how far it went.
    - With workers, a line saying how many run the spec's version, a line for each worker group with a worker
      that is not healthy giving its health check's budget, then one line a worker (group, version, Ready and
      cordoned, its health - or - when its group has no health check - and its upgrade).
  returned: success
  type: list
  elements: str
  sample:
    - "control plane: Ready"
    - "MACHINE  FAILURE DOMAIN  VERSION  ETCD    CONDITIONS"
    - "cp-1     fd-1            v1.37.1  leader  Ready"
ready:
  description: Whether the control plane's V(Ready) condition is V(True).
  returned: success
  type: bool
  sample: false
errors:
  description: Every input error, each with the field C(path), the C(rule) it breaks and the C(value) given.
  returned: failure
  type: list
  elements: dict
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import run_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.status_answer import ARGUMENT_SPEC, answer


def main():
    run_module(ARGUMENT_SPEC, answer)


if __name__ == "__main__":
    main()
