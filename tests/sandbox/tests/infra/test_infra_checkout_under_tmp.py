# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A checkout anywhere works: every host mounts its own tmpfs over /tmp and /run, so a host that read or ran a
file from a checkout there (CI clones under /tmp) would find nothing. A sandbox made by a copy of the sandbox
under /tmp boots, answers SSH, runs its systemctl stand-in (and, once the operator installed them from the
mirror, containerd), and nothing on its hosts comes from the copy."""

import os
import shutil
import uuid

import node_setup
import pytest

from infra_support import DOWN_NAME, DOWN_SUBNET, REPO, SANDBOX_DIR, SandboxHandle, leftovers

pytestmark = [pytest.mark.sandbox]


def copy_of_the_checkout(directory):
    """What ``sandbox up`` needs of the checkout, copied under /tmp: the sandbox and the virtualenv (a link:
    build.py takes etcd from it). Nothing of the collection: the emulation does not use it."""
    checkout = directory / ("checkout-" + uuid.uuid4().hex[:12])
    shutil.copytree(SANDBOX_DIR, checkout / "tests" / "sandbox",
                    ignore=shutil.ignore_patterns("__pycache__", "tests"))
    (checkout / ".venv").symlink_to(os.path.join(REPO, ".venv"))
    return checkout


def test_a_sandbox_made_from_a_checkout_under_tmp_boots_and_uses_nothing_of_it(down_sandbox, under_tmp):
    checkout = copy_of_the_checkout(under_tmp)
    copy = SandboxHandle(DOWN_NAME, cli=str(checkout / "tests" / "sandbox" / "sandbox"))
    copy.cli("up", "--machines", "2", "--failure-domains", "2", "--subnet", DOWN_SUBNET)
    mirror = copy.record.mirror_dir
    for name in copy.hosts():
        assert copy.ssh(name, "hostname").stdout.strip() == name
        # The operator's install from the copy's mirror: units enabled and containerd started by the stand-in.
        node_setup.Node(copy.record.ssh_config, name).install_node_software(mirror, node_setup.newest_version(mirror))
        assert "containerd.service" in copy.ssh(name, "systemctl list-unit-files").stdout
        assert copy.ssh(name, "systemctl is-active containerd").stdout.strip() == "active"
        # Neither a mount nor a running program of the host names the copy (a process may end meanwhile).
        seen = copy.ssh(name, "cat /proc/self/mountinfo; for p in /proc/[0-9]*; do tr '\\0' ' ' <$p/cmdline; echo; "
                              "readlink $p/exe; done 2>/dev/null; true").stdout
        assert "systemd" in seen and checkout.name not in seen
    copy.cli("down")
    assert leftovers(DOWN_NAME, DOWN_SUBNET) == []
