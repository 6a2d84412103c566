# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private temporary files and directories that hold cluster credentials on the controller (an admin kubeconfig, the
client certificate and key it carries). Each is named after the process that made it and removed by that process
when it is done; what a process left when it was killed (a SIGKILLed run) is removed by the next one to make such a
file, once no process of that number runs any more. I/O only."""

from __future__ import annotations

import os
import re
import shutil
import tempfile

from ansible_collections.kubeadm.control_plane.plugins.module_utils import controller_run

PREFIX = "kcp-credentials-"
_NAME = re.compile(r"^%s(\d+)-" % re.escape(PREFIX))


def remove_left_by_gone_processes(directory=None):
    """Remove this user's credential files and directories in ``directory`` (the temporary directory) whose process
    no longer runs. Returns their names."""
    directory = directory or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        found = _NAME.match(name)
        if not found or int(found.group(1)) == os.getpid() or controller_run.process_running(int(found.group(1))):
            continue
        path = os.path.join(directory, name)
        try:
            if os.lstat(path).st_uid != os.getuid():
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError:
            continue  # another run removed it first, or it is not this user's to remove
        removed.append(name)
    return removed


def _prefix():
    return "%s%d-" % (PREFIX, os.getpid())


def private_file(suffix=""):
    """(handle, path) of a new file only this user can read (mode 0600 from its creation)."""
    remove_left_by_gone_processes()
    return tempfile.mkstemp(prefix=_prefix(), suffix=suffix)


def private_directory():
    """The path of a new directory only this user can enter (mode 0700 from its creation)."""
    remove_left_by_gone_processes()
    return tempfile.mkdtemp(prefix=_prefix())
