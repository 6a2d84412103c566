#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kcp_validate
short_description: Validate the control plane spec and fill in its defaults
version_added: 0.1.0
description:
  - Checks the control plane spec declared in inventory (by convention the variable C(kcp)) and returns it
    normalized, with every default filled in, together with its spec hash. Every other module and role of the
    collection reads the normalized form.
  - Reports every error at once, each as the path of the field and the rule it breaks, and fails before any
    host is touched.
  - With O(previous) set, also checks that the spec in force may change into O(spec) the way a
    KubeadmControlPlane may be updated (immutable fields, no skipped minor version, etcd topology).
  - Runs on the controller and changes nothing. The spec is documented in full in C(docs/spec.md); each
    option below names the KubeadmControlPlane or MachineHealthCheck field it maps to.
  - Secrets (bootstrap tokens, certificate keys) are refused in the kubeadm configurations, because the spec
    is returned and logged; the collection makes them for each run.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  spec:
    description:
      - The control plane spec as the user declares it. Unknown fields are errors.
      - Left out, only the other options are checked (the worker removal, which declares no control plane).
    type: dict
    suboptions:
      cluster_name:
        description:
          - Name of the cluster, a DNS-1123 label (KCP C(Cluster.metadata.name)).
        type: str
        required: true
      replicas:
        description:
          - Number of control plane machines, > 0 and odd with stacked etcd; any positive count with external
            etcd (KCP C(spec.replicas)).
        type: int
        default: 1
      version:
        description:
          - Kubernetes version, V(v<major>.<minor>.<patch>) with an optional C(-) or C(+) suffix; a missing
            leading C(v) is added (KCP C(spec.version)).
          - Supported are v1.33 to v1.37 (1.33 and 1.34 so that clusters still on them can be upgraded); any
            other minor is refused before anything is touched. See C(docs/kubernetes-versions.md).
        type: str
        required: true
      endpoint:
        description:
          - The stable API endpoint (load balancer or VIP) every machine and client uses (KCP
            C(controlPlaneEndpoint)). Immutable.
        type: dict
        required: true
        suboptions:
          host:
            description: IP address or DNS name of the endpoint.
            type: str
            required: true
          port:
            description: Port of the endpoint, 1-65535.
            type: int
            default: 6443
      kubeadm:
        description:
          - The kubeadm configurations, in kubeadm's own camelCase (KCP C(kubeadmConfigSpec)).
        type: dict
        suboptions:
          api_version:
            description:
              - The kubeadm config API the configurations are written in. Defaults to
                V(kubeadm.k8s.io/v1beta4). V(kubeadm.k8s.io/v1beta3) is accepted up to v1.36 and refused from
                v1.37, whose kubeadm no longer reads it (convert with C(kubeadm config migrate)).
              - With v1beta3 C(extraArgs) and C(kubeletExtraArgs) are maps of strings, with v1beta4 lists of
                C({name, value}). Fields that only one API version has are refused under the other.
            type: str
            choices: [kubeadm.k8s.io/v1beta3, kubeadm.k8s.io/v1beta4]
          cluster_configuration:
            description:
              - kubeadm ClusterConfiguration fields without C(apiVersion) and C(kind).
              - C(kubernetesVersion), C(clusterName) and C(controlPlaneEndpoint) are set from O(spec.version),
                O(spec.cluster_name) and O(spec.endpoint); given here they must agree, and are dropped.
              - C(etcd.external) makes etcd external and needs C(endpoints), C(caFile), C(certFile) and
                C(keyFile); C(etcd.local) and C(etcd.external) exclude each other.
              - CoreDNS and etcd image tags may hold only C([-a-zA-Z0-9_.]).
              - Immutable once the cluster exists, as in KCP - C(networking), C(certificatesDir), the etcd
                topology and anything outside KCP's list of mutable fields.
            type: dict
            default: {}
          init_configuration:
            description:
              - kubeadm InitConfiguration fields without C(apiVersion), C(kind), C(certificateKey) and
                bootstrap token values.
            type: dict
            default: {}
          join_configuration:
            description:
              - kubeadm JoinConfiguration fields without C(apiVersion), C(kind), C(controlPlane.certificateKey)
                and discovery tokens.
            type: dict
            default: {}
      machine_template:
        description:
          - Free-form description of what the machine provider needs (image, size, ...). Any change rolls the
            machines out (KCP C(spec.machineTemplate.infrastructureRef)).
        type: dict
        default: {}
      rollout:
        description: How outdated machines are replaced (KCP C(spec.rolloutStrategy), C(rolloutAfter), C(rolloutBefore)).
        type: dict
        suboptions:
          strategy:
            description: Only V(RollingUpdate).
            type: str
            default: RollingUpdate
            choices: [RollingUpdate]
          max_surge:
            description:
              - Machines created above O(spec.replicas) during a rollout, 0 or 1 (the strings V("0") and V("1")
                are read as numbers). 1 adds a machine before removing one; 0 removes first and needs
                O(spec.replicas) >= 3.
            type: raw
            default: 1
          after:
            description: RFC 3339 time; machines created before it are rolled out once it has passed.
            type: str
          before:
            description: Roll a machine out ahead of an event.
            type: dict
            suboptions:
              certificates_expiry_days:
                description: Roll a machine out when its certificates expire within this many days, >= 7.
                type: int
      upgrade:
        description: How a version change is applied.
        type: dict
        suboptions:
          strategy:
            description:
              - V(rolling) replaces machines; V(in_place) upgrades them where they stand (EKS-A
                C(upgradeRolloutStrategy.type)).
            type: str
            default: rolling
            choices: [rolling, in_place]
          other_changes:
            description:
              - With V(in_place), what happens to a machine outdated for more than its version (a spec change, a
                passed O(spec.rollout.after), certificates within O(spec.rollout.before)), which kubeadm cannot
                change in place (EKS-A's fallback strategy).
              - V(refuse) (in place or stop) makes the plan wait, naming the machines and the change, and upgrades
                nothing; V(rolling) replaces those machines as a rollout does, then upgrades the others in place.
            type: str
            default: refuse
            choices: [refuse, rolling]
          workers:
            description:
              - With V(in_place), how the workers (the Nodes without the control plane role) are upgraded, once
                every control plane machine runs the new version. A worker's group is its Node's
                C(control-plane.kubeadm.io/worker-group) label; groups go one after the other, in name order,
                workers without the label last.
            type: dict
            suboptions:
              max_unavailable:
                description:
                  - Workers of a group upgraded at a time, >= 1; a worker of the group at the new version that is
                    not Ready or is cordoned counts against it.
                type: int
                default: 1
              groups:
                description:
                  - A group's own O(spec.upgrade.workers.max_unavailable), by group name, such as
                    C(md-0) mapped to C(max_unavailable) V(2).
                type: dict
                default: {}
      remediation:
        description: Limits on replacing unhealthy machines (KCP C(spec.remediationStrategy)), and the user's own
          remediation tasks tried first (O(spec.remediation.external)).
        type: dict
        suboptions:
          max_retry:
            description: Times a machine created by a remediation may be remediated again, >= 0; unset = unlimited.
            type: int
          retry_period:
            description: Duration (C(90s), C(5m), C(1h30m) or seconds) to wait between two remediations of the same machine.
            type: raw
            default: 0s
          min_healthy_period:
            description: Duration after which a remediated machine counts as healthy again, and its retry count restarts.
            type: raw
            default: 1h
          external:
            description:
              - The user's own remediation tasks (a power cycle through IPMI or Redfish, say), run for an unhealthy
                machine before it is deleted and recreated; unset = off, V({}) = on with the defaults.
              - The same rules hold an attempt back as a deletion (etcd quorum, a leadership candidate, one at a
                time), since it takes the machine's etcd member down too. Not part of the spec hash.
            type: dict
            suboptions:
              attempts:
                description: How many attempts per machine, >= 1.
                type: int
                default: 3
              timeout:
                description: Duration one attempt may take, > 0; the next one (or the escalation) waits for it.
                type: raw
                default: 10m
              escalate:
                description: After the last attempt, delete and recreate the machine; false leaves it to a person.
                type: bool
                default: false
      health_check:
        description: When a machine is unhealthy (MachineHealthCheck C(spec)).
        type: dict
        suboptions:
          unhealthy_conditions:
            description:
              - Node conditions that make a machine unhealthy once they have held for their timeout.
              - Default - C(Ready) V(Unknown) for 5m, and C(Ready) V(False) for 5m. An empty list checks no Node
                condition (a MachineHealthCheck without C(unhealthyNodeConditions), Cluster API v1.8 and later); a
                machine is then unhealthy only when its Node is gone, does not appear in time, or it failed.
            type: list
            elements: dict
            suboptions:
              type:
                description: Node condition type, such as C(Ready).
                type: str
                required: true
              status:
                description: Condition status, quoted in YAML.
                type: str
                required: true
                choices: ["True", "False", "Unknown"]
              timeout:
                description: Duration the condition must hold.
                type: raw
                required: true
          unhealthy_machine_conditions:
            description:
              - Machine conditions that make a machine unhealthy once held longer than their timeout, judged before the
                Node's (Cluster API v1.12's C(unhealthyMachineConditions)); none by default.
              - Timed from when the cluster records the condition took its status (its pod's Ready transition); a
                condition whose start is not known is not judged (docs/health-check.md).
            type: list
            elements: dict
            default: []
            suboptions:
              type:
                description: A machine condition the collection sets.
                type: str
                required: true
                choices: [APIServerPodHealthy, ControllerManagerPodHealthy, SchedulerPodHealthy, EtcdPodHealthy, EtcdMemberHealthy]
              status:
                description: Condition status, quoted in YAML.
                type: str
                required: true
                choices: ["True", "False", "Unknown"]
              timeout:
                description: Duration the condition must hold.
                type: raw
                required: true
          node_startup_timeout:
            description: Duration a machine may go without a Node before it is unhealthy; 0 = off, else >= 30s.
            type: raw
            default: 10m
          max_unhealthy:
            description: Remediate only while at most this many machines are unhealthy, an integer >= 0 or a percentage V("N%").
            type: raw
            default: 100%
          unhealthy_range:
            description: Remediate only while the number of unhealthy machines is within V([a-b]), a <= b; wins over O(spec.health_check.max_unhealthy).
            type: str
      workers:
        description:
          - The workers' machine health check, per worker group (the Node label C(control-plane.kubeadm.io/worker-group)),
            as one MachineHealthCheck per MachineDeployment - each group's workers judged apart, with a budget of its own
            (docs/health-check.md "Workers").
        type: dict
        suboptions:
          health_check:
            description:
              - The health check of every worker group that has none of its own, as O(spec.health_check) without
                C(unhealthy_machine_conditions) (a worker runs no control plane pods); null (the default) checks none.
            type: dict
          drain_timeout:
            description: Duration the drain of a remediated worker may take (PodDisruptionBudgets are honoured meanwhile).
            type: raw
            default: 5m
          groups:
            description:
              - A worker group's name -> C({health_check, drain_timeout}), its own, which replace O(spec.workers.health_check)
                and O(spec.workers.drain_timeout) for its workers.
            type: dict
            default: {}
  previous:
    description:
      - The spec in force, as it was declared. When given, O(spec) is checked as an update of it; errors in
        it are reported under the path prefix C(previous).
    type: dict
  lock:
    description:
      - The cluster lock a flow is to take (docs/flows.md "The cluster lock"), as the inventory gives it; a field
        left out is not checked. Its errors are reported under the inventory variables C(flow_holder) and
        C(kcp_lock_duration).
    type: dict
    suboptions:
      holder:
        description: The run's name for the lock (C(flow_holder)); an empty or blank name is refused.
        type: raw
      duration:
        description: Seconds the lock lasts without renewal (C(kcp_lock_duration)), a whole number of at least 3.
        type: raw
  inventory:
    description:
      - What a flow is given besides the spec, from the inventory; each error is reported under the inventory
        variable that gives it (V(kcp_provider), V(kcp_bundle_dir), V(<host>.failure_domain), ...). Checked on the
        controller, where a path is looked for.
    type: dict
    suboptions:
      group:
        description: The inventory group of the candidate hosts (the flows' C(flow_group)), named in the errors.
        type: str
        default: control_plane_candidates
      hosts:
        description:
          - The candidate hosts, each C({name, address, failure_domain}). A name must be a DNS-1123 subdomain (it
            names the host's Node); a failure domain, when set, one string that is a label value; no two hosts may
            have the same address (C(ansible_host)).
        type: list
        elements: dict
        default: []
      provider:
        description:
          - The machine provider (C(kcp_provider)), V(static) or V(hook); with V(hook), O(inventory.provider_create_tasks)
            and O(inventory.provider_delete_tasks) must be absolute paths of files. With V(static) and a flow that
            builds machines, the spec's C(replicas) may not exceed the number of hosts.
        type: raw
        default: static
      provider_create_tasks:
        description: The hook provider's task file that creates a host (C(kcp_provider_create_tasks)).
        type: raw
      provider_delete_tasks:
        description: The hook provider's task file that deletes a host (C(kcp_provider_delete_tasks)).
        type: raw
      bundle_dir:
        description: The node software bundle's directory (C(kcp_bundle_dir)), needed by a flow that builds machines.
        type: raw
      remediation_tasks:
        description:
          - The external remediation's task file (C(kcp_remediation_tasks)), an absolute path, needed by a flow that
            may take the step C(remediate_external) when the spec's C(remediation.external) is set.
        type: raw
      max_steps:
        description:
          - The most steps one run takes (C(kcp_max_steps)), one pass a step, a whole number from 1 to 30. Unset, as
            many as the plan needs, up to 30.
        type: raw
      actions:
        description: The plan's steps the flow may take (C(flow_actions)); they say what the flow needs.
        type: list
        elements: str
        default: []
  workers:
    description:
      - The worker nodes to join, each inventory host with the worker group it joins (its C(worker_group)
        variable), as the worker playbook gives them. Each group name becomes the value of its Nodes'
        C(control-plane.kubeadm.io/worker-group) label, so it must be a Kubernetes label value; errors are
        reported under the path prefix C(workers), one a host.
      - Each host's name names its Node, so it must be a DNS-1123 subdomain; that error is reported under the
        host's name. So is a host that is one of O(candidates) too.
    type: dict
  candidates:
    description:
      - The inventory names of the control plane candidates. A host of O(workers) or O(workers_remove) among them is
        refused (a host is a control plane machine or a worker, never both).
    type: list
    elements: str
  workers_remove:
    description:
      - The workers to remove (C(kcp_workers_remove), as the worker removal playbook gives them), which must be a
        non-empty list of O(inventory_hosts) that are not O(candidates); its error is reported under
        C(kcp_workers_remove).
    type: raw
  inventory_hosts:
    description: Every host of the inventory, which O(workers_remove) must name.
    type: list
    elements: str
attributes:
  check_mode:
    support: full
    description: The module never changes anything; check mode returns the same result.
  diff_mode:
    support: none
    description: There is nothing to compare; the module changes nothing.
notes:
  - Runs on the controller; connects to no host.
  - The spec hashes cover the kubeadm configurations (without C(dns) and join C(discovery)) and
    O(spec.machine_template), one for the machine kubeadm init builds and one for those kubeadm join
    builds; see RV(spec_hashes).
"""

EXAMPLES = r"""
- name: Validate the spec declared in inventory
  kubeadm.control_plane.kcp_validate:
    spec: "{{ kcp }}"
  register: kcp_checked
  delegate_to: localhost
  run_once: true

- name: Validate a three-machine control plane with external etcd and a custom health check
  kubeadm.control_plane.kcp_validate:
    spec:
      cluster_name: prod
      replicas: 3
      version: v1.31.2
      endpoint:
        host: api.prod.example.com
      kubeadm:
        cluster_configuration:
          etcd:
            external:
              endpoints: ["https://10.0.0.5:2379"]
              caFile: /etc/kubernetes/pki/etcd/ca.crt
              certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt
              keyFile: /etc/kubernetes/pki/apiserver-etcd-client.key
          apiServer:
            extraArgs:
              - {name: audit-log-maxage, value: "30"}
      health_check:
        unhealthy_conditions:
          - {type: Ready, status: "False", timeout: 10m}
        max_unhealthy: 40%

- name: Check an update against the spec in force
  kubeadm.control_plane.kcp_validate:
    spec: "{{ kcp }}"
    previous: "{{ kcp_in_force }}"

- name: Check the spec and the worker groups of the hosts to join
  kubeadm.control_plane.kcp_validate:
    spec: "{{ kcp }}"
    workers: {worker-1: md-0, worker-2: gpu}
    candidates: "{{ groups['control_plane_candidates'] }}"

- name: Check the workers to remove
  kubeadm.control_plane.kcp_validate:
    workers_remove: "{{ kcp_workers_remove }}"
    inventory_hosts: "{{ groups['all'] }}"
    candidates: "{{ groups['control_plane_candidates'] }}"
"""

RETURN = r"""
spec:
  description: The spec with every default filled in. Durations are float seconds, O(spec.version) has its
    leading C(v), C(kubernetesVersion), C(clusterName) and C(controlPlaneEndpoint) are dropped from the
    cluster configuration.
  returned: success, when O(spec) is given
  type: dict
  sample:
    cluster_name: demo
    replicas: 3
    version: v1.36.4
    endpoint: {host: 10.0.0.100, port: 6443}
    kubeadm:
      api_version: kubeadm.k8s.io/v1beta4
      cluster_configuration: {}
      init_configuration: {}
      join_configuration: {}
    machine_template: {}
    rollout: {strategy: RollingUpdate, max_surge: 1, after: null, before: {certificates_expiry_days: null}}
    upgrade: {strategy: rolling, other_changes: refuse, workers: {max_unavailable: 1, groups: {}}}
    remediation: {max_retry: null, retry_period: 0.0, min_healthy_period: 3600.0, external: null}
    health_check:
      unhealthy_conditions:
        - {type: Ready, status: Unknown, timeout: 300.0}
        - {type: Ready, status: "False", timeout: 300.0}
      unhealthy_machine_conditions: []
      node_startup_timeout: 600.0
      max_unhealthy: 100%
      unhealthy_range: null
spec_hashes:
  description:
    - For each way kubeadm builds a machine, 16 hex digits naming what it is built from. C(init) covers the
      cluster and init configurations (without C(dns)) and the machine template, for the machine that runs
      C(kubeadm init); C(join) covers the cluster and join configurations (without C(dns) and C(discovery))
      and the machine template, for the machines that join.
    - A machine whose recorded hash differs from the hash of its part is outdated.
  returned: success, when O(spec) is given
  type: dict
  sample: {"init": "30dafb95b35d39f5", "join": "9c1e04b7a2d8f613"}
  contains:
    init:
      description: The hash the machine built by kubeadm init records.
      type: str
    join:
      description: The hash the machines built by kubeadm join record.
      type: str
images:
  description:
    - The image tags kubeadm deploys for this version (C(docs/kubernetes-versions.md)), where the cluster
      configuration names none; a tag it names (C(etcd.local.imageTag), C(dns.imageTag)) wins.
  returned: success, when O(spec) is given
  type: dict
  sample: {etcd: 3.6.8-0, coredns: v1.14.2, pause: 3.10.2}
etcd_external:
  description: Whether etcd is external (C(kubeadm.cluster_configuration.etcd.external) is set).
  returned: success, when O(spec) is given
  type: bool
  sample: false
errors:
  description: Every error, each with the field C(path), the C(rule) it breaks and the C(value) given; empty on success.
  returned: always
  type: list
  elements: dict
  sample:
    - {path: rollout.max_surge, rule: must be 0 or 1, value: 2}
    - path: health_check.unhealthy_conditions[1].timeout
      rule: must be a duration such as 90s, 5m or 1h30m, or a number of seconds >= 0
      value: soon
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import run_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validate_answer import ARGUMENT_SPEC, answer


def main():
    run_module(ARGUMENT_SPEC, answer)


if __name__ == "__main__":
    main()
