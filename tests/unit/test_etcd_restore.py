# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A restore from a backup (docs/disaster-recovery.md "Restore"): what verifies a backup, when the restore may go on
a host, which host, the member the restored data is made for (module_utils/etcd_restore.py), and the host module's
steps - each recorded, a run stopped at any of them finished by the next, the old data kept, nothing restored twice.
Real etcd, etcdutl and SSH: tests/e2e/test_disaster_recovery.py."""

import io
import json
import os
import tarfile
import types

import pytest
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_restore
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_restore import (
    REFUSE, RESTORE, RESTORED, manifest_flags, member_restore_arguments, restore_decision, restore_host,
    verification_problems, what_is_lost)
from ansible_collections.kubeadm.control_plane.plugins.modules import etcd_restore as host_module

STATUS = {"hash": 1785309312, "revision": 4821, "totalKey": 1377, "totalSize": 5648384}
RECORD = {"cluster_id": "3f9a0c1d2e4b5a69", "sha256": "ab" * 32, "taken": "2026-11-29T03:00:12Z", "machine": "cp-2",
          "etcd": {"revision": 4821, "total_keys": 1377, "total_size": 5648384, "hash": 1785309312}}
HOST = {"cluster_id": "3f9a0c1d2e4b5a69", "manifest": True, "record": None}
MANIFEST = """apiVersion: v1
kind: Pod
spec:
  containers:
  - command:
    - etcd
    - --advertise-client-urls=https://172.31.233.11:2379
    - --data-dir=/var/lib/etcd
    - --initial-advertise-peer-urls=https://172.31.233.11:2380
    - --initial-cluster=cp-1=https://172.31.233.11:2380
    - --name=cp-1
