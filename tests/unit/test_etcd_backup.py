# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A backup (docs/disaster-recovery.md): the member it is taken through, what makes etcdutl's answer a backup, what
retention removes (module_utils/etcd_backup.py), and the etcd_backup action plugin's files on the controller - each
0600 in a 0700 directory, the host's copy removed, nothing left by a backup that fails, the PKI encrypted with the
run's vault secret. Real etcd, etcdutl and SSH: tests/e2e/test_certificates.py."""

import hashlib
import io
import json
import os
import stat
import tarfile
import types

import pytest
from ansible.errors import AnsibleConnectionFailure
from ansible.parsing.vault import VaultLib, VaultSecret
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.action.etcd_backup import ActionModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_backup import (
    PKI_FILES, NoBackupSource, backup_source, backups_to_remove, pki_files, status_problems)
from ansible_collections.kubeadm.control_plane.tests.unit.builders import control_plane, member, snapshot

SNAPSHOT = b"etcd snapshot bytes"
STATUS = {"hash": 1785309312, "revision": 4821, "totalKey": 1377, "totalSize": 5648384}


def members(*specs):
    return [member(name, leader=leader, responsive=responsive) for name, leader, responsive in specs]


def test_a_healthy_follower_is_chosen_before_the_leader_and_asked_with_kubeadm_s_health_check_client():
    machines = control_plane(3, "h")
    chosen = backup_source(snapshot(machines, members(("cp-1", True, True), ("cp-2", False, True), ("cp-3", False, True))))
    assert chosen == {"machine": "cp-2", "endpoints": ["https://cp-2:2379"], "external": False,
                      "files": {"ca_file": "/etc/kubernetes/pki/etcd/ca.crt", "cert_file": "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                                "key_file": "/etc/kubernetes/pki/etcd/healthcheck-client.key"}}
    chosen = backup_source(snapshot(machines, members(("cp-1", False, False), ("cp-2", True, True), ("cp-3", False, False))))
    assert chosen["machine"] == "cp-2"


def test_no_healthy_member_is_a_refusal_naming_each_member_s_problem():
    machines = control_plane(2, "h")
    with pytest.raises(NoBackupSource, match="no healthy etcd member to take the backup through .cp-1: .*; cp-2: "):
        backup_source(snapshot(machines, members(("cp-1", True, False), ("cp-2", False, False))))


STORED_EXTERNAL = {"kubernetes_version": "v1.36.4", "cluster_configuration": {"etcd": {"external": {
    "endpoints": ["https://10.0.1.11:2379"], "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
    "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt", "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}}}


def external(*specs):
    """An external cluster: (name, leader, responsive) each; its members belong to no machine."""
    return [member(name, leader=leader, responsive=responsive) for name, leader, responsive in specs]


def test_an_external_etcd_is_backed_up_only_when_asked_from_its_followers_with_the_api_servers_client_files():
    cluster = snapshot(control_plane(2, "h"), external(("etcd-1", True, True), ("etcd-2", False, True), ("etcd-3", False, False)),
                       external=True, kubeadm_config=STORED_EXTERNAL)
    with pytest.raises(NoBackupSource, match="etcd is external: its backups are its operator's .* kcp_backup_external_etcd=true"):
        backup_source(cluster)
    assert backup_source(cluster, external_asked=True) == {
        "machine": "cp-1", "endpoints": ["https://etcd-2:2379", "https://etcd-1:2379"], "external": True,
        "files": {"ca_file": "/etc/kubernetes/pki/etcd/ca.crt", "cert_file": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                  "key_file": "/etc/kubernetes/pki/apiserver-etcd-client.key"}}


@pytest.mark.parametrize("members_, stored, machines, refusal", [
    ((("etcd-1", True, True), ("etcd-2", False, False), ("etcd-3", False, False)), STORED_EXTERNAL, control_plane(2, "h"),
     "the external etcd cannot give a backup now: the external etcd cluster has no quorum"),
    ((("etcd-1", True, True),), {"kubernetes_version": "v1.36.4"}, control_plane(2, "h"),
     "names no etcd.external caFile, certFile and keyFile"),
    ((("etcd-1", True, True),), STORED_EXTERNAL, [dict(m, components=dict(m["components"], api_server="unhealthy"))
                                                  for m in control_plane(2, "h")],
     "no control plane machine has every component healthy"),
], ids=["no quorum", "no client files stored", "no working machine"])
def test_an_external_etcd_backup_asked_for_is_refused_when_it_cannot_be_taken_well(members_, stored, machines, refusal):
    with pytest.raises(NoBackupSource, match=refusal):
        backup_source(snapshot(machines, external(*members_), external=True, kubeadm_config=stored), external_asked=True)


def test_the_pki_of_an_external_etcd_s_backup_leaves_out_the_etcd_ca():
    assert pki_files(False) == PKI_FILES
    assert pki_files(True) == ("ca.crt", "ca.key", "sa.key", "sa.pub", "front-proxy-ca.crt", "front-proxy-ca.key")


@pytest.mark.parametrize("status, problem", [
    (dict(STATUS, revision=0), "revision 0"),
    (dict(STATUS, totalKey=0), "0 keys"),
    ({"revision": 5, "totalKey": 3}, "no hash"),
    (None, "etcdutl gave no status"),
])
def test_a_status_without_revision_keys_or_hash_is_no_backup(status, problem):
    assert problem in " ".join(status_problems(status))
    assert status_problems(STATUS) == []


def test_retention_keeps_the_newest_by_count_and_age_and_never_the_last_one():
    backups = [{"name": "b%d" % day, "taken": day * 86400} for day in range(10)]
    assert backups_to_remove(backups, 3, None, 10 * 86400) == ["b6", "b5", "b4", "b3", "b2", "b1", "b0"]
    assert backups_to_remove(backups, 0, 4.5 * 86400, 10 * 86400) == ["b5", "b4", "b3", "b2", "b1", "b0"]
    assert backups_to_remove(backups, 0, None, 10 * 86400) == []
    assert backups_to_remove(backups[:1], 1, 1, 100 * 86400) == []  # the only one stays, however old


class Host:
    """The control plane host: its files, fetched over the task's connection."""

    def __init__(self, files):
        self.files, self.become = dict(files), False

    def fetch_file(self, source, dest):
        assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
        with open(dest, "wb") as out:
            out.write(self.files[source])


PKI = {"/etc/kubernetes/pki/" + name: ("%s contents" % name).encode() for name in PKI_FILES}


def plugin(tmp_path, secrets=(), status=None, check_mode=False, **args):
    etcdutl = tmp_path / "etcdutl"
    etcdutl.write_text("#!/bin/sh\necho '%s'\n" % json.dumps(status or STATUS))
    etcdutl.chmod(0o755)
    action = ActionModule.__new__(ActionModule)
    action._connection = Host(PKI)
    action._task = types.SimpleNamespace(args=dict(endpoints=["https://10.0.0.12:2379"], dest_dir=str(tmp_path / "backups"),
                                                   kubernetes_version="v1.36.4", keep=2, etcdutl=str(etcdutl), **args),
                                         delegate_to="cp-2", check_mode=check_mode, diff=False, async_val=0)
    action._play_context = types.SimpleNamespace(check_mode=check_mode)
    action._loader = types.SimpleNamespace(_vault=types.SimpleNamespace(secrets=list(secrets)))
    action.modules_run = []

    def execute_module(module_name, module_args, task_vars):
        action.modules_run.append((module_name, module_args))
        if module_name == "kubeadm.control_plane.etcd_snapshot":
            action._connection.files[module_args["dest"]] = SNAPSHOT
            return {"changed": True, "path": module_args["dest"], "sha256": hashlib.sha256(SNAPSHOT).hexdigest(), "cluster_id": "3f9a0c1d2e4b5a69"}
        return {"changed": True}

    action._execute_module = execute_module
    return action


@pytest.fixture(autouse=True)
def base_run(monkeypatch):
    """ActionBase.run's own checks need a whole task; the plugin's are what is tested here."""
    monkeypatch.setattr(ActionBase, "run", lambda self, tmp=None, task_vars=None: {})


def run(action):
    return action.run(task_vars={"inventory_hostname": "cp-1"})


def test_a_backup_is_the_snapshot_the_pki_and_its_record_each_private(tmp_path):
    action = plugin(tmp_path)
    result = run(action)
    assert result["changed"] and not result.get("failed"), result
    directory = tmp_path / "backups" / "3f9a0c1d2e4b5a69"
    assert result["dir"] == str(directory) and stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    name = result["backup"]["snapshot"][:-len(".db")]
    assert sorted(os.listdir(directory)) == [name + ".db", name + ".json", name + ".pki.tar"]
    assert all(stat.S_IMODE(os.stat(directory / entry).st_mode) == 0o600 for entry in os.listdir(directory))
    assert (directory / (name + ".db")).read_bytes() == SNAPSHOT
    record = json.loads((directory / (name + ".json")).read_text())
    assert record == result["backup"]
    assert (record["machine"], record["kubernetes_version"], record["pki_encrypted"]) == ("cp-2", "v1.36.4", False)
    assert record["etcd"] == {"revision": 4821, "total_keys": 1377, "total_size": 5648384, "hash": 1785309312}
    with tarfile.open(directory / (name + ".pki.tar")) as tar:
        assert sorted(tar.getnames()) == sorted(PKI_FILES)
        assert tar.extractfile("etcd/ca.key").read() == b"etcd/ca.key contents"
    # the host's copy is removed once copied
    saved = action.modules_run[0][1]["dest"]
    assert action.modules_run[-1] == ("ansible.legacy.file", {"path": saved, "state": "absent"})


def test_an_external_etcd_s_backup_holds_no_etcd_ca_and_says_it_is_external(tmp_path):
    # the host of a control plane on external etcd holds the external cluster's CA certificate, never its key
    action = plugin(tmp_path, external=True)
    del action._connection.files["/etc/kubernetes/pki/etcd/ca.key"]
    result = run(action)
    assert result["changed"] and not result.get("failed"), result
    assert result["backup"]["external_etcd"] is True
    directory = tmp_path / "backups" / "3f9a0c1d2e4b5a69"
    with tarfile.open(directory / result["backup"]["pki"]) as tar:
        assert sorted(tar.getnames()) == sorted(pki_files(True))
    (tmp_path / "stacked").mkdir()
    assert run(plugin(tmp_path / "stacked"))["backup"]["external_etcd"] is False


def test_the_pki_is_encrypted_with_the_run_s_vault_secret_of_the_id_given(tmp_path):
    secret = VaultSecret(b"backup secret")
    action = plugin(tmp_path, secrets=[("backups", secret)])
    action._task.args["vault_id"] = "backups"
    result = run(action)
    pki = tmp_path / "backups" / "3f9a0c1d2e4b5a69" / result["backup"]["pki"]
    assert result["backup"]["pki_encrypted"] and pki.name.endswith(".pki.tar.vault")
    plain = VaultLib([("backups", secret)]).decrypt(pki.read_bytes())
    with tarfile.open(fileobj=io.BytesIO(plain)) as tar:
        assert sorted(tar.getnames()) == sorted(PKI_FILES)
    assert b"backup secret" not in json.dumps(result).encode()


def test_a_vault_id_the_run_has_no_secret_for_is_refused_before_anything_is_saved(tmp_path):
    action = plugin(tmp_path, secrets=[("other", VaultSecret(b"x"))])
    action._task.args["vault_id"] = "backups"
    result = run(action)
    assert result["failed"] and "this run has no vault secret backups" in result["msg"]
    assert action.modules_run == [] and not (tmp_path / "backups").exists()


def test_without_etcdutl_nothing_is_saved(tmp_path):
    action = plugin(tmp_path)
    action._task.args["etcdutl"] = str(tmp_path / "missing")
    result = run(action)
    assert result["failed"] and "is not an executable on the controller" in result["msg"] and action.modules_run == []


def test_a_snapshot_etcdutl_does_not_take_leaves_nothing_and_the_host_s_copy_is_removed(tmp_path):
    action = plugin(tmp_path, status=dict(STATUS, totalKey=0))
    result = run(action)
    assert result["failed"] and "etcdutl does not take" in result["msg"] and "left nothing on the controller" in result["msg"]
    assert os.listdir(tmp_path / "backups" / "3f9a0c1d2e4b5a69") == []
    assert action.modules_run[-1][0] == "ansible.legacy.file"


def test_older_backups_beyond_keep_are_removed_whole(tmp_path):
    directory = tmp_path / "backups" / "3f9a0c1d2e4b5a69"
    directory.mkdir(parents=True)
    for name in ("20261101T030000Z", "20261102T030000Z"):
        for part in (".db", ".pki.tar", ".json"):
            (directory / (name + part)).write_text("old")
    (directory / "notes.txt").write_text("the operator's")
    result = run(plugin(tmp_path))
    assert result["removed"] == ["20261101T030000Z"]
    assert sorted(os.listdir(directory)) == sorted(["20261102T030000Z.db", "20261102T030000Z.pki.tar", "20261102T030000Z.json",
                                                    "notes.txt"] + [result["backup"]["snapshot"], result["backup"]["pki"],
                                                                    result["backup"]["snapshot"][:-3] + ".json"])


def test_check_mode_says_what_it_would_remove_and_writes_nothing(tmp_path):
    action = plugin(tmp_path, check_mode=True)
    result = run(action)
    assert result["changed"] and result["backup"] is None and result["removed"] == []
    assert not (tmp_path / "backups").exists()
    assert [name for name, _args in action.modules_run] == ["kubeadm.control_plane.etcd_snapshot"]


def test_a_host_that_stops_answering_midway_leaves_no_backup_without_its_record(tmp_path):
    action = plugin(tmp_path)
    fetch = action._connection.fetch_file

    def fetch_until_the_pki(source, dest):
        if source.endswith(".crt"):
            raise AnsibleConnectionFailure("ssh: connect to host 10.0.0.12 port 22: No route to host")
        fetch(source, dest)

    action._connection.fetch_file = fetch_until_the_pki
    with pytest.raises(AnsibleConnectionFailure):
        run(action)
    assert os.listdir(tmp_path / "backups" / "3f9a0c1d2e4b5a69") == []
