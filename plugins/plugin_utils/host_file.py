# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file of the task's host copied into a file of the controller that the caller made private (mode 0600) before
anything is written to it: the admin kubeconfig (host_kubeconfig), the etcd snapshots and the backups (the action
plugins etcd_snapshot and etcd_backup) go through here, and the copy keeps the mode it was made with."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import os
import tempfile

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


def copy_checked(action, source, sha256, dest, task_vars):
    """Copy ``source`` on the task's host to ``dest`` on the controller through a private temporary file beside it
    (mode 0600 from its creation: a snapshot holds every Secret of the cluster), renamed to ``dest`` only once its
    SHA-256 is ``sha256``; ValueError when it is not, or when the file cannot be read, and nothing is left behind."""
    handle, partial = tempfile.mkstemp(prefix=".%s." % os.path.basename(dest), suffix=".partial", dir=os.path.dirname(dest))
    os.close(handle)
    try:
        try:
            copy_into(action, source, partial, task_vars)
        except Unreadable as exc:
            raise ValueError(str(exc))
        digest = hashlib.sha256()
        with open(partial, "rb") as copy:
            for block in iter(lambda: copy.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != sha256:
            raise ValueError("the copy's SHA-256 is %s, the snapshot's %s" % (digest.hexdigest(), sha256))
        os.replace(partial, dest)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
