# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane host's admin kubeconfig, copied into a file on the controller that only this user can read (mode
0600) and that lives only while the block runs: the action plugins of kcp_observe and kcp_lock reach the cluster
with it, and the credentials never stay on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os

from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_file

# kcp_observe and kcp_lock catch it by this name
Unreadable = host_file.Unreadable


@contextlib.contextmanager
def private_copy(action, path, task_vars):
    """Yield the path of a private copy of ``path`` on the task's host, read by ``action`` (an ActionBase) as
    host_file.copy_into reads it."""
    handle, copy = credential_files.private_file(suffix=".conf")  # mode 0600
    os.close(handle)
    try:
        host_file.copy_into(action, path, copy, task_vars)
        yield copy
    finally:
        os.unlink(copy)
