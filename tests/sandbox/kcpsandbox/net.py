# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox network in the root namespace: bridge + VIP, the guards that keep its packets on this
machine, and one network namespace per host joined to the bridge by a veth with a fixed MAC.

Guards, made before the bridge and removed after it: a blackhole route for the subnet (metric 1000: if
the bridge is missing, packets are dropped rather than sent out of the default route), FORWARD accept
bridge-to-bridge (bridged frames pass iptables when br_netfilter is on) and drop bridge-to-elsewhere.
``up`` refuses to go on unless ``ip route get <first host IP>`` names the bridge.
"""

import ipaddress
import json
import os

from . import addressing
from .commands import WAIT_LIMIT, run, wait_until
from .errors import SandboxError

BLACKHOLE_METRIC = "1000"


def _forward_rules(bridge):
    # Inserted in this order at the top of FORWARD: the ACCEPT ends up above the DROP.
    return [["-i", bridge, "!", "-o", bridge, "-j", "DROP"],
            ["-i", bridge, "-o", bridge, "-j", "ACCEPT"]]


def _blackhole(net):
    return ["blackhole", net.subnet, "metric", BLACKHOLE_METRIC]


def subnet_in_use(net):
    """What already claims ``net.subnet`` on this machine (an address or a route), or None."""
    subnet = ipaddress.ip_network(net.subnet)
    for link in json.loads(run(["ip", "-j", "-4", "addr", "show"]).stdout or "[]"):
        for info in link.get("addr_info", []):
            if ipaddress.ip_network("%s/%s" % (info["local"], info["prefixlen"]), strict=False).overlaps(subnet):
                return "address %s/%s on %s" % (info["local"], info["prefixlen"], link["ifname"])
    for route in json.loads(run(["ip", "-j", "-4", "route", "show", "table", "all"]).stdout or "[]"):
        dst = route.get("dst", "")
        if dst in ("", "default") or route.get("table") == "local":
            continue
        if ipaddress.ip_network(dst if "/" in dst else dst + "/32", strict=False).overlaps(subnet):
            return "route %s (%s)" % (dst, route.get("type") or route.get("dev") or "?")
    return None


def create_guards(net):
    run(["ip", "route", "replace"] + _blackhole(net))
    for rule in _forward_rules(net.bridge):
        if run(["iptables", "-w", "-C", "FORWARD"] + rule, check=False).returncode != 0:
            run(["iptables", "-w", "-I", "FORWARD"] + rule)


def create_bridge(net):
    run(["ip", "link", "add", net.bridge, "address", net.bridge_mac, "type", "bridge"])
    run(["ip", "addr", "add", "%s/%d" % (net.gateway, net.prefixlen), "dev", net.bridge])
    run(["ip", "addr", "add", "%s/%d" % (net.vip, net.prefixlen), "dev", net.bridge])
    run(["ip", "link", "set", net.bridge, "up"])


def require_routed_via_bridge(net):
    """Refuse unless packets for the first host address would go out of the bridge."""
    probe = addressing.host_address(net, 1).ip
    done = run(["ip", "-j", "route", "get", probe], check=False)
    routes = json.loads(done.stdout or "[]") if done.returncode == 0 else []
    if not routes or routes[0].get("dev") != net.bridge:
        raise SandboxError("refusing to start: `ip route get %s` does not name %s (%s)"
                           % (probe, net.bridge, (done.stdout or done.stderr).strip()))


def create_host_link(net, address, netns):
    """The host's netns with ``eth0`` (fixed MAC, host IP, default route via the bridge) and ``lo`` up."""
    run(["ip", "netns", "add", netns])
    run(["ip", "link", "add", address.veth, "type", "veth", "peer", "name", "eth0", "address", address.mac,
         "netns", netns])
    run(["ip", "link", "set", address.veth, "master", net.bridge, "up"])
    run(["ip", "-n", netns, "addr", "add", "%s/%d" % (address.ip, net.prefixlen), "dev", "eth0"])
    run(["ip", "-n", netns, "link", "set", "eth0", "up"])
    run(["ip", "-n", netns, "link", "set", "lo", "up"])
    # Ansible's ansible_default_ipv4 needs a default route; nothing leaves: the root namespace has
    # ip_forward off, the FORWARD drop rule and the blackhole route.
    run(["ip", "-n", netns, "route", "add", "default", "via", net.gateway])


def netns_exists(netns):
    return os.path.exists(os.path.join("/run/netns", netns))


def netns_pids(netns):
    """Every process inside ``netns`` (found by namespace, whatever its name)."""
    if not netns_exists(netns):
        return []
    done = run(["ip", "netns", "pids", netns], check=False)
    return [int(pid) for pid in done.stdout.split()]


def delete_host_link(address, netns):
    if netns_exists(netns):
        run(["ip", "netns", "del", netns])
    # Deleting the netns destroys the veth pair, a moment later: delete it ourselves if it is still there.
    run(["ip", "link", "del", address.veth], check=False)
    wait_until(lambda: not link_exists(address.veth), WAIT_LIMIT, "link %s to go away" % address.veth)


def link_exists(name):
    return os.path.exists(os.path.join("/sys/class/net", name))


def delete_network(net, name):
    """Remove bridge, veths and guards of sandbox ``name`` (``net`` None when its subnet is unknown: then
    there is no blackhole route to remove either); safe to repeat."""
    for link in sandbox_links(name):
        run(["ip", "link", "del", link], check=False)
    for rule in _forward_rules(addressing.bridge_name(name)):
        # A rule inserted twice (an up that was retried) is deleted twice.
        for _attempt in range(10):
            if run(["iptables", "-w", "-D", "FORWARD"] + rule, check=False).returncode != 0:
                break
    while net and run(["ip", "route", "del"] + _blackhole(net), check=False).returncode == 0:
        pass


def sandbox_links(name):
    """Links in the root namespace that carry this sandbox's names: the bridge and the hosts' veths."""
    return sorted(link for link in os.listdir("/sys/class/net") if addressing.owns_link(name, link))


def sandbox_netns(name):
    """Network namespaces named for this sandbox's hosts (recorded or not: an up may have died in between)."""
    return sorted(ns for ns in (os.listdir("/run/netns") if os.path.isdir("/run/netns") else [])
                  if addressing.owns_netns(name, ns))


def leftovers(name, subnet):
    """What of sandbox ``name`` still exists in the root namespace (empty when fully torn down)."""
    found = ["netns " + ns for ns in sandbox_netns(name)]
    found += ["link " + link for link in sandbox_links(name)]
    bridge = addressing.bridge_name(name)
    found += ["iptables " + line for line in run(["iptables", "-w", "-S"]).stdout.splitlines()
              if bridge in line.split()]
    if subnet:
        routes = run(["ip", "route", "show", "table", "all", "root", subnet]).stdout.splitlines()
        found += ["route " + line for line in routes]
    return found
