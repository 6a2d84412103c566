#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_bundle_info
short_description: Check one version of the node software bundle and say which file goes where
version_added: 0.1.0
description:
  - Reads C(<path>/<version>/SHA256SUMS) of the air-gapped node software bundle, picks the file of every artifact a
    node needs (kubeadm, kubelet, kubectl, the container runtime, the CNI plugins, the systemd units, the pod
    network's configuration) for the architecture asked for, and checks each file's SHA-256 against
    C(SHA256SUMS).
  - Fails, naming the file and what is wrong with it, when C(SHA256SUMS) is missing or malformed, an artifact is
    missing or ambiguous, a file is missing, or a checksum does not match. Nothing is installed from a bundle this
    module refused.
  - Runs on the controller, where the bundle is, and changes nothing. Its action plugin computes the answer in the
    controller's own process, whatever host the task is for. The bundle's layout is documented in
    C(docs/node-software.md); the C(kubeadm.control_plane.node_software) role installs what this module returns.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  path:
    description:
      - The bundle's root directory, holding one directory per Kubernetes version.
    type: path
    required: true
  version:
    description:
      - The Kubernetes version whose node software is wanted, V(v<major>.<minor>.<patch>).
    type: str
    required: true
  arch:
    description:
      - The nodes' architecture, as Kubernetes names it (V(amd64), V(arm64)).
    type: str
    default: amd64
attributes:
  check_mode:
    support: full
    description: The module only reads files, so check mode does the same checks.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: The controller, where the bundle is.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Check the bundle of the version to install
  kubeadm.control_plane.node_bundle_info:
    path: /srv/kcp-bundle
    version: v1.37.1
  delegate_to: localhost
  run_once: true
  register: bundle

- name: Show where kubeadm comes from
  ansible.builtin.debug:
    msg: "{{ bundle.artifacts.kubeadm.src }} ({{ bundle.artifacts.kubeadm.sha256 }})"
"""

RETURN = r"""
version:
  description: The version checked.
  returned: success
  type: str
  sample: v1.37.1
directory:
  description: The version's directory in the bundle.
  returned: success
  type: str
  sample: /srv/kcp-bundle/v1.37.1
artifacts:
  description:
    - Every artifact a node needs, by role (V(kubeadm), V(kubelet), V(kubectl), V(containerd), V(cni_plugins),
      V(kubelet_unit), V(kubelet_dropin), V(containerd_unit), V(cni_config)).
  returned: success
  type: dict
  contains:
    file:
      description: Its path inside the version's directory, as C(SHA256SUMS) names it.
      type: str
      sample: bin/linux/amd64/kubeadm
    src:
      description: Its absolute path on the controller.
      type: str
      sample: /srv/kcp-bundle/v1.37.1/bin/linux/amd64/kubeadm
    sha256:
      description: Its SHA-256, checked against the file.
      type: str
    dest:
      description: Where a node gets it (a file, or the directory an archive is extracted into).
      type: str
      sample: /usr/local/bin/kubeadm
errors:
  description: Every problem found, each naming the file; empty on success.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.controller_answer import run_module
from ansible_collections.kubeadm.control_plane.plugins.module_utils.node_bundle_answer import ARGUMENT_SPEC, answer


def main():
    run_module(ARGUMENT_SPEC, answer)


if __name__ == "__main__":
    main()
