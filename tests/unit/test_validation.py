# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared pieces of field-by-field validation: errors placed under a module option, and converters built
from a parser."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import error, parsed_by, under


@pytest.mark.parametrize("path, placed", [
    ("machines[1].created", "observed.machines[1].created"),
    ("now", "observed.now"),
    ("", "observed"),
], ids=[
    "a nested path goes under the option",
    "a top-level field goes under the option",
    "an error about the whole value names the option itself",
])
def test_errors_are_placed_under_the_option(path, placed):
    assert under("observed", [error(path, "is required")]) == [{"path": placed, "rule": "is required", "value": None}]


def _even(value):
    if not isinstance(value, int) or value % 2:
        raise ValueError("must be an even integer")
    return value // 2


@pytest.mark.parametrize("value, kept, errors", [
    (4, 4, []),
    (3, None, [{"path": "count", "rule": "must be an even integer", "value": 3}]),
    ("4", None, [{"path": "count", "rule": "must be an even integer", "value": "4"}]),
], ids=[
    "a value the parser accepts is kept as given, not as parsed",
    "the parser's message becomes the rule, with the path and the value",
    "a value of the wrong type is an error too, not a traceback",
])
def test_a_converter_built_from_a_parser(value, kept, errors):
    found = []
    assert parsed_by(_even)(value, "count", found) == kept
    assert found == errors
