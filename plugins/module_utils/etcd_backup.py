# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a backup decides (docs/disaster-recovery.md): the machine whose etcd member the snapshot is taken through,
whether what ``etcdutl snapshot status`` says of the copy makes it a backup, and which older backups retention
removes. Pure."""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import TRUE
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_client import CONNECTION_ARGUMENT_SPEC
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import evaluate

# etcd_backup's arguments (plugins/modules/etcd_backup.py documents them).
ARGUMENT_SPEC = dict(
    dest_dir=dict(type="path", required=True),
    keep=dict(type="int", default=7),
    max_age_days=dict(type="int", default=0),
    kubernetes_version=dict(type="str", required=True),
    certificates_dir=dict(type="path", default="/etc/kubernetes/pki"),
    vault_id=dict(type="str"),
    etcdutl=dict(type="str", default="etcdutl"),
    host_dir=dict(type="path", default="/var/lib/kubeadm-control-plane/backups"),
    **CONNECTION_ARGUMENT_SPEC
)

# The files of kubeadm's PKI a control plane cannot be rebuilt without, under its certificatesDir: the cluster CA,
# the etcd CA and the front-proxy CA (each certificate and key) and the service account signing key pair. Every
# other certificate is issued from these again by kubeadm.
PKI_FILES = ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd/ca.crt", "etcd/ca.key")


class NoBackupSource(Exception):
    """No etcd member can give a backup now; the message says why."""


def backup_source(snapshot):
    """The machine whose etcd member the backup is taken through: one whose member is healthy (etcd_health), a
    follower before the leader (a snapshot is a long read that the leader's heartbeats should not wait behind), then
    by name. NoBackupSource with the members' problems when there is none."""
    etcd = snapshot.get("etcd") or {}
    if etcd.get("external"):
        raise NoBackupSource("etcd is external: its backup is the etcd operator's (docs/disaster-recovery.md)")
    health = evaluate(etcd, snapshot.get("machines") or [])
    healthy = sorted(name for name, member in health["members_by_machine"].items() if member["status"] == TRUE)
    if not healthy:
        reasons = ["%s: %s" % (name, member["reason"]) for name, member in sorted(health["members_by_machine"].items())]
        raise NoBackupSource("no healthy etcd member to take the backup through (%s)" % ("; ".join(reasons) or "no control plane machine"))
    leaders = {m.get("name") for m in etcd.get("members") or [] if m.get("leader")}
    return sorted(healthy, key=lambda name: (name in leaders, name))[0]


def status_problems(status):
    """What makes ``etcdutl snapshot status -w json``'s answer (``status``) not a backup: no revision, no key, no
    hash. The snapshot's SHA-256 was checked already, when it was saved and again when copied."""
    problems = []
    if not isinstance(status, dict):
        return ["etcdutl gave no status"]
    if not isinstance(status.get("revision"), int) or status["revision"] <= 0:
        problems.append("revision %r: a snapshot of a cluster holds a revision above 0" % status.get("revision"))
    if not isinstance(status.get("totalKey"), int) or status["totalKey"] <= 0:
        problems.append("%r keys: a snapshot of a cluster holds keys" % status.get("totalKey"))
    if not isinstance(status.get("hash"), int):
        problems.append("no hash")
    return problems


def backups_to_remove(backups, keep, max_age, now):
    """The names of the backups retention removes. ``backups``: each ``{name, taken}`` (epoch seconds). The ``keep``
    newest stay (0: no limit by count), and none older than ``max_age`` seconds (None: no limit by age); the newest
    always stays, however old, so retention never leaves a cluster without a backup."""
    ordered = sorted(backups, key=lambda backup: (backup["taken"], backup["name"]), reverse=True)
    removed = []
    for index, backup in enumerate(ordered):
        if index == 0:
            continue
        if (keep and index >= keep) or (max_age is not None and now - backup["taken"] > max_age):
            removed.append(backup["name"])
    return removed


def backup_record(cluster_id, kubernetes_version, machine, taken, snapshot, sha256, pki, pki_encrypted, status):
    """The record written beside a backup (``<time>.json``): what it is of, and what etcdutl says of its snapshot."""
    return {
        "cluster_id": cluster_id,
        "kubernetes_version": kubernetes_version,
        "machine": machine,
        "taken": taken,
        "snapshot": snapshot,
        "sha256": sha256,
        "pki": pki,
        "pki_encrypted": pki_encrypted,
        "etcd": {"revision": status["revision"], "total_keys": status["totalKey"], "total_size": status.get("totalSize"),
                 "hash": status["hash"]},
    }
