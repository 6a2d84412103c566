# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounded waits that poll a condition (kubeadm's ``wait.PollUntilContextTimeout``)."""

from __future__ import annotations

import time


def wait_for(condition, timeout, interval, what):
    """Poll ``condition()`` every ``interval`` s until it returns a truthy value (returned) or ``timeout`` s pass.

    TimeoutError names ``what`` and the last exception ``condition`` raised, if any.
    """
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            result = condition()
            if result:
                return result
            last_error = None
        except Exception as exc:  # noqa: BLE001 - the condition's failure is the reason we keep polling
            last_error = exc
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            detail = ": %s" % last_error if last_error else ""
            raise TimeoutError("timed out after %s waiting for %s%s" % (_seconds(timeout), what, detail))
        time.sleep(min(interval, remaining))


def _seconds(value):
    return "%gs" % value
