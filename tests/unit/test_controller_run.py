# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""This controller's id, whether a run's process runs, the lookup that names a run, and the lock's adapter that
puts them together."""

import multiprocessing
import os
import shutil
import stat
import subprocess

import pytest

from ansible_collections.kubeadm.control_plane.plugins.lookup import run_holder
from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, controller_run, lock_lease


def test_the_controller_id_is_made_once_private_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert controller_run.controller_id() is None
    made = controller_run.controller_id(create=True)
    assert len(made) == 12 and int(made, 16) >= 0
    path = tmp_path / ".ansible" / "kcp_controller_id"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert controller_run.controller_id() == made == controller_run.controller_id(create=True)
    path.write_text("not an id\n")
    assert controller_run.controller_id(create=True) is None


def test_an_id_that_cannot_be_kept_is_none(tmp_path, monkeypatch):
    (tmp_path / ".ansible").write_text("a file where the directory should be")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert controller_run.controller_id(create=True) is None


def test_process_running():
    assert controller_run.process_running(os.getpid())
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert not controller_run.process_running(gone.pid)


def _name_in_child(queue):
    queue.put(run_holder.LookupModule().run([])[0])


def test_the_lookup_names_the_run_alike_in_the_process_and_in_its_workers(tmp_path, monkeypatch):
    # Ansible renders a task's templates in a worker process forked by ansible-playbook, or in ansible-playbook itself
    monkeypatch.setenv("HOME", str(tmp_path))
    here = run_holder.LookupModule().run([])[0]
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_name_in_child, args=(queue,))
    child.start()
    in_worker = queue.get(timeout=30)
    child.join()
    assert here == in_worker
    run = cluster_lock.run_of(here)
    assert run["pid"] == os.getpid() and run["controller"] == controller_run.controller_id()


def test_the_adapter_looks_for_the_holders_process_only_on_its_own_controller(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    here = controller_run.controller_id(create=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    mine = cluster_lock.run_holder("alice", "laptop", os.getpid(), here)

    def held_by(pid, controller=here):
        return {"holder": cluster_lock.run_holder("alice", "laptop", pid, controller)}

    assert lock_lease.holder_running(held_by(gone.pid), mine) is False
    assert lock_lease.holder_running(held_by(os.getppid()), mine) is True
    assert lock_lease.holder_running(held_by(gone.pid, "000000000000"), cluster_lock.run_holder("alice", "laptop", 1, "000000000000")) is None
    assert lock_lease.holder_running({"holder": "awx-kubeadm-control-plane-scale"}, mine) is None
    assert lock_lease.holder_running(None, mine) is None


@pytest.mark.parametrize("kept, found", [
    ("a1b2c3d4e5f6\n", "a1b2c3d4e5f6"),
    ("  0123456789ab  \n", "0123456789ab"),
    ("a1b2c3d4e5f", None),
    ("a1b2c3d4e5f6a", None),
    ("abc", None),
    ("A1B2C3D4E5F6", None),
    ("0X0123456789", None),
    ("", None),
], ids=["twelve hex digits are the id", "spaces around it are not part of it", "eleven digits are not an id",
        "thirteen digits are not an id", "a few hex digits are not an id", "upper case digits are not an id",
        "a hex number written with its 0X prefix is not an id", "an empty file is no id"])
def test_only_twelve_lower_case_hex_digits_are_an_id(tmp_path, monkeypatch, kept, found):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ansible").mkdir()
    (tmp_path / ".ansible" / "kcp_controller_id").write_text(kept)
    assert controller_run.controller_id() == found
    assert controller_run.controller_id(create=True) == found
    assert (tmp_path / ".ansible" / "kcp_controller_id").read_text() == kept


def test_an_id_file_that_is_not_text_is_no_id_and_is_not_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ansible").mkdir()
    (tmp_path / ".ansible" / "kcp_controller_id").write_bytes(b"\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\n")
    assert controller_run.controller_id() is None
    assert controller_run.controller_id(create=True) is None
    assert (tmp_path / ".ansible" / "kcp_controller_id").read_bytes().startswith(b"\xe9")


def test_the_ansible_directory_is_made_private_when_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    umask = os.umask(0o022)
    try:
        made = controller_run.controller_id(create=True)
    finally:
        os.umask(umask)
    assert made is not None
    assert stat.S_IMODE((tmp_path / ".ansible").stat().st_mode) == 0o700


def test_an_ansible_directory_already_there_is_used_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ansible").mkdir(mode=0o755)
    made = controller_run.controller_id(create=True)
    assert made is not None and (tmp_path / ".ansible" / "kcp_controller_id").read_text() == made + "\n"
    assert stat.S_IMODE((tmp_path / ".ansible").stat().st_mode) == 0o755


def test_an_id_another_run_makes_at_the_same_moment_is_read_not_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    makedirs = os.makedirs

    def another_run_makes_it_first(path, *args, **kwargs):
        makedirs(path, *args, **kwargs)
        (tmp_path / ".ansible" / "kcp_controller_id").write_text("0123456789ab\n")

    monkeypatch.setattr(controller_run.os, "makedirs", another_run_makes_it_first)
    assert controller_run.controller_id(create=True) == "0123456789ab"


@pytest.mark.parametrize("error, running", [
    (PermissionError(1, "Operation not permitted"), True),
    (ProcessLookupError(3, "No such process"), False),
], ids=["a process of another user runs", "a process that is gone does not"])
def test_whether_a_process_runs_is_what_signal_0_says(monkeypatch, error, running):
    def kill(pid, signal):
        assert (pid, signal) == (4242, 0)
        raise error

    monkeypatch.setattr(controller_run.os, "kill", kill)
    assert controller_run.process_running(4242) is running


def start_time(pid):
    """Field 22 of /proc/<pid>/stat (proc(5)), counted after the command name in parentheses (field 2)."""
    with open("/proc/%d/stat" % pid, "rb") as handle:
        data = handle.read()
    return data[data.rindex(b")") + 2:].decode().split(" ")[22 - 3]


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux's /proc")


@needs_proc
def test_a_run_is_its_process_when_it_started_and_its_controller(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    here = controller_run.controller_id(create=True)
    assert controller_run.run_identity() == "pid %d started %s controller %s" % (os.getpid(), start_time(os.getpid()), here)


@needs_proc
def test_a_command_name_with_parentheses_spaces_and_other_letters_does_not_shift_the_start_time(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    here = controller_run.controller_id(create=True)
    command = tmp_path / "kub\u00e9) 1 2 3"
    command.symlink_to(shutil.which("sleep"))
    child = subprocess.Popen([str(command), "60"])
    try:
        monkeypatch.setattr(controller_run, "run_pid", lambda: child.pid)
        started = start_time(child.pid)
        assert controller_run.run_identity() == "pid %d started %s controller %s" % (child.pid, started, here)
    finally:
        child.kill()
        child.wait()


def test_a_run_whose_start_or_controller_is_not_known_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(controller_run, "run_pid", lambda: gone.pid)
    assert controller_run.run_identity() == "pid %d started unknown controller unknown" % gone.pid
    assert not (tmp_path / ".ansible").exists()
