# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the kubelet / runtime / build tests: the release bundles, processes stopped by PID at teardown,
and a scratch kubelet host (kubelet_harness.py holds the helpers the tests import)."""

import pytest

from kcpsim import build
from kubelet_harness import KubeletHost, Processes


@pytest.fixture(scope="session")
def releases(tmp_path_factory):
    """The release bundles, built once per test session."""
    out = tmp_path_factory.mktemp("releases")
    build.build(str(out))
    return out


@pytest.fixture
def procs():
    tracker = Processes()
    yield tracker
    tracker.cleanup()


@pytest.fixture
def kubelet_host(tmp_path, releases, procs):
    return KubeletHost(tmp_path, releases, procs)
