# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The load balancer on the endpoint VIP serves from the backends whose /readyz answers 200 and skips the
others, with TLS passed through (the client verifies the backend's certificate via the VIP)."""

import http.client
import os
import shutil
import ssl

import pytest

from infra_support import HERE, self_signed_server_cert
from kcpsandbox.commands import wait_until

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("t-infra")]

TEST_DIR = "/etc/kubernetes/infra-lb-test"


def backend_states(sandbox):
    return {h["name"]: h["lb_backend"].split()[0] for h in sandbox.status()["hosts"]}


def answered_by(vip, context, requests):
    """Which hosts answered ``requests`` fresh connections through the VIP."""
    names = []
    for _request in range(requests):
        conn = http.client.HTTPSConnection(vip, 6443, context=context, timeout=5)
        try:
            conn.request("GET", "/")
            names.append(conn.getresponse().read().decode())
        finally:
            conn.close()
    return names


@pytest.fixture()
def readyz_servers(infra_sandbox):
    """A TLS /readyz server on the first two hosts (not on the third); the client context that trusts it."""
    serving = infra_sandbox.hosts()[:2]
    vip = infra_sandbox.status()["endpoint"].split(":")[0]
    cert, key = self_signed_server_cert([vip] + [infra_sandbox.ip(h) for h in infra_sandbox.hosts()])
    for name in serving:
        directory = infra_sandbox.record.host_fs(name, TEST_DIR)
        os.makedirs(directory, exist_ok=True)
        # The server goes onto the host's disk: a checkout under /tmp is hidden by the host's own tmpfs.
        shutil.copy(os.path.join(HERE, "readyz_server.py"), directory)
        for file_name, data, mode in (("tls.crt", cert, 0o644), ("tls.key", key, 0o600)):
            with open(os.path.join(directory, file_name), "wb") as handle:
                handle.write(data)
            os.chmod(os.path.join(directory, file_name), mode)
        infra_sandbox.back_door(name, "sh", "-c", "setsid -f /usr/bin/python3 %s/readyz_server.py %s %s/tls.crt %s/tls.key "
                                "%s/not-ready %s/pid </dev/null >/dev/null 2>&1" % (
                                    TEST_DIR, infra_sandbox.ip(name), TEST_DIR, TEST_DIR, TEST_DIR, TEST_DIR))
    context = ssl.create_default_context(cadata=cert.decode())
    try:
        yield serving, vip, context
    finally:
        for name in serving:
            infra_sandbox.back_door(name, "sh", "-c", "kill $(cat %s/pid)" % TEST_DIR, check=False)
            shutil.rmtree(infra_sandbox.record.host_fs(name, TEST_DIR), ignore_errors=True)


def test_the_vip_serves_from_ready_backends_and_skips_one_whose_readyz_fails(infra_sandbox, readyz_servers):
    (first, second), vip, context = readyz_servers
    idle = infra_sandbox.hosts()[2]
    expected = {first: "UP", second: "UP", idle: "DOWN"}
    wait_until(lambda: backend_states(infra_sandbox) == expected, 20, "backends %s" % expected, interval=0.2)
    assert set(answered_by(vip, context, 8)) == {first, second}

    with open(infra_sandbox.record.host_fs(first, TEST_DIR + "/not-ready"), "w") as handle:
        handle.write("not ready\n")
    wait_until(lambda: backend_states(infra_sandbox)[first] == "DOWN", 20, "%s to be marked DOWN" % first, interval=0.2)
    assert answered_by(vip, context, 6) == [second] * 6

    os.unlink(infra_sandbox.record.host_fs(first, TEST_DIR + "/not-ready"))
    wait_until(lambda: backend_states(infra_sandbox)[first] == "UP", 20, "%s to be UP again" % first, interval=0.2)
    # HAProxy's round robin lets a server that came back catch up first, so only its return is certain.
    assert first in answered_by(vip, context, 8)
