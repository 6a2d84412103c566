# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names and addresses of everything a sandbox makes, derived from its name and subnet (pure).

Rules (DESIGN.md "Runtime layout"): the subnet is a private IPv4 /24; the bridge, i.e. the controller
side, is ``.1``; the API endpoint VIP is ``.100``; the host in slot ``i`` (1..89) is ``.(10 + i)`` with
MAC ``02:6b:63:<third octet>:00:<i>`` (hex), so a host re-created in the same slot keeps its MAC and no
stale ARP entry stalls the first connection. The bridge has the fixed MAC of slot 0: left to itself, a
Linux bridge takes the lowest MAC of its ports and changes it when a machine comes or goes, and every host
would then send to a MAC that no longer answers until its ARP entry for the bridge goes stale. Interface names fit Linux's 15 characters: bridge
``kcpbr-<name>``, the controller-side end of a host's veth ``kv<name>-<i>``; netns ``kcp-<name>.<host>``.
A sandbox name is 1-9 of ``a-z 0-9 -`` (starting and ending alphanumeric); host names are DNS-1123 labels.
Names tell their sandbox apart exactly, even when one sandbox name starts another (``t`` and ``t-infra``):
no ``.`` occurs in a sandbox name, and a veth name ends in the slot's digits after the whole sandbox name.
"""

import ipaddress
import re
from dataclasses import dataclass

SANDBOX_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,7}[a-z0-9])?$")
HOST_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
FIRST_HOST_OCTET = 11
VIP_OCTET = 100
MAX_SLOTS = VIP_OCTET - FIRST_HOST_OCTET
PRIVATE_RANGES = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
API_PORT = 6443


@dataclass(frozen=True)
class Network:
    """The controller side of one sandbox's network."""

    name: str
    subnet: str
    bridge: str
    bridge_mac: str
    gateway: str
    vip: str
    prefixlen: int


@dataclass(frozen=True)
class HostAddress:
    """Where one host sits on the sandbox network."""

    slot: int
    ip: str
    mac: str
    veth: str


def sandbox_name_problems(name):
    if not SANDBOX_NAME.match(name or ""):
        return ["--name %r: must be 1-9 characters of a-z, 0-9 and '-', starting and ending with a letter or "
                "digit (the bridge name kcpbr-<name> must fit 15 characters)" % (name,)]
    return []


def host_name_problems(name, field="--name"):
    if not HOST_NAME.match(name or ""):
        return ["%s %r: must be a DNS-1123 label (a-z, 0-9, '-', at most 63, starting and ending alphanumeric)"
                % (field, name)]
    return []


def worker_group_problems(group, field="--worker-group"):
    """Why ``group`` cannot name a worker group: it is the value of its Nodes' worker-group label."""
    if not LABEL_VALUE.match(group):
        return ["%s %r: must be a Kubernetes label value (the Node label the group is read from)" % (field, group)]
    return []


def subnet_problems(subnet):
    """Why ``subnet`` cannot hold a sandbox: it must be a private IPv4 /24 given by its network address."""
    try:
        net = ipaddress.ip_network(subnet, strict=True)
    except ValueError as exc:
        return ["--subnet %r: not an IPv4 network address with prefix (%s)" % (subnet, exc)]
    problems = []
    if net.version != 4 or net.prefixlen != 24:
        problems.append("--subnet %s: must be an IPv4 /24 (the layout uses .1, .11-.99 and .100)" % subnet)
    elif not any(net.subnet_of(private) for private in PRIVATE_RANGES):
        problems.append("--subnet %s: must lie in a private range (10/8, 172.16/12, 192.168/16)" % subnet)
    return problems


def bridge_name(name):
    return "kcpbr-" + name


def _mac(subnet, slot):
    return "02:6b:63:%02x:00:%02x" % (subnet.network_address.packed[2], slot)


def network(name, subnet):
    net = ipaddress.ip_network(subnet)
    base = net.network_address
    return Network(name=name, subnet=str(net), bridge=bridge_name(name), bridge_mac=_mac(net, 0), gateway=str(base + 1),
                   vip=str(base + VIP_OCTET), prefixlen=net.prefixlen)


def host_address(net, slot):
    if not 1 <= slot <= MAX_SLOTS:
        raise ValueError("host slot %d is outside 1..%d" % (slot, MAX_SLOTS))
    subnet = ipaddress.ip_network(net.subnet)
    return HostAddress(slot=slot, ip=str(subnet.network_address + FIRST_HOST_OCTET - 1 + slot), mac=_mac(subnet, slot),
                       veth="kv%s-%d" % (net.name, slot))


def netns_name(sandbox_name, host):
    return "kcp-%s.%s" % (sandbox_name, host)


def owns_netns(sandbox_name, netns):
    """Whether the network namespace ``netns`` is one of sandbox ``sandbox_name``'s hosts'."""
    return netns.startswith(netns_name(sandbox_name, ""))


def owns_link(sandbox_name, link):
    """Whether the root-namespace link ``link`` is sandbox ``sandbox_name``'s bridge or one of its veths."""
    return link == bridge_name(sandbox_name) or re.fullmatch(r"kv%s-\d+" % re.escape(sandbox_name), link) is not None


def free_slot(used_slots, last_slot):
    """The slot for a new host: the first free one after ``last_slot``, wrapping around.

    Slots (hence IPs) are not reused right away, so nothing cached for a deleted host's IP (an SSH
    control connection, an etcd peer URL) meets a different machine soon after.
    """
    for step in range(1, MAX_SLOTS + 1):
        slot = (last_slot + step - 1) % MAX_SLOTS + 1
        if slot not in used_slots:
            return slot
    return None
