# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go durations and RFC 3339 timestamps as the snapshot and the spec write them (timeutil)."""

import datetime

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import (
    PAST_BOUNDARY_SECONDS,
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


@pytest.mark.parametrize(
    "bad,message",
    [
        (True, "a duration is a string such as '5m' or a number of seconds, not a boolean"),
        (None, "a duration is a string such as '5m' or a number of seconds"),
        (-1, "a duration may not be negative"),
        ("", "an empty string is not a duration"),
        ("  ", "an empty string is not a duration"),
        ("-5m", "a duration may not be negative"),
        ("5d", "'5d' is not a duration: use units h, m, s, ms, as in '1h30m' or '90s'"),
        ("m", "'m' is not a duration: use units h, m, s, ms, as in '1h30m' or '90s'"),
    ],
    ids=[
        "a boolean is not a duration",
        "None is neither a string nor a number",
        "a negative number of seconds is refused",
        "an empty string is refused",
        "a blank string is refused as empty",
        "a negative duration string is refused as negative",
        "an unknown unit names the units allowed",
        "a unit without a number names the units allowed",
    ],
)
def test_a_bad_duration_says_exactly_what_is_wrong(bad, message):
    with pytest.raises(ValueError) as raised:
        parse_duration(bad)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "bad,message",
    [
        (datetime.datetime(2026, 11, 22, 10, 0, 0), "a timestamp needs a time zone"),
        (1700000000, "a timestamp is an RFC 3339 string such as '2026-11-22T10:00:00Z'"),
        ("2026-11-22", "'2026-11-22' is not an RFC 3339 timestamp such as '2026-11-22T10:00:00Z'"),
    ],
    ids=["a naive datetime needs a zone", "a number is not a timestamp", "a date alone is not a timestamp"],
)
def test_a_bad_timestamp_says_exactly_what_is_wrong(bad, message):
    with pytest.raises(ValueError) as raised:
        parse_time(bad)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "text",
    ["2026-11-22T10:00:00Z", "2026-11-22t10:00:00z", "2026-11-22 10:00:00Z", "2026-11-22T10:00:00+00:00"],
    ids=["upper-case Z is UTC", "lower-case z and t are UTC too", "a space may separate date and time", "a zero offset is UTC"],
)
def test_utc_timestamps_parse_in_every_rfc_3339_spelling(text):
    assert parse_time(text) == datetime.datetime(2026, 11, 22, 10, 0, 0, tzinfo=datetime.timezone.utc)


def test_a_look_past_a_strictly_crossed_boundary_waits_one_second():
    assert PAST_BOUNDARY_SECONDS == 1.0
