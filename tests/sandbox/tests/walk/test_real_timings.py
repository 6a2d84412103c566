# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox at real timings (``sandbox up --real-timings``), end to end and kept short, on its own sandbox
``t-real`` (172.31.252.0/24): 2 bare hosts prepared by the operator, ``kubeadm init`` with kubeadm's default
RSA-2048 keys, one control plane join, both nodes Ready with their kubelets posting status every 10 s. So no
flow timeout is tuned to the sped-up sandbox only.
"""

import os
import shutil
import tempfile

import pytest
from kcpsandbox import state
from walk_support import Operator, control_plane_join_command, poll

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("t-real")]

NAME, SUBNET = "t-real", "172.31.252.0/24"
JOINED = "This node has joined the cluster and a new control plane instance was created"


@pytest.fixture(scope="module")
def real():
    if os.geteuid() != 0:
        pytest.skip("the sandbox needs root (network namespaces, mounts, iptables)")
    operator = Operator(NAME)
    workdir = tempfile.mkdtemp(prefix="t-real-")
    with state.lock_for_test_run(NAME):
        operator.down()
        try:
            operator.up(2, 2, SUBNET, real_timings=True)
            yield operator, workdir
        finally:
            operator.down()
            shutil.rmtree(workdir)


def test_a_control_plane_init_and_join_reach_two_ready_nodes_at_real_timings(real):
    operator, workdir = real
    hosts = operator.inventory()[0]
    assert sorted(hosts) == ["cp-1", "cp-2"]
    for host in sorted(hosts):
        # No speed-up reaches the hosts: neither SSH sessions nor services see a KCPSIM_* variable.
        assert operator.ssh(host, "env | grep ^KCPSIM_ || true").stdout == ""
        assert operator.ssh(host, "cat /etc/systemd/system.conf.d/kcp-sandbox.conf 2>/dev/null || true").stdout == ""
    operator.prepare_hosts(sorted(hosts))
    output = operator.init_first_control_plane("cp-1", hosts["cp-1"]["failure_domain"], workdir,
                                               encryption_algorithm=None)
    ca = operator.ssh("cp-1", "openssl x509 -in /etc/kubernetes/pki/ca.crt -noout -text").stdout
    assert "Public Key Algorithm: rsaEncryption" in ca and "(2048 bit)" in ca
    operator.install_pod_network("cp-1")
    assert JOINED in operator.join_control_plane("cp-2", control_plane_join_command(output))
    operator.install_pod_network("cp-2")
    kubeconfig = operator.fetch("cp-1", "/etc/kubernetes/admin.conf", workdir)
    zones = {host: facts["failure_domain"] for host, facts in hosts.items()}
    # Two heartbeats of 10 s at most after the network config appears, plus the API's own delays.
    poll(lambda: operator.ready_control_plane_nodes(kubeconfig) == zones, 90, "cp-1 and cp-2 Ready at real timings",
         interval=1.0)
