# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd_snapshot on real etcd, as a user runs it: the file holds what was written, keeps etcd's checksum, is
private, rotates; a member that does not answer is skipped; nothing half written is left behind."""

import base64
import hashlib
import json
import os
import socket
import stat
import subprocess

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import GatewayClient, tls_context
from ansible_run import BIN, ROOT, ansible_env


def closed_port_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return "https://127.0.0.1:%d" % sock.getsockname()[1]


def put(cluster, pki, key, value):
    gateway = GatewayClient(cluster.endpoints[0], tls_context(pki.ca_file, pki.client_cert, pki.client_key))
    try:
        gateway.call("kv/put", {"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()})
    finally:
        gateway.close()


def test_a_snapshot_holds_what_was_written_with_etcds_checksum_and_is_private(
        make_cluster, etcd_pki, connection_args, run_module, tmp_path):
    cluster = make_cluster(1)
    put(cluster, etcd_pki, b"/registry/configmaps/default/written-before", b"kept-in-the-snapshot")
    dest = str(tmp_path / "before-join.db")
    rc, result, output = run_module("etcd_snapshot", connection_args(cluster, dest=dest))
    assert rc == 0, output[-2000:]
    data = open(dest, "rb").read()
    assert b"/registry/configmaps/default/written-before" in data and b"kept-in-the-snapshot" in data
    assert hashlib.sha256(data[:-32]).digest() == data[-32:]
    assert (result["bytes"], result["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    assert result["endpoint"] == cluster.endpoints[0]
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert "BEGIN" not in output


def test_keep_removes_all_but_the_newest(healthy3, connection_args, run_module, tmp_path):
    for index in range(3):
        dest = str(tmp_path / ("snap-%d.db" % index))
        rc, result, output = run_module("etcd_snapshot", connection_args(healthy3, dest=dest, keep=2))
        assert rc == 0, output[-2000:]
        os.utime(dest, (1000 + index, 1000 + index))  # the order they were taken in, whatever the clock's resolution
    assert sorted(os.listdir(tmp_path)) == ["snap-1.db", "snap-2.db"]
    assert result["removed"] == [str(tmp_path / "snap-0.db")]


def test_a_dead_member_is_skipped_and_with_none_nothing_is_left(healthy3, connection_args, run_module, tmp_path):
    dead = closed_port_url()
    dest = str(tmp_path / "snap.db")
    rc, result, output = run_module("etcd_snapshot", connection_args(healthy3, dest=dest, endpoints=[dead] + healthy3.endpoints[:1]))
    assert rc == 0 and result["endpoint"] == healthy3.endpoints[0], output[-2000:]

    dest = str(tmp_path / "none.db")
    rc, result, output = run_module("etcd_snapshot", connection_args(healthy3, dest=dest, endpoints=[dead], timeout=1))
    assert rc != 0 and result["msg"].startswith("no etcd member gave a whole snapshot (%s: " % dead), result
    assert sorted(os.listdir(tmp_path)) == ["snap.db"]


def test_check_mode_and_bad_input_write_nothing(healthy3, connection_args, run_module, tmp_path):
    dest = str(tmp_path / "snap.db")
    rc, result, _output = run_module("etcd_snapshot", connection_args(healthy3, dest=dest), check=True)
    assert rc == 0 and result["changed"] and result["path"] == dest and not os.path.exists(dest)
    rc, result, _output = run_module("etcd_snapshot", connection_args(healthy3, dest=str(tmp_path / "snap.tar"), keep=-1))
    assert rc != 0 and "dest: must end in .db" in result["msg"] and "keep: must be 0" in result["msg"]
    assert os.listdir(tmp_path) == []


def test_controller_dir_gets_a_checked_private_copy_both_places_rotated(healthy3, connection_args, etcd_pki, run_module, tmp_path):
    host_dir, named_dir = tmp_path / "on-host" / "snapshots", tmp_path / "controller" / "cluster"
    # the cluster's identity: the etcd CA certificate's
    controller_dir = named_dir / etcd_snapshot.cluster_identity(etcd_pki.ca_file)
    for index in range(3):
        dest = str(host_dir / ("snap-%d.db" % index))
        rc, result, output = run_module("etcd_snapshot", connection_args(healthy3, dest=dest, controller_dir=str(named_dir), keep=2))
        assert rc == 0, output[-2000:]
        assert os.path.basename(str(controller_dir)) == result["cluster_id"]
        copy = controller_dir / ("snap-%d.db" % index)
        assert result["controller_path"] == str(copy)
        assert copy.read_bytes() == open(dest, "rb").read()
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == result["sha256"]
        for path in (dest, str(copy)):
            os.utime(path, (1000 + index, 1000 + index))  # the order they were taken in, whatever the clock's resolution
    # the host's directory was made, private; the controller's too
    assert stat.S_IMODE(os.stat(host_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(controller_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(controller_dir / "snap-2.db").st_mode) == 0o600
    assert sorted(os.listdir(host_dir)) == sorted(name for name in os.listdir(controller_dir) if name.endswith(".db")) == ["snap-1.db", "snap-2.db"]
    assert result["controller_removed"] == [str(controller_dir / "snap-0.db")]


def test_check_mode_names_the_controller_copy_and_writes_nothing(healthy3, connection_args, run_module, tmp_path):
    dest, controller_dir = tmp_path / "host" / "snap.db", tmp_path / "controller"
    rc, result, _output = run_module("etcd_snapshot", connection_args(healthy3, dest=str(dest), controller_dir=str(controller_dir)), check=True)
    assert rc == 0 and result["changed"] and result["controller_path"] == str(controller_dir / result["cluster_id"] / "snap.db"), result
    assert os.listdir(tmp_path) == []


def test_one_run_keeps_its_first_snapshot_besides_the_newest(healthy3, connection_args, tmp_path):
    """Four snapshots in one ansible-playbook run with keep 2: the run's first stays (the state from before the
    run), with the two newest; the next run's rotation no longer spares it."""
    host_dir, named_dir = tmp_path / "host", tmp_path / "controller"

    def run_playbook(run):
        playbook = tmp_path / ("%s.yml" % run)
        tasks = [{"name": "snapshot %d" % index, "kubeadm.control_plane.etcd_snapshot":
                  connection_args(healthy3, dest=str(host_dir / ("%s-%d.db" % (run, index))), controller_dir=str(named_dir), keep=2)}
                 for index in range(4)]
        playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
        done = subprocess.run([os.path.join(BIN, "ansible-playbook"), str(playbook)],
                              cwd=ROOT, env=ansible_env(), capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    run_playbook("a")
    [controller_dir] = named_dir.iterdir()
    assert sorted(name for name in os.listdir(controller_dir) if name.endswith(".db")) == ["a-0.db", "a-2.db", "a-3.db"]
    assert sorted(os.listdir(host_dir)) == ["a-2.db", "a-3.db"]
    run_playbook("b")  # another run: its own first is spared, the last run's is not
    assert sorted(name for name in os.listdir(controller_dir) if name.endswith(".db")) == ["b-0.db", "b-2.db", "b-3.db"]
    assert stat.S_IMODE(os.stat(controller_dir / ".first-of-run").st_mode) == 0o600
