# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: run_holder
author: kubeadm.control_plane contributors (!UNKNOWN)
version_added: "0.1.0"
short_description: This run's name for the cluster lock
description:
  - Returns C(<user>@<host> pid <pid> controller <id>), the name under which the flows take the cluster lock
    (the default of C(flow_holder), C(docs/flows.md) "The cluster lock").
  - C(<pid>) is the C(ansible-playbook) process of this run, the same in every task of the run. C(<id>) is this
    controller's id for this user, 12 random hex digits kept in C(~/.ansible/kcp_controller_id) (mode 0600), made
    on first use; it tells two controllers with the same user and host name apart. When it cannot be kept, the
    name ends at the pid.
  - With this name, a run of the same controller that finds the lock left by a run whose process is gone (killed)
    takes it over at once, and one that finds the lock held by a run that still runs is refused.
options: {}
"""

EXAMPLES = r"""
- name: Take the cluster lock under this run's name
  kubeadm.control_plane.kcp_lock:
    kubeconfig: "{{ work_dir }}/admin.conf"
    holder: "{{ lookup('kubeadm.control_plane.run_holder') }}"
    action: scale
"""

RETURN = r"""
_raw:
  description: One name, such as V(alice@laptop pid 4242 controller 3f9a0c1d2e4b).
  type: list
  elements: str
"""

import getpass
import socket

from ansible.plugins.lookup import LookupBase

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, controller_run


def user_name():
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "ansible"


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        return [cluster_lock.run_holder(user_name(), socket.gethostname(), controller_run.run_pid(), controller_run.controller_id(create=True))]
