# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the control plane emulation tests: one etcd cluster + API server per test module that asks for
``cluster`` (the module sets CLUSTER_BLOCK, its own block of loopback addresses), stopped by PID at the end."""

import os

import pytest

import apiserver_harness as harness


def _environment_problem():
    if not os.access(harness.ETCD_BIN, os.X_OK):
        return "the etcd binary %s is missing (run make setup)" % harness.ETCD_BIN
    if not os.access(harness.HOST_PYTHON, os.X_OK):
        return "%s is missing" % harness.HOST_PYTHON
    return None


@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory):
    """A started 3-member etcd and one API server at ``cluster.ip(4)``; more components on request."""
    problem = _environment_problem()
    if problem:
        pytest.skip(problem)
    block = getattr(request.module, "CLUSTER_BLOCK")
    workdir = str(tmp_path_factory.mktemp("kcpsim-block%d-" % block))
    built = harness.Cluster(workdir, block)
    try:
        built.make_pki()
        built.start_etcd()
        built.start_apiserver(4)
        built.grant_cluster_admins(built.ip(4))
        yield built
    except BaseException:
        print(built.logs())
        raise
    finally:
        built.stop()
        harness.remove_tree(workdir)


@pytest.fixture(scope="module")
def admin(cluster):
    """A kcpsim REST client with the admin credentials, against the first API server."""
    client = cluster.client("admin", cluster.ip(4))
    yield client
    client.close()
