#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_backup
short_description: Back up a kubeadm control plane - an etcd snapshot verified by etcdutl and the PKI a restore needs
version_added: "0.2.0"
description:
  - Run on a control plane host (C(delegate_to)); its action plugin does the work on the controller, in one task.
  - Saves an etcd snapshot through the member at O(endpoints) (module M(kubeadm.control_plane.etcd_snapshot), its
    SHA-256 checked), copies it to the controller into C(<dest_dir>/<cluster id>/<UTC time>.db) (checked again), and
    removes the host's copy.
  - Verifies the copy with C(etcdutl snapshot status) on the controller (O(etcdutl)) and refuses a snapshot without
    a revision, keys or a hash; the backup's files are then removed, and the task fails.
  - Copies the PKI a restore needs from O(certificates_dir) - C(ca.crt), C(ca.key), C(sa.key), C(sa.pub),
    C(front-proxy-ca.crt), C(front-proxy-ca.key), C(etcd/ca.crt), C(etcd/ca.key) (not the last two with O(external))
    - into one tar archive beside the snapshot, C(<UTC time>.pki.tar), or C(<UTC time>.pki.tar.vault) encrypted with
    Ansible Vault when O(vault_id) is given. A snapshot without the CAs cannot rebuild the cluster.
  - Writes the backup's record, C(<UTC time>.json) - the cluster's identity, the Kubernetes version, the machine it
    was taken through, the time, the snapshot's SHA-256 and what etcdutl says of it (revision, keys, size, hash) -
    then removes older backups of the cluster beyond O(keep), or older than O(max_age_days), the newest always kept.
  - Every file is written mode 0600 from its creation, in directories of mode 0700, whole or not at all.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  dest_dir:
    description: The controller's directory of backups; each cluster's go in the subdirectory named by its identity.
    type: path
    required: true
  keep:
    description: How many of the cluster's newest backups to keep; V(0) keeps all.
    type: int
    default: 7
  max_age_days:
    description: Remove the cluster's backups older than this many days (the newest always stays); V(0) keeps them at any age.
    type: int
    default: 0
  kubernetes_version:
    description: The cluster's Kubernetes version, recorded with the backup (a restore needs the same kubeadm).
    type: str
    required: true
  certificates_dir:
    description: Where kubeadm keeps the PKI on the host (the ClusterConfiguration's C(certificatesDir)).
    type: path
    default: /etc/kubernetes/pki
  vault_id:
    description:
      - Encrypt the PKI archive with the run's Ansible Vault secret of this vault id - given to C(ansible-playbook)
        with C(--vault-id <id>@<source>), or by an AWX Vault credential - so that no password is ever an argument;
        V(default) is the secret given without an id (C(--vault-password-file), C(--ask-vault-pass)).
        C(ansible-vault decrypt) with the same secret reads it.
      - Refused, before anything is saved, when the run has no secret of that id. Unset, the archive is not encrypted.
    type: str
  etcdutl:
    description: The C(etcdutl) binary on the controller, a name on C(PATH) or a path.
    type: str
    default: etcdutl
  host_dir:
    description: The directory on the host where the snapshot is written before it is copied, then removed.
    type: path
    default: /var/lib/kubeadm-control-plane/backups
  external:
    description:
      - The snapshot is of an external etcd cluster - O(endpoints) its members, O(ca_file), O(cert_file) and
        O(key_file) the API servers' client files. Its CA is not the control plane's, so the archive holds no
        C(etcd/) file, and the record says C(external_etcd) (its restore is the etcd operator's, never the restore
        flow's). The cluster's identity is then the external cluster's CA.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Says which files it would write and which it would remove; saves and writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
requirements:
  - etcdutl on the controller, of the cluster's etcd minor or newer
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeadm.control_plane.etcd_connection
seealso:
  - module: kubeadm.control_plane.etcd_snapshot
"""

EXAMPLES = r"""
- name: Back up the control plane through cp-2's etcd member
  kubeadm.control_plane.etcd_backup:
    endpoints: ["https://10.0.0.12:2379"]
    dest_dir: /srv/backups/kcp
    kubernetes_version: v1.36.4
    keep: 14
    max_age_days: 30
  delegate_to: cp-2
"""

RETURN = r"""
backup:
  description: The backup's record, as written beside it (in check mode, null).
  returned: success
  type: dict
  sample:
    cluster_id: 3f9a0c1d2e4b5a69
    external_etcd: false
    kubernetes_version: v1.36.4
    machine: cp-2
    taken: "2026-11-29T03:00:12Z"
    snapshot: 20261129T030012Z.db
    sha256: 9c1f...
    pki: 20261129T030012Z.pki.tar.vault
    pki_encrypted: true
    etcd: {revision: 48213, total_keys: 1377, total_size: 5648384, hash: 1785309312}
dir:
  description: The cluster's directory of backups on the controller.
  returned: success
  type: str
removed:
  description: The older backups removed (in check mode, that would be), by the name of their snapshot.
  returned: success
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_backup import ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="etcd_backup runs on the controller through its action plugin")


if __name__ == "__main__":
    main()
