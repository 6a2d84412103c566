# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files building the node software bundle writes (node_bundle.bundle_files). The documentation is in
node_bundle_files.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.node_bundle import bundle_files


def node_bundle_files(versions, arches, containerd_version, cni_plugins_version, urls, checksums=None):
    """bundle_files over the bundle_build role's settings."""
    if not isinstance(urls, dict) or not {"kubernetes", "containerd", "cni_plugins"} <= set(urls):
        raise AnsibleFilterError("node_bundle_files: urls needs kubernetes, containerd and cni_plugins")
    return bundle_files(list(versions), list(arches), containerd_version, cni_plugins_version, urls, dict(checksums or {}))


class FilterModule(object):
    """node_bundle_files."""

    def filters(self):
        return {"node_bundle_files": node_bundle_files}
