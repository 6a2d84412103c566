#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: pods_ready
short_description: Wait until a Node's control plane pods run and are ready
version_added: "0.2.0"
description:
  - Reads the pods of O(node) (by default its control plane pods, C(tier=control-plane) in C(kube-system), which the
    kubelet mirrors from its static pods) through the Kubernetes API every second until at least O(count) are there
    and every one is C(Running) with its C(Ready) condition C(True). This is what a step waits for after a machine
    joined, was upgraded or had its certificates renewed, before the next observation judges the machine.
  - An API server that does not answer is asked again until the time is up (the one on the machine may be
    restarting); nothing is concluded from no answer.
  - When O(timeout) seconds pass first, it fails naming each pod that is not running and ready, with its phase, its
    C(Ready) condition's reason, each container's state and restarts (and how the last run ended), and the last
    O(log_lines) lines of its log.
  - Runs on the controller with an admin kubeconfig, or with O(admin_kubeconfig_on_host) on a control plane host
    whose kubeconfig it reads in the same task; either way one process reads the API, instead of a command per
    second on the host.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  kubeconfig:
    description: An admin kubeconfig of the cluster; this or O(admin_kubeconfig_on_host) is required.
    type: path
  admin_kubeconfig_on_host:
    description:
      - Read the admin kubeconfig at this path on the host the task runs on instead of O(kubeconfig) on the
        controller. The action plugin reads it over the task's connection into a file only this user can read (mode
        0600), which lives only while the task runs; it is never returned. The API is then read from the controller.
      - Excludes O(kubeconfig).
    type: path
  node:
    description: The Node whose pods are waited for (C(spec.nodeName)).
    type: str
    required: true
  namespace:
    description: The namespace of the pods.
    type: str
    default: kube-system
  selector:
    description: A label selector the pods match; empty for every pod of the Node in O(namespace).
    type: str
    default: tier=control-plane
  count:
    description: How many pods at least must be there (a control plane machine has 3, or 4 with stacked etcd).
    type: int
    default: 1
  timeout:
    description: Seconds to wait.
    type: int
    default: 300
  ready_since:
    description:
      - A time (RFC 3339, UTC, C(2026-11-29T05:00:00Z)); a pod counts as ready only when its Ready condition turned
        True at or after it. After an etcd restore the Pods carry the status the backup held; only the one their
        kubelet posted since is the pod's now. Unset, the status is taken as it is.
    type: str
  log_lines:
    description: Lines of each pod's log the failure shows, from its end; 0 for none.
    type: int
    default: 5
attributes:
  check_mode:
    support: full
    description: Reads the pods once and reports what it found, without waiting and without failing on pods not ready.
  diff_mode:
    support: none
  platform:
    platforms: all
requirements:
  - kubernetes (the Python client) where the module runs; the controller's, with O(admin_kubeconfig_on_host)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - It changes nothing.
seealso:
  - module: kubeadm.control_plane.kcp_observe
"""

EXAMPLES = r"""
- name: Wait until the machine's control plane pods run and are ready
  kubeadm.control_plane.pods_ready:
    admin_kubeconfig_on_host: /etc/kubernetes/admin.conf
    node: "{{ inventory_hostname }}"
    count: 4
    timeout: 300
"""

RETURN = r"""
ready:
  description: Whether every pod runs and is ready (in check mode it may be false).
  returned: success
  type: bool
problems:
  description: Why the pods are not all running and ready, one line per pod (empty when they are).
  returned: always
  type: list
  elements: str
  sample: ["kube-apiserver-cp-2: Running, Ready False (ContainersNotReady), container kube-apiserver running, not ready"]
pods:
  description: The pods read last, each with C(name), C(phase) and C(ready).
  returned: always
  type: list
  elements: dict
waited:
  description: Seconds it waited.
  returned: success
  type: float
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.api_module import run_api_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.pods_ready_answer import ARGUMENT_SPEC, IMPORT_ERROR, NotReady, argument_problems, wait


def main():
    run_api_module(ARGUMENT_SPEC, lambda params, check_mode, diff: wait(params, check_mode), IMPORT_ERROR, (NotReady,), argument_problems)


if __name__ == "__main__":
    main()
