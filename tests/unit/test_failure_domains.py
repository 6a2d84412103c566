# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failure-domain placement for scale up (FD1–FD3) and the scale-down bucket (FD4–FD6)."""

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.filter.failure_domains import FilterModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils.failure_domains import (
    candidate_domains,
    scale_down_choice,
    scale_up_domain,
)

from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module
from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, snapshot


def fds(*names, off=()):
    """Failure domains `names` for the control plane, plus `off` ones that are not."""
    return [{"name": n, "control_plane": True} for n in names] + [{"name": n, "control_plane": False} for n in off]


def m(name, fd, created=100, **kw):
    return machine(name, fd=fd, created=created, **kw)


def test_only_control_plane_domains_are_candidates():
    assert candidate_domains(fds("fd-b", "fd-a", off=("fd-x",))) == ["fd-a", "fd-b"]


# (failure domains, machines, names of up-to-date machines, expected domain)
SCALE_UP = [
    ("with no control plane domain a new machine gets none", fds(off=("fd-x",)), [], set(), None),
    ("the first machine goes to the first domain by name", fds("fd-b", "fd-a"), [], set(), "fd-a"),
    (
        "the domain with the fewest up-to-date machines wins",
        fds("fd-a", "fd-b", "fd-c"),
        [m("cp-1", "fd-a"), m("cp-2", "fd-b"), m("cp-3", "fd-b")],
        {"cp-1", "cp-2", "cp-3"},
        "fd-c",
    ),
    (
        "outdated machines do not count towards balance",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a"), m("cp-2", "fd-a"), m("cp-3", "fd-b")],
        {"cp-3"},
        "fd-a",
    ),
    (
        "deleting machines do not count as up to date",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a"), m("cp-2", "fd-b", deleting=True), m("cp-3", "fd-b")],
        {"cp-1", "cp-2", "cp-3"},
        "fd-a",
    ),
    (
        "a tie goes to the domain with the fewest machines in total",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a"), m("cp-2", "fd-a"), m("cp-3", "fd-b")],
        set(),
        "fd-b",
    ),
    (
        "a tie in totals too goes to the smallest name",
        fds("fd-c", "fd-b"),
        [m("cp-1", "fd-b"), m("cp-2", "fd-c")],
        {"cp-1", "cp-2"},
        "fd-b",
    ),
    (
        "machines outside the candidate domains are ignored",
        fds("fd-a", "fd-b", off=("fd-x",)),
        [m("cp-1", "fd-a"), m("cp-2", None), m("cp-3", "fd-x"), m("cp-4", "fd-unknown")],
        {"cp-1", "cp-2", "cp-3", "cp-4"},
        "fd-b",
    ),
]


@pytest.mark.parametrize("domains,machines,up_to_date,expected", [c[1:] for c in SCALE_UP], ids=[c[0] for c in SCALE_UP])
def test_scale_up_domain(domains, machines, up_to_date, expected):
    assert scale_up_domain(domains, machines, up_to_date).domain == expected


# (failure domains, machines, names of the eligible machines, expected (machine, bucket))
SCALE_DOWN = [
    (
        "an eligible machine without a domain is removed before any balancing",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a", 300), m("cp-2", "fd-a", 200), m("cp-3", None, 100), m("cp-4", "fd-b", 50)],
        ["cp-1", "cp-2", "cp-3", "cp-4"],
        ("cp-3", None),
    ),
    (
        "an eligible machine in a domain not for the control plane goes first",
        fds("fd-a", off=("fd-x",)),
        [m("cp-1", "fd-a", 300), m("cp-2", "fd-a", 200), m("cp-3", "fd-x", 100)],
        ["cp-1", "cp-2", "cp-3"],
        ("cp-3", "fd-x"),
    ),
    (
        "among machines outside the domains the oldest one names the bucket",
        fds("fd-a"),
        [m("cp-1", "fd-gone", 100), m("cp-2", None, 300), m("cp-3", "fd-gone", 400), m("cp-4", "fd-a", 500)],
        ["cp-1", "cp-2", "cp-3", "cp-4"],
        ("cp-3", "fd-gone"),
    ),
    (
        "the domain with the most eligible machines gives up its oldest eligible machine",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-b", 900), m("cp-2", "fd-a", 300), m("cp-3", "fd-a", 200), m("cp-4", "fd-a", 100)],
        ["cp-1", "cp-2", "cp-3", "cp-4"],
        ("cp-2", "fd-a"),
    ),
    (
        # Cluster API v1.10+ (util/failuredomains PickMost, #11598), as v1.14 decides; v1.7.9 took fd-a, the biggest
        "the domain with the most eligible machines goes first, however many machines another holds",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a", 900), m("cp-2", "fd-a", 800), m("cp-3", "fd-a", 100), m("cp-4", "fd-b", 700), m("cp-5", "fd-b", 600)],
        ["cp-3", "cp-4", "cp-5"],
        ("cp-4", "fd-b"),
    ),
    (
        "a tie in eligible machines goes to the domain with more machines overall",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a", 900), m("cp-2", "fd-a", 800), m("cp-3", "fd-a", 100), m("cp-4", "fd-b", 700)],
        ["cp-3", "cp-4"],
        ("cp-3", "fd-a"),
    ),
    (
        "a bigger domain without eligible machines is skipped",
        fds("fd-a", "fd-b", "fd-c"),
        [m("cp-1", "fd-a", 900), m("cp-2", "fd-a", 800), m("cp-3", "fd-a", 700), m("cp-4", "fd-b", 100), m("cp-5", "fd-c", 50)],
        ["cp-4", "cp-5"],
        ("cp-4", "fd-b"),
    ),
    (
        "a tie in totals goes to the domain with more eligible machines",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a", 900), m("cp-2", "fd-a", 100), m("cp-3", "fd-b", 200), m("cp-4", "fd-b", 150)],
        ["cp-2", "cp-3", "cp-4"],
        ("cp-3", "fd-b"),
    ),
    (
        "a full tie goes to the smallest domain name",
        fds("fd-b", "fd-a"),
        [m("cp-1", "fd-b", 900), m("cp-2", "fd-a", 100)],
        ["cp-1", "cp-2"],
        ("cp-2", "fd-a"),
    ),
    (
        "without failure domains the oldest eligible machine goes",
        [],
        [m("cp-1", None, 100), m("cp-2", None, 300), m("cp-3", None, 200)],
        ["cp-1", "cp-2", "cp-3"],
        ("cp-2", None),
    ),
    (
        "equal creation times are broken by the smallest name",
        [],
        [m("cp-2", None, 100), m("cp-1", None, 100)],
        ["cp-1", "cp-2"],
        ("cp-1", None),
    ),
]


