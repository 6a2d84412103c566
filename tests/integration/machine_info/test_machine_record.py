# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""machine_record run as a user runs it (`ansible localhost -m`): the record is written private and whole, a
second write of the same record changes nothing, check mode writes nothing but shows the diff, a wrong step is
refused before anything is written, and machine_info reads back exactly what was written (the seam the next
run's observation crosses)."""

import json
import os
import stat

from ansible_run import run

RECORD = {"name": "cp-2", "failure_domain": "fd-2", "created": "2026-11-26T10:00:00Z", "bootstrap": "join",
          "version": "v1.37.1", "spec_hash": "1f0c2d9e", "step": "joining"}


def write(tmp_path, record, check=False, state="present"):
    return run("machine_record", {"kubernetes_dir": str(tmp_path / "kubernetes"), "record": record, "state": state},
               check=check, extra=("--diff",))


def test_the_record_is_written_private_and_read_back_by_machine_info(tmp_path):
    done = write(tmp_path, RECORD)
    assert done.outcome == "CHANGED"
    path = tmp_path / "kubernetes" / "control-plane-machine.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(path.parent) == [path.name]  # no temporary file left
    expected = dict(RECORD, joined=None, initialized=None, init_failed=None, remediation=None)
    assert done.result["record"] == expected
    read = run("machine_info", {"kubernetes_dir": str(tmp_path / "kubernetes")})
    assert read.result["record"] == expected and read.result["record_error"] is None


def test_a_replacement_keeps_the_remediation_it_carries_in_its_record(tmp_path):
    carried = {"retries": 2, "last": "2026-11-26T09:00:00Z"}
    assert write(tmp_path, dict(RECORD, remediation=carried)).outcome == "CHANGED"
    read = run("machine_info", {"kubernetes_dir": str(tmp_path / "kubernetes")})
    assert read.result["record"]["remediation"] == carried


def test_the_same_record_twice_changes_nothing_and_a_new_step_shows_in_the_diff(tmp_path):
    write(tmp_path, RECORD)
    assert write(tmp_path, RECORD).outcome == "SUCCESS"
    joined = dict(RECORD, step="joined", joined="2026-11-26T10:05:00Z")
    checked = write(tmp_path, joined, check=True)
    assert checked.outcome == "CHANGED"
    assert '"step": "joining"' in checked.output and '"step": "joined"' in checked.output
    on_disk = json.loads((tmp_path / "kubernetes" / "control-plane-machine.json").read_text())
    assert on_disk["step"] == "joining"
    assert write(tmp_path, joined).outcome == "CHANGED"
    assert json.loads((tmp_path / "kubernetes" / "control-plane-machine.json").read_text())["joined"] == "2026-11-26T10:05:00Z"


def test_absent_removes_the_record_once(tmp_path):
    write(tmp_path, RECORD)
    assert write(tmp_path, None, state="absent").outcome == "CHANGED"
    assert not (tmp_path / "kubernetes" / "control-plane-machine.json").exists()
    again = write(tmp_path, None, state="absent")
    assert again.outcome == "SUCCESS" and again.result["record"] is None


def test_a_step_the_flows_do_not_know_is_refused_naming_it(tmp_path):
    done = write(tmp_path, dict(RECORD, step="halfway"))
    assert done.outcome == "FAILED!"
    assert "step" in done.result["msg"] and "halfway" in done.result["msg"]
    assert not (tmp_path / "kubernetes").exists()


def test_absent_removes_what_the_machine_left_then_the_record_and_check_mode_only_says_so(tmp_path):
    write(tmp_path, RECORD)
    snapshots = tmp_path / "snapshots"
    (snapshots / "cluster").mkdir(parents=True)
    (snapshots / "cluster" / "before-join.db").write_text("etcd")
    network = tmp_path / "99-kcp-bridge.conflist"
    network.write_text("{}")
    missing = tmp_path / "certificate-renewal"
    args = {"kubernetes_dir": str(tmp_path / "kubernetes"), "state": "absent", "leftovers": [str(network), str(snapshots), str(missing)]}
    checked = run("machine_record", args, check=True)
    assert checked.outcome == "CHANGED" and checked.result["removed"] == [str(network), str(snapshots)]
    assert network.exists() and snapshots.exists() and (tmp_path / "kubernetes" / "control-plane-machine.json").exists()
    done = run("machine_record", args)
    assert done.outcome == "CHANGED" and done.result["removed"] == [str(network), str(snapshots)]
    assert not network.exists() and not snapshots.exists() and not (tmp_path / "kubernetes" / "control-plane-machine.json").exists()
    again = run("machine_record", args)
    assert again.outcome == "SUCCESS" and again.result["removed"] == []


def test_a_leftover_goes_with_what_a_write_of_it_killed_before_its_rename_left(tmp_path):
    # a kubeadm configuration a killed join left, and a write of it killed half way: both hold the join's secrets
    configuration = tmp_path / "kubeadm-control-plane.yaml"
    configuration.write_text("token")
    partial = tmp_path / ".kubeadm-control-plane.yaml.x1y2"
    partial.write_text("tok")
    orphan = tmp_path / ".kubeadm-control-plane.yaml.z3"
    args = {"kubernetes_dir": str(tmp_path / "kubernetes"), "state": "absent", "leftovers": [str(configuration)]}
    done = run("machine_record", args)
    assert done.outcome == "CHANGED" and done.result["removed"] == [str(configuration), str(partial)]
    assert not configuration.exists() and not partial.exists()
    orphan.write_text("tok")
    alone = run("machine_record", args)
    assert alone.outcome == "CHANGED" and alone.result["removed"] == [str(orphan)] and not orphan.exists()


def test_leftovers_are_refused_when_a_record_is_written(tmp_path):
    done = run("machine_record", {"kubernetes_dir": str(tmp_path / "kubernetes"), "record": RECORD, "leftovers": [str(tmp_path / "x")]})
    assert done.outcome == "FAILED!" and "leftovers" in done.result["msg"]
    assert not (tmp_path / "kubernetes").exists()
