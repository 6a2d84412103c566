# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared pieces of field-by-field validation: errors placed under a module option, and converters built
from a parser."""

import datetime

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import (
    REQUIRED,
    Field,
    any_mapping,
    boolean,
    child,
    describe,
    duration,
    error,
    integer,
    item,
    list_of,
    mapping,
    one_of,
    parsed_by,
    read_mapping,
    string,
    timestamp,
    under,
)


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


def read(convert, value, path="spec.field"):
    """(what ``convert`` returns, the errors it records) for ``value`` at ``path``."""
    errors = []
    return convert(value, path, errors), errors


def refused(path, rule, value):
    return None, [{"path": path, "rule": rule, "value": value}]


@pytest.mark.parametrize("convert, value, expected", [
    (integer(1, 65535), 1, (1, [])),
    (integer(1, 65535), 65535, (65535, [])),
    (integer(1, 65535), 0, refused("spec.field", "must be >= 1", 0)),
    (integer(1, 65535), 65536, refused("spec.field", "must be <= 65535", 65536)),
    (integer(), -5, (-5, [])),
    (integer(), True, refused("spec.field", "must be an integer", True)),
    (integer(), "3", refused("spec.field", "must be an integer", "3")),
    (boolean, False, (False, [])),
    (boolean, "yes", refused("spec.field", "must be true or false", "yes")),
    (string(), "x", ("x", [])),
    (string(), 5, refused("spec.field", "must be a string", 5)),
    (string(), "", refused("spec.field", "must not be empty", "")),
    (string(non_empty=False), "", ("", [])),
    (string("[a-z]+"), "abc", ("abc", [])),
    (string("[a-z]+"), "abc1", refused("spec.field", "must match [a-z]+", "abc1")),
    (string("[a-z]+", "may hold only a-z"), "ABC", refused("spec.field", "may hold only a-z", "ABC")),
    (one_of("rolling", "in_place"), "in_place", ("in_place", [])),
    (one_of("rolling", "in_place"), "inplace", refused("spec.field", "must be one of rolling, in_place", "inplace")),
    (one_of(1, 2), True, refused("spec.field", "must be one of 1, 2", True)),
    (duration(), "1h30m", (5400.0, [])),
    (duration(), "soon", refused("spec.field", "must be a duration such as 90s, 5m or 1h30m, or a number of seconds >= 0", "soon")),
    (duration(30.0), 30, (30.0, [])),
    (duration(30.0), "29s", refused("spec.field", "must be at least 30s", "29s")),
    (timestamp, "2026-11-22T11:00:00+01:00", ("2026-11-22T11:00:00+01:00", [])),
    (timestamp, datetime.datetime(2026, 11, 22, 11, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
     ("2026-11-22T10:00:00Z", [])),
    (timestamp, "2026-11-22", refused("spec.field", "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z", "2026-11-22")),
    (any_mapping, {"image": "debian-12"}, ({"image": "debian-12"}, [])),
    (any_mapping, ["debian-12"], refused("spec.field", "must be a mapping", ["debian-12"])),
    (list_of(integer()), [1, 2], ([1, 2], [])),
    (list_of(integer()), [], ([], [])),
    (list_of(integer(), non_empty=True), [], refused("spec.field", "must hold at least one item", [])),
    (list_of(integer()), {"a": 1}, refused("spec.field", "must be a list", {"a": 1})),
    (list_of(integer()), [1, "2"], ([1, None], [{"path": "spec.field[1]", "rule": "must be an integer", "value": "2"}])),
], ids=[
    "an integer at the minimum is kept",
    "an integer at the maximum is kept",
    "an integer below the minimum is refused",
    "an integer above the maximum is refused",
    "an integer without bounds may be negative",
    "a boolean is not an integer",
    "a numeric string is not an integer",
    "false is a boolean",
    "the string yes is not a boolean",
    "a string is kept",
    "a number is not a string",
    "an empty string is refused by default",
    "an empty string may be allowed",
    "a string matching the pattern is kept",
    "a string not matching the pattern names the pattern when no rule is given",
    "a string not matching the pattern says the rule given",
    "one of the choices is kept",
    "a value not among the choices names them",
    "a boolean is not the number it equals",
    "a Go duration becomes float seconds",
    "a duration in words is refused",
    "a duration at the minimum is kept",
    "a duration below the minimum names the minimum",
    "a timestamp string is kept as given",
    "a YAML datetime becomes its UTC string",
    "a date without a time is not a timestamp",
    "a free-form mapping is kept",
    "a list is not a free-form mapping",
    "a list has each item read",
    "an empty list is a list",
    "an empty list may be refused",
    "a mapping is not a list",
    "an item in error is placed at its index",
])
def test_each_converter_keeps_good_values_and_names_the_rule_for_bad_ones(convert, value, expected):
    assert read(convert, value) == expected


def test_a_free_form_mapping_is_a_copy_of_the_one_given():
    given = {"labels": {"tier": "control-plane"}}
    kept, _errors = read(any_mapping, given)
    kept["labels"]["tier"] = "changed"
    assert given == {"labels": {"tier": "control-plane"}}


FIELDS = {
    "name": Field(string(), REQUIRED),
    "port": Field(integer(1, 65535), 6443),
    "after": Field(timestamp),
    "limits": Field(mapping({"cpus": Field(integer(1), 2)}), {}),
}


@pytest.mark.parametrize("raw, value, errors", [
    ({"name": "api"}, {"name": "api", "port": 6443, "after": None, "limits": {"cpus": 2}}, []),
    ({"name": "api", "port": None, "limits": None}, {"name": "api", "port": 6443, "after": None, "limits": {"cpus": 2}}, []),
    ({"name": "api", "port": 7443, "limits": {"cpus": 4}}, {"name": "api", "port": 7443, "after": None, "limits": {"cpus": 4}}, []),
    ({"port": 7443}, {"name": None, "port": 7443, "after": None, "limits": {"cpus": 2}},
     [{"path": "spec.name", "rule": "is required", "value": None}]),
    ({"name": "api", "colour": "blue"}, {"name": "api", "port": 6443, "after": None, "limits": {"cpus": 2}},
     [{"path": "spec.colour", "rule": "unknown field; known: after, limits, name, port", "value": "blue"}]),
    ({"name": "api", "limits": {"cpus": 0}}, {"name": "api", "port": 6443, "after": None, "limits": {"cpus": None}},
     [{"path": "spec.limits.cpus", "rule": "must be >= 1", "value": 0}]),
], ids=[
    "missing keys take their defaults, read like given values",
    "a key given as null counts as missing",
    "given values are read",
    "a required key not given is an error",
    "an unknown key is an error naming the known ones",
    "an error inside a nested mapping has the nested path",
])
def test_a_mapping_is_read_against_its_table(raw, value, errors):
    found = []
    assert read_mapping(raw, "spec", found, FIELDS) == value
    assert found == errors


def test_a_mapping_that_is_not_one_is_refused_with_the_value_given():
    found = []
    assert read_mapping(["api"], "spec", found, FIELDS) is None
    assert found == [{"path": "spec", "rule": "must be a mapping", "value": ["api"]}]


def test_the_root_mapping_names_its_fields_without_a_leading_dot():
    found = []
    read_mapping({"port": 0}, "", found, FIELDS)
    assert [e["path"] for e in found] == ["name", "port"]


def test_a_default_is_copied_so_a_reader_cannot_change_it():
    table = {"tags": Field(lambda value, path, errors: value, {"a": []})}
    first = read_mapping({}, "", [], table)
    first["tags"]["a"].append("changed")
    assert read_mapping({}, "", [], table) == {"tags": {"a": []}}


@pytest.mark.parametrize("path, key, expected", [("", "replicas", "replicas"), ("endpoint", "port", "endpoint.port"), ("", 5, "5")],
                         ids=["a key of the root is its own path", "a nested key follows a dot", "a key that is a number reads as text"])
def test_the_path_of_a_key(path, key, expected):
    assert child(path, key) == expected


def test_the_path_of_an_item():
    assert item("health_check.unhealthy_conditions", 1) == "health_check.unhealthy_conditions[1]"


def test_every_error_is_described_as_path_and_rule():
    assert describe([error("replicas", "must be odd"), error("", "must be a mapping")]) == "replicas: must be odd; (top level): must be a mapping"
