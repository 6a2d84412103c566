# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running the machine's tools (ip, iptables, haproxy, nsenter) with a time limit, and waiting on conditions.

Every wait polls a condition until a deadline; nothing sleeps blindly.
"""

import os
import subprocess
import time

from .errors import SandboxError

DEFAULT_TIMEOUT = 30.0
# Limits of the waits for what a loaded 2-core CI machine may take seconds to do (a host's PID 1 and sshd,
# HAProxy serving, processes ending); every wait returns as soon as its condition holds.
WAIT_LIMIT = 30.0


def run(argv, check=True, input_text=None, timeout=DEFAULT_TIMEOUT, env=None):
    """Run ``argv``; with ``check``, a non-zero exit raises SandboxError quoting the command and its stderr."""
    try:
        # Without input, stdin is /dev/null: a child such as ssh must not share (and set non-blocking) ours.
        stdin = {"input": input_text} if input_text is not None else {"stdin": subprocess.DEVNULL}
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, env=env, **stdin)
    except FileNotFoundError:
        raise SandboxError("%s is not installed (make setup installs what the sandbox needs)" % argv[0])
    except subprocess.TimeoutExpired:
        raise SandboxError("%s did not finish within %.0fs" % (" ".join(argv), timeout))
    if check and done.returncode != 0:
        raise SandboxError("%s failed (exit %d): %s" % (" ".join(argv), done.returncode,
                                                        (done.stderr or done.stdout).strip()))
    return done


def where_to_look(logs, lines=6):
    """"see <log>" for each of ``logs``, with its last ``lines`` lines: a failed ``up`` removes the state
    dir, logs included, so the error itself must carry what they said."""
    parts = []
    for path in logs:
        try:
            with open(path, "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
                last = handle.read().decode(errors="replace").splitlines()[-lines:]
        except OSError:
            last = []
        parts.append("see %s%s" % (path, "".join("\n    | " + line for line in last)))
    return "; ".join(parts)


def wait_until(condition, timeout, what, logs=(), interval=0.02):
    """Poll ``condition()`` until it returns a true value (returned) or ``timeout`` seconds pass: then
    SandboxError naming ``what`` was awaited and the ``logs`` that tell why (either may be a function,
    called then, to name only what is still missing)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            what, logs = (text() if callable(text) else text for text in (what, logs))
            raise SandboxError("timed out after %.1fs waiting for %s%s"
                               % (timeout, what, "; " + where_to_look(logs) if logs else ""))
        time.sleep(interval)
