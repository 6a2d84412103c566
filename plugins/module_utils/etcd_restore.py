# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a restore from a backup decides (docs/disaster-recovery.md "Restore"): whether the backup's snapshot is the
one its record describes, whether the restore may go on the host (quorum, cluster identity, a restore of it done
before), what it loses, and the flags of the member the restored data directory is made for. Pure."""

from __future__ import annotations

import re

# etcd_restore's arguments (plugins/modules/etcd_restore.py documents them).
ARGUMENT_SPEC = dict(
    backup=dict(type="path", required=True),
    answered=dict(type="bool", default=False),
    quorum=dict(type="bool"),
    force=dict(type="bool", default=False),
    members=dict(type="list", elements="str", default=[]),
    holders=dict(type="list", elements="str", default=[]),
    etcdutl=dict(type="str", default="etcdutl"),
    data_dir=dict(type="path", default="/var/lib/etcd"),
    manifests_dir=dict(type="path", default="/etc/kubernetes/manifests"),
    certificates_dir=dict(type="path", default="/etc/kubernetes/pki"),
    stop_timeout=dict(type="int", default=120),
)

# The static pods a restore stops while it replaces etcd's data: etcd, the API server whose watch cache would otherwise
# keep serving what the restore takes back, and the controller manager and scheduler, which Kubernetes' restore
# guidance restarts so that they rely on no state the restore took back.
STOPPED_PODS = ("etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml")
# Where the host keeps the record of the restore made there (a killed restore is finished from it, and a finished
# one is not made twice), and where the stopped pods' manifests wait.
RECORD = "/var/lib/kubeadm-control-plane/restore.json"
STOPPED_DIR = "/etc/kubernetes/stopped-by-restore"
# The revision etcd's Kubernetes restore guidance bumps by (etcdutl --bump-revision, with --mark-compacted): the
# restored revisions then go forward, so that no watch resumes at a revision that now means something else.
BUMP_REVISION = 1000000000
DONE = "done"


def backup_name(record_path):
    """The name of the backup whose record is ``record_path`` (``<dir>/<UTC time>.json``): its UTC time."""
    name = record_path.rstrip("/").rsplit("/", 1)[-1]
    return name[:-len(".json")] if name.endswith(".json") else name


def verification_problems(record, sha256, status):
    """What makes a backup's snapshot not the one its record describes: ``sha256`` of the file, ``status`` what
    ``etcdutl snapshot status -w json`` says of it (None: etcdutl refused it). Empty when it is."""
    # imported here: machine_info reads RECORD on every host each pass, without the etcd client etcd_backup brings
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_backup import status_problems

    if not isinstance(record, dict) or not record.get("cluster_id") or not isinstance(record.get("etcd"), dict):
        return ["the record is not a backup's record (no cluster_id or etcd section)"]
    problems = []
    if sha256 != record.get("sha256"):
        problems.append("its SHA-256 %s is not the record's %s (the file changed since the backup)" % (sha256, record.get("sha256")))
    if status is None:
        problems.append("etcdutl does not read it as a snapshot")
        return problems
    problems += status_problems(status)
    recorded = record["etcd"]
    for field, key in (("revision", "revision"), ("total_keys", "totalKey"), ("hash", "hash")):
        if status.get(key) != recorded.get(field):
            problems.append("etcdutl gives %s %r, the record %r" % (field, status.get(key), recorded.get(field)))
    return problems


RESTORE, RESTORED, REFUSE = "restore", "restored", "refuse"


def restore_decision(record, backup_name, host, answered, quorum, force, members=(), holders=()):
    """(decision, reason): whether the backup (``record``, named ``backup_name``) is restored on the host now
    (RESTORE), was restored there already (RESTORED: nothing to do, the run goes on with what follows), or may not be
    (REFUSE). ``host``: what the host holds (``cluster_id`` of its etcd CA, ``manifest`` whether it has an etcd
    manifest, ``record`` the restore recorded there); ``answered``: whether an etcd member answered at all;
    ``quorum``: whether one answered a read through quorum. A restore of this backup under way on the host is finished
    whatever etcd says (its own first step stopped etcd); one finished there is never made again, forced or not.
    Nothing is concluded from no answer: etcd down everywhere (a kubelet or runtime outage) keeps its data. ``members``:
    the names of the members the etcd that answered lists; ``holders``: the hosts that hold the cluster's control plane
    (:func:`control_plane_hosts`): a quorum that leaves some of them out is said to be suspect in the refusal."""
    if not host.get("cluster_id"):
        return REFUSE, ("the host holds no etcd CA certificate: a restore goes on a control plane host of the cluster "
                        "(its PKI and static pod manifests), not on a new host")
    if host["cluster_id"] != record["cluster_id"]:
        return REFUSE, "the backup is of another cluster (etcd CA %s; the host's is %s)" % (record["cluster_id"], host["cluster_id"])
    if not host.get("manifest"):
        return REFUSE, "the host has no etcd static pod manifest: it does not run the cluster's etcd"
    if under_way(host.get("record"), backup_name):
        return RESTORE, "a restore of this backup stopped half way on the host: it is finished"
    if done_before(host.get("record"), backup_name):
        return RESTORED, ("this backup was restored on the host at %s: it is not restored again over the cluster that came "
                          "back (to restore it once more, remove %s there)" % (host["record"].get("finished"), RECORD))
    if force:
        return RESTORE, "forced"
    if not answered:
        return REFUSE, ("no etcd member answered: nothing is concluded from no answer (etcd down everywhere, a kubelet or "
                        "container runtime outage, keeps its data: bring it back). Force the restore once you know the "
                        "members' data is lost")
    if quorum:
        outside = sorted(set(holders) - set(members))
        if outside:
            return REFUSE, ("etcd has quorum: a member answers reads through it, but its cluster's members are %s, and %s, which "
                            "hold the cluster's control plane, are not among them. A first member that comes back on an empty "
                            "data directory starts a new, empty cluster of its own (kubeadm init's manifest): if the members' "
                            "data is lost, force the restore" % (", ".join(sorted(members)) or "none", ", ".join(outside)))
        return REFUSE, ("etcd has quorum: a member answers reads through it. A cluster with quorum loses no data to a lost "
                        "machine: remediate it (playbooks/remediate.yml); force the restore to take the cluster back to the "
                        "backup anyway")
    return RESTORE, "etcd has no quorum"


def under_way(host_record, backup_name):
    """Whether the host's restore record is of this backup and not finished (a run stopped half way)."""
    return bool(host_record) and host_record.get("backup") == backup_name and host_record.get("step") != DONE


