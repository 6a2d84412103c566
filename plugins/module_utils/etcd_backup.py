# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a backup decides (docs/disaster-recovery.md): how the snapshot is taken (through which machine, from which
etcd members, with which client files), whether what ``etcdutl snapshot status`` says of the copy makes it a
backup, which PKI goes with it, and which older backups retention removes. Pure."""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import TRUE, all_conditions, all_healthy, node_name
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_access import STACKED_FILES
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
    external=dict(type="bool", default=False),
    **CONNECTION_ARGUMENT_SPEC
)

# The files of kubeadm's PKI a control plane cannot be rebuilt without, under its certificatesDir: the cluster CA,
# the etcd CA and the front-proxy CA (each certificate and key) and the service account signing key pair. Every
# other certificate is issued from these again by kubeadm. With external etcd the etcd CA is not the control plane's
# (its key stays with the etcd operator): the others only.
PKI_FILES = ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd/ca.crt", "etcd/ca.key")
EXTERNAL_PKI_FILES = tuple(name for name in PKI_FILES if not name.startswith("etcd/"))


class NoBackupSource(Exception):
    """No etcd member can give a backup now; the message says why."""


def pki_files(external):
    """The PKI files archived with a backup (``external``: of an external etcd)."""
    return EXTERNAL_PKI_FILES if external else PKI_FILES


def backup_source(snapshot, external_asked=False):
    """How the backup is taken: ``{machine, endpoints, files: {ca_file, cert_file, key_file}, external}``, the
    control plane machine the task runs on, the etcd endpoints asked (the first that gives a whole snapshot is
    taken) and the client files there. NoBackupSource, saying why, when none may be taken now.

    Stacked etcd: through a machine whose member is healthy (etcd_health), a follower before the leader (a snapshot
    is a long read that the leader's heartbeats should not wait behind), then by name, from that member, with
    kubeadm's health check client certificate. External etcd: its backups are its operator's; taken only when
    asked (``external_asked``), while that cluster keeps its quorum and has no alarm, from its followers before its
    leader, through a control plane machine with every component healthy, with the client files the cluster's
    stored ClusterConfiguration names (the API servers')."""
    etcd = snapshot.get("etcd") or {}
    machines = snapshot.get("machines") or []
    health = evaluate(etcd, machines)
    if etcd.get("external"):
        return _external_source(snapshot, etcd, machines, health, external_asked)
    healthy = sorted(name for name, member in health["members_by_machine"].items() if member["status"] == TRUE)
    if not healthy:
        reasons = ["%s: %s" % (name, member["reason"]) for name, member in sorted(health["members_by_machine"].items())]
        raise NoBackupSource("no healthy etcd member to take the backup through (%s)" % ("; ".join(reasons) or "no control plane machine"))
    leaders = {m.get("name") for m in etcd.get("members") or [] if m.get("leader")}
    machine = sorted(healthy, key=lambda name: (name in leaders, name))[0]
    node = node_name(next(m for m in machines if m["name"] == machine))
    member = next(m for m in etcd.get("members") or [] if m.get("name") == node)
    return {"machine": machine, "endpoints": list(member.get("client_urls") or []), "files": dict(STACKED_FILES), "external": False}


def _external_source(snapshot, etcd, machines, health, asked):
    if not asked:
        raise NoBackupSource("etcd is external: its backups are its operator's (docs/disaster-recovery.md); to take one here "
                             "all the same, through a control plane machine with the API servers' client certificate, set "
                             "kcp_backup_external_etcd=true")
    if not health["ok"]:
        raise NoBackupSource("the external etcd cannot give a backup now: %s" % "; ".join(health["problems"]))
    stored = ((snapshot.get("kubeadm_config") or {}).get("cluster_configuration") or {}).get("etcd") or {}
    external = stored.get("external") or {}
    files = {"ca_file": external.get("caFile"), "cert_file": external.get("certFile"), "key_file": external.get("keyFile")}
    if not all(files.values()):
        raise NoBackupSource("the cluster's stored ClusterConfiguration (kubeadm-config) names no etcd.external caFile, certFile "
                             "and keyFile to take the backup with")
    conditions = all_conditions(machines, False, {})
    working = sorted(m["name"] for m in machines if not m.get("deleting") and all_healthy(conditions[m["name"]]))
    if not working:
        raise NoBackupSource("no control plane machine has every component healthy to take the external etcd's backup through")
    answering = [m for m in etcd.get("members") or [] if m.get("responsive") and not m.get("error") and not m.get("learner")]
    endpoints = [url for m in sorted(answering, key=lambda m: bool(m.get("leader"))) for url in m.get("client_urls") or []]
    return {"machine": working[0], "endpoints": endpoints, "files": files, "external": True}


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


def backup_record(cluster_id, kubernetes_version, machine, taken, snapshot, sha256, pki, pki_encrypted, status, external=False):
    """The record written beside a backup (``<time>.json``): what it is of (``external``: an external etcd, whose
    restore is its operator's), and what etcdutl says of its snapshot."""
    return {
        "cluster_id": cluster_id,
        "external_etcd": bool(external),
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
