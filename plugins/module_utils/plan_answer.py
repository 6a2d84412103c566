# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the kcp_plan module answers for its arguments: the plan (planner.py), with its projection when
asked (plan_projection.py), or every input error. Its action plugin computes it on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import invalid_input
from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_projection import project
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_spec_and_snapshot


def plan_from_raw(raw_spec, raw_observed, projection=False, remediate_workers=False, provider_makes_hosts=False):
    """(plan, errors): the plan, with its projection when asked, only when both arguments are valid; every error
    of both otherwise."""
    spec, snapshot, errors = normalize_spec_and_snapshot(raw_spec, raw_observed)
    if errors:
        return None, errors
    result = plan(spec, snapshot, remediate_workers=remediate_workers, provider_makes_hosts=provider_makes_hosts)
    if projection:
        result["projection"] = project(spec, snapshot, remediate_workers=remediate_workers, provider_makes_hosts=provider_makes_hosts)
    return result, []


ARGUMENT_SPEC = dict(
    spec=dict(type="dict", required=True),
    observed=dict(type="dict", required=True),
    projection=dict(type="bool", default=False),
    remediate_workers=dict(type="bool", default=False),
    provider_makes_hosts=dict(type="bool", default=False),
)


def answer(params):
    """The module's result for validated ``params``: the plan, or ``failed`` with every input error."""
    result, errors = plan_from_raw(params["spec"], params["observed"], params["projection"], params["remediate_workers"],
                                   params["provider_makes_hosts"])
    if errors:
        return invalid_input(errors)
    return dict(changed=False, **result)
