# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Field-by-field reading of user and observed input, collecting every error instead of stopping at the first.

Pure functions, no I/O. An error is a plain dict ``{"path": ..., "rule": ..., "value": ...}``: ``path`` names
the field with dots and ``[i]`` (``health_check.unhealthy_conditions[1].timeout``), ``rule`` says what the
field must be, ``value`` is what was given (``None`` when nothing was). Wrong types never raise: they become
errors, and the reader returns ``None`` for that field so later checks can skip it.

A mapping is read against a table ``{key: Field(convert, default)}``: unknown keys are errors naming the
key, a missing or null key takes the default (written as a user would write it, and read like user input),
and a key whose default is ``REQUIRED`` must be given. The root has the empty path.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import (
    format_time,
    parse_duration,
    parse_time,
)

REQUIRED = object()


def error(path, rule, value=None):
    return {"path": path, "rule": rule, "value": value}


def child(path, key):
    """The path of ``key`` inside the mapping at ``path`` (the root has the empty path)."""
    return "%s.%s" % (path, key) if path else str(key)


def item(path, index):
    return "%s[%d]" % (path, index)


def under(option, errors):
    """``errors`` with their paths put under ``option``, a module's option as the user wrote it."""
    return [dict(e, path="%s.%s" % (option, e["path"]) if e["path"] else option) for e in errors]


def describe(errors):
    """Every error as ``path: rule``, joined by ``; ``, as a module's ``msg`` lists them."""
    return "; ".join("%s: %s" % (e["path"] or "(top level)", e["rule"]) for e in errors)


class Field:
    """One key of a mapping: how to read its value, and its default (``REQUIRED`` when it has none).

    A default other than ``None`` is read through ``convert`` like a given value, so ``"5m"`` becomes 300.0
    and ``{}`` becomes a mapping with its own defaults filled in.
    """

    def __init__(self, convert, default=None):
        self.convert = convert
        self.default = default


def read_mapping(raw, path, errors, fields):
    """A new dict with every key of ``fields``: converted values, defaults for the missing ones.

    Returns ``None`` (after recording the error) when ``raw`` is not a mapping. A key given as null counts as
    missing, as in a Kubernetes object.
    """
    if not isinstance(raw, dict):
        errors.append(error(path, "must be a mapping", raw))
        return None
    for key in raw:
        if key not in fields:
            errors.append(error(child(path, key), "unknown field; known: %s" % ", ".join(sorted(fields)), raw[key]))
    out = {}
    for key, field in fields.items():
        value = raw.get(key)
        if value is None and field.default is REQUIRED:
            errors.append(error(child(path, key), "is required"))
            out[key] = None
        elif value is None and field.default is None:
            out[key] = None
        else:
            given = copy.deepcopy(field.default) if value is None else value
            out[key] = field.convert(given, child(path, key), errors)
    return out


def mapping(fields):
    """A converter for a nested mapping read with ``fields``."""
    return lambda value, path, errors: read_mapping(value, path, errors, fields)


def list_of(convert, non_empty=False):
    """A converter for a list whose items are read with ``convert``."""

    def read(value, path, errors):
        if not isinstance(value, list):
            errors.append(error(path, "must be a list", value))
            return None
        if non_empty and not value:
            errors.append(error(path, "must hold at least one item", value))
            return None
        return [convert(v, item(path, i), errors) for i, v in enumerate(value)]

    return read


def integer(minimum=None, maximum=None):
    """A converter for an integer in [minimum, maximum]; booleans and numeric strings are refused."""

    def read(value, path, errors):
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(error(path, "must be an integer", value))
            return None
        if minimum is not None and value < minimum:
            errors.append(error(path, "must be >= %d" % minimum, value))
            return None
        if maximum is not None and value > maximum:
            errors.append(error(path, "must be <= %d" % maximum, value))
            return None
        return value

    return read


def whole_number(value):
    """``value`` as an int when it is one (not a bool) or the ASCII digits a text gives (an inventory file, an extra
    var on the command line, a rendered template); None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


def boolean(value, path, errors):
    if not isinstance(value, bool):
        errors.append(error(path, "must be true or false", value))
        return None
    return value


def string(pattern=None, rule=None, non_empty=True):
    """A converter for a string, optionally matching ``pattern`` (``rule`` says what the pattern means)."""
    compiled = re.compile(pattern) if pattern else None

    def read(value, path, errors):
        if not isinstance(value, str):
            errors.append(error(path, "must be a string", value))
            return None
        if non_empty and not value:
            errors.append(error(path, "must not be empty", value))
            return None
        if compiled and not compiled.fullmatch(value):
            errors.append(error(path, rule or "must match %s" % pattern, value))
            return None
        return value

    return read


def one_of(*choices):
    """A converter for one of a few exact values."""

    def read(value, path, errors):
        if isinstance(value, bool) or value not in choices:
            errors.append(error(path, "must be one of %s" % ", ".join(str(c) for c in choices), value))
            return None
        return value

    return read


def parsed_by(parse):
    """A converter that keeps, as given, a value ``parse`` accepts; the message of its ValueError is the rule."""

    def read(value, path, errors):
        try:
            parse(value)
        except ValueError as exc:
            errors.append(error(path, str(exc), value))
            return None
        return value

    return read


def duration(minimum=0.0):
    """A converter for a Go-style duration (``90s``, ``5m``, ``1h30m``) or seconds; returns float seconds."""

    def read(value, path, errors):
        try:
            seconds = parse_duration(value)
        except ValueError:
            errors.append(error(path, "must be a duration such as 90s, 5m or 1h30m, or a number of seconds >= 0",
                                value))
            return None
        if seconds < minimum:
            errors.append(error(path, "must be at least %gs" % minimum, value))
            return None
        return seconds

    return read


def timestamp(value, path, errors):
    """An RFC 3339 timestamp, kept as the string given (a YAML-parsed datetime becomes its UTC string)."""
    try:
        moment = parse_time(value)
    except ValueError:
        errors.append(error(path, "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z", value))
        return None
    return value if isinstance(value, str) else format_time(moment)


def any_mapping(value, path, errors):
    """A free-form mapping, kept as given."""
    if not isinstance(value, dict):
        errors.append(error(path, "must be a mapping", value))
        return None
    return copy.deepcopy(value)
