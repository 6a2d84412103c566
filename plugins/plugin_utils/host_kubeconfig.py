# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane host's admin kubeconfig, copied over the task's connection into a file on the controller that only
this user can read (mode 0600) and that lives only while the block runs: the action plugins of kcp_observe and
kcp_lock reach the cluster with it, and the credentials never stay on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import contextlib
import os

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files


class Unreadable(Exception):
    """The file could not be read on the host; the message says where and why."""


@contextlib.contextmanager
def private_copy(action, path, task_vars):
    """Yield the path of a private copy of ``path`` on the task's host, read by ``action`` (an ActionBase).

    Copied over the task's connection (SFTP or SCP on the SSH connection it already has: no Python started on the
    host), into a file made private before anything is written to it. A task that becomes another user reads
    the file as that user, with the slurp module, as Ansible's own fetch does."""
    where = action._task.delegate_to or (task_vars or {}).get("inventory_hostname")
    handle, copy = credential_files.private_file(suffix=".conf")  # mode 0600
    try:
        if action._connection.become:
            read = action._execute_module(module_name="ansible.legacy.slurp", module_args={"src": path}, task_vars=task_vars)
            if read.get("failed"):
                raise Unreadable("reading %s on %s: %s" % (path, where, read.get("msg")))
            with os.fdopen(handle, "wb") as out:
                handle = None
                out.write(base64.b64decode(read.pop("content")))
            del read
        else:
            os.close(handle)
            handle = None
            try:
                action._connection.fetch_file(path, copy)
            except AnsibleConnectionFailure:
                raise  # the host stopped answering: the task is unreachable, as a module's would be
            except AnsibleError as exc:
                raise Unreadable("reading %s on %s: %s" % (path, where, exc))
        yield copy
    finally:
        if handle is not None:
            os.close(handle)
        os.unlink(copy)
