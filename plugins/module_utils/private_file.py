# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file replaced whole or not at all and readable by its owner only (an etcd snapshot holds every Secret of the
cluster; a host record says what a killed run must finish). I/O only."""

from __future__ import annotations

import contextlib
import os
import tempfile


@contextlib.contextmanager
def replaced_whole(path):
    """Write ``path`` through a binary handle on a temporary file beside it (mode 0600): once the block ends
    without an error the data is flushed to disk and the file renamed to ``path``; on any error the temporary file
    is removed and ``path`` is left as it was."""
    handle, temporary = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
