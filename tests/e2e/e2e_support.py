# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the end-to-end tests share (tests/e2e): a sandbox of bare hosts as a test drives it, the play recap, the
newest version the mirror offers. A module of its own, not conftest, because every test directory has a conftest
and only one of them can be imported under that name in a whole-suite run."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SANDBOX_DIR = os.path.join(ROOT, "tests", "sandbox")
for _path in (SANDBOX_DIR, os.path.join(SANDBOX_DIR, "tests", "walk")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from kcpsandbox import state  # noqa: E402  (the sandbox's package, found through SANDBOX_DIR)
# the manual walk's operator steps (a cluster built by hand with kubeadm), for the tests that need them
import walk_support as walk  # noqa: E402  # pylint: disable=unused-import

CLI = os.path.join(SANDBOX_DIR, "sandbox")
BIN = os.path.dirname(sys.executable)


class E2ESandbox:
    """A sandbox of bare hosts as a test drives it: its inventory, ansible-playbook, and SSH for checks."""

    def __init__(self, name):
        self.name = name
        self.record = state.Sandbox(name).load()

    @property
    def inventory(self):
        return self.record.inventory

    @property
    def mirror_dir(self):
        return self.record.mirror_dir

    def hosts(self):
        return sorted(self.record.hosts)

    def ssh(self, host, command, check=True, timeout=60):
        done = subprocess.run(["ssh", "-F", self.record.ssh_config, host, command], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise AssertionError("ssh %s %r failed (exit %d): %s" % (host, command, done.returncode, done.stderr))
        return done

    def fault(self, kind, host):
        """Inject a sandbox fault (etcd-stop, etcd-start, ...; tests/sandbox/README.md) on a host."""
        done = subprocess.run([CLI, "--name", self.name, "fault", kind, host], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr

    def playbook(self, playbook, extra_vars=None, limit=None, check=False, timeout=900):
        """ansible-playbook against the sandbox's inventory; the CompletedProcess (stdout: the play's output)."""
        argv = [os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, playbook]
        if extra_vars:
            argv += ["-e", json.dumps(extra_vars)]
        if limit:
            argv += ["--limit", limit]
        if check:
            argv.append("--check")
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], ANSIBLE_NOCOLOR="1",
                   ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"))
        env.pop("ANSIBLE_INVENTORY", None)
        return subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, check=False)


def recap(output):
    """{host: {ok, changed, failed, ...}} of a play's PLAY RECAP (ints)."""
    totals = {}
    for line in output.split("PLAY RECAP", 1)[-1].splitlines()[1:]:
        if ":" not in line:
            continue
        host, counts = line.split(":", 1)
        totals[host.strip()] = {key: int(value) for key, value in (pair.split("=") for pair in counts.split())}
    return totals


def newest(mirror_dir):
    """The newest Kubernetes version the sandbox's mirror offers."""
    return max(os.listdir(mirror_dir), key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))
