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
    asked=dict(type="bool", default=True),
    quorum=dict(type="bool"),
    force=dict(type="bool", default=False),
    members=dict(type="list", elements="str", default=[]),
    holders=dict(type="list", elements="str", default=[]),
    new_host=dict(type="dict", options=dict(
        name=dict(type="str", required=True),
        address=dict(type="str", required=True),
        version=dict(type="str", required=True),
    )),
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


def restore_decision(record, backup_name, host, answered, quorum, force, members=(), holders=(), new_host=None, asked=True):
    """(decision, reason): whether the backup (``record``, named ``backup_name``) is restored on the host now
    (RESTORE), was restored there already (RESTORED: nothing to do, the run goes on with what follows), or may not be
    (REFUSE). ``host``: what the host holds (``cluster_id`` of its etcd CA, ``manifest`` whether it has an etcd
    manifest, ``record`` the restore recorded there); ``answered``: whether an etcd member answered at all;
    ``quorum``: whether one answered a read through quorum. A restore of this backup under way on the host is finished
    whatever etcd says (its own first step stopped etcd); one finished there is never made again, forced or not.
    Nothing is concluded from no answer: etcd down everywhere (a kubelet or runtime outage) keeps its data. ``members``:
    the names of the members the etcd that answered lists; ``holders``: the hosts that hold the cluster's control plane
    (:func:`control_plane_hosts`): a quorum that leaves some of them out is said to be suspect in the refusal.
    ``new_host``: ``{name, address, version}``, the host as a new host (from the provider): when it holds nothing of a
    control plane, the restore gives it the backup's PKI, and kubeadm init follows there at the spec's ``version``
    (:func:`restore_host` takes such a host only when the operator names it). ``asked``: whether etcd could be asked
    at all (no host that answers may hold its client certificate: every machine lost)."""
    if record.get("external_etcd"):
        return REFUSE, ("the backup is of an external etcd cluster: its restore is that cluster's operator's (etcdutl snapshot "
                        "restore on each of its members, docs/disaster-recovery.md); the control plane's API servers resume once it answers")
    if host.get("cluster_id") and host["cluster_id"] != record["cluster_id"]:
        return REFUSE, "the backup is of another cluster (etcd CA %s; the host's is %s)" % (record["cluster_id"], host["cluster_id"])
    if not restored_as_new_host(host.get("record"), backup_name):
        refusal = _host_refusal(record, host, new_host)
        if refusal:
            return REFUSE, refusal
    if under_way(host.get("record"), backup_name):
        return RESTORE, "a restore of this backup stopped half way on the host: it is finished"
    if done_before(host.get("record"), backup_name):
        return RESTORED, ("this backup was restored on the host at %s: it is not restored again over the cluster that came "
                          "back (to restore it once more, remove %s there)" % (host["record"].get("finished"), RECORD))
    if force:
        return RESTORE, "forced"
    if not asked:
        return REFUSE, ("etcd could not be asked: no host that answers holds its client certificate, and nothing is concluded "
                        "from that. Force the restore once you know the machines are lost for good (their hosts gone, or their "
                        "etcd data)")
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


def _host_refusal(record, host, new_host):
    """Why the restore may not go on the host, which holds no restore of this backup as a new host; None when it may:
    a control plane host of the cluster, or - ``new_host`` given - a host with nothing of a control plane, when the
    backup has the PKI kubeadm init needs and is of the minor the host is to run."""
    # imported here: machine_info reads RECORD on every host each pass, without the spec's validation
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import version_tuple

    if host.get("cluster_id") and host.get("manifest"):
        return None
    if new_host is None:
        if not host.get("cluster_id"):
            return ("the host holds no etcd CA certificate: a restore goes on a control plane host of the cluster (its PKI and "
                    "static pod manifests), or on a new host only when the operator names it (kcp_restore_host)")
        return "the host has no etcd static pod manifest: it does not run the cluster's etcd"
    if host.get("cluster_id") or host.get("manifest"):
        return ("%s holds %s and not the rest of a control plane: neither a machine of the cluster nor a new host; reset it "
                "(kubeadm reset) and remove its PKI, or name another"
                % (new_host["name"], "an etcd static pod manifest" if host.get("manifest") else "the cluster's etcd CA"))
    if not record.get("pki"):
        return "the backup holds no PKI archive: a new host would have no CA of the cluster to start its control plane with"
    recorded, wanted = version_tuple(record.get("kubernetes_version")), version_tuple(new_host["version"])
    if not recorded or not wanted or recorded[:2] != wanted[:2]:
        return ("the backup is of Kubernetes %s and the spec's version is %s: a new host runs the backup's minor (set the "
                "spec's version to it), and the cluster is upgraded once it is back" % (record.get("kubernetes_version"), new_host["version"]))
    return None


def as_new_host(host, backup_name, new_host):
    """Whether the restore on the host is made as on a new host (the backup's PKI given to it, the member named as
    kubeadm init will name it): ``new_host`` given, and the host holds no etcd manifest and no etcd CA but the one a
    restore of this backup as a new host wrote there."""
    return bool(new_host) and not host.get("manifest") and (
        not host.get("cluster_id") or restored_as_new_host(host.get("record"), backup_name))


