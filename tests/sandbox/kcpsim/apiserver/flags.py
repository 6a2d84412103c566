# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command-line flags the way Kubernetes components take them (spf13/pflag style). Pure, no I/O.

kubeadm renders every flag as ``--name=value``; ``--name value`` and a bare ``--name`` for booleans are also
read. Flags a component does not model are accepted and ignored, as the emulation must start from any
manifest kubeadm writes. A malformed value of a modelled flag is an error naming the flag.
"""

from kcpsim.kubeadm import durations


class FlagError(ValueError):
    """A modelled flag has a value of the wrong kind, or an argument is not a flag."""


_TRUE = ("true", "1", "t", "yes")
_FALSE = ("false", "0", "f", "no")


def _convert(name, kind, text):
    if kind == "str":
        return text
    if kind == "bool":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise FlagError("--%s: %r is not a boolean" % (name, text))
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise FlagError("--%s: %r is not an integer" % (name, text))
    if kind == "duration":
        try:
            return durations.parse(text)
        except ValueError as exc:
            raise FlagError("--%s: %s" % (name, exc))
    if kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    raise AssertionError("unknown flag kind %r" % kind)


def parse(argv, spec):
    """Values for the flags in ``spec`` (``{name: (kind, default)}``, kinds str/bool/int/duration/list).

    Returns ``(values, ignored)``: ``values`` holds every name of ``spec`` (the default when absent),
    ``ignored`` the names of flags given but not modelled. All errors are collected into one FlagError.
    """
    values = {name: default for name, (kind, default) in spec.items()}
    ignored, errors = [], []
    args = list(argv)
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if not arg.startswith("-") or arg in ("-", "--"):
            errors.append("unexpected argument %r (only flags are accepted)" % arg)
            continue
        name, has_value, text = arg.lstrip("-").partition("=")
        kind = spec.get(name, (None, None))[0]
        takes_value = kind != "bool"
        if not has_value and takes_value and index < len(args) and not args[index].startswith("--"):
            text, has_value = args[index], True
            index += 1
        if kind is None:
            ignored.append(name)
            continue
        if not has_value:
            if kind == "bool":
                text = "true"
            else:
                errors.append("--%s needs a value" % name)
                continue
        try:
            values[name] = _convert(name, kind, text)
        except FlagError as exc:
            errors.append(str(exc))
    if errors:
        raise FlagError("; ".join(errors))
    return values, ignored
