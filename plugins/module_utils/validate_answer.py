# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the kcp_validate module answers for its arguments: the spec normalized and defaulted (spec.py),
checked as an update of the spec in force (spec_update.py), with what the run is given besides it (run_inventory.py,
cluster_lock.py), or every error. Its action plugin computes it on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.kubeadm.control_plane.plugins.module_utils.cluster_lock import run_lock_errors
from ansible_collections.kubeadm.control_plane.plugins.module_utils.run_inventory import inventory_errors, worker_host_errors
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import default_images, etcd_is_external, normalize_spec, worker_group_errors
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_update import check_update
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import describe, under
from ansible_collections.kubeadm.control_plane.plugins.module_utils.worker_run import worker_host_overlap_errors, worker_removal_errors


def validate(spec, previous=None, workers=None, lock=None, inventory=None):
    """(normalized spec, errors) for ``spec``, checked as an update of ``previous`` when that is given, with the
    worker groups of ``workers`` (inventory host -> group), the cluster lock ``lock`` ({holder, duration}) and the
    flow's ``inventory`` (run_inventory) when those are given."""
    normalized, of_the_spec, of_the_run = checked(spec, previous, workers, lock, inventory)
    errors = of_the_spec + of_the_run
    return (normalized if not errors else None), errors


def checked(spec, previous, workers, lock, inventory, candidates=None, workers_remove=None, inventory_hosts=None):
    """(the spec as far as it could be read, the errors of the spec, the errors of what the run is given besides it)."""
    normalized, errors = normalize_spec(spec, partial=True) if spec is not None else (None, [])
    of_the_run = []
    if workers is not None:
        errors.extend(worker_group_errors(workers))
        if isinstance(workers, dict):
            of_the_run.extend(worker_host_errors(workers))
            of_the_run.extend(worker_host_overlap_errors(workers, candidates))
    if workers_remove is not None:
        of_the_run.extend(worker_removal_errors(workers_remove, inventory_hosts, candidates))
    if previous is not None:
        in_force, previous_errors = normalize_spec(previous)
        errors.extend(under("previous", previous_errors))
        if normalized is not None and in_force is not None:
            # the update's errors too, also for a spec invalid on its own, but each field named once: a field in
            # error (or under one) differs from the spec in force already for that reason
            reported = [e["path"] for e in errors]
            errors.extend(e for e in check_update(in_force, normalized)
                          if not any(e["path"] == path or e["path"].startswith(path + ".") for path in reported))
    if inventory is not None:
        of_the_run.extend(inventory_errors(inventory, normalized, os.path.isfile, os.path.isdir))
    if lock is not None:
        of_the_run.extend(run_lock_errors(lock.get("holder"), lock.get("duration")))
    return normalized, errors, of_the_run


ARGUMENT_SPEC = dict(
    spec=dict(type="dict"), previous=dict(type="dict"), workers=dict(type="dict"),
    lock=dict(type="dict", options=dict(holder=dict(type="raw"), duration=dict(type="raw"))),
    inventory=dict(type="dict", options=dict(
        group=dict(type="str", default="control_plane_candidates"), hosts=dict(type="list", elements="dict", default=[]),
        provider=dict(type="raw", default="static"), provider_create_tasks=dict(type="raw"), provider_delete_tasks=dict(type="raw"),
        bundle_dir=dict(type="raw"), remediation_tasks=dict(type="raw"), max_steps=dict(type="raw"),
        actions=dict(type="list", elements="str", default=[]))),
    candidates=dict(type="list", elements="str"), workers_remove=dict(type="raw"), inventory_hosts=dict(type="list", elements="str"),
)


def answer(params):
    """The module's result for validated ``params``: the normalized spec, or ``failed`` with every error."""
    normalized, of_the_spec, of_the_run = checked(params["spec"], params["previous"], params["workers"], params["lock"],
                                                  params["inventory"], params["candidates"], params["workers_remove"],
                                                  params["inventory_hosts"])
    errors = of_the_spec + of_the_run
    if errors:
        parts = (("the control plane spec is invalid: ", of_the_spec),
                 ("the run cannot go ahead with what the inventory gives it: ", of_the_run))
        msg = "; ".join(what + describe(found) for what, found in parts if found)
        return dict(failed=True, msg=msg, errors=errors)
    if params["spec"] is None:
        return dict(changed=False, errors=[])
    return dict(
        changed=False,
        spec=normalized,
        spec_hashes=spec_hashes(normalized),
        images=default_images(normalized),
        etcd_external=etcd_is_external(normalized),
        errors=[],
    )
