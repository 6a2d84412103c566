# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The molecule scenario extensions/molecule/sandbox end to end, run as a collection's developer runs it (`molecule
test -s sandbox` from the collection's root): the sandbox as molecule's driver (a sandbox of one bare host of its own,
extensions/molecule/sandbox/molecule.yml), the create flow as its converge, a second converge that changes nothing
(idempotence), testinfra over SSH as its verifier, and the sandbox destroyed."""

import os
import re
import subprocess

import pytest

from e2e_support import BIN, CLI, ROOT, state

pytestmark = pytest.mark.sandbox
SCENARIO = "sandbox"
SANDBOX = "t-molec"  # extensions/molecule/sandbox/molecule.yml, molecule_sandbox.name


def molecule_env():
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], ANSIBLE_NOCOLOR="1", NO_COLOR="1", PY_COLORS="0",
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"))
    for name in ("ANSIBLE_INVENTORY", "MOLECULE_GLOB", "FORCE_COLOR"):
        env.pop(name, None)
    return env


def test_molecule_test_creates_converges_idempotently_verifies_and_destroys():
    if os.geteuid() != 0:
        pytest.skip("the sandbox needs root")
    with state.lock_for_test_run(SANDBOX):
        try:
            done = subprocess.run([os.path.join(BIN, "molecule"), "test", "-s", SCENARIO], cwd=ROOT, env=molecule_env(),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=1800, check=False)
        finally:
            down = subprocess.run([CLI, "--name", SANDBOX, "down"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=180, check=False)
    output = done.stdout
    assert done.returncode == 0, output[-12000:]
    assert down.returncode == 0, down.stdout + down.stderr
    # each step of the sequence ran and succeeded: "[sandbox > verify] Executed: Successful" (or, in colour,
    # "sandbox ➜ verify: Executed: Successful")
    for action in ("create", "converge", "idempotence", "verify", "destroy"):
        assert re.search(r"\b%s\b\W+Executed: Successful" % action, output), (action, output[-12000:])
    assert "Idempotence test failed" not in output and "Executed: Failed" not in output, output[-12000:]
    # testinfra ran the scenario's tests and every one passed
    verified = output.split("Executing Testinfra tests", 1)[1].split("Verifier ", 1)[0]
    assert re.search(r"=+ \d+ passed in ", verified) and not re.search(r"\d+ (failed|errors?)\b", verified), verified[:8000]
    # converge ran this checkout (ANSIBLE_COLLECTIONS_PATH), not a copy molecule's prerun installed elsewhere
    assert "Another version of 'kubeadm.control_plane'" not in output