def done_before(host_record, backup_name):
    return bool(host_record) and host_record.get("backup") == backup_name and host_record.get("step") == DONE


def what_is_lost(record, now_epoch, taken_epoch):
    """What the restore loses, said before it acts and reported after."""
    age = max(0, int(now_epoch - taken_epoch))
    return ("the cluster goes back to etcd revision %s, the backup taken %s (%s ago) through %s: every object "
            "written since (Nodes registered, Leases, workloads, Secrets) is lost"
            % (record["etcd"]["revision"], record.get("taken"), _duration(age), record.get("machine")))


def _duration(seconds):
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")]
    return " ".join("%d%s" % (value, unit) for value, unit in parts if value) or "0s"


_FLAG = re.compile(r"^\s*-\s*--([a-z0-9-]+)=(\S*)\s*$", re.MULTILINE)


def manifest_flags(manifest):
    """The ``--flag=value`` arguments of a static pod manifest (text), by flag name."""
    return {name: value.strip("'\"") for name, value in _FLAG.findall(manifest or "")}


def member_restore_arguments(flags, token, bump):
    """etcdutl snapshot restore's arguments, after the snapshot and the data directory, that make the data
    directory of a one-member cluster for the etcd the manifest's ``flags`` run: its name and peer URL, and the
    cluster ``token`` (a new one each restore: a new cluster ID, which members of an earlier cluster cannot join).
    ``bump``: etcdutl can bump the revision (--bump-revision, etcd 3.5.13 and 3.6). ValueError when the manifest lacks
    the name or the peer URL."""
    name, peer = flags.get("name"), flags.get("initial-advertise-peer-urls")
    if not name or not peer:
        raise ValueError("the etcd manifest sets no --name or --initial-advertise-peer-urls")
    arguments = ["--name", name, "--initial-cluster", "%s=%s" % (name, peer), "--initial-advertise-peer-urls", peer,
                 "--initial-cluster-token", token]
    if bump:
        arguments += ["--bump-revision", str(BUMP_REVISION), "--mark-compacted"]
    return arguments


def control_plane_hosts(hosts):
    """The names of ``hosts`` (as :func:`restore_host` takes them) that answered and hold a control plane of the
    cluster: its admin kubeconfig and etcd client certificate."""
    return sorted(h["name"] for h in hosts if h.get("answered") and h.get("admin_kubeconfig") and h.get("etcd_client_credentials"))


def restore_host(hosts, backup_name, chosen=None):
    """The host the cluster comes back on: the one that holds a restore of this backup (under way or finished: a run
    again goes on there, never on another), else ``chosen`` (the operator's), else the first by name of the hosts that
    answered and hold the cluster's control plane (its admin kubeconfig and etcd client certificate). ``hosts``: each
    ``{name, answered, admin_kubeconfig, etcd_client_credentials, restore}`` (``restore``: the host's restore record).
    ValueError saying why there is none."""
    holders = set(control_plane_hosts(hosts))
    fit = {h["name"]: h for h in hosts if h["name"] in holders}
    holding = sorted(h["name"] for h in hosts if (h.get("restore") or {}).get("backup") == backup_name)
    if len(holding) > 1:
        raise ValueError("%s each hold a restore of this backup: there is one cluster to bring back; remove the record "
                         "(%s) of the host that is not to be it" % (", ".join(holding), RECORD))
    if holding:
        if chosen and chosen != holding[0]:
            raise ValueError("this backup is restored on %s already, not on %s: the run goes on there" % (holding[0], chosen))
        chosen = holding[0]
    if chosen:
        found = {h["name"]: h for h in hosts}.get(chosen)
        if found is None:
            raise ValueError("%s is not one of the control plane candidates" % chosen)
        if chosen not in fit:
            raise ValueError("%s %s" % (chosen, "does not answer" if not found.get("answered") else
                                        "holds no control plane of the cluster (admin.conf and the etcd client certificate)"))
        return chosen
    if not fit:
        raise ValueError("no candidate that answers holds a control plane of the cluster (admin.conf and the etcd client "
                         "certificate): a restore goes on a host that ran it (answered: %s)"
                         % (", ".join(sorted(h["name"] for h in hosts if h.get("answered"))) or "none"))
    return sorted(fit)[0]
