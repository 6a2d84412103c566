# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one reading of max_unhealthy and unhealthy_range (MHC6, MHC7) that validation and the budget share."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.unhealthy_limit import (
    MAX_UNHEALTHY_RULE,
    RANGE_FORM_RULE,
    RANGE_ORDER_RULE,
    max_unhealthy_value,
    parse_unhealthy_range,
)


# MHC7: percentages round down; ints are used as they are.
@pytest.mark.parametrize(
    "max_unhealthy,expected,value",
    [("40%", 3, 1), ("34%", 3, 1), ("33%", 3, 0), ("100%", 5, 5), ("0%", 5, 0), ("150%", 2, 3), (2, 3, 2), (5, 3, 5), (0, 3, 0)],
    ids=[
        "40 percent of 3 is 1",
        "34 percent of 3 is 1",
        "33 percent of 3 is 0",
        "100 percent of 5 is 5",
        "0 percent of 5 is 0",
        "150 percent of 2 is 3",
        "the int 2 is 2",
        "an int larger than the targets is not clamped",
        "the int 0 is 0",
    ],
)
def test_max_unhealthy_value(max_unhealthy, expected, value):
    assert max_unhealthy_value(max_unhealthy, expected) == value


@pytest.mark.parametrize(
    "max_unhealthy",
    ["10", "40", "-1%", "40 %", "40%\n", "4.5%", "%", "", "\u0664\u0660%", -1, True, False, None, 4.0, ["40%"]],
    ids=[
        "a bare number string is refused",
        "a number string without its sign is refused",
        "a negative percentage is refused",
        "a percentage with a space is refused",
        "a percentage with a trailing newline is refused",
        "a fractional percentage is refused",
        "a lone percent sign is refused",
        "an empty string is refused",
        "a percentage in non-ASCII digits is refused",
        "a negative int is refused",
        "true is not an int",
        "false is not an int",
        "null is refused",
        "a float is refused",
        "a list is refused",
    ],
)
def test_a_malformed_max_unhealthy_raises_its_rule(max_unhealthy):
    with pytest.raises(ValueError) as raised:
        max_unhealthy_value(max_unhealthy, 3)
    assert str(raised.value) == MAX_UNHEALTHY_RULE


@pytest.mark.parametrize(
    "text,bounds",
    [("[0-0]", (0, 0)), ("[1-3]", (1, 3)), ("[10-20]", (10, 20)), ("[2-2]", (2, 2))],
    ids=["a range of zero", "a small range", "a range of two-digit bounds", "a range of one value"],
)
def test_unhealthy_range_parses(text, bounds):
    assert parse_unhealthy_range(text) == bounds


@pytest.mark.parametrize(
    "text,rule",
    [
        ("1-3", RANGE_FORM_RULE),
        ("[1-3", RANGE_FORM_RULE),
        ("[1,3]", RANGE_FORM_RULE),
        ("[-1-3]", RANGE_FORM_RULE),
        ("[1-3]\n", RANGE_FORM_RULE),
        ("[ 1-3]", RANGE_FORM_RULE),
        (None, RANGE_FORM_RULE),
        ([1, 3], RANGE_FORM_RULE),
        ("[3-1]", RANGE_ORDER_RULE),
        ("[10-9]", RANGE_ORDER_RULE),
    ],
    ids=[
        "a range without brackets breaks the form",
        "a range without its closing bracket breaks the form",
        "a range with a comma breaks the form",
        "a negative bound breaks the form",
        "a trailing newline breaks the form",
        "a space inside the brackets breaks the form",
        "null breaks the form",
        "a list breaks the form",
        "a range that runs backwards breaks the order",
        "two-digit bounds are compared as numbers, not text",
    ],
)
def test_a_malformed_unhealthy_range_raises_the_rule_it_breaks(text, rule):
    with pytest.raises(ValueError) as raised:
        parse_unhealthy_range(text)
    assert str(raised.value) == rule


@pytest.mark.parametrize(
    "field,parse,message",
    [
        ("max_unhealthy", lambda: max_unhealthy_value("10", 3), "max_unhealthy must be an integer >= 0 or a percentage such as \"40%\""),
        ("unhealthy_range", lambda: parse_unhealthy_range("1-3"), "unhealthy_range must be \"[a-b]\" with whole numbers a <= b, such as \"[1-3]\""),
        ("unhealthy_range", lambda: parse_unhealthy_range("[3-1]"), "unhealthy_range must be \"[a-b]\" with a <= b"),
    ],
    ids=[
        "a malformed max_unhealthy is told the forms it may take",
        "a malformed unhealthy_range is told its form with an example",
        "a backwards unhealthy_range is told the order of its bounds",
    ],
)
def test_each_rule_reads_as_a_sentence_after_the_field_name(field, parse, message):
    with pytest.raises(ValueError) as raised:
        parse()
    assert "%s %s" % (field, raised.value) == message
