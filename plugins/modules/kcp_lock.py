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
    the run that held it stopped renewing it for O(duration) seconds (it died); it fails, naming the holder,
    what it runs and since when, while another run holds it.
  - O(state=absent) releases the lock when this run holds it, and leaves a lock another run holds alone.
  - Every write names the Lease version it read, so two runs that race for a free lock cannot both win.
  - Runs on the controller with an admin kubeconfig.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  kubeconfig:
    description: An admin kubeconfig of the cluster.
    type: path
    required: true
  state:
    description: V(present) takes (or renews) the lock; V(absent) releases it.
    type: str
    choices: [present, absent]
    default: present
  holder:
    description:
      - Who this run is, as the refusal another run gets will name it, such as
        V(awx job 412 (scale\) on awx-1) or V(alice@laptop pid 4242).
    type: str
    required: true
  action:
    description: What the run does (V(create), V(scale), V(delete), ...), recorded on the lock.
    type: str
    default: ""
  duration:
    description:
      - Seconds the lock stays valid without being renewed. A run that dies leaves a lock that expires after
        this long; keep it above the longest step a flow takes between two renewals.
    type: int
    default: 900
  timeout:
    description: Seconds each API request has to answer.
    type: float
    default: 10.0
attributes:
  check_mode:
    support: full
    description: Says what it would do (take, renew, take over, release, or refuse) and writes nothing.
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
- name: Take the cluster lock
  kubeadm.control_plane.kcp_lock:
    kubeconfig: "{{ work_dir }}/admin.conf"
    holder: "{{ lookup('ansible.builtin.env', 'USER') }}@{{ lookup('ansible.builtin.pipe', 'hostname') }}"
    action: scale

- name: Release it
  kubeadm.control_plane.kcp_lock:
    kubeconfig: "{{ work_dir }}/admin.conf"
    holder: "{{ lookup('ansible.builtin.env', 'USER') }}@{{ lookup('ansible.builtin.pipe', 'hostname') }}"
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

import traceback
from datetime import datetime, timezone

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, kube_api, observation

try:
    from kubernetes import client as k8s_client
except ImportError:
    KUBERNETES_IMPORT_ERROR = traceback.format_exc()
else:
    KUBERNETES_IMPORT_ERROR = kube_api.IMPORT_ERROR

NAMESPACE = "kube-system"

ARGUMENT_SPEC = dict(
    kubeconfig=dict(type="path", required=True),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    holder=dict(type="str", required=True),
    action=dict(type="str", default=""),
    duration=dict(type="int", default=900),
    timeout=dict(type="float", default=10.0),
)


def read_lease(api, coordination, timeout):
    """(raw Lease object or None, its plain dict or None)."""
    try:
        with kube_api.answers(api):
            lease = coordination.read_namespaced_lease(observation.STATE_OBJECT, NAMESPACE, _request_timeout=timeout)
    except kube_api.ClusterUnreadable as exc:
        if kube_api.not_found(exc):
            return None, None
        raise
    return lease, api.sanitize_for_serialization(lease)


def write_lease(api, coordination, lease, params, now, taking, timeout):
    """Create the Lease, or replace it at the version read (a conflict: another run wrote it in between)."""
    spec = k8s_client.V1LeaseSpec(holder_identity=params["holder"], lease_duration_seconds=params["duration"],
                                  renew_time=now)
    if taking:
        spec.acquire_time = now
    elif lease is not None:
        spec.acquire_time = lease.spec.acquire_time
    with kube_api.answers(api):
        if lease is None:
            metadata = k8s_client.V1ObjectMeta(name=observation.STATE_OBJECT, namespace=NAMESPACE,
                                               annotations={cluster_lock.ACTION_ANNOTATION: params["action"]})
            coordination.create_namespaced_lease(NAMESPACE, k8s_client.V1Lease(metadata=metadata, spec=spec),
                                                 _request_timeout=timeout)
            return
        if taking:
            lease.metadata.annotations = dict(lease.metadata.annotations or {}, **{cluster_lock.ACTION_ANNOTATION: params["action"]})
        lease.spec = spec
        coordination.replace_namespaced_lease(observation.STATE_OBJECT, NAMESPACE, lease, _request_timeout=timeout)


def delete_lease(api, coordination, lease, timeout):
    options = k8s_client.V1DeleteOptions(preconditions=k8s_client.V1Preconditions(
        resource_version=lease.metadata.resource_version))
    with kube_api.answers(api):
        coordination.delete_namespaced_lease(observation.STATE_OBJECT, NAMESPACE, body=options, _request_timeout=timeout)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    if params["duration"] < 1:
        module.fail_json(msg="invalid arguments: duration: must be at least 1 second")
    if not params["holder"].strip():
        module.fail_json(msg="invalid arguments: holder: must name this run")
    if KUBERNETES_IMPORT_ERROR:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=KUBERNETES_IMPORT_ERROR)
    now = datetime.now(timezone.utc)
    api = None
    try:
        api = kube_api.client(params["kubeconfig"])
        coordination = k8s_client.CoordinationV1Api(api)
        lease, plain = read_lease(api, coordination, params["timeout"])
        current = cluster_lock.holder_of(plain)
        if params["state"] == "present":
            decision, reason = cluster_lock.decide_acquire(plain, params["holder"], now)
            if decision == cluster_lock.REFUSE:
                module.fail_json(msg=reason, reason=reason, lock=current)
            if not module.check_mode:
                write_lease(api, coordination, lease, params, now, decision != cluster_lock.RENEW, params["timeout"])
            if decision == cluster_lock.TAKE_OVER:
                module.warn(reason)
        else:
            decision, reason = cluster_lock.decide_release(plain, params["holder"])
            if decision == cluster_lock.RELEASE and not module.check_mode:
                delete_lease(api, coordination, lease, params["timeout"])
    except kube_api.ClusterUnreadable as exc:
        if exc.status == 409:
            module.fail_json(msg="another run wrote the lock at the same moment; run again to see who holds it: %s" % exc)
        module.fail_json(msg="cannot reach the lock: %s" % exc)
    finally:
        if api is not None:
            api.close()
    module.exit_json(changed=decision not in (cluster_lock.LEAVE,), decision=decision, reason=reason, lock=current)


if __name__ == "__main__":
    main()