@pytest.mark.parametrize("domains,machines,eligible,expected", [c[1:] for c in SCALE_DOWN], ids=[c[0] for c in SCALE_DOWN])
def test_scale_down_choice(domains, machines, eligible, expected):
    choice = scale_down_choice(domains, machines, [x for x in machines if x["name"] in eligible])
    assert (choice.machine, choice.domain) == expected


def test_scale_down_choice_with_nothing_eligible_chooses_nothing():
    assert scale_down_choice(fds("fd-a"), [m("cp-1", "fd-a")], []).machine is None


def test_the_choice_explains_the_rules_it_applied():
    machines = [m("cp-1", "fd-a", 300), m("cp-2", "fd-a", 200), m("cp-3", "fd-b", 100)]
    choice = scale_down_choice(fds("fd-a", "fd-b"), machines, machines)
    assert choice.rule == "FD5" and "FD6: cp-1" in choice.detail
    assert choice.detail.startswith("fd-a holds the most eligible machines (2 of its 2)")
    outside = [m("cp-1", None, 300), m("cp-2", "fd-gone", 200), m("cp-3", "fd-a", 100)]
    assert scale_down_choice(fds("fd-a"), outside, outside).detail.startswith(
        "machines outside the control plane failure domains go first; the oldest of them is in no failure domain")
    assert "is in fd-gone" in scale_down_choice(fds("fd-a"), outside, outside[1:]).detail


# --- the same decisions as Jinja filters --------------------------------------------------------------------


def fleet_snapshot():
    machines = [m("cp-1", "fd-a", 300), m("cp-2", "fd-a", 200), m("cp-3", "fd-b", 100)]
    return snapshot(machines, failure_domains=fds("fd-a", "fd-b"))


@pytest.mark.parametrize(
    "name,kwargs,expected",
    [
        ("kcp_scale_up_failure_domain", {}, "fd-b"),
        ("kcp_scale_up_failure_domain", {"outdated": ["cp-3"]}, "fd-b"),
        ("kcp_scale_up_failure_domain", {"outdated": ["cp-1", "cp-2"]}, "fd-a"),
        ("kcp_scale_down_failure_domain", {}, "fd-a"),
        ("kcp_scale_down_failure_domain", {"eligible": ["cp-3"]}, "fd-b"),
    ],
    ids=[
        "the scale-up filter picks the emptiest domain",
        "an outdated machine does not count towards its domain",
        "outdated machines leave their domain free for the next machine",
        "the scale-down filter picks the fullest domain",
        "the scale-down filter only looks at the eligible machines given",
    ],
)
def test_filters(name, kwargs, expected):
    assert FilterModule().filters()[name](fleet_snapshot(), **kwargs) == expected