"""


def test_a_snapshot_that_is_the_one_its_record_describes_verifies():
    assert verification_problems(RECORD, "ab" * 32, STATUS) == []


@pytest.mark.parametrize("sha256, status, problem", [
    ("cd" * 32, STATUS, "is not the record's"),
    ("ab" * 32, None, "etcdutl does not read it as a snapshot"),
    ("ab" * 32, dict(STATUS, revision=4822), "revision 4822, the record 4821"),
    ("ab" * 32, dict(STATUS, hash=1), "hash 1, the record 1785309312"),
    ("ab" * 32, dict(STATUS, totalKey=0), "keys: a snapshot of a cluster holds keys"),
])
def test_a_snapshot_unlike_its_record_is_refused(sha256, status, problem):
    assert problem in "; ".join(verification_problems(RECORD, sha256, status))


def test_a_quorum_that_leaves_out_hosts_of_the_control_plane_is_refused_with_what_it_may_be():
    members, holders = ["cp-1"], ["cp-1", "cp-4", "cp-5"]
    decision, reason = restore_decision(RECORD, "20261129T030012Z", HOST, True, True, False, members, holders)
    assert decision == REFUSE and reason.startswith("etcd has quorum")
    assert "its cluster's members are cp-1, and cp-4, cp-5, which hold the cluster's control plane, are not among them" in reason
    assert "remediate" not in reason and "force the restore" in reason
    # every holder a member: the quorum is the cluster's own
    decision, reason = restore_decision(RECORD, "20261129T030012Z", HOST, True, True, False, ["cp-1", "cp-4", "cp-5"], holders)
    assert decision == REFUSE and "remediate" in reason
    assert restore_decision(RECORD, "20261129T030012Z", HOST, True, True, True, members, holders) == (RESTORE, "forced")


def test_what_is_not_a_backups_record_is_refused():
    assert verification_problems({"snapshot": "x.db"}, "ab" * 32, STATUS) == [
        "the record is not a backup's record (no cluster_id or etcd section)"]


def test_etcd_without_quorum_is_restored_with_quorum_only_when_forced_and_not_on_no_answer():
    assert restore_decision(RECORD, "20261129T030012Z", HOST, True, False, False) == (RESTORE, "etcd has no quorum")
    decision, reason = restore_decision(RECORD, "20261129T030012Z", HOST, True, True, False)
    assert decision == REFUSE and "etcd has quorum" in reason and "remediate" in reason
    assert restore_decision(RECORD, "20261129T030012Z", HOST, True, True, True) == (RESTORE, "forced")
    # no member answered: etcd down everywhere keeps its data (a kubelet outage); nothing is concluded from it
    decision, reason = restore_decision(RECORD, "20261129T030012Z", HOST, False, None, False)
    assert decision == REFUSE and "no etcd member answered" in reason
    assert restore_decision(RECORD, "20261129T030012Z", HOST, False, None, True) == (RESTORE, "forced")


@pytest.mark.parametrize("host, reason", [
    (dict(HOST, cluster_id="0123456789abcdef"), "the backup is of another cluster (etcd CA 3f9a0c1d2e4b5a69; the host's is 0123456789abcdef)"),
    (dict(HOST, cluster_id=None), "the host holds no etcd CA certificate"),
    (dict(HOST, manifest=False), "no etcd static pod manifest"),
])
def test_a_host_of_another_cluster_or_without_etcd_is_refused_even_when_forced(host, reason):
    decision, why = restore_decision(RECORD, "20261129T030012Z", host, True, False, True)
    assert decision == REFUSE and reason in why


def test_a_backup_of_an_external_etcd_is_never_restored_here_even_when_forced():
    decision, reason = restore_decision(dict(RECORD, external_etcd=True), "20261129T030012Z", HOST, True, False, True)
    assert decision == REFUSE and "the backup is of an external etcd cluster: its restore is that cluster's operator's" in reason


def test_a_restore_stopped_half_way_is_finished_and_a_finished_one_never_made_again():
    under_way = dict(HOST, record={"backup": "20261129T030012Z", "step": "stopping"})
    # no member answers while the restore stopped etcd: the run that stopped it finishes it
    assert restore_decision(RECORD, "20261129T030012Z", under_way, False, None, False)[0] == RESTORE
    done = dict(HOST, record={"backup": "20261129T030012Z", "step": "done", "finished": "2026-11-29T05:00:00Z"})
    # the cluster that came back has quorum: the run goes on with what follows, and restores nothing, forced or not
    for force in (False, True):
        decision, reason = restore_decision(RECORD, "20261129T030012Z", done, True, True, force)
        assert decision == RESTORED and "2026-11-29T05:00:00Z" in reason and "/var/lib/kubeadm-control-plane/restore.json" in reason
    # another backup over a cluster that came back: refused, it has quorum
    assert restore_decision(RECORD, "20261130T030012Z", done, True, True, False)[0] == REFUSE


NEW_HOST = {"name": "cp-6", "address": "172.31.233.16", "version": "v1.36.4"}
NEW_RECORD = dict(RECORD, pki="20261129T030012Z.pki.tar.vault", kubernetes_version="v1.36.2")
BARE = {"cluster_id": None, "manifest": False, "record": None}


def test_a_new_host_named_by_the_operator_is_restored_on_when_it_is_bare_and_the_backup_can_start_it():
    assert restore_decision(NEW_RECORD, "20261129T030012Z", BARE, False, None, True, new_host=NEW_HOST) == (RESTORE, "forced")
    assert restore_decision(NEW_RECORD, "20261129T030012Z", BARE, True, False, False, new_host=NEW_HOST) == (RESTORE, "etcd has no quorum")
    # every machine lost: etcd could not be asked, which is no answer
    decision, reason = restore_decision(NEW_RECORD, "20261129T030012Z", BARE, False, None, False, new_host=NEW_HOST, asked=False)
    assert decision == REFUSE and reason.startswith("etcd could not be asked: no host that answers holds its client certificate")
    assert restore_decision(NEW_RECORD, "20261129T030012Z", BARE, False, None, True, new_host=NEW_HOST, asked=False) == (RESTORE, "forced")
    # quorum and no answer are judged as on any host
    assert "no etcd member answered" in restore_decision(NEW_RECORD, "20261129T030012Z", BARE, False, None, False, new_host=NEW_HOST)[1]
    # no new host asked for: a host without the cluster's etcd CA is not one to restore on
    decision, reason = restore_decision(NEW_RECORD, "20261129T030012Z", BARE, False, None, True)
    assert decision == REFUSE and "on a new host only when the operator names it (kcp_restore_host)" in reason
    # a control plane host is one, whatever else is asked
    assert restore_decision(NEW_RECORD, "20261129T030012Z", HOST, True, False, False, new_host=NEW_HOST) == (RESTORE, "etcd has no quorum")
    assert not etcd_restore.as_new_host(HOST, "20261129T030012Z", NEW_HOST)
    assert etcd_restore.as_new_host(BARE, "20261129T030012Z", NEW_HOST) and not etcd_restore.as_new_host(BARE, "20261129T030012Z", None)


@pytest.mark.parametrize("record, host, reason", [
    (NEW_RECORD, dict(BARE, manifest=True), "cp-6 holds an etcd static pod manifest and not the rest of a control plane"),
    (NEW_RECORD, dict(BARE, cluster_id="3f9a0c1d2e4b5a69"), "cp-6 holds the cluster's etcd CA and not the rest of a control plane"),
    (NEW_RECORD, dict(BARE, cluster_id="0123456789abcdef"), "the backup is of another cluster"),
    (dict(NEW_RECORD, pki=None), BARE, "the backup holds no PKI archive"),
    (dict(NEW_RECORD, kubernetes_version="v1.35.9"), BARE,
     "the backup is of Kubernetes v1.35.9 and the spec's version is v1.36.4: a new host runs the backup's minor"),
])
def test_a_new_host_that_holds_something_or_a_backup_that_cannot_start_it_is_refused_even_when_forced(record, host, reason):
    decision, why = restore_decision(record, "20261129T030012Z", host, False, None, True, new_host=NEW_HOST)
    assert decision == REFUSE and reason in why, why


def test_a_new_host_restore_stopped_half_way_is_finished_and_once_done_is_not_made_again():
    # the run stopped after it wrote the PKI: the host holds the cluster's etcd CA and no manifest yet
    under_way = {"cluster_id": "3f9a0c1d2e4b5a69", "manifest": False,
                 "record": {"backup": "20261129T030012Z", "step": "stopping", "new_host": True}}
    assert restore_decision(NEW_RECORD, "20261129T030012Z", under_way, False, None, False, new_host=NEW_HOST)[0] == RESTORE
    assert etcd_restore.as_new_host(under_way, "20261129T030012Z", NEW_HOST)
    # done, kubeadm init to come (or come since): whether the role names it new or not, nothing is restored again
    done = dict(under_way, record=dict(under_way["record"], step="done", finished="2026-11-29T05:00:00Z"))
    for new_host in (NEW_HOST, None):
        assert restore_decision(NEW_RECORD, "20261129T030012Z", done, True, True, False, new_host=new_host)[0] == RESTORED
    # another backup over it: the host holds the cluster's CA now, it is no new host
    assert restore_decision(NEW_RECORD, "20261130T030012Z", done, False, None, True, new_host=NEW_HOST)[0] == REFUSE


def test_the_member_made_on_a_new_host_is_the_one_kubeadm_init_makes_there():
    flags = etcd_restore.new_host_flags("cp-6", "172.31.233.16", "/var/lib/etcd")
    assert member_restore_arguments(flags, "t", False)[:6] == [
        "--name", "cp-6", "--initial-cluster", "cp-6=https://172.31.233.16:2380", "--initial-advertise-peer-urls", "https://172.31.233.16:2380"]
    assert etcd_restore.new_host_flags("cp-6", "fd00::16", "/d")["initial-advertise-peer-urls"] == "https://[fd00::16]:2380"
    assert etcd_restore.data_dir_preflight_check("/var/lib/etcd") == "DirAvailable--var-lib-etcd"
    assert etcd_restore.data_dir_preflight_check("/data/etcd/") == "DirAvailable--data-etcd"


def test_a_pki_archive_is_the_clusters_with_every_file_a_restore_needs(tmp_path):
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_backup import PKI_FILES
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_snapshot import identity_of

    ca = b"-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n"
    files = {name: b"x" for name in PKI_FILES}
    files["etcd/ca.crt"] = ca
    cluster = identity_of(ca)
    assert etcd_restore.pki_problems(files, cluster) == []
    assert etcd_restore.pki_problems(files, "0123456789abcdef") == ["its etcd CA is %s, not the backup's cluster 0123456789abcdef" % cluster]
    lacking = {name: content for name, content in files.items() if name != "sa.key"}
    assert etcd_restore.pki_problems(lacking, cluster) == ["it lacks sa.key"]
    assert "it holds ../x, which is not a file of the PKI a restore needs" in etcd_restore.pki_problems(dict(files, **{"../x": b""}), cluster)


def test_a_backup_is_named_by_its_records_file_name():
    assert etcd_restore.backup_name("/srv/backups/kcp/3f9a0c1d2e4b5a69/20261129T030012Z.json") == "20261129T030012Z"


def test_the_run_says_what_the_restore_loses():
    lost = what_is_lost(RECORD, 1000 + 2 * 3600 + 61, 1000)
    assert lost == ("the cluster goes back to etcd revision 4821, the backup taken 2026-11-29T03:00:12Z (2h 1m 1s ago) "
                    "through cp-2: every object written since (Nodes registered, Leases, workloads, Secrets) is lost")


def test_the_restored_member_is_the_hosts_as_its_manifest_names_it_with_a_new_cluster():
    flags = manifest_flags(MANIFEST)
    assert flags["name"] == "cp-1" and flags["data-dir"] == "/var/lib/etcd"
    assert member_restore_arguments(flags, "restored-cp-1-20261129T050000Z", False) == [
        "--name", "cp-1", "--initial-cluster", "cp-1=https://172.31.233.11:2380",
        "--initial-advertise-peer-urls", "https://172.31.233.11:2380", "--initial-cluster-token", "restored-cp-1-20261129T050000Z"]
    assert member_restore_arguments(flags, "t", True)[-3:] == ["--bump-revision", "1000000000", "--mark-compacted"]
    with pytest.raises(ValueError, match="--name"):
        member_restore_arguments(manifest_flags("- --name=cp-1\n"), "t", False)


def hosts(*specs, restored=None):
    return [{"name": name, "answered": answered, "admin_kubeconfig": control_plane, "etcd_client_credentials": control_plane,
             "restore": (restored or {}).get(name)} for name, answered, control_plane in specs]


def test_the_cluster_comes_back_on_the_first_host_that_answers_and_ran_it_or_the_one_chosen():
    candidates = hosts(("cp-1", False, True), ("cp-2", True, False), ("cp-3", True, True), ("cp-4", True, True))
    assert restore_host(candidates, "b") == "cp-3"
    assert restore_host(candidates, "b", "cp-4") == "cp-4"
    with pytest.raises(ValueError, match="cp-1 does not answer"):
        restore_host(candidates, "b", "cp-1")
    # a host with nothing of a control plane is a new host: taken when named, never chosen for the operator
    assert restore_host(candidates, "b", "cp-2") == "cp-2"
    half = hosts(("cp-2", True, False)) + [{"name": "cp-6", "answered": True, "admin_kubeconfig": True}]
    with pytest.raises(ValueError, match=r"cp-6 holds part of a control plane \(admin.conf\) and not the rest"):
        restore_host(half, "b", "cp-6")
    with pytest.raises(ValueError, match="cp-9 is not one of the control plane candidates"):
        restore_host(candidates, "b", "cp-9")
    with pytest.raises(ValueError, match=r"no candidate that answers holds a control plane .*new host you name with kcp_restore_host \(answered: cp-2\)"):
        restore_host(hosts(("cp-1", False, True), ("cp-2", True, False)), "b")


def test_a_run_again_goes_on_where_the_backup_is_restored_never_on_another_host():
    restored = {"cp-3": {"backup": "b", "step": "stopping"}, "cp-1": {"backup": "an older one", "step": "done"}}
    candidates = hosts(("cp-1", True, True), ("cp-3", True, True), restored=restored)
    assert restore_host(candidates, "b") == "cp-3"
    with pytest.raises(ValueError, match="restored on cp-3 already, not on cp-1"):
        restore_host(candidates, "b", "cp-1")
    restored["cp-1"] = {"backup": "b", "step": "done"}
    with pytest.raises(ValueError, match="cp-1, cp-3 each hold a restore of this backup"):
        restore_host(hosts(("cp-1", True, True), ("cp-3", True, True), restored=restored), "b")


class Stop(Exception):
    """The run is killed here."""


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A control plane host's files under ``tmp_path``: the manifests, etcd's data, the restore's record."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    for name in ("etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"):
        (manifests / name).write_text(name)
    data = tmp_path / "etcd"
    (data / "member").mkdir(parents=True)
    (data / "member" / "old").write_text("the old cluster's data")
    monkeypatch.setattr(etcd_restore, "RECORD", str(tmp_path / "state" / "restore.json"))
    monkeypatch.setattr(etcd_restore, "STOPPED_DIR", str(tmp_path / "stopped"))
    monkeypatch.setattr(host_module, "listening", lambda address, port: False)
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo("member/snap/db")
        content = b"the restored data"
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    return types.SimpleNamespace(root=tmp_path, manifests=manifests, data=data, archive=archive.getvalue())


def run_restore(host, backup="20261129T030012Z"):
    staged = host.root / "restored.tar"
    staged.write_bytes(host.archive)
    params = {"manifests_dir": str(host.manifests), "certificates_dir": str(host.root / "pki"), "stop_timeout": 5}
    module = types.SimpleNamespace(fail_json=lambda **kw: pytest.fail(kw["msg"]))
    record = None
    if os.path.exists(etcd_restore.RECORD):
        with open(etcd_restore.RECORD) as handle:
            record = json.load(handle)
    return host_module.restore(module, params, {"archive": str(staged), "backup": backup, "data_dir": str(host.data),
                                                "address": "127.0.0.1", "expected": record})[0]


def test_the_restore_keeps_the_old_data_aside_puts_the_restored_in_place_and_starts_etcd_again(host):
    kept = run_restore(host)
    assert (host.data / "member" / "snap" / "db").read_text() == "the restored data"
    assert oct(os.stat(host.data / "member").st_mode & 0o777) == "0o700"
    assert open(os.path.join(kept, "old")).read() == "the old cluster's data"
    assert sorted(os.listdir(host.data)) == ["member", os.path.basename(kept)]
    assert sorted(os.listdir(host.manifests)) == ["etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"]
    assert not os.path.exists(etcd_restore.STOPPED_DIR)
    with open(etcd_restore.RECORD) as handle:
        record = json.load(handle)
    assert record["backup"] == "20261129T030012Z" and record["step"] == "done" and record["kept"] == kept
    assert oct(os.stat(etcd_restore.RECORD).st_mode & 0o777) == "0o600"


# each step the host takes, by the call that takes it and which of those calls it is: the record written (os.replace
# 1), the four control plane manifests moved aside (2 to 5), the member's old data moved aside (os.rename 1), the
# restored data extracted and renamed into place (os.rename 2), the record (6), the manifests moved back (7 to 10), the
# record (11)
@pytest.mark.parametrize("call, nth", [("replace", 2), ("replace", 5), ("rename", 1), ("extract", 1), ("rename", 2),
                                       ("replace", 6), ("replace", 8), ("replace", 11)])
def test_a_restore_killed_at_any_step_is_finished_by_the_next_run_the_old_data_kept_once(host, monkeypatch, call, nth):
    real = {"rename": os.rename, "extract": host_module.extract, "replace": os.replace}
    calls = {}

    def killed(*args):
        calls[call] = calls.get(call, 0) + 1
        if calls[call] == nth:
            raise Stop()
        return real[call](*args)

    monkeypatch.setattr(host_module if call == "extract" else os, call, killed)
    with pytest.raises(Stop):
        run_restore(host)
    monkeypatch.undo()
    monkeypatch.setattr(etcd_restore, "RECORD", str(host.root / "state" / "restore.json"))
    monkeypatch.setattr(etcd_restore, "STOPPED_DIR", str(host.root / "stopped"))
    monkeypatch.setattr(host_module, "listening", lambda address, port: False)
    with open(etcd_restore.RECORD) as handle:
        assert etcd_restore.under_way(json.load(handle), "20261129T030012Z")
    kept = run_restore(host)
    assert (host.data / "member" / "snap" / "db").read_text() == "the restored data"
    assert open(os.path.join(kept, "old")).read() == "the old cluster's data"
    assert sorted(os.listdir(host.data)) == ["member", os.path.basename(kept)]
    assert sorted(os.listdir(host.manifests)) == ["etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"]


def test_the_host_refuses_to_go_on_when_another_run_changed_its_record_since_this_one_read_it(host):
    run_restore(host)
    staged = host.root / "restored.tar"
    staged.write_bytes(host.archive)

    def fail_json(msg):
        raise Stop(msg)

    module = types.SimpleNamespace(fail_json=fail_json)
    with pytest.raises(Stop, match="another run restored meanwhile"):
        host_module.restore(module, {"manifests_dir": str(host.manifests), "certificates_dir": str(host.root / "pki"), "stop_timeout": 5},
                            {"archive": str(staged), "backup": "20261129T030012Z", "data_dir": str(host.data),
                             "address": "127.0.0.1", "expected": None})
    assert (host.data / "member" / "snap" / "db").read_text() == "the restored data"


def pki_archive(files):
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return archive.getvalue()


def test_a_new_host_gets_the_backups_pki_private_and_the_restored_data_with_nothing_to_keep(host, monkeypatch):
    for name in os.listdir(host.manifests):
        os.unlink(host.manifests / name)
    bare_data = host.root / "new" / "etcd"  # not there yet: a new host's
    staged, pki = host.root / "restored.tar", host.root / "pki.tar"
    staged.write_bytes(host.archive)
    pki.write_bytes(pki_archive({"ca.key": b"the cluster CA key", "etcd/ca.crt": b"the etcd CA"}))
    module = types.SimpleNamespace(fail_json=lambda **kw: pytest.fail(kw["msg"]))
    params = {"manifests_dir": str(host.manifests), "certificates_dir": str(host.root / "new" / "pki"), "stop_timeout": 5}
    kept, started = host_module.restore(module, params, {"archive": str(staged), "pki": str(pki), "backup": "20261129T030012Z",
                                                         "data_dir": str(bare_data), "address": "127.0.0.1", "expected": None})
    assert kept is None and os.listdir(bare_data) == ["member"]
    assert oct(os.stat(bare_data).st_mode & 0o777) == "0o700"
    assert (host.root / "new" / "pki" / "ca.key").read_bytes() == b"the cluster CA key"
    for path in ("ca.key", "etcd/ca.crt"):
        assert oct(os.stat(host.root / "new" / "pki" / path).st_mode & 0o777) == "0o600"
    for path in ("", "etcd"):
        assert oct(os.stat(host.root / "new" / "pki" / path).st_mode & 0o777) == "0o700"
    with open(etcd_restore.RECORD) as handle:
        record = json.load(handle)
    assert record["new_host"] is True and record["data_dir"] == str(bare_data) and record["kept"] is None and record["step"] == "done"
    assert started == record["started"]
    assert os.listdir(host.manifests) == []


def test_a_pki_written_half_way_is_finished_and_another_pki_on_the_host_is_refused(tmp_path):
    pki = tmp_path / "pki.tar"
    pki.write_bytes(pki_archive({"ca.crt": b"the CA", "sa.key": b"the signing key"}))
    certificates = tmp_path / "pki"
    certificates.mkdir()
    (certificates / "ca.crt").write_bytes(b"the CA")  # a stopped run wrote it
    (certificates / "sa.key.restoring").write_bytes(b"the sig")  # and was writing this one
    host_module.write_pki(str(pki), str(certificates))
    assert sorted(os.listdir(certificates)) == ["ca.crt", "sa.key"]
    assert (certificates / "sa.key").read_bytes() == b"the signing key"
    (certificates / "ca.crt").write_bytes(b"another cluster's CA")
    with pytest.raises(ValueError, match="ca.crt is there and is not the backup's: the host holds another PKI"):
        host_module.write_pki(str(pki), str(certificates))
    evil = tmp_path / "evil.tar"
    evil.write_bytes(pki_archive({"../escape": b"x"}))
    with pytest.raises(ValueError, match="not a file below the certificates directory"):
        host_module.write_pki(str(evil), str(certificates))


def test_restored_data_reaching_outside_its_directory_is_refused(tmp_path):
    archive = tmp_path / "evil.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo("../escape")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ValueError, match="not a file or directory below it"):
        host_module.extract(str(archive), str(tmp_path / "data"))
    assert not os.path.exists(tmp_path / "escape")
