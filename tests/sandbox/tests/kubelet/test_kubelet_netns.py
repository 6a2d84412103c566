# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inside a network namespace like a sandbox host's, the kubelet finds its node IP without --node-ip.

The namespace is made here and removed afterwards; its only other interface is a veth pair whose both
ends stay inside it, so no packet can leave it.
"""

import os
import subprocess

import pytest

from kcpsim.kubelet import kubelet
from kubelet_harness import SYSTEM_PYTHON

pytestmark = pytest.mark.sandbox
SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def netns():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    name = "kcpk-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


def _ip(netns, *args):
    subprocess.run(["ip", "-n", netns] + list(args), check=True)


@pytest.mark.parametrize("default_route, expected", [
    (True, "198.51.100.7"), (False, "198.51.100.7"),
], ids=[
    "the node IP is the address of the default route's interface",
    "without a default route the first global address is used",
])
def test_node_ip_detection_in_a_host_namespace(netns, default_route, expected):
    _ip(netns, "link", "set", "lo", "up")
    _ip(netns, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0-peer")
    _ip(netns, "link", "set", "eth0-peer", "up")
    _ip(netns, "addr", "add", "198.51.100.7/24", "dev", "eth0")
    _ip(netns, "link", "set", "eth0", "up")
    if default_route:
        _ip(netns, "route", "add", "default", "dev", "eth0")
    script = "import sys; sys.path.insert(0, sys.argv[1]); from kcpsim.kubelet import kubelet; " \
             "print(kubelet.detect_node_ip())"
    result = subprocess.run(["ip", "netns", "exec", netns, SYSTEM_PYTHON, "-c", script, SANDBOX_DIR],
                            capture_output=True, text=True, timeout=30, check=True)
    assert result.stdout.strip() == expected


def test_a_namespace_with_only_loopback_falls_back_to_127_0_0_1(netns):
    script = "import sys; sys.path.insert(0, sys.argv[1]); from kcpsim.kubelet import kubelet; " \
             "print(kubelet.detect_node_ip())"
    result = subprocess.run(["ip", "netns", "exec", netns, SYSTEM_PYTHON, "-c", script, SANDBOX_DIR],
                            capture_output=True, text=True, timeout=30, check=True)
    assert result.stdout.strip() == "127.0.0.1"
    assert kubelet.detect_node_ip()  # and outside it, on this machine, some address is found
