#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_snapshot
short_description: Save an etcd snapshot to a file, checked, and keep the newest few
version_added: "0.1.0"
description:
  - Streams a snapshot of the etcd database from the first of O(endpoints) that gives a whole one, as
    C(etcdctl snapshot save) does, over mutual TLS through etcd's JSON gateway.
  - The snapshot is checked against the SHA-256 etcd appends to it and kept with that checksum, so
    C(etcdutl snapshot restore) verifies it. It is written under a temporary name with mode 0600 (it holds every
    Secret of the cluster) and renamed to O(dest) only once whole; a failed transfer leaves nothing behind.
  - With O(keep), older snapshots in the same directory (files ending in C(.db)) beyond the O(keep) newest are
    removed.
  - With O(controller_dir), the snapshot is then copied over the task's connection to the controller, into the
    subdirectory of O(controller_dir) named by the cluster's identity (RV(cluster_id)), under the same file name,
    in the same task. The copy is checked against the snapshot's SHA-256 and written whole or not at all, with
    mode 0600 in directories of mode 0700. The controller's older copies are rotated by O(keep) as well, except
    the first snapshot the run (the C(ansible-playbook) process) saved there, which is kept besides the O(keep)
    newest, so that a run that saves more than O(keep) (a rollout) still has the state from before it began.
  - The flows save one before every etcd membership change, so that an operator always has the state from just
    before it.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  dest:
    description: The file to write, ending in C(.db). Its directory is made (mode 0700) when it does not exist.
    type: path
    required: true
  controller_dir:
    description:
      - The directory on the controller under which the snapshot is copied, into the subdirectory named by the
        cluster's identity (RV(cluster_id)), under the file name of O(dest). Both are made when they do not exist;
        the subdirectory is given mode 0700.
      - Left out, the snapshot stays where the task runs.
    type: path
  keep:
    description: Keep only this many of the newest C(.db) files in O(dest)'s directory; V(0) keeps all.
    type: int
    default: 0
attributes:
  check_mode:
    support: full
    description: Says which file it would write and writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: Runs wherever the etcd client URLs and the client certificate are, on the controller or a control plane host.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.etcd_connection
notes:
  - O(timeout) bounds each read from the member, not the whole transfer.
  - A member that does not answer, or answers with an error, is skipped for the next one; when none gives a
    whole snapshot the module fails with what each one answered.
seealso:
  - module: kubeadm.control_plane.etcd_member
  - name: etcd disaster recovery
    description: How a snapshot is restored.
    link: https://etcd.io/docs/v3.5/op-guide/recovery/
"""

EXAMPLES = r"""
- name: Save a snapshot before changing membership, keeping the 5 newest
  kubeadm.control_plane.etcd_snapshot:
    endpoints: ["https://{{ ansible_host }}:2379"]
    dest: "/var/lib/etcd-snapshots/before-join-{{ now(utc=true).strftime('%Y%m%dT%H%M%SZ') }}.db"
    keep: 5
"""

RETURN = r"""
path:
  description: The snapshot written (in check mode, the one that would be).
  returned: always
  type: str
bytes:
  description: Its size.
  returned: changed
  type: int
sha256:
  description: The SHA-256 of the file.
  returned: changed
  type: str
endpoint:
  description: The member it was taken from.
  returned: changed
  type: str
removed:
  description: Older snapshots removed to keep O(keep).
  returned: always
  type: list
  elements: str
cluster_id:
  description:
    - The cluster's identity, the first 16 hex digits of the SHA-256 of the etcd CA certificate (O(ca_file)), which
      kubeadm makes for each cluster; two clusters of the same name have different ones. Null when O(ca_file)
      holds no certificate.
  returned: always
  type: str
  sample: 3f9a0c1d2e4b5a69
controller_path:
  description: The copy on the controller (in check mode, the one that would be written).
  returned: when O(controller_dir) is given
  type: str
controller_removed:
  description: The controller's older copies removed to keep O(keep).
  returned: when O(controller_dir) is given
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_client, etcd_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_snapshot import SUFFIX
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import tls_context

ARGUMENT_SPEC = dict(
    dest=dict(type="path", required=True),
    # taken by the action plugin (the copy to the controller); the module never sees it
    controller_dir=dict(type="path"),
    keep=dict(type="int", default=0),
    **etcd_client.CONNECTION_ARGUMENT_SPEC
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    problems = etcd_client.connection_problems(
        params["endpoints"], params["ca_file"], params["cert_file"], params["key_file"], params["timeout"]
    )
    dest = params["dest"]
    directory = os.path.dirname(dest) or "."
    if not dest.endswith(SUFFIX):
        problems.append("dest: must end in %s, the files keep rotates" % SUFFIX)
    if os.path.exists(directory) and not os.path.isdir(directory):
        problems.append("dest: %s is not a directory" % directory)
    if params["keep"] < 0:
        problems.append("keep: must be 0 (keep all) or more")
    if problems:
        module.fail_json(msg="invalid arguments: " + "; ".join(problems), errors=problems)
    cluster_id = etcd_snapshot.cluster_identity(params["ca_file"])
    if module.check_mode:
        module.exit_json(changed=True, path=dest, removed=[], cluster_id=cluster_id)
    if not os.path.isdir(directory):
        os.makedirs(directory, mode=0o700)
    context = tls_context(params["ca_file"], params["cert_file"], params["key_file"])
    try:
        saved = etcd_snapshot.save(params["endpoints"], context, dest, params["timeout"])
    except etcd_snapshot.SnapshotFailed as exc:
        module.fail_json(msg=str(exc), path=dest, removed=[])
    removed = etcd_snapshot.rotate(directory, SUFFIX, params["keep"]) if params["keep"] else []
    module.exit_json(changed=True, path=dest, removed=removed, cluster_id=cluster_id, **saved)


if __name__ == "__main__":
    main()
