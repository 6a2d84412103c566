"""Runs this collection's modules through ansible-core, as a user runs them: `ansible localhost -m ...`."""

import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)


def collections_path(root=ROOT):
    """Where ansible finds this checkout as kubeadm.control_plane: the ansible_collections tree it lies in (the copy
    `make unit` gives ansible-test), else the link `make setup` makes beside it (.collections, with awx.awx)."""
    tree = os.path.dirname(os.path.dirname(root))
    return os.path.dirname(tree) if os.path.basename(tree) == "ansible_collections" else os.path.join(root, ".collections")


COLLECTIONS = collections_path()


def ansible_env(**extra):
    """The environment that makes ansible find this checkout as kubeadm.control_plane and print JSON results."""
    env = dict(
        os.environ,
        PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
        ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
        ANSIBLE_CALLBACK_RESULT_FORMAT="json",
        ANSIBLE_LOCALHOST_WARNING="false",
        ANSIBLE_NOCOLOR="1",
    )
    env.update(extra)
    return env


ModuleRun = collections.namedtuple("ModuleRun", "outcome result rc output")


def run(module, args, check=False, extra=()):
    """ModuleRun of `ansible localhost -m <module> -a <args as JSON> <extra>`; a short module name is one of this
    collection's.

    `outcome` is what ansible printed before the result (SUCCESS, CHANGED, FAILED!); `output` is everything it
    printed, for tests that check what must never be shown (keys, tracebacks). A failed module exits non-zero
    too, so the outcome is read from the output. ansible-core 2.19 takes module arguments as inline JSON
    (`-a @file` is not accepted by ad hoc runs).
    """
    if "." not in module:
        module = "kubeadm.control_plane." + module
    command = [os.path.join(BIN, "ansible"), "localhost", "-m", module, "-a", json.dumps(args), *extra]
    if check:
        command.append("--check")
    done = subprocess.run(command, cwd=ROOT, env=ansible_env(), capture_output=True, text=True, timeout=180, check=False)
    output = done.stdout + done.stderr
    head, separator, body = done.stdout.partition(" => ")
    assert separator, "no module result in the output (rc %d):\n%s" % (done.returncode, output[-3000:])
    assert "Traceback" not in output
    result = json.JSONDecoder().raw_decode(body)[0]
    return ModuleRun(head.split("|")[-1].strip(), result, done.returncode, output)


def run_module(module, args, check=False, extra=()):
    """(outcome, result) of :func:`run`."""
    return run(module, args, check=check, extra=extra)[:2]
