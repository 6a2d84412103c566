# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Label and field selectors of list and watch requests. Pure, no I/O.

Label selector (``labelSelector``): comma-separated requirements, all of which must hold:
``key`` (exists), ``!key`` (does not exist), ``key=v`` / ``key==v``, ``key!=v`` (true also when the label is
absent), ``key in (a,b)``, ``key notin (a,b)`` (true also when absent).

Field selector (``fieldSelector``): ``field=v`` / ``field==v`` / ``field!=v`` joined by commas, over the fields
the real server indexes for that resource: every resource has ``metadata.name`` and ``metadata.namespace``;
pods add ``spec.nodeName``, ``spec.schedulerName``, ``status.phase``; nodes ``spec.unschedulable``; secrets
``type``; CSRs ``spec.signerName``. Any other field is refused, as the real server does.
"""

import re


class SelectorError(ValueError):
    """The selector does not parse, or names a field the resource cannot be selected by."""


_KEY = re.compile(r"^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$")
_SET = re.compile(r"^\s*(\S+)\s+(in|notin)\s+\((.*)\)\s*$")

FIELDS = {
    "pods": ("spec.nodeName", "spec.schedulerName", "status.phase", "spec.restartPolicy", "status.podIP"),
    "nodes": ("spec.unschedulable",),
    "secrets": ("type",),
    "certificatesigningrequests": ("spec.signerName",),
    "events": ("involvedObject.name", "involvedObject.kind", "involvedObject.namespace", "reason", "type"),
}
_COMMON_FIELDS = ("metadata.name", "metadata.namespace")
# What the real server compares when the field is absent from the stored object (its Go zero value).
_ABSENT = {"spec.unschedulable": "false"}


def _split(text):
    """Split on commas that are not inside parentheses."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _check_key(key, text):
    if not _KEY.match(key) or len(key.rpartition("/")[2]) > 63:
        raise SelectorError("unable to parse requirement: invalid label key %r in %r" % (key, text))


def parse_labels(text):
    """A list of requirements ``(key, operator, values)``; operators exists, !exists, =, !=, in, notin."""
    requirements = []
    for part in _split(text or ""):
        match = _SET.match(part)
        if match:
            key, operator, values = match.group(1), match.group(2), [v.strip() for v in match.group(3).split(",")]
            requirements.append((key, operator, tuple(v for v in values if v)))
        elif "!=" in part:
            key, value = part.split("!=", 1)
            requirements.append((key.strip(), "!=", (value.strip(),)))
        elif "=" in part:
            key, value = part.split("==" if "==" in part else "=", 1)
            requirements.append((key.strip(), "=", (value.strip(),)))
        elif part.startswith("!"):
            requirements.append((part[1:].strip(), "!exists", ()))
        else:
            requirements.append((part, "exists", ()))
        _check_key(requirements[-1][0], part)
    return requirements


def labels_match(requirements, labels):
    labels = labels or {}
    for key, operator, values in requirements:
        present = key in labels
        value = labels.get(key)
        if operator == "exists" and not present:
            return False
        if operator == "!exists" and present:
            return False
        if operator in ("=", "in") and (not present or value not in values):
            return False
        if operator in ("!=", "notin") and present and value in values:
            return False
    return True


def parse_fields(text, plural):
    """A list of ``(field, operator, value)``; operators = and !=. Unknown fields raise SelectorError."""
    allowed = _COMMON_FIELDS + FIELDS.get(plural, ())
    requirements = []
    for part in _split(text or ""):
        if "!=" in part:
            field, value = part.split("!=", 1)
            operator = "!="
        elif "=" in part:
            field, value = part.split("==" if "==" in part else "=", 1)
            operator = "="
        else:
            raise SelectorError("invalid selector: '%s'; can't understand '%s'" % (text, part))
        field = field.strip()
        if field not in allowed:
            raise SelectorError('field label not supported: %s' % field)
        requirements.append((field, operator, value.strip()))
    return requirements


def field_value(obj, field):
    """The string the real server compares for ``field`` (booleans as ``true``/``false``, absent as ``""``)."""
    value = obj
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return _ABSENT.get(field, "") if value is None else str(value)


def fields_match(requirements, obj):
    for field, operator, value in requirements:
        actual = field_value(obj, field)
        if (operator == "=") != (actual == value):
            return False
    return True
