# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane host's admin kubeconfig, read over the task's connection into a file on the controller that only
this user can read (mode 0600) and that lives only while the block runs: the action plugins of kcp_observe and
kcp_lock reach the cluster with it, and the credentials never stay on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import contextlib
import os

from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files


class Unreadable(Exception):
    """The file could not be read on the host; the message says where and why."""


@contextlib.contextmanager
def private_copy(action, path, task_vars):
    """Yield the path of a private copy of ``path`` on the task's host, read by ``action`` (an ActionBase)."""
    where = action._task.delegate_to or (task_vars or {}).get("inventory_hostname")
    read = action._execute_module(module_name="ansible.legacy.slurp", module_args={"src": path}, task_vars=task_vars)
    if read.get("failed"):
        raise Unreadable("reading %s on %s: %s" % (path, where, read.get("msg")))
    handle, copy = credential_files.private_file(suffix=".conf")  # mode 0600
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(base64.b64decode(read.pop("content")))
        del read
        yield copy
    finally:
        os.unlink(copy)
