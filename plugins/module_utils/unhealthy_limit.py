# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many unhealthy machines a health check tolerates: ``max_unhealthy`` and ``unhealthy_range`` (MHC6, MHC7).

Pure functions, no I/O. The one reading of both fields, used by the spec's validation and by the budget:

* ``max_unhealthy`` is an integer >= 0 used as is, or a whole percentage ``"N%"`` of the expected machines,
  rounded down; a bare ``"10"`` is refused, so that a forgotten ``%`` is not read as a count;
* ``unhealthy_range`` is ``"[a-b]"`` with whole numbers a <= b.

A malformed value raises ValueError whose message is the rule it breaks, worded to follow the field's name
("max_unhealthy must be ...").
"""

from __future__ import annotations

import re

MAX_UNHEALTHY_RULE = "must be an integer >= 0 or a percentage such as \"40%\""
RANGE_FORM_RULE = "must be \"[a-b]\" with whole numbers a <= b, such as \"[1-3]\""
RANGE_ORDER_RULE = "must be \"[a-b]\" with a <= b"

_PERCENT = re.compile(r"([0-9]+)%")
_RANGE = re.compile(r"\[([0-9]+)-([0-9]+)\]")


def parse_max_unhealthy(value):
    """(number, is_percentage) of a ``max_unhealthy``; ValueError(MAX_UNHEALTHY_RULE) when malformed."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, False
    match = _PERCENT.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(MAX_UNHEALTHY_RULE)
    return int(match.group(1)), True


def max_unhealthy_value(value, expected):
    """MHC7: the largest unhealthy count ``max_unhealthy`` tolerates among ``expected`` machines."""
    number, is_percentage = parse_max_unhealthy(value)
    return number * expected // 100 if is_percentage else number


def parse_unhealthy_range(value):
    """MHC6: (min, max) of an ``unhealthy_range``; ValueError naming the rule when malformed or max < min."""
    match = _RANGE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(RANGE_FORM_RULE)
    low, high = int(match.group(1)), int(match.group(2))
    if high < low:
        raise ValueError(RANGE_ORDER_RULE)
    return low, high
