# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go durations and RFC 3339 timestamps as the snapshot and the spec write them (timeutil)."""

import datetime

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import (
    add_seconds,
    format_time,
    parse_duration,
    parse_time,
    seconds_between,
)


@pytest.mark.parametrize(
    "text,seconds",
    [("90s", 90), ("5m", 300), ("1h30m", 5400), ("1.5h", 5400), ("0", 0), ("250ms", 0.25), (45, 45), (2.5, 2.5)],
    ids=repr,
)
def test_durations_parse_like_go(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "5", "5 m", "m5", "-5m", "5d", "1h-30m", True, None, [], -1], ids=repr)
def test_bad_durations_say_why(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_timestamps_parse_with_zone_and_format_in_utc():
    assert format_time(parse_time("2026-11-22T11:00:00+01:00")) == "2026-11-22T10:00:00Z"
    assert seconds_between("2026-11-22T10:00:00Z", "2026-11-22T10:05:00.5Z") == 300.5


@pytest.mark.parametrize("bad", ["2026-11-22", "2026-11-22T10:00:00", "yesterday", 1700000000, None], ids=repr)
def test_bad_timestamps_are_refused(bad):
    with pytest.raises(ValueError):
        parse_time(bad)


def test_a_zero_number_of_seconds_is_a_duration_and_a_negative_one_is_not():
    assert parse_duration(0) == 0.0
    with pytest.raises(ValueError, match="may not be negative"):
        parse_duration(-0.5)


def test_a_duration_of_units_only_is_refused():
    with pytest.raises(ValueError, match="is not a duration"):
        parse_duration("m")


def test_a_datetime_without_a_zone_is_refused_and_one_with_a_zone_is_taken_as_is():
    with pytest.raises(ValueError, match="needs a time zone"):
        parse_time(datetime.datetime(2026, 11, 22, 10, 0, 0))
    aware = datetime.datetime(2026, 11, 22, 10, 0, 0, tzinfo=datetime.timezone.utc)
    assert parse_time(aware) is aware


def test_adding_seconds_moves_forward_in_time():
    assert format_time(add_seconds("2026-11-22T10:00:00Z", 90)) == "2026-11-22T10:01:30Z"
