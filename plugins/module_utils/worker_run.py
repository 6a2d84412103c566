# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the worker playbooks (kubeadm.control_plane.workers and workers_remove, docs/workers.md) decide before they
touch a worker: which hosts they may take, whether the control plane can take workers, and the version a worker
joins at. Pure."""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import error

# The conditions (docs/status.md) a control plane must have True before a worker joins it.
JOIN_CONDITIONS = ("Available", "ControlPlaneComponentsHealthy", "EtcdClusterHealthy")


def worker_host_overlap_errors(workers, candidates):
    """The errors of worker hosts that are control plane candidates too, each at the host's name."""
    both = sorted(set(workers or ()) & set(candidates or ()), key=str)
    return [error(str(host), "is in both the control plane candidates and the workers group; a host is one or the other", host)
            for host in both]


def worker_removal_errors(names, inventory_hosts, candidates):
    """The error of ``kcp_workers_remove``, the inventory names of the workers to remove, or none: a non-empty list
    of inventory hosts that are not control plane candidates (those are scaled down, not removed as workers)."""
    if not isinstance(names, list) or not names:
        return [error("kcp_workers_remove", "must be a list of inventory host names, the workers to remove", names)]
    unknown = [name for name in names if name not in (inventory_hosts or ())]
    if unknown:
        return [error("kcp_workers_remove", "not inventory hosts: %s" % ", ".join(map(str, unknown)), names)]
    candidates_named = [name for name in names if name in (candidates or ())]
    if candidates_named:
        return [error("kcp_workers_remove", "control plane candidates, not workers (scale the control plane down "
                                            "instead): %s" % ", ".join(candidates_named), names)]
    return []


def worker_run_refusal(kubectl_host, group, conditions=None):
    """Why the worker playbook may not go ahead (text), or None: no control plane host answers with an admin
    kubeconfig; or, for a join (``conditions`` given, kcp_status's), one of JOIN_CONDITIONS is not True. A removal
    gives no conditions: a worker may be taken out of a control plane that is not healthy."""
    if not kubectl_host:
        return ("no control plane: no host of %s holds /etc/kubernetes/admin.conf or answers (create the control "
                "plane first: kubeadm.control_plane.create)" % group)
    failing = [c for c in conditions or () if c.get("type") in JOIN_CONDITIONS and c.get("status") != "True"]
    if failing:
        return "the control plane is not healthy enough to join workers: " + "; ".join(
            "%s: %s" % (c.get("type"), c.get("message") or c.get("reason") or "not True") for c in failing)
    return None


def worker_groups(hosts, host_vars):
    """Each worker host -> the worker group it joins (its ``worker_group``, else ``default``)."""
    return {host: host_vars[host].get("worker_group", "default") for host in hosts}


def worker_join_version(kubeadm_config, spec):
    """The version a worker joins at: the cluster's (its kubeadm ClusterConfiguration's), since a kubelet never runs
    newer than its control plane; the spec's when the cluster says none."""
    return (kubeadm_config or {}).get("kubernetes_version") or (spec or {}).get("version")
