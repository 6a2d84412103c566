# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Required fields on the way in: the real server's behaviour that strict clients depend on. Pure, no I/O.

The real API server decodes into Go structs and writes every non-omitempty field back out, so a client never
sees an object without a required field — and the official Python client refuses one. Two rules, over the
table required_fields.py generated from that client's models:

* under ``status`` (written by kubelets and controllers) a missing required scalar gets its Go zero value
  (``""``, ``0``, ``false``), as the real server's round trip through Go gives it;
* everywhere else a missing required field is refused (422, ``<path>: Required value``), as the real server's
  validation refuses an ownerReference without ``uid``, a container without ``name``, a CSR without
  ``spec.request``; a required list, object or quantity under ``status`` is refused the same way.
"""

from kcpsim.apiserver import required_fields

_ZERO = {"str": "", "int": 0, "bool": False, "float": 0.0}


def _walk(type_name, value, path, in_status, problems):
    if not isinstance(value, dict):
        return
    for field, (shape, required, child) in required_fields.TYPES.get(type_name, {}).items():
        field_path = path + field
        under_status = in_status or field_path == "status"
        current = value.get(field)
        if current is None:
            if not required:
                continue
            if under_status and shape in _ZERO:
                value[field] = _ZERO[shape]
            else:
                problems.append((field_path, "Required value"))
            continue
        if child is None:
            continue
        if shape == "obj":
            _walk(child, current, field_path + ".", under_status, problems)
        elif shape == "list" and isinstance(current, list):
            for index, item in enumerate(current):
                _walk(child, item, "%s[%d]." % (field_path, index), under_status, problems)


def complete(kind, obj):
    """Fill zero values into ``obj`` (in place) and return the ``(field, message)`` of every missing field
    that is refused instead; kinds without a table pass unchanged."""
    problems = []
    type_name = required_fields.KINDS.get(kind)
    if type_name:
        _walk(type_name, obj, "", False, problems)
    return problems
