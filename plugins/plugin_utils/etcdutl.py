# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcdutl on the controller, as the backup and restore action plugins run it (docs/disaster-recovery.md): found on
PATH or by its path, and asked what a snapshot file holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shutil
import subprocess


def find(name, purpose):
    """The path of the etcdutl ``name`` (on PATH, or a path); ValueError naming it and ``purpose`` when there is none."""
    found = shutil.which(name)
    if not found:
        raise ValueError("etcdutl: %s is not an executable on the controller (%s; docs/disaster-recovery.md)" % (name, purpose))
    return found


def snapshot_status(etcdutl, snapshot):
    """What ``etcdutl snapshot status -w json`` says of ``snapshot`` (a dict); ValueError when it fails."""
    done = subprocess.run([etcdutl, "snapshot", "status", snapshot, "--write-out", "json"], capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise ValueError("etcdutl snapshot status failed: %s" % (done.stderr.strip() or done.stdout.strip()))
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise ValueError("etcdutl snapshot status gave no JSON: %s" % done.stdout.strip()[:200])
