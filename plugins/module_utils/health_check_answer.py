# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the machine_health_check module answers for its arguments: the evaluation (health_check.py), or
every input error. Its action plugin computes it on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import invalid_input
from ansible_collections.kubeadm.control_plane.plugins.module_utils.health_check import evaluate
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_health_check
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import under


def check_health(raw_health_check, raw_observed):
    """(evaluation, errors): the evaluation only when both arguments are valid."""
    rules, errors = normalize_health_check(raw_health_check, path="health_check")
    snapshot, snapshot_errors = normalize_snapshot(raw_observed)
    errors = list(errors) + under("observed", snapshot_errors)
    if errors:
        return None, errors
    return evaluate(rules, snapshot), []


ARGUMENT_SPEC = dict(
    health_check=dict(type="dict", default={}),
    observed=dict(type="dict", required=True),
)


def answer(params):
    """The module's result for validated ``params``: the evaluation, or ``failed`` with every input error."""
    evaluation, errors = check_health(params["health_check"], params["observed"])
    if errors:
        return invalid_input(errors)
    return dict(changed=False, **evaluation)