def under_way(host_record, backup_name):
    """Whether the host's restore record is of this backup and not finished (a run stopped half way)."""
    return bool(host_record) and host_record.get("backup") == backup_name and host_record.get("step") != DONE


def done_before(host_record, backup_name):
    return bool(host_record) and host_record.get("backup") == backup_name and host_record.get("step") == DONE


def restored_as_new_host(host_record, backup_name):
    """Whether the host's restore record is of this backup, made on the host as a new host (under way or done)."""
    return bool(host_record) and host_record.get("backup") == backup_name and bool(host_record.get("new_host"))


def what_is_lost(record, now_epoch, taken_epoch):
    """What the restore loses, said before it acts and reported after."""
    age = max(0, int(now_epoch - taken_epoch))
    return ("the cluster goes back to etcd revision %s, the backup taken %s (%s ago) through %s: every object "
            "written since (Nodes registered, Leases, workloads, Secrets) is lost"
            % (record["etcd"]["revision"], record.get("taken"), _duration(age), record.get("machine")))


def restore_said(restored, new_host=None):
    """What the run says of the restore (``restored``: the module's result of that name) before it goes on:
    why, what is lost, and on a new host (``new_host``: its name) what follows there."""
    said = "%s: %s" % (restored["reason"], restored["lost"])
    if new_host:
        said += (". %s is a new host: its node software is installed and kubeadm init makes its control plane over the "
                 "restored etcd, with the backup's CAs and service-account key" % new_host)
    return said


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


def new_host_flags(name, address, data_dir):
    """The etcd flags (as :func:`manifest_flags` gives them) of the member kubeadm init makes on a new host: named
    after its Node, advertised at its address (kubeadm's localAPIEndpoint), its data in ``data_dir``."""
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import endpoint_address

    return {"name": name, "data-dir": data_dir,
            "initial-advertise-peer-urls": "https://" + endpoint_address({"host": address.strip("[]"), "port": 2380}),
            "advertise-client-urls": "https://" + endpoint_address({"host": address.strip("[]"), "port": 2379})}


def data_dir_preflight_check(data_dir):
    """The name of kubeadm's preflight check that etcd's data directory is empty (DirAvailable--var-lib-etcd): kubeadm
    init on a new host that holds the restored data is told to ignore it, and no other check."""
    return "DirAvailable-" + data_dir.rstrip("/").replace("/", "-")


def pki_problems(files, cluster_id):
    """What makes a backup's PKI archive (``files``: its members' names to their content) not the PKI of the
    cluster ``cluster_id``: a file a restore needs missing, or an etcd CA of another cluster. Empty when it is."""
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_backup import PKI_FILES
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_snapshot import identity_of

    problems = ["it lacks %s" % name for name in PKI_FILES if name not in files]
    extra = sorted(set(files) - set(PKI_FILES))
    if extra:
        problems.append("it holds %s, which is not a file of the PKI a restore needs" % ", ".join(extra))
    if "etcd/ca.crt" in files and identity_of(files["etcd/ca.crt"]) != cluster_id:
        problems.append("its etcd CA is %s, not the backup's cluster %s" % (identity_of(files["etcd/ca.crt"]), cluster_id))
    return problems


def control_plane_hosts(hosts):
    """The names of ``hosts`` (as :func:`restore_host` takes them) that answered and hold a control plane of the
    cluster: its admin kubeconfig and etcd client certificate."""
    return sorted(h["name"] for h in hosts if h.get("answered") and h.get("admin_kubeconfig") and h.get("etcd_client_credentials"))


def restore_host(hosts, backup_name, chosen=None):
    """The host the cluster comes back on: the one that holds a restore of this backup (under way or finished: a run
    again goes on there, never on another), else ``chosen`` (the operator's: a control plane host of the cluster, or a
    new host that holds nothing of a control plane), else the first by name of the hosts that answered and hold the
    cluster's control plane (its admin kubeconfig and etcd client certificate); a new host is taken only when named.
    ``hosts``: each ``{name, answered, admin_kubeconfig, etcd_client_credentials, restore}`` (``restore``: the host's
    restore record). ValueError saying why there is none."""
    fit = set(control_plane_hosts(hosts))
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
        if not found.get("answered"):
            raise ValueError("%s does not answer" % chosen)
        if chosen not in fit and chosen not in holding and (found.get("admin_kubeconfig") or found.get("etcd_client_credentials")):
            raise ValueError("%s holds part of a control plane (%s) and not the rest: neither a machine of the cluster nor a new "
                             "host; reset it (kubeadm reset) or name another"
                             % (chosen, "admin.conf" if found.get("admin_kubeconfig") else "the etcd client certificate"))
        return chosen
    if not fit:
        raise ValueError("no candidate that answers holds a control plane of the cluster (admin.conf and the etcd client "
                         "certificate): a restore goes on a host that ran it, or on a new host you name with "
                         "kcp_restore_host (answered: %s)" % (", ".join(sorted(h["name"] for h in hosts if h.get("answered"))) or "none"))
    return sorted(fit)[0]
