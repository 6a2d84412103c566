# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Command lines read the way the Kubernetes components read them (spf13/pflag), for every emulated component
(kube-apiserver, kube-controller-manager, kube-scheduler, kubelet). Pure, no I/O.

* ``--name=value`` or ``--name value``; a boolean is ``--name`` or ``--name=<bool>`` with Go's
  ``strconv.ParseBool`` spellings, never ``--name false``; one leading dash reads like two; ``--`` ends the
  flags;
* a value flag without its value: ``flag needs an argument: --name``; a value of the wrong kind:
  ``invalid argument "x" for "--name" flag: <Go's parse error>``, as pflag words them;
* a list flag splits on commas, and a repeated one adds to the list given before (pflag's string slices);
  any other repeated flag keeps its last value;
* a flag the real component does not have in its minor (kcpsim/component_flags.py) is refused,
  ``unknown flag: --name``, as pflag refuses it; one it has that the emulation does not model is accepted and
  reported as ignored, and without ``=`` takes the next word as its value unless that word is a flag; ``_`` in a
  name reads as ``-`` (the components' word-separator normalizer);
* empty words (an empty ``$KUBELET_EXTRA_ARGS``) are skipped; the other words that are not flags are refused
  with the component's own message (``refuse_arguments``).

Every error is reported at once, in one FlagError, joined by ``; ``.
"""

import json

from kcpsim import component_flags, version
from kcpsim.kubeadm import durations

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class FlagError(ValueError):
    """A malformed command line; the message names every problem (the component exits 1 with it)."""


def known_flags(component):
    """The flag names ``component`` has in this copy's minor (kcpsim/version.py), None outside the table."""
    return component_flags.known(component, version.parse(version.current())[1])


def go_quote(text):
    """``text`` as Go's ``%q`` prints it (close enough for the ASCII of command lines)."""
    return json.dumps(text, ensure_ascii=False)


def no_arguments(command):
    """The cobra commands' refusal of positional words, as kube-apiserver, -controller-manager and -scheduler say it."""
    return lambda words: "%s does not take any arguments, got [%s]" % (go_quote(command), " ".join(go_quote(w) for w in words))


def _convert(kind, text):
    """The value of ``text`` as a flag of ``kind``; ValueError with Go's message when it is not one."""
    if kind == "bool":
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError("strconv.ParseBool: parsing %s: invalid syntax" % go_quote(text))
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError("strconv.ParseInt: parsing %s: invalid syntax" % go_quote(text)) from None
    if kind == "duration":
        try:
            return durations.parse(text)
        except ValueError:
            raise ValueError("time: invalid duration %s" % go_quote(text)) from None
    if kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    if kind == "str":
        return text
    raise AssertionError("unknown flag kind %r" % kind)


def parse(argv, spec, refuse_arguments, known=None):
    """``(values, ignored)`` for ``argv`` (without the program name).

    ``spec`` is ``{name: (kind, default)}`` with kinds str, bool, int, duration and list; ``values`` holds every
    name of ``spec`` (its default when not given), ``ignored`` the names of the flags given but not modelled.
    ``refuse_arguments(words)`` says why words that are not flags are refused. ``known``: every flag name the real
    component has (component_flags.known); a flag outside it and ``spec`` is an error. None accepts any.
    """
    values = {name: default for name, (kind, default) in spec.items()}
    given = set()
    ignored, errors, positional = [], [], []
    words = [word for word in argv if word != ""]
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            positional.extend(words[index:])
            break
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, has_value, text = word.lstrip("-").partition("=")
        name = name.replace("_", "-")
        kind = spec[name][0] if name in spec and (known is None or name in known) else None
        if not has_value and kind == "bool":
            text, has_value = "true", True
        elif not has_value and index < len(words) and (kind is not None or not words[index].startswith("-")):
            text, has_value = words[index], True
            index += 1
        if known is not None and name not in known:
            errors.append("unknown flag: --%s" % name)
        elif kind is None:
            ignored.append(name)
        elif not has_value:
            errors.append("flag needs an argument: %s" % word)
        else:
            try:
                value = _convert(kind, text)
            except ValueError as exc:
                errors.append("invalid argument %s for %s flag: %s" % (go_quote(text), go_quote("--" + name), exc))
                continue
            if kind == "list" and name in given:
                value = values[name] + value
            given.add(name)
            values[name] = value
    if positional:
        errors.append(refuse_arguments(positional))
    if errors:
        raise FlagError("; ".join(errors))
    return values, ignored
