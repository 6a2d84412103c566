# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the kcp_observe module does for its arguments: the cluster's observation (cluster_reader.py), then the
lock when asked for (lock_lease.py); run by the module where its task runs, or by its action plugin on the
controller with the admin kubeconfig read from a host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_reader, lock_lease

ARGUMENT_SPEC = dict(
    kubeconfig=dict(type="path"),
    hosts=dict(
        type="list",
        elements="dict",
        default=[],
        options=dict(
            name=dict(type="str", required=True),
            address=dict(type="str"),
            failure_domain=dict(type="str"),
            record=dict(type="raw"),
            record_error=dict(type="str"),
            certificates_expire=dict(type="str"),
            certificate_authorities_expire=dict(type="str"),
            kubelet_certificate_expire=dict(type="str"),
            kubelet_certificate_rotates=dict(type="bool"),
            certificate_renewal=dict(type="dict"),
        ),
    ),
    failure_domains=dict(type="list", elements="str"),
    etcd=dict(type="dict"),
    external_etcd=dict(type="bool", default=False),
    timeout=dict(type="float", default=5.0),
    lock=dict(
        type="dict",
        options=dict(
            holder=dict(type="str", required=True),
            action=dict(type="str", default=""),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            duration=dict(type="int", default=900),
        ),
    ),
    admin_kubeconfig_on_host=dict(type="path"),
    etcd_endpoints=dict(type="list", elements="str"),
    etcd_files=dict(type="dict", options=dict(
        ca_file=dict(type="path"),
        cert_file=dict(type="path"),
        key_file=dict(type="path"),
    )),
)


def observe_and_lock(params, check_mode, cluster=None):
    """The module's result: the observation, then the lock when asked for and there is a cluster (``cluster``:
    cluster_reader.observe's). Raises cluster_reader.Refused, kube_api.ClusterUnreadable or lock_lease.LockFailed."""
    result = cluster_reader.observe(params["kubeconfig"], params["hosts"], params["failure_domains"], params["etcd"],
                                    params["external_etcd"], params["timeout"], cluster)
    result.update(changed=False, lock=None)
    lock = params["lock"]
    if lock and params["kubeconfig"]:
        problems = lock_lease.check_arguments(lock["holder"], lock["duration"])
        if problems:
            raise cluster_reader.Refused("invalid arguments: " + "; ".join("lock.%s" % p for p in problems), problems)
        result["lock"] = lock_lease.apply(params["kubeconfig"], lock["holder"], lock["action"], lock["state"],
                                          lock["duration"], params["timeout"], check_mode)
    return result
