# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's roles and playbooks end to end on the sandbox (test infrastructure, tests/sandbox/README.md),
driven by ansible-playbook over SSH as an operator drives them. Each test module brings up a sandbox of its own
(its name and subnet in tests/sandbox/DESIGN.md "Subnets in use") and tears it down, also when a step fails."""

import os
import shutil
import subprocess
import tempfile

import pytest

from e2e_support import CLI, E2ESandbox, state


@pytest.fixture(scope="module")
def bare_hosts(request):
    """A sandbox of bare hosts, named and placed by the test module's SANDBOX = (name, subnet, machines[, failure
    domains]); one failure domain per machine unless given; the module's SANDBOX_UP_ARGS, if any, passed to `up` too
    (``--external-etcd 3``, say)."""
    if os.geteuid() != 0:
        pytest.skip("the sandbox needs root")
    name, subnet, machines, *domains = request.module.SANDBOX

    def cli(*argv, timeout=180):
        return subprocess.run([CLI, "--name", name] + list(argv), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)

    with state.lock_for_test_run(name):
        cli("down")
        up = cli("up", "--machines", str(machines), "--failure-domains", str(domains[0] if domains else machines), "--subnet", subnet,
                 *getattr(request.module, "SANDBOX_UP_ARGS", ()))
        # the controller's copies of the flows' etcd snapshots (kcp_etcd_snapshot_dir), private to this run
        snapshot_dir = tempfile.mkdtemp(prefix="kcp-e2e-%s-etcd-snapshots-" % name)
        try:
            assert up.returncode == 0, up.stdout + up.stderr
            yield E2ESandbox(name, snapshot_dir)
        finally:
            shutil.rmtree(snapshot_dir, ignore_errors=True)
            down = cli("down")
            assert down.returncode == 0, down.stdout + down.stderr


_MODULE_SECONDS = {}


def pytest_runtest_logreport(report):
    """Add up each module's time (setup, call and teardown of each test: the module's sandbox is in its first setup
    and its last teardown), on the controller too when xdist runs the modules."""
    module = report.nodeid.split("::", 1)[0]
    _MODULE_SECONDS[module] = _MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """Each module's time, longest first: Makefile's E2E_FIRST starts the longest first so the workers end together."""
    if not _MODULE_SECONDS:
        return
    terminalreporter.section("end-to-end modules by time (for E2E_FIRST in the Makefile)")
    for module, seconds in sorted(_MODULE_SECONDS.items(), key=lambda item: -item[1]):
        terminalreporter.write_line("%7.0f s  %s" % (seconds, module))
