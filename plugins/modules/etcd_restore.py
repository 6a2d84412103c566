#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_restore
short_description: Restore a kubeadm control plane's stacked etcd from a backup, as a cluster of one member
version_added: "0.2.0"
description:
  - Run on the control plane host the cluster comes back on (C(delegate_to)); its action plugin verifies the backup
    and makes the restored data directory on the controller, and this module replaces etcd's data on the host.
  - Verifies the backup made by M(kubeadm.control_plane.etcd_backup) whose record is O(backup) - the snapshot's
    SHA-256 and what C(etcdutl snapshot status) says of it (revision, keys, hash) against the record - and refuses
    it, before the host is touched, when they differ or etcdutl cannot read it.
  - Refuses a backup of another cluster (its etcd CA is not the host's) and a host without the cluster's etcd;
    unless O(force), a cluster whose etcd has quorum (O(quorum); a lost machine is remediated, not restored) and
    one no etcd member answered (O(answered); nothing is concluded from no answer). A backup restored on the host
    before is not restored again, forced or not.
  - Makes the data directory of a cluster of one member - the host's, named and addressed as its etcd manifest says,
    with a new cluster ID - with C(etcdutl snapshot restore) on the controller (O(etcdutl)), from a copy of the
    snapshot checked and restored in a private directory beside the backups; with an etcdutl that can (etcd
    3.5.13 and 3.6), the revision is bumped by a billion and the revisions before marked compacted, as etcd's
    guidance for Kubernetes says, so that no watch resumes at a revision that now means something else (without,
    the task warns).
  - On the host, stops etcd, the API server, the controller manager and the scheduler (their static pod manifests
    moved aside; Kubernetes' restore guidance restarts the last two too) and waits until etcd's and the API server's
    ports (2379, 2380, 6443) close, keeps the member's old data aside in the data directory (C(member.before-restore-<UTC time>), never
    deleted by the restore; C(kubeadm reset) of the machine would), puts the restored data in its place (whole, by a
    rename within the data directory, which may be a mount of its own), and starts them again.
  - Each step is recorded on the host (C(/var/lib/kubeadm-control-plane/restore.json)), so that a run stopped half way
    is finished by the next, and a backup restored once is not restored again over a cluster that came back.
  - On a new host (O(new_host)), the backup's PKI is written before the data; there is no manifest to move aside
    and no old data to keep.
  - The restored etcd starts with the backup's objects; everything written after the backup is lost.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  backup:
    description: The backup's record on the controller (C(<backup dir>/<cluster id>/<UTC time>.json)); its snapshot lies beside it.
    type: path
    required: true
  answered:
    description: Whether any member of the cluster's etcd answered (C(summary.answered) of M(kubeadm.control_plane.etcd_info)).
    type: bool
    default: false
  asked:
    description:
      - Whether etcd could be asked at all; false when no host that answers holds its client certificate (every
        machine lost, the restore going on a new host). Like no answer, it is refused unless O(force).
    type: bool
    default: true
  quorum:
    description:
      - Whether a member of the cluster's etcd answers a read through quorum (C(summary.quorum) of
        M(kubeadm.control_plane.etcd_info)); null when no member answered.
    type: bool
  force:
    description: Restore although etcd has quorum or no member answered.
    type: bool
    default: false
  members:
    description:
      - The names of the members the etcd that answered lists (C(etcd.members) of M(kubeadm.control_plane.etcd_info)).
      - With O(holders), what a refusal for quorum says when the cluster that answers leaves out hosts of the control
        plane (a first member that came back on an empty data directory starts a cluster of its own).
    type: list
    elements: str
    default: []
  holders:
    description: The hosts that answered and hold the cluster's control plane (filter M(kubeadm.control_plane.restore_control_plane_hosts)).
    type: list
    elements: str
    default: []
  new_host:
    description:
      - The host as a new host (one from the provider, with nothing of a control plane), for a restore on it.
      - When the host holds neither an etcd CA nor an etcd static pod manifest, the restore goes on it as on a new
        host - refused when the backup has no PKI archive or is of another minor than O(new_host.version) -, writes the
        backup's PKI there (each file created 0600, directories 0700; a file there already must be the backup's),
        decrypted on the controller with the run's vault secrets when encrypted, and makes the member kubeadm init
        will make there. kubeadm init follows (role C(kubeadm.control_plane.restore)).
      - Unset, a host without the cluster's etcd CA and manifest is refused.
    type: dict
    suboptions:
      name:
        description: Its node name, which kubeadm gives its etcd member.
        type: str
        required: true
      address:
        description: The address its etcd advertises (kubeadm's C(localAPIEndpoint.advertiseAddress)).
        type: str
        required: true
      version:
        description: The Kubernetes version kubeadm init installs there (the spec's); its minor must be the backup's.
        type: str
        required: true
  etcdutl:
    description: The etcdutl binary on the controller, of the cluster's etcd minor or newer.
    type: str
    default: etcdutl
  data_dir:
    description: etcd's data directory on the host when its manifest sets no C(--data-dir), and on a new host.
    type: path
    default: /var/lib/etcd
  manifests_dir:
    description: The kubelet's static pod directory on the host.
    type: path
    default: /etc/kubernetes/manifests
  certificates_dir:
    description: Where kubeadm keeps the PKI on the host (the etcd CA names the cluster).
    type: path
    default: /etc/kubernetes/pki
  stop_timeout:
    description: Seconds to wait for etcd and the API server to stop once their manifests are moved aside.
    type: int
    default: 120
  staged:
    description: Set by the action plugin, never by a task - null to read the host, else what to restore there.
    type: dict
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    description: Verifies the backup, reads the host and says what the restore would do; changes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
seealso:
  - module: kubeadm.control_plane.etcd_backup
  - name: Restore (docs/disaster-recovery.md)
    description: When to restore rather than remediate, and what a restore loses.
    link: https://etcd.io/docs/v3.6/op-guide/recovery/
"""

EXAMPLES = r"""
- name: Restore the cluster's etcd on cp-1 from the newest backup
  kubeadm.control_plane.etcd_restore:
    backup: /srv/backups/kcp/3f9a0c1d2e4b5a69/20261129T030012Z.json
    answered: "{{ etcd.summary.answered }}"
    quorum: "{{ etcd.summary.quorum }}"
  delegate_to: cp-1
"""

RETURN = r"""
restored:
  description: The backup restored (in check mode, that would be) and what it loses.
  returned: success
  type: dict
  sample:
    backup: 20261129T030012Z
    revision: 48213
    taken: "2026-11-29T03:00:12Z"
    lost: "the cluster goes back to etcd revision 48213, the backup taken 2026-11-29T03:00:12Z (2h 10m ago) ..."
    reason: etcd has no quorum
    bumped: true
kept:
  description: Where the member's old data was kept on the host; null when nothing was restored or there was none.
  returned: success
  type: str
restored_at:
  description:
    - When the restore started on the host (its clock, UTC); null in check mode. Every control plane pod's status
      the kubelet posted after the restore is from this time on; one from before is what the backup held.
  returned: success
  type: str
  sample: "2026-11-29T05:00:00Z"
said:
  description: What the run says before it goes on - why, what is lost, and on a new host what follows there.
  returned: success
  type: str
new_host:
  description: Whether the restore is (was) made on the host as on a new host, whose control plane kubeadm init makes next.
  returned: success
  type: bool
ignore_preflight_errors:
  description: The kubeadm preflight checks the kubeadm init on a new host ignores (the data directory the restore filled); empty otherwise.
  returned: success
  type: list
  elements: str
  sample: [DirAvailable--var-lib-etcd]
"""

import contextlib
import fcntl
import json
import os
import shutil
import socket
import tarfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_restore, private_file
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_snapshot import cluster_identity

# the ports of what a restore must see stopped before it replaces the data: etcd's client and peer ports and the API
# server's (kubeadm's; the controller manager and the scheduler restart with them, but touch no data)
STOPPED_PORTS = (2379, 2380, 6443)


def read_host(params):
    """What the restore needs to know of the host: its etcd CA's identity, its etcd manifest (text, from the
    manifests directory or where a stopped restore left it) and the restore recorded there."""
    manifest = None
    for directory in (params["manifests_dir"], etcd_restore.STOPPED_DIR):
        path = os.path.join(directory, "etcd.yaml")
        if os.path.exists(path):
            with open(path) as handle:
                manifest = handle.read()
            break
    record = None
    if os.path.exists(etcd_restore.RECORD):
        with open(etcd_restore.RECORD) as handle:
            record = json.load(handle)
    return {"cluster_id": cluster_identity(os.path.join(params["certificates_dir"], "etcd", "ca.crt")),
            "manifest": manifest, "record": record}


def write_record(record):
    os.makedirs(os.path.dirname(etcd_restore.RECORD), mode=0o700, exist_ok=True)
    with private_file.replaced_whole(etcd_restore.RECORD) as out:
        out.write(json.dumps(record, sort_keys=True).encode())


def listening(host, port):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def extract(archive, dest):
    """The restored data directory in ``archive`` (a tar the action plugin made) into ``dest``, mode 0700; only
    plain files and directories below it are taken."""
    os.mkdir(dest, 0o700)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
                raise ValueError("the restored data holds %s, which is not a file or directory below it" % member.name)
            target = os.path.join(dest, member.name)
            # each directory private, as etcd makes its own (os.makedirs gives those above the last the umask's mode)
            for depth in range(1, len(parts) + (1 if member.isdir() else 0)):
                directory = os.path.join(dest, *parts[:depth])
                if not os.path.isdir(directory):
                    os.mkdir(directory, 0o700)
            if member.isdir():
                continue
            source = tar.extractfile(member)
            with os.fdopen(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out:
                shutil.copyfileobj(source, out)
                out.flush()
                os.fsync(out.fileno())
    for directory, _subdirectories, _files in os.walk(dest):
        synced(directory)


def write_pki(archive, certificates_dir):
    """The backup's PKI (a tar the action plugin checked) written into ``certificates_dir`` on a new host: each file
    created 0600 under a name of its own, then renamed into place; directories 0700. A file there already is kept when
    it is the backup's (a run stopped half way wrote it) and refused when it is not."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.isfile() or member.name.startswith("/") or ".." in member.name.split("/"):
                raise ValueError("the backup's PKI holds %s, which is not a file below the certificates directory" % member.name)
            content = tar.extractfile(member).read()
            target = os.path.join(certificates_dir, member.name)
            if os.path.exists(target):
                with open(target, "rb") as handle:
                    if handle.read() != content:
                        raise ValueError("%s is there and is not the backup's: the host holds another PKI" % target)
                continue
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            partial = target + ".restoring"
            if os.path.exists(partial):
                os.unlink(partial)  # a run stopped while it wrote it
            with os.fdopen(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out:
                out.write(content)
                out.flush()
                os.fsync(out.fileno())
            os.rename(partial, target)
            synced(os.path.dirname(target))


def synced(directory):
    """A directory's entries on disk (a rename or a new file in it survives a power cut once this returns)."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


@contextlib.contextmanager
def one_at_a_time():
    """Held while the host's steps run: a run killed on the controller may leave its module running on the host, and
    the next run's waits until it ended (the lock goes with its process)."""
    os.makedirs(os.path.dirname(etcd_restore.RECORD), mode=0o700, exist_ok=True)
    with open(etcd_restore.RECORD + ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def restore(module, params, staged):
    """The host's steps, each recorded: stop etcd and the API server, keep the old data aside, put the restored data
    in place, start them again. What a stopped run did is not done again. (where the old data was kept, when the
    restore started on the host's clock)."""
    with one_at_a_time():
        return _restore(module, params, staged)


def _restore(module, params, staged):
    backup, data_dir = staged["backup"], staged["data_dir"]
    record = read_host(params)["record"]
    if record != staged["expected"]:
        module.fail_json(msg="the host's restore record changed since this run read it (another run restored meanwhile): "
                         "nothing was changed; run again to see where the restore stands")
    if not etcd_restore.under_way(record, backup):
        # inside the data directory, which may be a mount of its own (a disk for etcd): a rename, never a copy
        record = {"backup": backup, "started": now(), "step": "stopping", "new_host": bool(staged.get("pki")), "data_dir": data_dir,
                  "kept": os.path.join(data_dir, "member.before-restore-%s" % time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))}
        write_record(record)
    if staged.get("pki"):
        write_pki(staged["pki"], params["certificates_dir"])
    os.makedirs(etcd_restore.STOPPED_DIR, mode=0o700, exist_ok=True)
    for manifest in etcd_restore.STOPPED_PODS:
        if os.path.exists(os.path.join(params["manifests_dir"], manifest)):
            os.replace(os.path.join(params["manifests_dir"], manifest), os.path.join(etcd_restore.STOPPED_DIR, manifest))
    deadline = time.monotonic() + params["stop_timeout"]
    while any(listening(host, port) for host in ("127.0.0.1", staged["address"]) for port in STOPPED_PORTS):
        if time.monotonic() > deadline:
            module.fail_json(msg="etcd and the API server did not stop within %ss of their manifests being moved to %s; "
                             "nothing else was changed, and the next run goes on from here" % (params["stop_timeout"], etcd_restore.STOPPED_DIR))
        time.sleep(0.5)
    member, restoring = os.path.join(data_dir, "member"), os.path.join(data_dir, "restoring")
    if not os.path.isdir(data_dir):
        os.makedirs(data_dir, mode=0o700)  # a new host's: kubeadm makes it so
    if record["step"] == "stopping" and os.path.exists(member) and not os.path.exists(record["kept"]):
        os.rename(member, record["kept"])
    if not os.path.exists(member):
        if os.path.exists(restoring):
            shutil.rmtree(restoring)
        extract(staged["archive"], restoring)
        os.rename(os.path.join(restoring, "member"), member)
        synced(data_dir)
    if os.path.isdir(restoring):
        shutil.rmtree(restoring)  # emptied by the rename (a run stopped right after it left it)
    record["step"] = "started"
    if record["kept"] and not os.path.exists(record["kept"]):
        record["kept"] = None  # nothing was there to keep (a new host, a wiped disk)
    write_record(record)
    for manifest in etcd_restore.STOPPED_PODS:
        if os.path.exists(os.path.join(etcd_restore.STOPPED_DIR, manifest)):
            os.replace(os.path.join(etcd_restore.STOPPED_DIR, manifest), os.path.join(params["manifests_dir"], manifest))
    os.rmdir(etcd_restore.STOPPED_DIR)
    record.update(step=etcd_restore.DONE, finished=now())
    write_record(record)
    return record["kept"], record["started"]


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def main():
    module = AnsibleModule(argument_spec=dict(etcd_restore.ARGUMENT_SPEC, staged=dict(type="dict")), supports_check_mode=True)
    params, staged = module.params, module.params["staged"]
    try:
        if not staged:
            module.exit_json(changed=False, host=read_host(params))
        kept, started = restore(module, params, staged)
    except (OSError, ValueError, KeyError, tarfile.TarError) as exc:
        module.fail_json(msg="the restore stopped on the host: %s; the next run goes on from where it stopped" % exc)
    finally:
        for part in ("archive", "pki"):
            if staged and staged.get(part) and os.path.exists(staged[part]):
                os.unlink(staged[part])
    module.exit_json(changed=True, kept=kept, started=started)


if __name__ == "__main__":
    main()
