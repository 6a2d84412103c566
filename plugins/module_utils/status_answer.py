# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the kcp_status module answers for its arguments: the status (status.py), or every input error. Its
action plugin computes it on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import invalid_input
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_spec_and_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.status import control_plane_status, status_table


def status_from_raw(raw_spec, raw_observed):
    """(status, errors): the status only when both arguments are valid; every error of both otherwise."""
    spec, snapshot, errors = normalize_spec_and_snapshot(raw_spec, raw_observed)
    if errors:
        return None, errors
    status = control_plane_status(spec, snapshot)
    return dict(status, table=status_table(snapshot, status)), []


ARGUMENT_SPEC = dict(
    spec=dict(type="dict", required=True),
    observed=dict(type="dict", required=True),
)


def answer(params):
    """The module's result for validated ``params``: the status, or ``failed`` with every input error."""
    result, errors = status_from_raw(params["spec"], params["observed"])
    if errors:
        return invalid_input(errors)
    return dict(changed=False, ready=result["conditions"][-1]["status"] == "True", **result)
