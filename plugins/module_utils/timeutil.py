# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Timestamps and durations as the spec and the snapshot write them. Pure functions, no clock.

Timestamps are RFC 3339 (``2026-11-22T10:00:00Z``, offsets allowed). Durations are Go-style strings
(``90s``, ``5m``, ``1h30m``, ``1.5h``, ``0``) or a number of seconds, as Kubernetes objects write them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

# A look this long after a boundary that is crossed only strictly ("timeout strictly before now") sees it crossed.
PAST_BOUNDARY_SECONDS = 1.0

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_duration(value):
    """Seconds (float) for a duration, or raise ValueError saying what is wrong with it."""
    if isinstance(value, bool):
        raise ValueError("a duration is a string such as '5m' or a number of seconds, not a boolean")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("a duration may not be negative")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("a duration is a string such as '5m' or a number of seconds")
    text = value.strip()
    if text in ("0", ""):
        if text == "":
            raise ValueError("an empty string is not a duration")
        return 0.0
    if text.startswith("-"):
        raise ValueError("a duration may not be negative")
    pos, total = 0, 0.0
    for match in _PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or pos == 0:
        raise ValueError("%r is not a duration: use units h, m, s, ms, as in '1h30m' or '90s'" % value)
    return total


def parse_time(value):
    """An aware datetime for an RFC 3339 timestamp, or raise ValueError."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("a timestamp needs a time zone")
        return value
    if not isinstance(value, str):
        raise ValueError("a timestamp is an RFC 3339 string such as '2026-11-22T10:00:00Z'")
    text = value.strip()
    if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", text):
        raise ValueError("%r is not an RFC 3339 timestamp such as '2026-11-22T10:00:00Z'" % value)
    parsed = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    return parsed


def format_time(moment):
    """The canonical form: UTC, seconds, trailing Z."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds_between(earlier, later):
    """``later - earlier`` in seconds, both timestamps (strings or datetimes)."""
    return (parse_time(later) - parse_time(earlier)).total_seconds()


def add_seconds(moment, seconds):
    return parse_time(moment) + timedelta(seconds=seconds)
