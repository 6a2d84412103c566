#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: machine_health_check
short_description: Judge the health of control plane machines and whether they may be remediated
version_added: "0.1.0"
description:
  - Evaluates Cluster API's MachineHealthCheck rules over every control plane machine of an observed snapshot
    and says which machines are unhealthy, which are still within a timeout, and whether the
    C(max_unhealthy) / C(unhealthy_range) budget of O(health_check) lets them be remediated.
  - "A machine is unhealthy, first match wins, when: its remediation was requested; it has a recorded failure;
    it had a Node that no longer exists; it has had no Node for longer than the node startup timeout since it
    was created; or its Node has had one of the unhealthy conditions for strictly longer than that
    condition's timeout. A machine within a timeout is pending."
  - A machine counts as healthy only with a Node, no problem, nothing pending and no deletion under way. Every
    machine that is not healthy, pending ones included, uses the budget.
  - A pure computation over its arguments, measured against the snapshot's C(now), not the clock. It runs
    where the task runs (use C(delegate_to) V(localhost)), touches no host and never changes anything.
  - See C(docs/health-check.md) in the collection for the rules and how they map to Cluster API.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  health_check:
    description:
      - The C(health_check) section of the control plane spec, as written in the inventory.
      - "C(unhealthy_conditions): a non-empty list of C({type, status, timeout}), status V(True), V(False) or
        V(Unknown); default Ready Unknown 5m and Ready False 5m."
      - "C(unhealthy_machine_conditions): the same, of the machine conditions the collection sets (V(EtcdMemberHealthy),
        V(EtcdPodHealthy), V(APIServerPodHealthy), ...), judged first and timed from their pod's Ready transition;
        default none."
      - "C(node_startup_timeout): how long a new machine may go without a Node; V(0) disables the check,
        otherwise at least 30s; default V(10m)."
      - "C(max_unhealthy): an int, or a percentage string such as V(40%) of the machines, rounded down;
        default V(100%)."
      - "C(unhealthy_range): V([min-max]); when set it wins over C(max_unhealthy)."
      - Durations are Go-style strings (V(90s), V(5m), V(1h30m)) or a number of seconds. Unknown fields are
        errors.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: The module never changes anything, so check mode returns the same evaluation.
  diff_mode:
    support: none
  platform:
    platforms: all
    description: Pure computation; run it on the controller.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.observed_snapshot
notes:
  - Bad input fails before anything is evaluated, listing every error with the path of its field
    (for example C(observed.machines[1].created)).
seealso:
  - name: Cluster API MachineHealthCheck
    description: The Kubernetes controller whose rules this module applies.
    link: https://cluster-api.sigs.k8s.io/tasks/automated-machine-management/healthchecking
"""

EXAMPLES = r"""
- name: Judge the control plane machines against the spec's health check rules
  kubeadm.control_plane.machine_health_check:
    health_check: "{{ kcp.health_check | default({}) }}"
    observed: "{{ snapshot }}"
  delegate_to: localhost
  run_once: true
  register: health

- name: Stop when unhealthy machines may not be remediated
  ansible.builtin.fail:
    msg: "{{ health.unhealthy | join(', ') }} unhealthy: {{ health.reason }}"
  when: health.unhealthy | length > 0 and not health.remediation_allowed

- name: Remediate only while exactly one machine is unhealthy
  kubeadm.control_plane.machine_health_check:
    health_check:
      unhealthy_conditions:
        - {type: Ready, status: "Unknown", timeout: 5m}
        - {type: Ready, status: "False", timeout: 5m}
      node_startup_timeout: 15m
      unhealthy_range: "[1-1]"
    observed: "{{ snapshot }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
targets:
  description: One verdict per control plane machine, in snapshot order.
  returned: success
  type: list
  elements: dict
  contains:
    machine:
      description: The machine's name.
      type: str
      sample: cp-2
    state:
      description:
        - V(healthy) counts as healthy; V(unhealthy) failed a rule; V(pending) is within a timeout;
          V(not_evaluated) has no problem yet does not count as healthy (no Node while the node startup
          timeout is 0, or being deleted).
      type: str
      sample: pending
    reason:
      description: Why, in one phrase.
      type: str
      sample: "node condition Ready is Unknown; unhealthy if it stays so for 5m (check again in 3m1s)"
    next_check_seconds:
      description: For a pending machine, seconds until a check would find it unhealthy (time left plus 1 s);
        null otherwise.
      type: float
      sample: 181.0
unhealthy:
  description: Names of the unhealthy machines, whether or not they may be remediated.
  returned: success
  type: list
  elements: str
  sample: [cp-3]
pending:
  description: Names of the machines within a timeout.
  returned: success
  type: list
  elements: str
  sample: [cp-2]
expected:
  description: How many machines were checked (all control plane machines of the snapshot).
  returned: success
  type: int
  sample: 3
healthy:
  description: How many machines count as healthy.
  returned: success
  type: int
  sample: 1
unhealthy_count:
  description: How much of the budget is used, C(expected) - C(healthy); pending machines count.
  returned: success
  type: int
  sample: 2
max_allowed:
  description: The limit applied, the int that C(max_unhealthy) works out to, or the C(unhealthy_range) text.
  returned: success
  type: raw
  sample: 3
remediation_allowed:
  description: Whether the unhealthy machines may be remediated (the budget is not exceeded).
  returned: success
  type: bool
  sample: true
remediations_allowed:
  description: How many more machines may become unhealthy and still be remediated; 0 when not allowed.
  returned: success
  type: int
  sample: 1
reason:
  description: One sentence saying why remediation is or is not allowed.
  returned: success
  type: str
  sample: "Remediation is allowed: 2 of 3 machines not healthy, and max_unhealthy 100% allows 3."
next_check_seconds:
  description: When to look again, the soonest C(next_check_seconds) of the pending machines; null when none is
    pending.
  returned: success
  type: float
  sample: 181.0
errors:
  description: Every input error, each with the path of the field, the rule it breaks and the value given.
  returned: failure
  type: list
  elements: dict
  sample: [{"path": "health_check.max_unhealthy", "rule": "must be an integer >= 0 or a percentage such as \"40%\"",
            "value": "10"}]
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import run_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.health_check_answer import ARGUMENT_SPEC, answer


def main():
    run_module(ARGUMENT_SPEC, answer)


if __name__ == "__main__":
    main()
