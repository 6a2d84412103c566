# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of the node software installed on a host (/var/lib/kubeadm-control-plane/node-software.json,
docs/node-software.md), read on the host. I/O only; shared by node_software_install and node_upgrade_info."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json


def read(path):
    """The record as a mapping; empty when the host has none or it is not a JSON object (nothing recorded)."""
    try:
        with open(path, encoding="utf-8") as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
