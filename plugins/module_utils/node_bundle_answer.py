# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the node_bundle_info module answers for its arguments: one version of the node software bundle, each
artifact's checksum verified against the bundle's sums file (node_bundle.py). Its action plugin computes it on the
controller, where the bundle is."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.kubeadm.control_plane.plugins.module_utils.file_digest import sha256_of
from ansible_collections.kubeadm.control_plane.plugins.module_utils.node_bundle import (SUMS_FILE, check_request,
                                                                                        parse_sums, select)


def inspect(path, version, arch):
    """(artifacts, directory, errors) of one version of the bundle at ``path``."""
    errors = check_request(version, arch)
    if errors:
        return None, None, errors
    directory = os.path.join(path, version)
    sums_path = os.path.join(directory, SUMS_FILE)
    try:
        with open(sums_path, "r", encoding="utf-8") as handle:
            sums, errors = parse_sums(handle.read())
    except (OSError, UnicodeDecodeError) as exc:
        return None, directory, ["%s: cannot be read: %s" % (sums_path, exc)]
    chosen, missing = select(sums, arch)
    errors += missing
    for artifact in chosen.values():
        artifact["src"] = os.path.join(directory, artifact["file"])
        try:
            found = sha256_of(artifact["src"])
        except OSError as exc:
            errors.append("%s: cannot be read: %s" % (artifact["src"], exc.strerror or exc))
            continue
        if found != artifact["sha256"]:
            errors.append("%s: its SHA-256 is %s, %s says %s" % (artifact["src"], found, SUMS_FILE, artifact["sha256"]))
    return (chosen if not errors else None), directory, errors


ARGUMENT_SPEC = dict(
    path=dict(type="path", required=True),
    version=dict(type="str", required=True),
    arch=dict(type="str", default="amd64"),
)


def answer(params):
    """The module's result for validated ``params``: the chosen artifacts, or ``failed`` with every error."""
    artifacts, directory, errors = inspect(params["path"], params["version"], params["arch"])
    if errors:
        return dict(failed=True, msg="the node software bundle is not usable: " + "; ".join(errors), errors=errors)
    return dict(changed=False, version=params["version"], directory=directory, artifacts=artifacts, errors=[])
