# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``sandbox down`` leaves nothing behind — no netns, link, iptables rule, route, mount, process or state —
after a clean ``up``, after an ``up`` killed half way, and when run twice; it touches nothing of another
sandbox, and refuses a name that is not a sandbox's; a refused ``up`` touches nothing."""

import json
import os
import signal
import subprocess

import pytest

from infra_support import CLI, DOWN_NAME, DOWN_SUBNET, INFRA_SUBNET, leftovers
from kcpsandbox import net
from kcpsandbox.commands import wait_until
from kcpsandbox.state import Sandbox, state_root

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


CRASH_POINTS = {
    "killed while the release bundles build": lambda: os.path.isdir(Sandbox(DOWN_NAME).logs_dir),
    "killed right after the bridge appeared": _bridge_exists,
    "killed after the first host booted":
        lambda: any(name.startswith("init.") for name in Sandbox(DOWN_NAME).recorded_processes()),
    "killed after HAProxy started": lambda: "haproxy" in Sandbox(DOWN_NAME).recorded_processes(),
}


def crashed_up(machines, crash_point):
    """``up`` of t-down, started and SIGKILLed once ``crash_point()`` holds."""
    up = subprocess.Popen([CLI, "--name", DOWN_NAME, "up", "--machines", str(machines), "--subnet", DOWN_SUBNET],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: crash_point() or up.poll() is not None, 60, "the crash point", interval=0.002)
    finally:
        up.send_signal(signal.SIGKILL)
        up.wait()
    assert up.returncode == -signal.SIGKILL, "up ended by itself (exit %s) before the crash point" % up.returncode


@pytest.mark.parametrize("crash_point", list(CRASH_POINTS.values()), ids=list(CRASH_POINTS))
def test_down_cleans_up_after_an_up_killed_half_way(down_sandbox, crash_point):
    crashed_up(3, crash_point)
    down_sandbox.cli("down")
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []


def footprint(sandbox):
    """What of a running sandbox exists on the machine: its state dir's files (not ssh's control sockets,
    which come and go), its record, netns, links, iptables rules, routes and live recorded processes."""
    record = Sandbox(sandbox.name).load()
    files = set()
    for directory, _dirs, names in os.walk(record.dir):
        files.update(os.path.relpath(os.path.join(directory, n), record.dir) for n in names if not n.startswith("cm-"))
    alive_processes = sorted(name for name, ref in record.recorded_processes().items() if ref.alive())
    return {"files": files, "record": record.data, "processes": alive_processes,
            "network": net.leftovers(sandbox.name, record.data["subnet"])}


@pytest.mark.xdist_group("t-infra")
@pytest.mark.parametrize("crash_point", [None, "killed after the first host booted"],
                         ids=["after t-down came up", "after t-down's up was killed half way"])
def test_down_of_one_sandbox_leaves_another_running_sandbox_untouched(infra_sandbox, down_sandbox, crash_point):
    before = footprint(infra_sandbox)
    if crash_point:
        crashed_up(2, CRASH_POINTS[crash_point])
    else:
        down_sandbox.cli("up", "--machines", "2", "--failure-domains", "2", "--subnet", DOWN_SUBNET)
    down_sandbox.cli("down")
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
    assert os.path.isdir(state_root())
    assert footprint(infra_sandbox) == before
    assert len(before["processes"]) == 2 * len(infra_sandbox.hosts()) + 1
    for name in infra_sandbox.hosts():
        assert infra_sandbox.ssh(name, "hostname").stdout.strip() == name


@pytest.mark.xdist_group("t-infra")
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
                            "--env", "no-equals", check=False)
    assert done.returncode == 2
    for fragment in ("--machines 0", "--failure-domains 40", "--subnet 8.8.8.0/24", "--env 'no-equals'"):
        assert fragment in done.stderr
    assert "Traceback" not in done.stderr
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
    assert json.loads(down_sandbox.cli("status", "--json", check=False).stdout) == {"name": DOWN_NAME, "up": False}


@pytest.mark.parametrize("name_args, env_name", [
    (["--name", ""], None),
    ([], ""),
    (["--name", ".."], None),
    (["--name", "../kcp"], None),
    (["--name", "T-Infra"], None),
], ids=["an empty --name", "an empty KCP_SANDBOX_NAME", "the parent directory", "a path", "upper case"])
def test_down_refuses_a_name_that_is_no_sandbox_name_and_removes_nothing(tmp_path, name_args, env_name):
    # A root of its own with a canary sandbox dir: were the refusal to fail, only these would be at risk.
    canary = tmp_path / "root" / "canary"
    canary.mkdir(parents=True)
    env = dict(os.environ, KCP_SANDBOX_ROOT=str(tmp_path / "root"))
    env.pop("KCP_SANDBOX_NAME", None)
    if env_name is not None:
        env["KCP_SANDBOX_NAME"] = env_name
    done = subprocess.run([CLI] + name_args + ["down"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--name" in done.stderr and "Traceback" not in done.stderr
    assert canary.is_dir() and os.path.isdir(state_root())


def test_up_refuses_a_state_root_the_hosts_tmpfs_would_hide(down_sandbox, under_tmp):
    env = dict(os.environ, KCP_SANDBOX_ROOT=str(under_tmp / "root"))
    done = down_sandbox.cli("up", "--machines", "1", "--subnet", DOWN_SUBNET, check=False, env=env)
    assert done.returncode == 2
    assert "KCP_SANDBOX_ROOT %s: must not lie under /tmp" % (under_tmp / "root") in done.stderr
    assert not (under_tmp / "root").exists()
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
