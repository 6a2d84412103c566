# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real etcd clusters for the etcd tests (see etcd_test_cluster.py), a test PKI, and a way to run modules.

Clusters that tests only read are shared per session (per xdist worker); a test that breaks its cluster
asks ``make_cluster`` for its own. Every process started here is stopped by PID when its fixture ends,
whether the test passed or not.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import ansible_run  # noqa: E402
from etcd_test_cluster import EtcdCluster  # noqa: E402
from etcd_test_pki import EtcdPKI  # noqa: E402

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_client import EtcdClient  # noqa: E402


@pytest.fixture(scope="session")
def etcd_pki(tmp_path_factory):
    return EtcdPKI(tmp_path_factory.mktemp("etcd-pki"))


@pytest.fixture(scope="session")
def healthy3(etcd_pki, tmp_path_factory):
    """A healthy 3-member cluster (cp-1..cp-3) that tests must not change."""
    with EtcdCluster(etcd_pki, tmp_path_factory.mktemp("healthy3"), size=3) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def healthy5(etcd_pki, tmp_path_factory):
    """A healthy 5-member cluster (cp-1..cp-5) that tests must not change."""
    with EtcdCluster(etcd_pki, tmp_path_factory.mktemp("healthy5"), size=5) as cluster:
        yield cluster


@pytest.fixture
def make_cluster(etcd_pki, tmp_path):
    """A factory for clusters a test may break; they are all stopped when the test ends."""
    clusters = []

    def make(size=3, **options):
        cluster = EtcdCluster(etcd_pki, tmp_path / ("cluster%d" % len(clusters)), size=size, **options)
        clusters.append(cluster)
        return cluster

    yield make
    for cluster in clusters:
        cluster.close()


@pytest.fixture
def client_for(etcd_pki):
    """EtcdClient(cluster endpoints or a list of URLs, **options) with the test PKI; closed when the test ends."""
    clients = []

    def make(target, **options):
        endpoints = target.endpoints if hasattr(target, "endpoints") else list(target)
        options.setdefault("timeout", 2.0)
        options.setdefault("retry_timeout", 20.0)
        client = EtcdClient(endpoints, etcd_pki.ca_file, etcd_pki.client_cert, etcd_pki.client_key, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def connection_args(etcd_pki):
    """Module arguments that reach ``cluster`` with the test PKI, plus ``extra``."""

    def make(cluster, **extra):
        args = {
            "endpoints": cluster.endpoints,
            "ca_file": etcd_pki.ca_file,
            "cert_file": etcd_pki.client_cert,
            "key_file": etcd_pki.client_key,
            "timeout": 2.0,
        }
        args.update(extra)
        return args

    return make


@pytest.fixture
def run_module():
    """Run a module of this collection through `ansible localhost -m`; returns (rc, result dict, all output)."""

    def run_it(name, args, check=False):
        done = ansible_run.run(name, args, check=check)
        return done.rc, done.result, done.output

    return run_it
