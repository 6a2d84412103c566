# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The copy of a snapshot to the controller (plugin_utils/host_file.copy_checked, which the etcd_snapshot and
etcd_backup action plugins use): a copy whose SHA-256 is not the snapshot's is refused and leaves nothing behind;
under privilege escalation the file is read through slurp, as ansible.builtin.fetch does; the rotation spares the
run's first snapshot; the cluster's identity is its etcd CA's. The transfer itself is exercised on real etcd in
tests/integration/etcd/test_etcd_snapshot.py."""

import base64
import hashlib
import os
import stat
import types

import pytest
from ansible_collections.kubeadm.control_plane.plugins.action.etcd_snapshot import ActionModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_snapshot
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_file

SNAPSHOT = b"etcd snapshot bytes"


class Connection:
    def __init__(self, become, delivers):
        self.become, self.delivers, self.fetched = become, delivers, []

    def fetch_file(self, source, dest):
        self.fetched.append(source)
        assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600  # private before anything is written to it
        with open(dest, "wb") as out:
            out.write(self.delivers)


def action(connection, slurped=None):
    plugin = ActionModule.__new__(ActionModule)
    plugin._connection = connection
    plugin._task = types.SimpleNamespace(delegate_to=None)
    plugin.modules_run = []

    def execute_module(module_name, module_args, task_vars):
        plugin.modules_run.append((module_name, module_args))
        return {"content": base64.b64encode(slurped).decode(), "encoding": "base64"}

    plugin._execute_module = execute_module
    return plugin


def test_a_copy_that_matches_is_kept_private(tmp_path):
    plugin = action(Connection(False, SNAPSHOT))
    dest = str(tmp_path / "snap.db")
    host_file.copy_checked(plugin, "/host/snap.db", hashlib.sha256(SNAPSHOT).hexdigest(), dest, {})
    assert open(dest, "rb").read() == SNAPSHOT and stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert plugin._connection.fetched == ["/host/snap.db"] and plugin.modules_run == []
    assert os.listdir(tmp_path) == ["snap.db"]


def test_a_copy_that_differs_is_refused_and_nothing_is_left(tmp_path):
    plugin = action(Connection(False, b"truncated"))
    with pytest.raises(ValueError, match="the copy's SHA-256 is"):
        host_file.copy_checked(plugin, "/host/snap.db", hashlib.sha256(SNAPSHOT).hexdigest(), str(tmp_path / "snap.db"), {})
    assert os.listdir(tmp_path) == []


def test_under_privilege_escalation_the_file_is_read_through_slurp(tmp_path):
    plugin = action(Connection(True, b""), slurped=SNAPSHOT)
    host_file.copy_checked(plugin, "/host/snap.db", hashlib.sha256(SNAPSHOT).hexdigest(), str(tmp_path / "snap.db"), {})
    assert (tmp_path / "snap.db").read_bytes() == SNAPSHOT
    assert plugin.modules_run == [("ansible.legacy.slurp", {"src": "/host/snap.db"})] and plugin._connection.fetched == []


def test_rotation_spares_the_runs_first_snapshot(tmp_path):
    for index in range(5):
        (tmp_path / ("s%d.db" % index)).write_bytes(b"x")
        os.utime(tmp_path / ("s%d.db" % index), (1000 + index, 1000 + index))
    (tmp_path / etcd_snapshot.FIRST_OF_RUN).write_text("{}")
    removed = etcd_snapshot.rotate(str(tmp_path), ".db", 2, spare=("s1.db",))
    assert sorted(os.path.basename(path) for path in removed) == ["s0.db", "s2.db"]
    assert sorted(os.listdir(tmp_path)) == [etcd_snapshot.FIRST_OF_RUN, "s1.db", "s3.db", "s4.db"]


def test_the_first_snapshot_of_a_run_is_remembered_until_another_run_saves_one(tmp_path):
    directory = str(tmp_path)
    assert etcd_snapshot.first_of_run(directory, "run A", "a-1.db") == "a-1.db"
    assert etcd_snapshot.first_of_run(directory, "run A", "a-2.db") == "a-1.db"
    assert stat.S_IMODE(os.stat(tmp_path / etcd_snapshot.FIRST_OF_RUN).st_mode) == 0o600
    assert etcd_snapshot.first_of_run(directory, "run B", "b-1.db") == "b-1.db"
    assert etcd_snapshot.first_of_run(directory, "run B", "b-2.db") == "b-1.db"
    (tmp_path / etcd_snapshot.FIRST_OF_RUN).write_text("not json")
    assert etcd_snapshot.first_of_run(directory, "run B", "b-3.db") == "b-3.db"


def test_the_cluster_identity_is_the_etcd_ca_certificates(tmp_path):
    der = b"\x30\x03\x02\x01\x01"
    pem = b"-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(der) + b"-----END CERTIFICATE-----\n"
    (tmp_path / "ca.crt").write_bytes(pem)
    assert etcd_snapshot.cluster_identity(str(tmp_path / "ca.crt")) == hashlib.sha256(der).hexdigest()[:16]
    (tmp_path / "other.crt").write_bytes(b"no certificate here")
    assert etcd_snapshot.cluster_identity(str(tmp_path / "other.crt")) is None
    assert etcd_snapshot.cluster_identity(str(tmp_path / "absent.crt")) is None
