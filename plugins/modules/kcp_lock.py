#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kcp_lock
short_description: Take or release the cluster lock every flow that changes the control plane holds
version_added: "0.1.0"
description:
  - The lock is the Lease C(kube-system/control-plane-kubeadm-io). It names the run that holds it
    (O(holder)), since when, and what it runs (O(action)), so that two runs, from AWX and from a laptop,
    never change the control plane at once.
  - O(state=present) takes the lock when it is free, renews it when this run holds it, and takes it over when
    the run that held it stopped renewing it for O(duration) seconds (it died), or at once when that run was
    another run of this controller whose process no longer runs (both named by the lookup
    P(kubeadm.control_plane.run_holder#lookup)); it fails, naming the holder, what it runs and since when, while
    another run holds it.
  - O(state=held) is the check a flow makes right before each step that changes membership (an etcd member
    removed, C(kubeadm join) or C(kubeadm reset), a Node deleted). It renews the lock while it still names O(holder),
    also when it expired and nobody took it since; it fails, naming the run that holds it now, when the lock was
    released or taken over, and never takes a free lock. An API server that does not answer is asked again every
    second for up to 60 seconds. Right after an etcd member is removed, a load balancer may send the request to
    that machine's API server, whose etcd left, until its health check takes it out.
  - With O(admin_kubeconfig_on_host), a lock taken, renewed or held is kept alive for as long as the run's
    C(ansible-playbook) process runs. A process of the controller renews it every third of O(duration), however
    long a step takes (a drain held by a PodDisruptionBudget, a slow C(kubeadm join)). It stops when the run ends
    or is killed (the lock then expires after O(duration), or is taken over at once by the next run of this
    controller), or when the lock no longer names O(holder); it keeps its copy of the kubeconfig in a private
    directory (mode 0700) that it removes when it stops.
  - O(state=absent) releases the lock when this run holds it, and leaves a lock another run holds alone.
  - Every write names the Lease version it read, so two runs that race for a free lock cannot both win.
  - Runs on the controller with an admin kubeconfig, or with O(admin_kubeconfig_on_host) on a control plane host
    whose kubeconfig it reads in the same task.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  kubeconfig:
    description: An admin kubeconfig of the cluster; this or O(admin_kubeconfig_on_host) is required.
    type: path
  admin_kubeconfig_on_host:
    description:
      - Read the admin kubeconfig at this path on the host the task runs on (a control plane host, with
        C(delegate_to)) instead of O(kubeconfig) on the controller. The action plugin reads it over the task's
        connection into a file only this user can read (mode 0600), which lives only while the task runs; it is
        never returned. The lock itself is then taken or released on the controller.
      - Excludes O(kubeconfig).
    type: path
  state:
    description: V(present) takes (or renews) the lock; V(held) renews it only while this run holds it; V(absent) releases it.
    type: str
    choices: [present, held, absent]
    default: present
  holder:
    description:
      - Who this run is, as the refusal another run gets will name it, such as
        V(alice@laptop pid 4242 controller 3f9a0c1d2e4b) (the lookup P(kubeadm.control_plane.run_holder#lookup)) or a
        fixed name such as V(awx-kubeadm-control-plane-scale).
    type: str
    required: true
  action:
    description: What the run does (V(create), V(scale), V(delete), ...), recorded on the lock.
    type: str
    default: ""
  duration:
    description:
      - Seconds the lock stays valid without being renewed. A run that dies leaves a lock that expires after
        this long; while the run lives, the lock is renewed every third of it (O(admin_kubeconfig_on_host)).
      - With O(state=held), the lock keeps the duration it was taken with.
    type: int
    default: 900
  timeout:
    description: Seconds each API request has to answer.
    type: float
    default: 10.0
attributes:
  check_mode:
    support: full
    description: Says what it would do (take, renew, take over, release, or refuse) and writes nothing; keeps nothing alive.
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
  - An API server that does not answer is a failure; the lock is never assumed free.
seealso:
  - module: kubeadm.control_plane.kcp_observe
"""

EXAMPLES = r"""
- name: Check that this run still holds the cluster lock before a member is removed
  kubeadm.control_plane.kcp_lock:
    admin_kubeconfig_on_host: /etc/kubernetes/admin.conf
    holder: "{{ lookup('kubeadm.control_plane.run_holder') }}"
    state: held
  delegate_to: cp-1

- name: Take the cluster lock
  kubeadm.control_plane.kcp_lock:
    kubeconfig: "{{ work_dir }}/admin.conf"
    holder: "{{ lookup('kubeadm.control_plane.run_holder') }}"
    action: scale

- name: Release it
  kubeadm.control_plane.kcp_lock:
    kubeconfig: "{{ work_dir }}/admin.conf"
    holder: "{{ lookup('kubeadm.control_plane.run_holder') }}"
    state: absent
"""

RETURN = r"""
decision:
  description: What was done (or, in check mode, would be) - take, renew, take_over, release, or leave.
  returned: success
  type: str
reason:
  description: Why, naming the other holder when there is one.
  returned: always
  type: str
lock:
  description: The lock as it was read before this run acted (holder, action, since, expires); null when there was none.
  returned: always
  type: dict
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils import lock_lease
from ansible_collections.kubeadm.control_plane.plugins.module_utils.api_module import run_api_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.lock_answer import ARGUMENT_SPEC, lock


def main():
    run_api_module(ARGUMENT_SPEC, lambda params, check_mode, diff: lock(params, check_mode), lock_lease.IMPORT_ERROR,
                   (lock_lease.LockFailed, ValueError))


if __name__ == "__main__":
    main()
