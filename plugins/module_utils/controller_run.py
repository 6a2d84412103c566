# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""This controller and the runs on it, for the cluster lock (docs/flows.md "The cluster lock"). I/O only; what the
answers mean is decided in cluster_lock.

The controller's id is a random name kept in ``~/.ansible/kcp_controller_id`` (mode 0600): two laptops with the same
user and host name are still two controllers."""

from __future__ import annotations

import errno
import multiprocessing
import os
import secrets

ID_FILE = os.path.join("~", ".ansible", "kcp_controller_id")


def controller_id(create=False):
    """This controller's id (12 hex digits) for this user; made when missing and ``create``; None when there is
    none and it cannot be made."""
    path = os.path.expanduser(ID_FILE)
    for _attempt in range(2):
        try:
            with open(path, encoding="ascii") as handle:
                found = handle.read().strip()
            return found if len(found) == 12 and all(c in "0123456789abcdef" for c in found) else None
        except (OSError, UnicodeDecodeError):
            if not create:
                return None
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                continue  # another run made it at the same moment: read it
            return None
        with os.fdopen(handle, "w", encoding="ascii") as out:
            out.write(secrets.token_hex(6) + "\n")
    return None


def process_running(pid):
    """Whether a process ``pid`` runs on this machine (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_pid():
    """The ansible-playbook process of this run: a task's templates and action plugins run in a worker it forked,
    or in itself."""
    parent = multiprocessing.parent_process()
    return parent.pid if parent is not None else os.getpid()


def run_identity():
    """This run, told apart from any other run of this controller and user: its ansible-playbook process and, where
    the system says it (Linux's /proc), when that process started, so that a later run given the same process
    number is another run."""
    pid = run_pid()
    started = None
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            # the fields after the command name, which is in parentheses and may hold spaces; starttime is field 22
            started = handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        pass
    return "pid %d started %s controller %s" % (pid, started or "unknown", controller_id() or "unknown")
