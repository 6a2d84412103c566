# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file replaced whole or not at all and readable by its owner only (an etcd snapshot holds every Secret of the
cluster; a host record says what a killed run must finish). I/O only."""

from __future__ import annotations

import contextlib
import os
import tempfile


def _partial_prefix(path):
    return ".%s." % os.path.basename(path)


@contextlib.contextmanager
def replaced_whole(path):
    """Write ``path`` through a binary handle on a temporary file beside it: once the block ends without an error
    the data is flushed to disk and the file renamed to ``path``; on any error the temporary file is removed and
    ``path`` is left as it was. mkstemp creates the temporary file 0600, so ``path`` is never anything but 0600 and
    no chmod follows (AnsibleModule.atomic_move would give a new file the umask's mode)."""
    handle, temporary = tempfile.mkstemp(prefix=_partial_prefix(path), dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def partial_writes(path):
    """The temporary files that writes of ``path`` killed before their rename left beside it (they may hold
    secrets)."""
    directory = os.path.dirname(path) or "."
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    prefix = _partial_prefix(path)
    return [os.path.join(directory, name) for name in sorted(names) if name.startswith(prefix)]