@pytest.mark.parametrize(
    "name,observed,kwargs,message",
    [
        ("kcp_scale_up_failure_domain", {"machines": []}, {}, "now"),
        ("kcp_scale_up_failure_domain", None, {"outdated": "cp-1"}, "list of machine names"),
        ("kcp_scale_down_failure_domain", None, {"eligible": []}, "no machine to choose from"),
    ],
    ids=[
        "a snapshot without now is refused naming the field",
        "outdated given as a string is refused",
        "nothing eligible is refused",
    ],
)
def test_filters_refuse_bad_input(name, observed, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        FilterModule().filters()[name](observed if observed is not None else fleet_snapshot(), **kwargs)


@pytest.mark.ansible
def test_the_filters_run_in_a_template(tmp_path):
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps({"observed": fleet_snapshot()}))
    up = "{{ observed | kubeadm.control_plane.kcp_scale_up_failure_domain }}"
    down = "{{ observed | kubeadm.control_plane.kcp_scale_down_failure_domain }}"
    outcome, result = run_module("ansible.builtin.debug", {"msg": up + "/" + down}, extra=("-e", "@%s" % variables))
    assert outcome == "SUCCESS" and result["msg"] == "fd-b/fd-a"


def test_fd4_takes_the_bucket_of_the_oldest_machine_outside_the_candidate_domains_not_the_oldest_overall():
    machines = [m("cp-1", "fd-a", 900), m("cp-2", "fd-x", 500), m("cp-3", None, 300), m("cp-4", "fd-y", 100)]
    choice = scale_down_choice(fds("fd-a", off=("fd-x",)), machines, machines)
    assert (choice.machine, choice.domain, choice.rule) == ("cp-2", "fd-x", "FD4")


def test_a_deleting_machine_leaves_its_domain_free_for_the_next_machine_even_if_it_was_up_to_date():
    machines = [m("cp-1", "fd-a"), m("cp-2", "fd-b", deleting=True)]
    assert scale_up_domain(fds("fd-a", "fd-b"), machines, {"cp-1", "cp-2"}).domain == "fd-b"


# (failure domains, machines, names of up-to-date machines, the whole choice as (domain, rule, detail))
SCALE_UP_EXPLAINED = [
    (
        "without a control plane domain the choice names FD1",
        fds(off=("fd-x",)),
        [m("cp-1", "fd-x")],
        {"cp-1"},
        (None, "FD1", "no failure domain is flagged for the control plane"),
    ),
    (
        "the choice names FD2 and counts every candidate domain, in name order",
        fds("fd-b", "fd-a", off=("fd-x",)),
        [m("cp-1", "fd-a"), m("cp-2", "fd-a"), m("cp-3", "fd-b"), m("cp-4", "fd-x")],
        {"cp-1", "cp-3", "cp-4"},
        ("fd-b", "FD2", "fewest up-to-date machines (fd-a: 1 up to date of 2, fd-b: 1 up to date of 1)"),
    ),
    (
        "the first machine's choice counts empty domains",
        fds("fd-a"),
        [],
        set(),
        ("fd-a", "FD2", "fewest up-to-date machines (fd-a: 0 up to date of 0)"),
    ),
]


@pytest.mark.parametrize("domains,machines,up_to_date,expected", [c[1:] for c in SCALE_UP_EXPLAINED], ids=[c[0] for c in SCALE_UP_EXPLAINED])
def test_the_scale_up_choice_says_which_rule_decided_and_why(domains, machines, up_to_date, expected):
    assert tuple(scale_up_domain(domains, machines, up_to_date)) == expected


# (failure domains, machines, names of the eligible machines, the whole choice as (machine, domain, rule, detail))
SCALE_DOWN_EXPLAINED = [
    (
        "nothing eligible chooses nothing and says so",
        fds("fd-a"),
        [m("cp-1", "fd-a")],
        [],
        (None, None, None, "no eligible machine"),
    ),
    (
        "a machine outside the domains is chosen by FD4 then FD6",
        fds("fd-a"),
        [m("cp-1", "fd-a", 300), m("cp-2", None, 200), m("cp-3", None, 100)],
        ["cp-1", "cp-2", "cp-3"],
        ("cp-2", None, "FD4", "machines outside the control plane failure domains go first; the oldest of them is in no failure domain; "
                              "FD6: cp-2 is the oldest eligible there"),
    ),
    (
        "balancing is chosen by FD5 then FD6",
        fds("fd-a", "fd-b"),
        [m("cp-1", "fd-a", 300), m("cp-2", "fd-a", 200), m("cp-3", "fd-a", 150), m("cp-4", "fd-b", 100)],
        ["cp-2", "cp-3", "cp-4"],
        ("cp-2", "fd-a", "FD5", "fd-a holds the most eligible machines (2 of its 3); FD6: cp-2 is the oldest eligible there"),
    ),
]


@pytest.mark.parametrize("domains,machines,eligible,expected", [c[1:] for c in SCALE_DOWN_EXPLAINED], ids=[c[0] for c in SCALE_DOWN_EXPLAINED])
def test_the_scale_down_choice_says_which_rules_decided_and_why(domains, machines, eligible, expected):
    assert tuple(scale_down_choice(domains, machines, [x for x in machines if x["name"] in eligible])) == expected
