# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running the machine's tools (ip, iptables, haproxy, nsenter) with a time limit, and waiting on conditions.

Every wait polls a condition until a deadline; nothing sleeps blindly.
"""

import subprocess
import time

from .errors import SandboxError

DEFAULT_TIMEOUT = 30.0


def run(argv, check=True, input_text=None, timeout=DEFAULT_TIMEOUT, env=None):
    """Run ``argv``; with ``check``, a non-zero exit raises SandboxError quoting the command and its stderr."""
    try:
        done = subprocess.run(argv, input=input_text, capture_output=True, text=True, timeout=timeout,
                              check=False, env=env)
    except FileNotFoundError:
        raise SandboxError("%s is not installed (make setup installs what the sandbox needs)" % argv[0])
    except subprocess.TimeoutExpired:
        raise SandboxError("%s did not finish within %.0fs" % (" ".join(argv), timeout))
    if check and done.returncode != 0:
        raise SandboxError("%s failed (exit %d): %s" % (" ".join(argv), done.returncode,
                                                        (done.stderr or done.stdout).strip()))
    return done


def wait_until(condition, timeout, what, interval=0.02):
    """Poll ``condition()`` until it returns a true value (returned) or ``timeout`` seconds pass (SandboxError)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise SandboxError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)
