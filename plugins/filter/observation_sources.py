# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hosts the observe role reads the cluster and etcd through, best first (observation.read_sources). The
documentation is in observation_sources.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.observation import read_sources


def observation_sources(names, answers):
    """The names of ``names`` whose machine_info answer says they hold the admin kubeconfig, best source first."""
    if not isinstance(names, list) or not isinstance(answers, list) or len(names) != len(answers):
        raise AnsibleFilterError("observation_sources: the input must be a list of host names and the argument their machine_info results, "
                                 "one for each name")
    if not all(isinstance(answer, dict) for answer in answers):
        raise AnsibleFilterError("observation_sources: each machine_info result must be a mapping")
    return read_sources(names, answers)


class FilterModule(object):
    """observation_sources."""

    def filters(self):
        return {"observation_sources": observation_sources}
