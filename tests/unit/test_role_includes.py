# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the collection's roles include one another: without validating the included role's inputs against its
argument spec again. Those inputs are computed by the including role from inputs a playbook's role already
validated, and each validation is a task of its own (19 in a create, 37 in a rollout with max_surge 1, about 30 ms
each). A role a playbook includes, where the operator's inputs enter, is validated; so is a role an operator's own
playbook includes."""

import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDES = ("ansible.builtin.include_role", "ansible.builtin.import_role")


def tasks_of(items):
    """Every task in ``items``, those inside blocks too."""
    for item in items or []:
        yield item
        for section in ("block", "rescue", "always"):
            yield from tasks_of(item.get(section))


def role_includes():
    """(file, task name, the include's arguments) of every role include in the roles' task files."""
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "**", "*.yml"), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            for task in tasks_of(yaml.safe_load(handle)):
                for action in INCLUDES:
                    if action in task:
                        yield os.path.relpath(path, ROOT), task.get("name"), task[action]


def test_the_roles_include_the_collections_roles_without_validating_their_inputs_again():
    includes = list(role_includes())
    assert len(includes) > 40
    assert [(path, name) for path, name, arguments in includes
            if arguments["name"].startswith("kubeadm.control_plane.") and arguments.get("rolespec_validate") is not False] == []
