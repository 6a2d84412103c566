# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the kcp_lock module does for its arguments (lock_lease.py holds the lock's rules): run by the module
where its task runs, or by its action plugin on the controller with the admin kubeconfig read from a host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils import lock_lease

ARGUMENT_SPEC = dict(
    kubeconfig=dict(type="path"),
    admin_kubeconfig_on_host=dict(type="path"),
    state=dict(type="str", choices=["present", "held", "absent"], default="present"),
    holder=dict(type="str", required=True),
    action=dict(type="str", default=""),
    duration=dict(type="int", default=900),
    timeout=dict(type="float", default=10.0),
)


def lock(params, check_mode):
    """What apply returns for the module's parameters; raises lock_lease.LockFailed, or ValueError for bad arguments."""
    problems = lock_lease.check_arguments(params["holder"], params["duration"])
    if not params["kubeconfig"]:
        problems.insert(0, "kubeconfig: required (or admin_kubeconfig_on_host)")
    if problems:
        raise ValueError("invalid arguments: " + "; ".join(problems))
    if params["state"] == "held":
        return lock_lease.hold(params["kubeconfig"], params["holder"], params["duration"], params["timeout"], check_mode)
    return lock_lease.apply(params["kubeconfig"], params["holder"], params["action"], params["state"],
                            params["duration"], params["timeout"], check_mode)
