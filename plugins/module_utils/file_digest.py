# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SHA-256 of a file, read in blocks: how the node software bundle's files are checked against SHA256SUMS, on
the controller (node_bundle_info) and on a host (node_software_install)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib


def sha256_of(path):
    """The hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
