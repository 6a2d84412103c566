# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""This controller's id, whether a run's process runs, the lookup that names a run, and the lock's adapter that
puts them together."""

import multiprocessing
import os
import stat
import subprocess

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
