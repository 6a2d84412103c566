# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for the tests of the sandbox's infrastructure (sandboxes and names: infra_support.py).
All of them need root: they skip without it."""

import pathlib
import shutil
import tempfile

import pytest

from infra_support import DOWN_NAME, INFRA_MACHINES, INFRA_NAME, INFRA_SUBNET, SandboxHandle, needs_root
from kcpsandbox import state


@pytest.fixture(scope="session")
def infra_sandbox():
    """The shared ``t-infra`` sandbox: 3 hosts in 3 failure domains, one sandbox-wide environment variable;
    torn down at the end of the session."""
    needs_root()
    handle = SandboxHandle(INFRA_NAME)
    with state.lock_for_test_run(INFRA_NAME):
        handle.cli("down")  # whatever an aborted earlier run left
        handle.cli("up", "--machines", str(INFRA_MACHINES), "--failure-domains", "3", "--subnet", INFRA_SUBNET,
                   "--env", "KCP_INFRA_ENV=set by sandbox up")
        yield handle
        handle.cli("down")


@pytest.fixture()
def down_sandbox():
    """The ``t-down`` sandbox's handle, for tests that bring it up and down themselves; always down after."""
    needs_root()
    handle = SandboxHandle(DOWN_NAME)
    with state.lock_for_test_run(DOWN_NAME):
        handle.cli("down")
        yield handle
        handle.cli("down")


@pytest.fixture()
def under_tmp():
    """A fresh directory under /tmp itself (pytest's tmp_path may live elsewhere, e.g. with TMPDIR set), for the
    tests about what the hosts' own /tmp would hide; removed afterwards."""
    path = pathlib.Path(tempfile.mkdtemp(dir="/tmp", prefix="kcp-sandbox-test-"))
    yield path
    shutil.rmtree(str(path), ignore_errors=True)
