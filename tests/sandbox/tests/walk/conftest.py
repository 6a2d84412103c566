# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the operator's manual walk: its own sandbox ``t-walk`` (172.31.253.0/24), up for one test
module and brought down in a finaliser even when a step fails.

The walk's tests are ordered steps of one story: once a step fails, the later steps of its module are skipped
(naming the step that failed) instead of failing for the same cause. With pytest-xdist, run them with
``--dist loadgroup`` (they carry the ``xdist_group`` mark), so that one worker runs the whole walk.
"""

import os

import pytest

from kcpsandbox import state
from walk_support import Operator

WALK_NAME, WALK_SUBNET = "t-walk", "172.31.253.0/24"
WALK_MACHINES, WALK_FAILURE_DOMAINS = 3, 3


@pytest.fixture(scope="module")
def operator():
    """The operator of a fresh ``t-walk`` sandbox of 3 hosts in 3 failure domains (node software of WALK_VERSION)."""
    if os.geteuid() != 0:
        pytest.skip("the sandbox needs root (network namespaces, mounts, iptables)")
    walker = Operator(WALK_NAME)
    with state.lock_for_test_run(WALK_NAME):
        walker.down()  # whatever an aborted earlier run left behind
        try:
            walker.up(WALK_MACHINES, WALK_FAILURE_DOMAINS, WALK_SUBNET)
            yield walker
        finally:
            walker.down()


def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and item.get_closest_marker("sandbox") is not None \
            and not call.excinfo.errisinstance(pytest.skip.Exception):
        item.parent.walk_failed_step = getattr(item.parent, "walk_failed_step", None) or item.name


def pytest_runtest_setup(item):
    failed = getattr(item.parent, "walk_failed_step", None)
    if failed is not None and item.get_closest_marker("sandbox") is not None:
        pytest.skip("an earlier step of the walk failed: %s" % failed)
