# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names and addresses the sandbox derives from its name and subnet; failure domain placement."""

import pytest

from kcpsandbox import addressing, placement


def test_the_network_puts_the_controller_on_dot_1_and_the_vip_on_dot_100():
    net = addressing.network("t-infra", "172.31.251.0/24")
    assert (net.bridge, net.gateway, net.vip, net.prefixlen) == ("kcpbr-t-infra", "172.31.251.1", "172.31.251.100", 24)
    assert net.bridge_mac == "02:6b:63:fb:00:00", "the bridge has the fixed MAC of slot 0, next to its hosts'"


@pytest.mark.parametrize("slot, ip, mac, veth", [
    (1, "172.31.251.11", "02:6b:63:fb:00:01", "kvt-infra-1"),
    (16, "172.31.251.26", "02:6b:63:fb:00:10", "kvt-infra-16"),
    (89, "172.31.251.99", "02:6b:63:fb:00:59", "kvt-infra-89"),
], ids=["the first host is .11", "MAC bytes are hex", "the last slot is .99, just below the VIP"])
def test_host_addresses_follow_the_slot(slot, ip, mac, veth):
    address = addressing.host_address(addressing.network("t-infra", "172.31.251.0/24"), slot)
    assert (address.ip, address.mac, address.veth) == (ip, mac, veth)


@pytest.mark.parametrize("slot", [0, 90], ids=["slot 0 does not exist", "slot 90 would be the VIP"])
def test_slots_outside_the_range_are_refused(slot):
    with pytest.raises(ValueError):
        addressing.host_address(addressing.network("kcp", "10.9.8.0/24"), slot)


def test_interface_names_fit_linux_limit_for_the_longest_name_and_slot():
    net = addressing.network("abcdefghi", "10.0.0.0/24")
    assert len(net.bridge) <= 15
    assert len(addressing.host_address(net, addressing.MAX_SLOTS).veth) <= 15


@pytest.mark.parametrize("name, ok", [
    ("kcp", True), ("t-infra", True), ("a", True), ("abcdefghi", True),
    ("abcdefghij", False), ("-kcp", False), ("kcp-", False), ("KCP", False), ("k_p", False), ("", False),
], ids=["kcp", "a dash inside", "one letter", "nine characters", "ten characters are too many",
        "a leading dash", "a trailing dash", "upper case", "an underscore", "empty"])
def test_sandbox_names_must_fit_the_bridge_name(name, ok):
    assert (addressing.sandbox_name_problems(name) == []) is ok


@pytest.mark.parametrize("subnet, fragment", [
    ("172.31.251.0/24", None),
    ("10.20.30.0/24", None),
    ("172.31.250.0/23", "must be an IPv4 /24"),
    ("172.31.251.5/24", "not an IPv4 network address"),
    ("8.8.8.0/24", "private range"),
    ("fd00::/64", "must be an IPv4 /24"),
    ("nonsense", "not an IPv4 network address"),
], ids=["a private /24", "another private range", "a /23 is refused", "host bits set are refused",
        "a public range is refused", "IPv6 is refused", "garbage is refused"])
def test_subnets_must_be_private_slash_24(subnet, fragment):
    problems = addressing.subnet_problems(subnet)
    if fragment is None:
        assert problems == []
    else:
        assert len(problems) == 1 and fragment in problems[0] and "--subnet" in problems[0]


@pytest.mark.parametrize("used, last, expected", [
    (set(), 0, 1),
    ({1, 2, 3}, 3, 4),
    ({1, 3}, 3, 4),
    ({2, 3}, 3, 4),
    ({88, 89}, 89, 1),
    (set(range(1, 90)), 5, None),
], ids=["an empty sandbox starts at slot 1", "the next slot after the last one",
        "a freed slot is not reused right away", "earlier free slots wait their turn",
        "allocation wraps around after the last slot", "a full subnet has no slot"])
def test_free_slot_continues_after_the_last_one(used, last, expected):
    assert addressing.free_slot(used, last) == expected


def test_up_spreads_machines_round_robin_over_failure_domains():
    domains = placement.failure_domain_names(3)
    counts, chosen = {}, []
    for _machine in range(5):
        domain = placement.choose_failure_domain(domains, counts)
        counts[domain] = counts.get(domain, 0) + 1
        chosen.append(domain)
    assert chosen == ["fd-1", "fd-2", "fd-3", "fd-1", "fd-2"]


@pytest.mark.parametrize("counts, expected", [
    ({"fd-1": 1, "fd-2": 0, "fd-3": 1}, "fd-2"),
    ({"fd-1": 2, "fd-2": 2, "fd-3": 1}, "fd-3"),
    ({"fd-1": 1, "fd-2": 1, "fd-3": 1}, "fd-1"),
    ({}, "fd-1"),
], ids=["a new machine refills the domain that lost one", "the emptiest domain wins",
        "a tie goes to the first declared domain", "no machines yet: the first domain"])
def test_machine_create_picks_the_least_populated_failure_domain(counts, expected):
    assert placement.choose_failure_domain(["fd-1", "fd-2", "fd-3"], counts) == expected


@pytest.mark.parametrize("sandbox, netns, owned", [
    ("t", "kcp-t.cp-1", True),
    ("t", "kcp-t-infra.cp-1", False),
    ("t-infra", "kcp-t-infra.cp-1", True),
    ("t-infra", "kcp-t.infra-cp-1", False),
    ("t", "kcpk-t.cp-1", False),
], ids=["its own host's namespace", "not a sandbox whose name it starts",
        "the longer name owns its own", "not a shorter name's host whose name looks like the rest",
        "not another tool's namespace"])
def test_a_sandbox_claims_exactly_its_own_network_namespaces(sandbox, netns, owned):
    assert addressing.owns_netns(sandbox, netns) is owned
    assert addressing.owns_netns(sandbox, addressing.netns_name(sandbox, "cp-1"))


@pytest.mark.parametrize("sandbox, link, owned", [
    ("t", "kcpbr-t", True),
    ("t", "kvt-3", True),
    ("t", "kcpbr-t-infra", False),
    ("t", "kvt-infra-3", False),
    ("t-1", "kvt-1-2", True),
    ("t", "kvt-1-2", False),
    ("t", "kvt-", False),
], ids=["its bridge", "its veth", "not the bridge of a sandbox whose name it starts", "not that sandbox's veth",
        "a name ending in a digit owns its veths", "a shorter name does not claim them", "no slot is no veth"])
def test_a_sandbox_claims_exactly_its_own_links(sandbox, link, owned):
    assert addressing.owns_link(sandbox, link) is owned
