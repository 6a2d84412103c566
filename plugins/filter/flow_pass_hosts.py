# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host pattern of each play of a flow's pass (flow_passes). The documentation is in flow_pass_hosts.yml, next to
this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.flow_passes import STEPS_CEILING, act_hosts, observe_hosts


def flow_pass_hosts(groups, play, flow_pass, group="control_plane_candidates", max_steps=None):
    """The host pattern of ``play`` (observe or act) of pass ``flow_pass``, given the run's ``groups``."""
    if not isinstance(groups, dict):
        raise AnsibleFilterError("flow_pass_hosts: the input must be the run's groups (the groups variable)")
    if play == "observe":
        return observe_hosts(groups, flow_pass, group, STEPS_CEILING if max_steps is None else max_steps)
    if play == "act":
        return act_hosts(groups, flow_pass)
    raise AnsibleFilterError("flow_pass_hosts: play must be observe or act, not %r" % (play,))


class FilterModule(object):
    """flow_pass_hosts."""

    def filters(self):
        return {"flow_pass_hosts": flow_pass_hosts}
