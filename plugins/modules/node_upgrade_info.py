#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_upgrade_info
short_description: Read what a node's in-place upgrade has done and which of its steps remain
version_added: "0.1.0"
description:
  - Reads on the host, in one round trip, what an in-place upgrade to O(version) needs to know - the versions of the
    installed kubeadm and kubelet, the image tags of the static pod manifests, whether the host runs a control plane,
    the node software record - and, with the Node passed in O(node), the step the upgrade recorded on it (annotation
    C(control-plane.kubeadm.io/upgrade)).
  - Returns the steps that remain, in order (C(docs/in-place-upgrade.md)); a re-run after a killed run resumes at
    the first step not done, and a node already of the version has nothing left. What is observed overrides the
    record where it can - a step whose result is missing is done again.
  - Decides whether the node is drained (O(nodes) - only when another node can take its pods) and whether it is
    uncordoned at the end (not when it was cordoned before the upgrade).
  - Fails, changing nothing, when the upgrade is refused - no Node; C(kubeadm upgrade apply) on a host that runs no
    control plane; a Node newer than O(version) (no downgrade); a control plane more than one minor behind.
  - The role C(kubeadm.control_plane.node_upgrade) runs it before every upgrade of a node.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  version:
    description: The Kubernetes version the node is upgraded to, V(v<major>.<minor>.<patch>).
    type: str
    required: true
  command:
    description:
      - V(apply) - the first control plane node (C(kubeadm upgrade apply), after an etcd snapshot);
        V(node) - every other node, control plane or worker (C(kubeadm upgrade node)).
    type: str
    required: true
    choices: [apply, node]
  node:
    description:
      - The host's Node object as the API server returns it (C(kubectl get node <name> -o json)); null when the
        host has no Node, which is refused.
    type: dict
  nodes:
    description: Every Node of the cluster (C(kubectl get nodes -o json)'s C(items)), for the drain decision.
    type: list
    elements: dict
    default: []
  etcd_snapshot:
    description:
      - Whether V(apply) begins with an etcd snapshot through this host (step C(etcd-snapshot)); V(false) with
        external etcd, whose backups are its operator's and which the host runs no member of.
    type: bool
    default: true
  etcd_image_tag:
    description:
      - The etcd image tag the upgrade is to reach (the plan's C(upgrade.etcd_image_tag)); null for none.
      - On a control plane node with stacked etcd (an C(etcd.yaml) static pod manifest), the C(kubeadm-upgrade)
        step counts as done only once that manifest's image tag is this tag or newer (kubeadm never downgrades etcd;
        a tag that does not read as a version must be the same), so an upgrade of etcd alone, at the same
        Kubernetes version, is not taken for done. A host without that manifest (external etcd, a worker) ignores it.
      - The record on the Node is of this upgrade only when its version and its C(etcd_image_tag) are these.
    type: str
  manifests_dir:
    description: kubeadm's static pod manifests on the host.
    type: path
    default: /etc/kubernetes/manifests
  software_record_path:
    description: The node software record on the host (M(kubeadm.control_plane.node_software_install)).
    type: path
    default: /var/lib/kubeadm-control-plane/node-software.json
attributes:
  check_mode:
    support: full
    description: Reads only; the same answer in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: Runs on the host with the Python standard library.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - The versions of kubeadm and the kubelet are the answers of C(kubeadm version -o short) and C(kubelet --version)
    of the binaries in /usr/local/bin, where the node software is installed.
seealso:
  - module: kubeadm.control_plane.node_software_install
"""

EXAMPLES = r"""
- name: Read the Nodes
  ansible.builtin.command:
    argv: [kubectl, --kubeconfig=/etc/kubernetes/admin.conf, get, nodes, -o, json]
  register: nodes
  changed_when: false

- name: Read what the upgrade to v1.37.1 has done on this node
  kubeadm.control_plane.node_upgrade_info:
    version: v1.37.1
    command: node
    node: "{{ (nodes.stdout | from_json)['items'] | selectattr('metadata.name', 'equalto', inventory_hostname) | first | default(none) }}"
    nodes: "{{ (nodes.stdout | from_json)['items'] }}"
  register: upgrade

- name: Say what remains
  ansible.builtin.debug:
    msg: "{{ upgrade.remaining }}"
"""

RETURN = r"""
remaining:
  description: The steps that remain, in order; empty when the node is of the version and nothing is left.
  returned: always
  type: list
  elements: str
  sample: [kubelet, uncordon, ready]
steps:
  description: Every step of the upgrade with this command, in order.
  returned: always
  type: list
  elements: str
upgraded:
  description:
    - Whether kubeadm, the kubelet (installed and running), and on a control plane node its static pods are of the
      version, its etcd at O(etcd_image_tag) or newer.
  returned: always
  type: bool
control_plane:
  description: Whether the host runs a control plane (the API server's static pod manifest is there).
  returned: always
  type: bool
kubeadm:
  description: The installed kubeadm's version; null when there is none or it does not answer.
  returned: always
  type: str
kubelet:
  description: The installed kubelet's version; null when there is none or it does not answer.
  returned: always
  type: str
manifests:
  description: The image tag of each static pod manifest on the host, by component.
  returned: always
  type: dict
  sample: {kube-apiserver: v1.36.4, kube-controller-manager: v1.36.4, kube-scheduler: v1.36.4, etcd: 3.6.8-0}
node:
  description: What the Node says - C(name), C(kubelet_version), C(ready), C(unschedulable); null without a Node.
  returned: always
  type: dict
record:
  description:
    - The upgrade's record on the Node (C(version), C(etcd_image_tag), C(command), C(step), C(at), ...); null when
      there is none.
  returned: always
  type: dict
record_of_this_upgrade:
  description:
    - Whether RV(record) is of this upgrade - its C(version) is O(version) and its C(etcd_image_tag) is
      O(etcd_image_tag) - so that its steps and its cordon decision are resumed; a record of another upgrade, of the
      same version too, says nothing of this one.
  returned: always
  type: bool
software:
  description: The node software record on the host (M(kubeadm.control_plane.node_software_install)); empty when there is none.
  returned: always
  type: dict
drain:
  description: C(drain) (bool), whether the node is to be drained, and C(reason).
  returned: always
  type: dict
  sample: {drain: false, reason: "a single-node cluster: the pods have nowhere to go"}
uncordon:
  description: Whether the node is uncordoned once upgraded (false when it was cordoned before the upgrade began).
  returned: always
  type: bool
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_bundle, node_upgrade, software_record

IMAGE = re.compile(r"^\s*image:\s*['\"]?(\S+?)['\"]?\s*$", re.MULTILINE)
COMPONENTS = node_upgrade.VERSIONED_COMPONENTS + ("etcd",)


def binary_version(module, role, args):
    """The version a node software binary reports (the last word of its first line), or None."""
    path = node_bundle.ARTIFACTS[role][1]
    if not os.access(path, os.X_OK):
        return None
    rc, out, _err = module.run_command([path] + args)
    words = out.strip().split()
    return words[-1] if rc == 0 and words and node_upgrade.parse_version(words[-1]) else None


def manifest_tags(directory):
    """{component: image tag} of the static pod manifests in ``directory``."""
    tags = {}
    for component in COMPONENTS:
        try:
            with open(os.path.join(directory, component + ".yaml"), encoding="utf-8") as handle:
                match = IMAGE.search(handle.read())
        except OSError:
            continue
        if match:
            tags[component] = match.group(1).rpartition(":")[2]
    return tags


def node_summary(node):
    if not node:
        return None
    conditions = (node.get("status") or {}).get("conditions") or []
    return {
        "name": (node.get("metadata") or {}).get("name"),
        "kubelet_version": ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion"),
        "ready": any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions),
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
    }


def main():
    module = AnsibleModule(
        argument_spec=dict(
            version=dict(type="str", required=True),
            command=dict(type="str", required=True, choices=list(node_upgrade.COMMANDS)),
            node=dict(type="dict"),
            nodes=dict(type="list", elements="dict", default=[]),
            etcd_image_tag=dict(type="str"),
            etcd_snapshot=dict(type="bool", default=True),
            manifests_dir=dict(type="path", default="/etc/kubernetes/manifests"),
            software_record_path=dict(type="path", default="/var/lib/kubeadm-control-plane/node-software.json"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    version, command = params["version"], params["command"]
    etcd = params["etcd_image_tag"] or None
    node = params["node"] or None
    annotations = ((node or {}).get("metadata") or {}).get("annotations") or {}
    observed = {
        "control_plane": os.path.isfile(os.path.join(params["manifests_dir"], "kube-apiserver.yaml")),
        "kubeadm": binary_version(module, "kubeadm", ["version", "-o", "short"]),
        "kubelet": binary_version(module, "kubelet", ["--version"]),
        "manifests": manifest_tags(params["manifests_dir"]),
        "node": node_summary(node),
        "record": node_upgrade.read_record(annotations.get(node_upgrade.ANNOTATION)),
    }
    answer = dict(observed, software=software_record.read(params["software_record_path"]),
                  steps=list(node_upgrade.steps_of(command, params["etcd_snapshot"])))
    refused = node_upgrade.refusals(observed, version, command)
    if refused:
        module.fail_json(msg="%s is not upgraded in place to %s: %s" % (
            (observed["node"] or {}).get("name") or "the host", version, "; ".join(refused)), **answer)
    name = observed["node"]["name"]
    module.exit_json(
        changed=False,
        remaining=node_upgrade.remaining_steps(observed, version, command, etcd, params["etcd_snapshot"]),
        upgraded=node_upgrade.upgraded(observed, version, etcd),
        record_of_this_upgrade=node_upgrade.of_this_upgrade(observed["record"], version, etcd),
        drain=node_upgrade.drain_decision(name, params["nodes"] or [node]),
        uncordon=node_upgrade.uncordon_after(observed["record"], version, observed["node"], etcd),
        **answer
    )


if __name__ == "__main__":
    main()
