# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``sandbox down`` leaves nothing behind — no netns, link, iptables rule, route, mount, process or state —
after a clean ``up``, after an ``up`` killed half way, and when run twice; a refused ``up`` touches nothing."""

import json
import os
import signal
import subprocess

import pytest

from infra_support import CLI, DOWN_NAME, DOWN_SUBNET, INFRA_SUBNET, leftovers, wait_for
from kcpsandbox.state import Sandbox

pytestmark = [pytest.mark.sandbox]


def recorded_pids(name):
    """Every PID the sandbox recorded (hosts' unshare and PID 1, HAProxy)."""
    return [ref.pid for ref in Sandbox(name).recorded_processes().values()]


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_down_after_up_leaves_nothing_and_can_be_repeated(down_sandbox):
    down_sandbox.cli("up", "--machines", "2", "--failure-domains", "2", "--subnet", DOWN_SUBNET)
    pids = recorded_pids(DOWN_NAME)
    assert len(pids) == 5 and all(alive(pid) for pid in pids)
    assert leftovers(DOWN_NAME, DOWN_SUBNET) != []
    down_sandbox.cli("down")
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
    assert not any(alive(pid) for pid in pids)
    again = down_sandbox.cli("down")
    assert "was not up" in again.stdout


def _bridge_exists():
    return os.path.exists("/sys/class/net/kcpbr-" + DOWN_NAME)


@pytest.mark.parametrize("crash_point", [
    lambda: os.path.isdir(Sandbox(DOWN_NAME).logs_dir),
    _bridge_exists,
    lambda: any(name.startswith("init.") for name in Sandbox(DOWN_NAME).recorded_processes()),
    lambda: "haproxy" in Sandbox(DOWN_NAME).recorded_processes(),
], ids=["killed while the release bundles build", "killed right after the bridge appeared",
        "killed after the first host booted", "killed after HAProxy started"])
def test_down_cleans_up_after_an_up_killed_half_way(down_sandbox, crash_point):
    up = subprocess.Popen([CLI, "--name", DOWN_NAME, "up", "--machines", "3", "--subnet", DOWN_SUBNET],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: crash_point() or up.poll() is not None, 60, "the crash point", interval=0.002)
    finally:
        up.send_signal(signal.SIGKILL)
        up.wait()
    assert up.returncode == -signal.SIGKILL, "up ended by itself (exit %s) before the crash point" % up.returncode
    down_sandbox.cli("down")
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []


def test_up_on_a_subnet_in_use_is_refused_without_touching_it(infra_sandbox, down_sandbox):
    done = down_sandbox.cli("up", "--machines", "1", "--subnet", INFRA_SUBNET, check=False)
    assert done.returncode == 1
    assert "--subnet %s: already in use" % INFRA_SUBNET in done.stderr
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
    assert all(h["state"] == "running" for h in infra_sandbox.status()["hosts"])
    assert {route.split()[0] for route in subprocess.run(["ip", "route", "show", "root", INFRA_SUBNET],
                                                         capture_output=True, text=True, check=True).stdout
            .splitlines()} == {"blackhole", INFRA_SUBNET}


def test_bad_up_arguments_are_all_reported_before_anything_is_made(down_sandbox):
    done = down_sandbox.cli("up", "--machines", "0", "--failure-domains", "40", "--subnet", "8.8.8.0/24",
                            "--version", "1.30", "--env", "no-equals", check=False)
    assert done.returncode == 2
    for fragment in ("--machines 0", "--failure-domains 40", "--subnet 8.8.8.0/24", "--version '1.30'",
                     "--env 'no-equals'"):
        assert fragment in done.stderr
    assert "Traceback" not in done.stderr
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
    assert json.loads(down_sandbox.cli("status", "--json", check=False).stdout) == {"name": DOWN_NAME, "up": False}
