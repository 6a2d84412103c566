# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go durations as kubeadm reads and writes them (``24h0m0s``, ``4m0s``, ``500ms``). Pure, no I/O.

Reading accepts Go's units (h, m, s, ms, us, µs, ns), fractions and several parts (``1h30m``); writing
uses Go's ``time.Duration.String()`` form: hours, minutes and seconds always spelt out below the largest
unit (``8760h0m0s``), sub-second values as ms / µs / ns, zero as ``0s``.
"""

from __future__ import annotations

import re

_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")


def parse(text):
    """Seconds (float) for a Go duration string, or ValueError saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("%r is not a duration such as '24h0m0s' or '90s'" % (text,))
    value = text.strip()
    sign = -1.0 if value.startswith("-") else 1.0
    value = value.lstrip("+-")
    if value == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _PART.finditer(value):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos == 0 or pos != len(value):
        raise ValueError("%r is not a duration such as '24h0m0s' or '90s'" % (text,))
    return sign * total


def render(seconds):
    """Go's ``Duration.String()`` for ``seconds``."""
    nanos = int(round(seconds * 1e9))
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1000:
        return "%s%dns" % (sign, nanos)
    if nanos < 1000000:
        return "%s%sµs" % (sign, _trim(nanos / 1e3))
    if nanos < 1000000000:
        return "%s%sms" % (sign, _trim(nanos / 1e6))
    hours, rest = divmod(nanos, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    secs = _trim(rest / 1e9)
    if hours:
        return "%s%dh%dm%ss" % (sign, hours, minutes, secs)
    if minutes:
        return "%s%dm%ss" % (sign, minutes, secs)
    return "%s%ss" % (sign, secs)


def _trim(number):
    text = ("%.9f" % number).rstrip("0").rstrip(".")
    return text or "0"
