# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether an etcd image tag is behind the one wanted. Pure, no I/O; used by the planner (rollout RO1, upgrade_request
IP4) and on the host (node_upgrade), hence Python 2 compatible.

Tags compare as etcd versions (``3.6.8-0`` is 3.6.8), the way kubeadm compares them before it touches etcd; a tag
that does not read as a version compares as text. kubeadm never downgrades etcd, so a newer tag is not behind, and
an unknown tag (not observed) is not either: nothing is concluded from no answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_ETCD_VERSION = re.compile(r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")


def etcd_version(tag):
    """(major, minor, patch) of an etcd version or image tag (``3.6.8``, ``3.6.8-0``), or None."""
    match = _ETCD_VERSION.match(tag) if isinstance(tag, str) else None
    return tuple(int(match.group(i)) for i in (1, 2, 3)) if match else None


def behind(observed, wanted):
    """Whether an etcd running image tag ``observed`` (None = unknown) is to move to ``wanted``."""
    if observed is None or wanted is None:
        return False
    current, target = etcd_version(observed), etcd_version(wanted)
    if current is None or target is None:
        return observed != wanted
    return current < target
