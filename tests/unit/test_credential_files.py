# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's private credential files: mode 0600 (directories 0700) from their creation, and what a killed run
left removed by the next run that makes one, never what a process still running uses."""

import os
import stat
import subprocess
import sys

from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files


def gone_pid():
    """The number of a process that ran and is gone."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_files_are_private_from_the_start_and_named_after_their_process(tmp_path, monkeypatch):
    monkeypatch.setattr(credential_files.tempfile, "tempdir", str(tmp_path))
    handle, path = credential_files.private_file(suffix=".conf")
    os.close(handle)
    directory = credential_files.private_directory()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    for name in (path, directory):
        assert os.path.basename(name).startswith("%s%d-" % (credential_files.PREFIX, os.getpid()))


def test_what_a_killed_run_left_goes_and_what_a_running_one_uses_stays(tmp_path):
    gone = gone_pid()
    left_file = tmp_path / ("%s%d-abc.conf" % (credential_files.PREFIX, gone))
    left_dir = tmp_path / ("%s%d-def" % (credential_files.PREFIX, gone))
    left_file.write_text("admin credentials")
    left_dir.mkdir()
    (left_dir / "client.key").write_text("key")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        in_use = tmp_path / ("%s%d-ghi.conf" % (credential_files.PREFIX, sleeper.pid))
        in_use.write_text("in use")
        mine = tmp_path / ("%s%d-jkl.conf" % (credential_files.PREFIX, os.getpid()))
        mine.write_text("mine")
        other = tmp_path / "kcp-unrelated-1-x.conf"
        other.write_text("not ours")
        removed = credential_files.remove_left_by_gone_processes(str(tmp_path))
        assert sorted(removed) == sorted([left_file.name, left_dir.name])
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([in_use.name, mine.name, other.name])
    finally:
        sleeper.kill()
        sleeper.wait()


def test_credential_files_are_named_kcp_credentials_pid_as_docs_flows_states(tmp_path, monkeypatch):
    monkeypatch.setattr(credential_files.tempfile, "tempdir", str(tmp_path))
    left = tmp_path / ("kcp-credentials-%d-admin.conf" % gone_pid())
    left.write_text("admin credentials")
    handle, path = credential_files.private_file(suffix=".conf")
    os.close(handle)
    assert os.path.basename(path).startswith("kcp-credentials-%d-" % os.getpid()) and path.endswith(".conf")
    assert not left.exists()  # what a killed run left under that name was removed first
