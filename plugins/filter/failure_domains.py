# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failure-domain placement as Jinja filters, for playbooks and machine providers that place machines themselves.

The decisions are those of the planner (plugins/module_utils/failure_domains.py, docs/rules.md FD1–FD6); the
documentation of each filter is in the YAML file named after it, next to this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.failure_domains import (
    scale_down_choice,
    scale_up_domain,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import describe


def _snapshot(observed, filter_name):
    snapshot, errors = normalize_snapshot(observed)
    if errors:
        raise AnsibleFilterError("%s: the observed snapshot is invalid: %s" % (filter_name, describe(errors)))
    return snapshot


def _names(value, filter_name, argument):
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise AnsibleFilterError("%s: %s must be a list of machine names" % (filter_name, argument))
    return set(value)


def kcp_scale_up_failure_domain(observed, outdated=None):
    """FD1–FD3: the failure domain for the next control plane machine, or None."""
    snapshot = _snapshot(observed, "kcp_scale_up_failure_domain")
    stale = _names(outdated, "kcp_scale_up_failure_domain", "outdated") or set()
    machines = snapshot["machines"]
    up_to_date = {m["name"] for m in machines if m["name"] not in stale and not m["deleting"]}
    return scale_up_domain(snapshot["failure_domains"], machines, up_to_date).domain


def kcp_scale_down_failure_domain(observed, eligible=None):
    """FD4–FD5: the failure domain a scale down takes a machine from, or None for "no failure domain"."""
    snapshot = _snapshot(observed, "kcp_scale_down_failure_domain")
    wanted = _names(eligible, "kcp_scale_down_failure_domain", "eligible")
    machines = snapshot["machines"]
    chosen = [m for m in machines if not m["deleting"] and (wanted is None or m["name"] in wanted)]
    if not chosen:
        raise AnsibleFilterError("kcp_scale_down_failure_domain: no machine to choose from (none given, or all deleting)")
    return scale_down_choice(snapshot["failure_domains"], machines, chosen).domain


class FilterModule(object):
    """kcp_scale_up_failure_domain, kcp_scale_down_failure_domain."""

    def filters(self):
        return {
            "kcp_scale_up_failure_domain": kcp_scale_up_failure_domain,
            "kcp_scale_down_failure_domain": kcp_scale_down_failure_domain,
        }
