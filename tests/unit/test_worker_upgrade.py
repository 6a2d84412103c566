# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which workers an in-place upgrade takes next (docs/rules.md IP7): groups in order, batches, oldest first."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import worker_upgrade
from ansible_collections.kubeadm.control_plane.tests.unit.builders import NEXT, VERSION, upgrade, worker

SETTINGS = upgrade("in_place")["workers"]


def batch(workers, settings=None):
    found = worker_upgrade.next_batch(workers, NEXT, settings or SETTINGS)
    return found and (found.group, found.workers, found.left, found.limit, found.blocker and found.blocker["machines"])


def test_nothing_to_do_when_every_worker_runs_the_version():
    assert worker_upgrade.next_batch([worker("w-1", version=NEXT), worker("w-2", version=NEXT[1:])], NEXT, SETTINGS) is None


# (id, workers, settings, (group, batch, left, limit, machines blocking))
CASES = [
    ("one at a time, the oldest first", [worker("w-b", created=10), worker("w-a", created=20), worker("w-c", created=30)], SETTINGS,
     (None, ["w-c"], ["w-c", "w-a", "w-b"], 1, None)),
    ("ties in age go by name", [worker("w-b"), worker("w-a")], SETTINGS, (None, ["w-a"], ["w-a", "w-b"], 1, None)),
    ("max_unavailable 2 takes two", [worker("w-1", created=30), worker("w-2", created=20), worker("w-3", created=10)],
     upgrade("in_place", max_unavailable=2)["workers"], (None, ["w-1", "w-2"], ["w-1", "w-2", "w-3"], 2, None)),
    ("named groups in name order before the unnamed one", [worker("w-1"), worker("w-2", group="md-b"), worker("w-3", group="md-a")],
     SETTINGS, ("md-a", ["w-3"], ["w-3"], 1, None)),
    ("the unnamed group comes last", [worker("w-1"), worker("w-2", group="md-a", version=NEXT)], SETTINGS,
     (None, ["w-1"], ["w-1"], 1, None)),
    ("a group's own max_unavailable wins", [worker("w-%d" % i, group="md-a", created=100 - i) for i in range(4)],
     upgrade("in_place", groups={"md-a": 3})["workers"], ("md-a", ["w-0", "w-1", "w-2"], ["w-0", "w-1", "w-2", "w-3"], 3, None)),
    ("another group's setting does not apply", [worker("w-1", group="md-b"), worker("w-2", group="md-b", created=10)],
     upgrade("in_place", groups={"md-a": 3})["workers"], ("md-b", ["w-1"], ["w-1", "w-2"], 1, None)),
    ("an outdated worker already down goes first", [worker("w-1", created=50), worker("w-2", created=10, unschedulable=True)],
     SETTINGS, (None, ["w-2"], ["w-2", "w-1"], 1, None)),
    ("an upgraded worker not back yet holds its group", [worker("w-1", version=NEXT, ready=False), worker("w-2")], SETTINGS,
     (None, [], ["w-2"], 1, ["w-1"])),
    ("an upgraded worker still cordoned holds its group", [worker("w-1", version=NEXT, unschedulable=True), worker("w-2")], SETTINGS,
     (None, [], ["w-2"], 1, ["w-1"])),
    ("it leaves room for the rest of max_unavailable",
     [worker("w-1", version=NEXT, ready=False), worker("w-2", created=20), worker("w-3", created=10)],
     upgrade("in_place", max_unavailable=2)["workers"], (None, ["w-2"], ["w-2", "w-3"], 2, None)),
    ("a worker down in another group does not count", [worker("w-1", group="md-b", version=NEXT, ready=False), worker("w-2", group="md-a")],
     SETTINGS, ("md-a", ["w-2"], ["w-2"], 1, None)),
]


@pytest.mark.parametrize("workers,settings,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_next_batch(workers, settings, expected):
    assert batch(workers, settings) == expected


def test_a_group_held_by_a_worker_not_back_says_so():
    found = worker_upgrade.next_batch([worker("w-1", group="md-a", version=NEXT, ready=False), worker("w-2", group="md-a")], NEXT, SETTINGS)
    assert found.blocker["rule"] == "workers_unavailable"
    assert found.blocker["message"] == ("IP7: worker group md-a may have 1 worker down at once, and w-1, at %s already, is not Ready "
                                        "or cordoned" % NEXT)


def test_an_unknown_kubelet_version_is_outdated():
    assert [w["name"] for w in worker_upgrade.outdated([worker("w-1", version=None), worker("w-2", version=VERSION)], VERSION)] == ["w-1"]


# (id, workers, settings, the blocker's message)
HELD = [
    ("two workers of the unnamed group not back use up a limit of two",
     [worker("w-2", version=NEXT, ready=False), worker("w-1", version=NEXT, unschedulable=True), worker("w-3")],
     upgrade("in_place", max_unavailable=2)["workers"],
     "IP7: the unnamed worker group may have 2 workers down at once, and w-1, w-2, at %s already, are not Ready or cordoned" % NEXT),
    ("one worker of the unnamed group not back uses up a limit of one",
     [worker("w-1", version=NEXT, ready=False), worker("w-2")], SETTINGS,
     "IP7: the unnamed worker group may have 1 worker down at once, and w-1, at %s already, is not Ready or cordoned" % NEXT),
]


@pytest.mark.parametrize("workers,settings,message", [c[1:] for c in HELD], ids=[c[0] for c in HELD])
def test_a_held_group_names_its_limit_and_the_workers_down(workers, settings, message):
    found = worker_upgrade.next_batch(workers, NEXT, settings)
    assert (found.workers, found.blocker["rule"], found.blocker["message"]) == ([], "workers_unavailable", message)
