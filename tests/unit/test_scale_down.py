# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which machine a scale down removes: SD1's five priority levels, then the failure-domain bucket."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import all_conditions
from ansible_collections.kubeadm.control_plane.plugins.module_utils.scale_down import select_machine

from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, snapshot

FDS = [{"name": "fd-a", "control_plane": True}, {"name": "fd-b", "control_plane": True}]


def select(machines, outdated, managed=True):
    snap = snapshot(machines, failure_domains=FDS, external=not managed)
    health = etcd_health.evaluate(snap["etcd"], machines)
    conditions = all_conditions(machines, managed, health["members_by_machine"])
    return select_machine(FDS, machines, set(outdated), conditions)


def m(name, created, fd="fd-a", **kw):
    return machine(name, fd=fd, created=created, **kw)


# (machines, outdated names, managed etcd, expected machine, expected priority)
LEVELS = [
    (
        "an outdated machine marked for deletion goes before a marked up-to-date one",
        [m("cp-1", 300, delete_requested=True), m("cp-2", 200, delete_requested=True), m("cp-3", 100)],
        ["cp-2", "cp-3"],
        True,
        "cp-2",
        1,
    ),
    (
        "a marked up-to-date machine goes before any unmarked outdated one",
        [m("cp-1", 300), m("cp-2", 200), m("cp-3", 100, delete_requested=True)],
        ["cp-1", "cp-2"],
        True,
        "cp-3",
        2,
    ),
    (
        "an outdated machine with a failing component goes before older outdated ones",
        [m("cp-1", 300), m("cp-2", 200), m("cp-3", 100, components={"scheduler": "unhealthy"})],
        ["cp-1", "cp-2", "cp-3"],
        True,
        "cp-3",
        3,
    ),
    (
        "a failing etcd pod counts only with managed etcd",
        [m("cp-1", 300), m("cp-2", 200), m("cp-3", 100, components={"etcd": "missing"})],
        ["cp-1", "cp-2", "cp-3"],
        False,
        "cp-1",
        4,
    ),
    (
        "a component in unknown state does not count as failing",
        [m("cp-1", 300), m("cp-2", 200), m("cp-3", 100, components={"api_server": "unknown"})],
        ["cp-1", "cp-2", "cp-3"],
        True,
        "cp-1",
        4,
    ),
    (
        "failing components on an up-to-date machine do not prioritise it",
        [m("cp-1", 300), m("cp-2", 200), m("cp-3", 100, components={"api_server": "unhealthy"})],
        ["cp-1", "cp-2"],
        True,
        "cp-1",
        4,
    ),
    (
        "the oldest outdated machine goes when nothing else applies",
        [m("cp-1", 100), m("cp-2", 300), m("cp-3", 200)],
        ["cp-1", "cp-3"],
        True,
        "cp-3",
        4,
    ),
    (
        "with nothing outdated or marked any machine may go",
        [m("cp-1", 100), m("cp-2", 300), m("cp-3", 200)],
        [],
        True,
        "cp-2",
        5,
    ),
    (
        "balance across failure domains beats age",
        [m("cp-1", 900, fd="fd-b"), m("cp-2", 200), m("cp-3", 100)],
        [],
        True,
        "cp-2",
        5,
    ),
    (
        "a machine already deleting is never selected",
        [m("cp-1", 900, deleting=True), m("cp-2", 200), m("cp-3", 100)],
        [],
        True,
        "cp-2",
        5,
    ),
]


@pytest.mark.parametrize("machines,outdated,managed,expected,priority", [c[1:] for c in LEVELS], ids=[c[0] for c in LEVELS])
def test_scale_down_priority(machines, outdated, managed, expected, priority):
    selection = select(machines, outdated, managed)
    assert (selection.machine, selection.priority) == (expected, priority)
    assert "SD1 priority %d" % priority in selection.detail


def test_a_plain_scale_down_can_only_use_priorities_two_and_five():
    machines = [m("cp-1", 300, components={"api_server": "unhealthy"}), m("cp-2", 200), m("cp-3", 100)]
    assert select(machines, []).priority == 5
    machines[2]["delete_requested"] = True
    assert select(machines, []).priority == 2


# (machines, outdated names, the whole Selection.detail the plan shows for the choice: priority, eligible machines, domain rule)
DETAILS = [
    (
        "priority one names the outdated marked machines",
        [m("cp-1", 300, delete_requested=True), m("cp-2", 200, delete_requested=True), m("cp-3", 100)],
        ["cp-2", "cp-3"],
        "SD1 priority 1 (outdated and marked for deletion): cp-2; "
        "FD5: fd-a holds the most eligible machines (1 of its 3); FD6: cp-2 is the oldest eligible there",
    ),
    (
        "priority two names the marked machines",
        [m("cp-1", 300), m("cp-2", 200, delete_requested=True), m("cp-3", 100, delete_requested=True)],
        ["cp-1"],
        "SD1 priority 2 (marked for deletion): cp-2, cp-3; "
        "FD5: fd-a holds the most eligible machines (2 of its 3); FD6: cp-2 is the oldest eligible there",
    ),
    (
        "priority three names the outdated machines with a failing component",
        [m("cp-1", 300), m("cp-2", 200, components={"etcd": "missing"}), m("cp-3", 100, components={"scheduler": "unhealthy"})],
        ["cp-1", "cp-2", "cp-3"],
        "SD1 priority 3 (outdated with a failing component): cp-2, cp-3; "
        "FD5: fd-a holds the most eligible machines (2 of its 3); FD6: cp-2 is the oldest eligible there",
    ),
    (
        "priority four names the outdated machines",
        [m("cp-1", 100), m("cp-2", 300), m("cp-3", 200)],
        ["cp-1", "cp-3"],
        "SD1 priority 4 (outdated): cp-1, cp-3; "
        "FD5: fd-a holds the most eligible machines (2 of its 3); FD6: cp-3 is the oldest eligible there",
    ),
    (
        "priority five names every machine not already deleting",
        [m("cp-1", 900, fd="fd-b"), m("cp-2", 200), m("cp-3", 100), m("cp-4", 50, deleting=True)],
        [],
        "SD1 priority 5 (any machine): cp-1, cp-2, cp-3; "
        "FD5: fd-a holds the most eligible machines (2 of its 3); FD6: cp-2 is the oldest eligible there",
    ),
]


@pytest.mark.parametrize("machines,outdated,detail", [c[1:] for c in DETAILS], ids=[c[0] for c in DETAILS])
def test_the_selection_detail_names_the_priority_the_eligible_machines_and_the_domain_rule(machines, outdated, detail):
    assert select(machines, outdated).detail == detail


def test_with_every_machine_already_deleting_nothing_is_selected_and_the_detail_says_none():
    selection = select([m("cp-1", 300, deleting=True), m("cp-2", 200, deleting=True)], [])
    assert (selection.machine, selection.priority, selection.eligible, selection.domain) == (None, 5, [], None)
    assert selection.detail.startswith("SD1 priority 5 (any machine): none; ")
    assert selection.detail.endswith("no eligible machine")
