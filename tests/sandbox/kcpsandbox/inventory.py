# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What Ansible and ssh need to reach the sandbox's hosts: ``<state>/inventory.ini``,
``<state>/ssh/ssh_config`` and ``<state>/ssh/known_hosts``; and what the hosts need to find each other:
``<state>/etc-hosts/hosts``, every host's /etc/hosts (rendering is pure; ``write_all`` and ``write_etc_hosts`` write).

Inventory: group ``control_plane_candidates`` with each host's ``ansible_host`` and ``failure_domain`` (workers in
``workers``, external etcd hosts in ``external_etcd`` with ``sandbox_external_etcd_endpoints``);
connection vars (root, the generated key, ``-F <ssh_config>``, /usr/bin/python3) and the sandbox's vars
(``sandbox_name``, ``sandbox_cli``, ``sandbox_endpoint_host`` / ``_port``, ``sandbox_failure_domains``,
``sandbox_releases_dir``, ``sandbox_mirror_dir``) for all. Host keys are pinned: known_hosts lists every host's key under its name
and its IP, and ssh_config checks them strictly.
"""

import json
import os

from .addressing import API_PORT
from .state import write_file

GROUP = "control_plane_candidates"
WORKERS_GROUP = "workers"  # the collection's worker flows read this group and each host's worker_group
ETCD_GROUP, ETCD_ROLE = "external_etcd", "etcd"  # the sandbox's external etcd hosts (external_etcd.py)
CLI = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sandbox")


def render_inventory(sbx_name, hosts, vip, failure_domains, paths):
    """``hosts``: {name: {"ip", "failure_domain"}}; ``paths``: ssh_key, ssh_config, releases_dir, mirror_dir."""
    lines = ["# Ansible inventory of sandbox %s (test and demo infrastructure), rewritten when machines come "
             "and go." % sbx_name, "[%s]" % GROUP]
    workers = sorted(name for name in hosts if hosts[name].get("worker_group"))
    etcd = sorted(name for name in hosts if hosts[name].get("role") == ETCD_ROLE)
    for name in sorted(set(hosts) - set(workers) - set(etcd)):
        lines.append("%s ansible_host=%s failure_domain=%s" % (name, hosts[name]["ip"],
                                                               hosts[name]["failure_domain"]))
    if workers:
        lines += ["", "[%s]" % WORKERS_GROUP]
        lines += ["%s ansible_host=%s failure_domain=%s worker_group=%s" % (
            name, hosts[name]["ip"], hosts[name]["failure_domain"], hosts[name]["worker_group"]) for name in workers]
    if etcd:
        lines += ["", "[%s]" % ETCD_GROUP] + ["%s ansible_host=%s" % (name, hosts[name]["ip"]) for name in etcd]
    lines += [
        "",
        "[all:vars]",
        "ansible_user=root",
        "ansible_ssh_private_key_file=%s" % paths["ssh_key"],
        "ansible_ssh_common_args='-F %s'" % paths["ssh_config"],
        "ansible_python_interpreter=/usr/bin/python3",
        "sandbox_name=%s" % sbx_name,
        "sandbox_cli=%s" % CLI,
        "sandbox_endpoint_host=%s" % vip,
        "sandbox_endpoint_port=%d" % API_PORT,
        "sandbox_failure_domains=%s" % json.dumps(failure_domains, separators=(",", ":")),
        "sandbox_releases_dir=%s" % paths["releases_dir"],
        "sandbox_mirror_dir=%s" % paths["mirror_dir"],
    ]
    if etcd:
        lines.append("sandbox_external_etcd_endpoints=%s" % json.dumps(
            ["https://%s:2379" % hosts[name]["ip"] for name in etcd], separators=(",", ":")))
    return "\n".join(lines) + "\n"


def render_ssh_config(hosts, paths):
    lines = ["# ssh settings for the sandbox's hosts (use: ssh -F <this file> <host>)."]
    for name in sorted(hosts):
        lines += ["Host %s" % name, "    HostName %s" % hosts[name]["ip"]]
    lines += [
        "Host *",
        "    User root",
        "    IdentityFile %s" % paths["ssh_key"],
        "    IdentitiesOnly yes",
        "    UserKnownHostsFile %s" % paths["known_hosts"],
        "    GlobalKnownHostsFile /dev/null",
        "    StrictHostKeyChecking yes",
        "    CheckHostIP no",
        "    BatchMode yes",
        "    LogLevel ERROR",
        "    ConnectTimeout 5",
        "    ServerAliveInterval 5",
        "    ServerAliveCountMax 3",
        "    ControlMaster auto",
        "    ControlPath %s" % paths["control_path"],
        "    ControlPersist 60s",
    ]
    return "\n".join(lines) + "\n"


def render_known_hosts(hosts):
    """``hosts``: {name: {"ip", "host_key"}} -> known_hosts lines."""
    return "".join("%s,%s %s\n" % (name, hosts[name]["ip"], hosts[name]["host_key"]) for name in sorted(hosts))


def render_etc_hosts(sbx_name, hosts):
    """/etc/hosts naming every host (``hosts``: {name: {"ip"}}) by its sandbox address: kubeadm's preflight
    and etcd's peers resolve host names, and a name that does not resolve costs kubeadm seconds."""
    lines = ["# /etc/hosts of every host of sandbox %s (test and demo infrastructure), rewritten when machines "
             "come and go." % sbx_name, "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
    lines += ["%s\t%s" % (hosts[name]["ip"], name) for name in sorted(hosts, key=lambda n: hosts[n]["slot"])]
    return "\n".join(lines) + "\n"


def write_etc_hosts(sbx):
    """Replace ``<state>/etc-hosts/hosts`` for the recorded hosts (atomically: the hosts see the directory
    through bind mounts and follow a link to the file)."""
    write_file(sbx.etc_hosts, render_etc_hosts(sbx.name, sbx.hosts), 0o644)


def control_path(sbx):
    return os.path.join(sbx.ssh_dir, "cm-%C")


def write_all(sbx, host_keys):
    """Rewrite the three files for the hosts in ``host_keys`` ({name: public key line})."""
    hosts = {name: {"ip": sbx.hosts[name]["ip"], "failure_domain": sbx.hosts[name]["failure_domain"],
                    "worker_group": sbx.hosts[name].get("worker_group"), "role": sbx.hosts[name].get("role"), "host_key": key}
             for name, key in host_keys.items()}
    paths = {"ssh_key": sbx.ssh_key, "ssh_config": sbx.ssh_config, "known_hosts": sbx.known_hosts,
             "releases_dir": sbx.releases_dir, "mirror_dir": sbx.mirror_dir, "control_path": control_path(sbx)}
    write_file(sbx.known_hosts, render_known_hosts(hosts), 0o600)
    write_file(sbx.ssh_config, render_ssh_config(hosts, paths), 0o600)
    write_file(sbx.inventory, render_inventory(sbx.name, hosts, sbx.network.vip, sbx.data["failure_domains"], paths),
               0o600)
