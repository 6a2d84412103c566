#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: machine_record
short_description: Write or remove the record a control plane host keeps of its machine
version_added: "0.1.0"
description:
  - The host record (C(/etc/kubernetes/control-plane-machine.json), C(docs/state.md)) says which step a machine
    being built or removed has reached, so a run killed at any task is finished by the next one;
    M(kubeadm.control_plane.machine_info) reads it back.
  - Written whole or not at all (a temporary file renamed into place), mode 0600, in one round trip; unchanged
    when the record already says the same.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  state:
    description: V(present) writes O(record); V(absent) removes the record (the host is back in the pool).
    type: str
    choices: [present, absent]
    default: present
  record:
    description:
      - The machine's record. Required with O(state=present).
    type: dict
    suboptions:
      name:
        description: The machine (the inventory host and Node name).
        type: str
        required: true
      failure_domain:
        description: Its failure domain.
        type: str
      created:
        description: When the machine was started (RFC 3339, UTC); kept across the steps.
        type: str
        required: true
      bootstrap:
        description: How it joins the cluster.
        type: str
        choices: [init, join]
        required: true
      version:
        description: The Kubernetes version it runs.
        type: str
      spec_hash:
        description: The hash of the spec it was built from (C(docs/spec.md)).
        type: str
      step:
        description: The step it has reached.
        type: str
        choices: [installing, joining, joined, deleting]
        required: true
      joined:
        description: When it finished joining (RFC 3339, UTC).
        type: str
      initialized:
        description:
          - The first machine of a cluster only - when C(kubeadm init) finished (RFC 3339, UTC). kubeadm writes
            C(admin.conf) long before, so that file alone does not say it.
        type: str
      init_failed:
        description:
          - The first machine of a cluster only - when a C(kubeadm init) of it was seen failing (RFC 3339, UTC); the
            next run resets it and runs init again (role C(kubeadm_init)).
        type: str
      remediation:
        description:
          - For the replacement of a remediated machine, the remediation it carries on (C(docs/state.md)) until
            its Node holds the same as an annotation.
        type: dict
        suboptions:
          retries:
            description: The retry count of that remediation.
            type: int
            required: true
          last:
            description: When that remediation began (RFC 3339, UTC).
            type: str
            required: true
  kubernetes_dir:
    description: kubeadm's directory, which holds the record.
    type: path
    default: /etc/kubernetes
  leftovers:
    description:
      - With O(state=absent), files and directories the machine left on the host that C(kubeadm reset) does not
        remove (a pod network configuration, the host's etcd snapshots, a kubeadm configuration a killed join left,
        ...), removed in the same round trip before the record, each with the temporary files a write of it killed
        before its rename left beside it (they may hold its secrets). The record goes last, so a run killed in
        between finds it and removes them again.
    type: list
    elements: path
    default: []
attributes:
  check_mode:
    support: full
    description: Says whether the record (and the leftovers) would change, and how with C(--diff), without writing it.
  diff_mode:
    support: full
    description: The record before and after, as JSON.
  platform:
    platforms: posix
    description: Runs on the host; needs only the Python standard library.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: kubeadm.control_plane.machine_info
"""

EXAMPLES = r"""
- name: Record that the machine is joining
  kubeadm.control_plane.machine_record:
    record:
      name: cp-2
      failure_domain: fd-2
      created: "2026-11-26T10:00:00Z"
      bootstrap: join
      version: v1.37.1
      spec_hash: 1f0c2d9e
      step: joining

- name: Give the host back to the pool, without what the machine left on it
  kubeadm.control_plane.machine_record:
    state: absent
    leftovers: [/etc/cni/net.d/99-kcp-bridge.conflist, /var/lib/kubeadm-control-plane/etcd-snapshots]
"""

RETURN = r"""
record:
  description: The record the host keeps now (null once removed).
  returned: always
  type: dict
path:
  description: The record's file.
  returned: always
  type: str
removed:
  description: The leftovers that were there and are removed (would be, in check mode).
  returned: always
  type: list
  elements: str
"""

import json
import os
import shutil

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeadm.control_plane.plugins.module_utils.private_file import partial_writes, replaced_whole

RECORD = "control-plane-machine.json"
FIELDS = dict(
    name=dict(type="str", required=True),
    failure_domain=dict(type="str"),
    created=dict(type="str", required=True),
    bootstrap=dict(type="str", required=True, choices=["init", "join"]),
    version=dict(type="str"),
    spec_hash=dict(type="str"),
    step=dict(type="str", required=True, choices=["installing", "joining", "joined", "deleting"]),
    joined=dict(type="str"),
    initialized=dict(type="str"),
    init_failed=dict(type="str"),
    remediation=dict(type="dict", options=dict(retries=dict(type="int", required=True), last=dict(type="str", required=True))),
)


def read(path):
    """The record's text, or None when there is none."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def write(path, text):
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    with replaced_whole(path) as out:
        out.write(text.encode("utf-8"))


def remove(path):
    """Remove the file or directory tree at ``path`` (a symbolic link itself, not what it points to)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", choices=["present", "absent"], default="present"),
            record=dict(type="dict", options=FIELDS),
            kubernetes_dir=dict(type="path", default="/etc/kubernetes"),
            leftovers=dict(type="list", elements="path", default=[]),
        ),
        required_if=[("state", "present", ["record"])],
        supports_check_mode=True,
    )
    if module.params["leftovers"] and module.params["state"] != "absent":
        module.fail_json(msg="leftovers: removed only with state=absent, with the record")
    path = os.path.join(module.params["kubernetes_dir"], RECORD)
    before = read(path)
    wanted = None
    if module.params["state"] == "present":
        wanted = json.dumps(module.params["record"], indent=2, sort_keys=True) + "\n"
    removed = [found for leftover in module.params["leftovers"]
               for found in ([leftover] if os.path.lexists(leftover) else []) + partial_writes(leftover)]
    changed = before != wanted or bool(removed)
    if changed and not module.check_mode:
        for leftover in removed:
            try:
                remove(leftover)
            except OSError as exc:
                module.fail_json(msg="cannot remove %s, which the machine left on the host: %s (the host record stays)" % (leftover, exc))
        try:
            if wanted is None:
                if before is not None:
                    os.unlink(path)
            else:
                write(path, wanted)
        except OSError as exc:
            module.fail_json(msg="cannot %s the host record %s: %s" % ("write" if wanted else "remove", path, exc))
    module.exit_json(changed=changed, path=path, record=json.loads(wanted) if wanted else None, removed=removed,
                     diff=dict(before=before or "", after=wanted or "", before_header=path, after_header=path))


if __name__ == "__main__":
    main()
