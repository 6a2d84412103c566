# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file of the task's host copied into a file of the controller that the caller made private (mode 0600) before
anything is written to it: the admin kubeconfig (host_kubeconfig) and the etcd snapshots (etcd_snapshot's action
plugin) go through here, and the copy keeps the mode it was made with."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible.errors import AnsibleConnectionFailure, AnsibleError


class Unreadable(Exception):
    """The file could not be read on the host; the message says where and why."""


def copy_into(action, source, dest, task_vars):
    """Copy ``source`` on the task's host into ``dest`` on the controller, an existing private file, with ``action``
    (an ActionBase).

    Over the task's connection (SFTP or SCP on the SSH connection it already has: no Python started on the host,
    and the existing file keeps its mode); a task that becomes another user reads the file as that user, with the
    slurp module, as Ansible's own fetch does. A host that stops answering raises AnsibleConnectionFailure (the task
    is unreachable, as a module's would be); anything else that keeps the file from being read, Unreadable."""
    where = action._task.delegate_to or (task_vars or {}).get("inventory_hostname")
    if action._connection.become:
        read = action._execute_module(module_name="ansible.legacy.slurp", module_args={"src": source}, task_vars=task_vars)
        if read.get("failed"):
            raise Unreadable("reading %s on %s: %s" % (source, where, read.get("msg")))
        with open(dest, "wb") as out:
            out.write(base64.b64decode(read.pop("content")))
        return
    try:
        action._connection.fetch_file(source, dest)
    except AnsibleConnectionFailure:
        raise
    except AnsibleError as exc:
        raise Unreadable("reading %s on %s: %s" % (source, where, exc))
