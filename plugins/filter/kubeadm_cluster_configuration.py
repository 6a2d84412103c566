# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster's stored ClusterConfiguration brought to the spec, as Jinja filters for the update_kubeadm_config step.

The rules are kubeadm_config's (plugins/module_utils/kubeadm_config.py: which fields, how they compare); the
documentation of each filter is in the YAML file named after it, next to this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.kubeadm_config import (
    cluster_configuration_differences,
    updated_cluster_configuration,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import describe


def _arguments(observed, spec, filter_name):
    """(stored ClusterConfiguration, normalized spec), or the filter's error naming what is wrong."""
    if not isinstance(observed, dict):
        raise AnsibleFilterError("%s: the input must be the ClusterConfiguration as a mapping (from_yaml the ConfigMap's "
                                 "data.ClusterConfiguration), not %s" % (filter_name, type(observed).__name__))
    normalized, errors = normalize_spec(spec)
    if errors:
        raise AnsibleFilterError("%s: the control plane spec is invalid: %s" % (filter_name, describe(errors)))
    return observed, normalized


def kubeadm_cluster_configuration_update(observed, spec):
    """The stored ClusterConfiguration with the fields the spec manages set from it, the rest as stored."""
    stored, normalized = _arguments(observed, spec, "kubeadm_cluster_configuration_update")
    return updated_cluster_configuration(normalized, stored)


def kubeadm_cluster_configuration_changes(observed, spec):
    """The managed fields (dotted paths) in which the stored ClusterConfiguration differs from the spec."""
    stored, normalized = _arguments(observed, spec, "kubeadm_cluster_configuration_changes")
    return cluster_configuration_differences(normalized, stored)


class FilterModule(object):
    """kubeadm_cluster_configuration_update, kubeadm_cluster_configuration_changes."""

    def filters(self):
        return {
            "kubeadm_cluster_configuration_update": kubeadm_cluster_configuration_update,
            "kubeadm_cluster_configuration_changes": kubeadm_cluster_configuration_changes,
        }
