# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a flow is given besides the spec, from the inventory: the candidate hosts, the machine provider, the node
software bundle, the external remediation's tasks, the most steps a run takes (docs/flows.md "What a run refuses, and where"). Every error at
once, each at the inventory variable (or ``<host>.<variable>``) that gives it, before any host is touched. Pure;
whether a path is a file or a directory is asked of the ``is_file`` and ``is_dir`` the caller gives."""

from __future__ import annotations

import re

from ansible_collections.kubeadm.control_plane.plugins.module_utils.flow_passes import STEPS_CEILING
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import endpoint_address, is_worker_group_name, uses_external_remediation
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import error, whole_number

PROVIDERS = ("static", "hook")
# The flow steps that build a machine or a worker on a host: they install the node software from the bundle.
BUILDING_ACTIONS = ("scale_up", "rollout", "upgrade_in_place", "upgrade_workers", "remediate_worker", "roll_workers")
# A Node's name, which an inventory host's name is: a DNS-1123 subdomain.
_NODE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
NODE_NAME_RULE = ("an inventory host of the group names its Node: must be a DNS-1123 subdomain (at most 253 characters "
                  "a-z, 0-9, '-' and '.', each part starting and ending with a letter or digit)")
FAILURE_DOMAIN_RULE = ("must be a failure domain's name, the value of the Node's zone label: one string of at most 63 "
                       "characters a-z, A-Z, 0-9, '-', '_' and '.', starting and ending with a letter or digit")


# What machine_info read of a candidate host (the observe role keeps it as the host's observe_machine) that
# kcp_observe takes with the host.
MACHINE_INFO_FIELDS = ("record", "record_error", "certificates_expire", "certificate_authorities_expire",
                       "kubelet_certificate_expire", "kubelet_certificate_rotates", "certificate_renewal")
ETCD_CLIENT_PORT = 2379


def candidate_hosts(names, host_vars, machine_info=None):
    """Each candidate host as kcp_validate and kcp_observe take it, from its inventory variables (``host_vars``, by
    name): ``{name, address, failure_domain}`` (the address: ansible_host, else the name), and with ``machine_info``,
    the name of the host variable holding what machine_info read, MACHINE_INFO_FIELDS of it."""
    hosts = []
    for name in names:
        variables = host_vars[name]
        host = {"name": name, "address": variables.get("ansible_host", name), "failure_domain": variables.get("failure_domain")}
        if machine_info:
            info = variables[machine_info]
            host.update((field, info[field]) for field in MACHINE_INFO_FIELDS)
        hosts.append(host)
    return hosts


def etcd_client_urls(names, host_vars):
    """The etcd client URL of each host of ``names`` (``https://<ansible_host, else the name>:2379``, an IPv6 address
    bracketed): stacked etcd listens on every control plane host."""
    return ["https://" + endpoint_address({"host": str(host_vars[name].get("ansible_host", name)).strip("[]"), "port": ETCD_CLIENT_PORT})
            for name in names]


def is_node_name(name):
    return isinstance(name, str) and len(name) <= 253 and _NODE_NAME.fullmatch(name) is not None


def inventory_errors(inventory, spec, is_file, is_dir):
    """The errors of ``inventory`` (kcp_validate's option of that name) for the normalized (or partly read)
    ``spec``."""
    actions = inventory.get("actions") or []
    building = any(action in BUILDING_ACTIONS for action in actions)
    errors = _host_errors(inventory.get("hosts") or [])
    errors += _provider_errors(inventory, is_file)
    hosts = inventory.get("hosts") or []
    replicas = (spec or {}).get("replicas")
    if building and inventory.get("provider") == "static" and isinstance(replicas, int) and replicas > len(hosts):
        errors.append(error("replicas", "the static pool (inventory group %s) has %d host%s: add hosts, or declare fewer "
                                        "replicas" % (inventory.get("group"), len(hosts), "" if len(hosts) == 1 else "s"), replicas))
    bundle = inventory.get("bundle_dir")
    if building and not (isinstance(bundle, str) and bundle and is_dir(bundle)):
        errors.append(error("kcp_bundle_dir", "must name the node software bundle's directory on the controller "
                                              "(docs/node-software.md)" + (": there is none at %s" % bundle if bundle else ""), bundle))
    if "remediate_external" in actions and uses_external_remediation(spec or {}):
        errors += _task_file_errors("kcp_remediation_tasks", inventory.get("remediation_tasks"), is_file,
                                    "the task file run for an unhealthy machine or worker, since remediation.external or a "
                                    "workers' external_remediation is set (docs/flows.md \"External remediation\")")
    errors += _max_steps_errors(inventory.get("max_steps"))
    return errors


def _max_steps_errors(max_steps):
    """The error of the most steps a run may take (kcp_max_steps), unset meaning the ceiling, or none."""
    if max_steps is None:
        return []
    steps = whole_number(max_steps)  # an extra var given on the command line is text
    if steps is not None and 1 <= steps <= STEPS_CEILING:
        return []
    return [error("kcp_max_steps", "must be a whole number from 1 to %d: the most steps one run takes (one pass a step, "
                                   "docs/flows.md \"One pass\")" % STEPS_CEILING, max_steps)]


def worker_host_errors(workers):
    """The errors of the worker hosts' names (``workers``: inventory host -> its worker group), each at the host's
    name: a worker's inventory name names its Node, as a candidate's does."""
    return [error(str(name), NODE_NAME_RULE, name) for name in sorted(workers, key=str) if not is_node_name(name)]


def _task_file_errors(variable, path, is_file, what):
    """The error of a task file the flow includes (an absolute path, since a relative one is looked for beside the
    collection's own playbooks and roles), or none."""
    if isinstance(path, str) and path.startswith("/") and is_file(path):
        return []
    found = ": there is no file at %s" % path if isinstance(path, str) and path.startswith("/") else (
        ": %s is not an absolute path" % path if path else "")
    return [error(variable, "must be the absolute path of %s%s" % (what, found), path)]


def _host_errors(hosts):
    errors, addresses = [], {}
    for host in hosts:
        name = host.get("name")
        if not is_node_name(name):
            errors.append(error(str(name), NODE_NAME_RULE, name))
        domain = host.get("failure_domain")
        if isinstance(domain, int) and not isinstance(domain, bool):
            domain = str(domain)  # a YAML inventory's number, a label value once written
        if domain is not None and not is_worker_group_name(domain):
            errors.append(error("%s.failure_domain" % name, FAILURE_DOMAIN_RULE, domain))
        address = host.get("address") or name
        if address in addresses:
            errors.append(error("%s.ansible_host" % name, "is also the address of %s: two machines would be one host"
                                % addresses[address], address))
        addresses.setdefault(address, name)
    return errors


def _provider_errors(inventory, is_file):
    provider = inventory.get("provider")
    if provider not in PROVIDERS:
        return [error("kcp_provider", "must be static (a pool of inventory hosts) or hook (your own create and delete "
                                      "tasks; docs/providers.md)", provider)]
    if provider == "static":
        return []
    return (_task_file_errors("kcp_provider_create_tasks", inventory.get("provider_create_tasks"), is_file,
                              "the hook provider's task file that creates a host")
            + _task_file_errors("kcp_provider_delete_tasks", inventory.get("provider_delete_tasks"), is_file,
                                "the hook provider's task file that deletes a host"))
