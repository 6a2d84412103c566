#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cluster_object
short_description: Merge patch, create or delete one Node, ConfigMap or Secret through the Kubernetes API
version_added: "0.2.0"
description:
  - Reads one object of the cluster and changes it only where that changes something. With O(state=present) it
    applies O(patch), a JSON merge patch (RFC 7386, what C(kubectl patch --type=merge) sends; C(null) removes a key)
    when the object is not already so; a missing object is created from the patch when O(create) is set, and is
    an error otherwise. With O(state=absent) it deletes the object if it exists.
  - C(changed) says whether the object was (in check mode, would be) written; check mode reads and writes nothing;
    with C(--diff) the result shows the object's name, labels, annotations, spec and data before and after (a
    Secret's data values hidden).
  - This is how the collection's roles annotate, label and uncordon Nodes, record state in ConfigMaps and delete
    Nodes, instead of a C(kubectl) command on a host whose C(changed) would be a claim.
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
      - Read the admin kubeconfig at this path on the host the task runs on instead of O(kubeconfig) on the
        controller. The action plugin reads it over the task's connection into a file only this user can read (mode
        0600), which lives only while the task runs; it is never returned. The API is then reached from the controller.
      - Excludes O(kubeconfig).
    type: path
  kind:
    description: The kind of the object (all in the core C(v1) API group).
    type: str
    required: true
    choices: [ConfigMap, Node, Secret]
  name:
    description: The object's name.
    type: str
    required: true
  namespace:
    description: The object's namespace; required for a ConfigMap or a Secret, refused for a Node.
    type: str
  state:
    description: C(present) applies O(patch); C(absent) deletes the object.
    type: str
    choices: [present, absent]
    default: present
  patch:
    description:
      - A JSON merge patch for the object, as a mapping (C(metadata.annotations), C(metadata.labels), C(data),
        C(spec)...). A key whose value is C(null) is removed. With O(state=present) only.
      - The patch is one of the task's arguments, so a task that writes a Secret's data sets C(no_log).
    type: dict
    default: {}
  create:
    description: Create the object from O(patch) when it does not exist, instead of failing. With O(state=present) only.
    type: bool
    default: false
  timeout:
    description: Seconds each request to the API server may take.
    type: int
    default: 10
attributes:
  check_mode:
    support: full
    description: Reads the object and says what would be done (RV(action), C(changed)); writes nothing.
  diff_mode:
    support: full
  platform:
    platforms: all
requirements:
  - kubernetes (the Python client) where the module runs; the controller's, with O(admin_kubeconfig_on_host)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: kubeadm.control_plane.pods_ready
"""

EXAMPLES = r"""
- name: Record on the Node that the machine is being deleted
  kubeadm.control_plane.cluster_object:
    admin_kubeconfig_on_host: /etc/kubernetes/admin.conf
    kind: Node
    name: cp-2
    patch:
      metadata:
        annotations:
          control-plane.kubeadm.io/deleting: "2026-11-29T10:00:00Z"

- name: Remove an annotation
  kubeadm.control_plane.cluster_object:
    admin_kubeconfig_on_host: /etc/kubernetes/admin.conf
    kind: Node
    name: cp-2
    patch:
      metadata:
        annotations:
          control-plane.kubeadm.io/external-remediation: null

- name: Keep a value in a ConfigMap, creating it the first time
  kubeadm.control_plane.cluster_object:
    admin_kubeconfig_on_host: /etc/kubernetes/admin.conf
    kind: ConfigMap
    namespace: kube-system
    name: control-plane-kubeadm-io
    create: true
    patch:
      data:
        remediation: '{"machine": "cp-2"}'

- name: Delete a Node
  kubeadm.control_plane.cluster_object:
    admin_kubeconfig_on_host: /etc/kubernetes/admin.conf
    kind: Node
    name: cp-2
    state: absent
"""

RETURN = r"""
action:
  description: What was (in check mode, would be) done.
  returned: success
  type: str
  sample: patch
  choices: [none, patch, create, delete]
existed:
  description: Whether the object existed when it was read.
  returned: success
  type: bool
  sample: true
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.api_module import run_api_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.cluster_object_answer import ARGUMENT_SPEC, IMPORT_ERROR, Refused, apply, argument_problems


def main():
    run_api_module(ARGUMENT_SPEC, apply, IMPORT_ERROR, (Refused,), argument_problems)


if __name__ == "__main__":
    main()
