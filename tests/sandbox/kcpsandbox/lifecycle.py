# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bringing a whole sandbox up, tearing it down, and describing it.

``up`` checks every argument first, then builds the release bundles (state dir only), and only then
touches the machine: guards, bridge, the routing check, hosts, load balancer, inventory. If a step fails,
what was made is torn down again. ``down`` removes everything the record names and everything that
carries the sandbox's names (netns, links, iptables rules), so it also cleans up after an ``up`` that was
killed half way; it is idempotent.
"""

import contextlib
import os
import re
import signal

from . import addressing, external_etcd, host, net, node_software, placement, provider, timings
from .commands import WAIT_LIMIT, run, wait_until
from .errors import InvalidArguments, SandboxError
from .lb import LoadBalancer
from .state import Sandbox, exclusive, state_root, write_file

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEFAULT_WORKER_GROUP = "md-0"
# Every host mounts its own tmpfs over these: a state dir below them would vanish from the hosts' view.
HIDDEN_IN_HOSTS = ("/tmp", "/run")


def parse_environment(pairs):
    """``KEY=VALUE`` strings into a dict; (dict, problems)."""
    env, problems = {}, []
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not ENV_NAME.match(key) or any(c in value for c in "\"\n"):
            problems.append("--env %r: must be KEY=VALUE with KEY of letters, digits and '_' and a value "
                            "without double quotes or newlines" % pair)
        else:
            env[key] = value
    return env, problems


def up_problems(name, subnet, machines, failure_domains, prefix, workers=0, worker_group=DEFAULT_WORKER_GROUP, etcd=0):
    problems = addressing.sandbox_name_problems(name) + addressing.subnet_problems(subnet)
    if etcd not in (0, 1, 3, 5):
        problems.append("--external-etcd %d: must be 0 (stacked etcd), 1, 3 or 5 members" % etcd)
    elif machines + workers + etcd > addressing.MAX_SLOTS:
        problems.append("--external-etcd %d: no room beside %d machines and %d workers (%d hosts at most)"
                        % (etcd, machines, workers, addressing.MAX_SLOTS))
    if not 1 <= machines <= addressing.MAX_SLOTS:
        problems.append("--machines %d: must be 1 to %d" % (machines, addressing.MAX_SLOTS))
    if not 0 <= workers <= addressing.MAX_SLOTS - machines:
        room = max(addressing.MAX_SLOTS - machines, 0)
        problems.append("--workers %d: must be 0 to %d beside %d machines" % (workers, room, machines))
    problems += addressing.worker_group_problems(worker_group)
    if not 1 <= failure_domains <= 26:
        problems.append("--failure-domains %d: must be 1 to 26" % failure_domains)
    problems += addressing.host_name_problems("%s-%d" % (prefix, addressing.MAX_SLOTS), "--prefix")
    root = os.path.realpath(state_root())
    hidden = [d for d in HIDDEN_IN_HOSTS if root == d or root.startswith(d + "/")]
    if hidden:
        problems.append("KCP_SANDBOX_ROOT %s: must not lie under %s (every host mounts its own tmpfs there and "
                        "would not see the state dir)" % (root, hidden[0]))
    return problems


def up(name, subnet, machines, failure_domains, prefix="cp", environment=(), real_timings=False, workers=0,
       worker_group=DEFAULT_WORKER_GROUP, etcd=0):
    """``machines`` control plane candidates, ``workers`` worker hosts ``w-1``.. of ``worker_group`` (inventory
    group ``workers``, no load balancer backend), and an external etcd cluster of ``etcd`` hosts (external_etcd.py)."""
    requested, env_problems = parse_environment(environment)
    problems = up_problems(name, subnet, machines, failure_domains, prefix, workers, worker_group, etcd) + env_problems
    if problems:
        raise InvalidArguments(problems)
    sbx = Sandbox(name)
    with sbx.locked():
        if sbx.exists():
            raise SandboxError("sandbox %s is already up (state in %s); `sandbox --name %s down` first"
                               % (name, sbx.dir, name))
        network = addressing.network(name, subnet)
        try:
            # From here on the state dir exists, and `down` removes it (and stops the build it records).
            sbx.data = {"name": name}
            sbx.save()
            os.makedirs(sbx.logs_dir, exist_ok=True)
            if node_software.available():
                node_software.build(sbx)
                node_software.lay_out_mirror(sbx.releases_dir, sbx.mirror_dir, node_software.kubectl_binary())
            with exclusive(sbx.root, ".network"):
                claimed = net.subnet_in_use(network) or (net.link_exists(network.bridge) and network.bridge)
                if claimed:
                    raise SandboxError("--subnet %s: already in use on this machine (%s); pick another subnet, or "
                                       "`sandbox --name %s down` if it is this sandbox's leftover"
                                       % (subnet, claimed, name))
                # The subnet is recorded only now that it is ours: `down` removes its blackhole route.
                sbx.data.update(subnet=network.subnet, prefix=prefix, real_timings=real_timings,
                                environment=timings.environment(real_timings, requested), hosts={}, next_number=1,
                                last_slot=0, failure_domains=placement.failure_domain_names(failure_domains))
                sbx.save()
                net.create_guards(network)
                net.create_bridge(network)
                net.require_routed_via_bridge(network)
            make_ssh_key(sbx)
            worker_hosts = [{"name": "w-%d" % number, "worker_group": worker_group} for number in range(1, workers + 1)]
            domains = sbx.data["failure_domains"]
            etcd_hosts = [{"name": member, "role": external_etcd.ROLE, "failure_domain": domains[index % len(domains)]}
                          for index, member in enumerate(external_etcd.host_names(etcd))]
            if etcd:
                external_etcd.issue(sbx)
                sbx.data["external_etcd"] = etcd
                sbx.save()
            # the etcd hosts first: the cluster runs before a control plane host is handed its client certificate
            provider.create_machines(sbx, etcd_hosts + [{}] * machines + worker_hosts)
            if etcd:
                external_etcd.wait_serving(sbx)
        except BaseException:
            teardown(sbx)
            raise
    return sbx


def make_ssh_key(sbx):
    private, public = host.new_key_pair()
    write_file(sbx.ssh_key, private, 0o600)
    write_file(sbx.ssh_key + ".pub", public + "\n", 0o644)


def down(name):
    """Tear sandbox ``name`` down; whether there was anything to remove."""
    sbx = Sandbox(name)
    with exclusive(sbx.root, name):
        try:
            sbx.load()
        except SandboxError:
            sbx.data = {}  # an unreadable record: clean up by the sandbox's names and PID files
        had_something = sbx.exists() or os.path.exists(sbx.dir) or bool(net.sandbox_netns(name) or
                                                                        net.sandbox_links(name))
        teardown(sbx)
    return had_something


def teardown(sbx):
    close_ssh_masters(sbx)
    LoadBalancer(sbx).stop()
    for name in list(sbx.hosts):
        with contextlib.suppress(SandboxError):
            host.power_off(sbx, name)
    # Whatever else was started and recorded (a build, a host whose record was not written yet).
    processes = sbx.recorded_processes()
    for ref in processes.values():
        ref.signal(signal.SIGKILL)
    wait_until(lambda: not any(ref.alive() for ref in processes.values()), WAIT_LIMIT,
               "%s to end" % ", ".join(sorted(processes)))
    netns_list = sorted(set(net.sandbox_netns(sbx.name)) | {r["netns"] for r in sbx.hosts.values()})
    for netns in netns_list:
        # Whatever still runs inside the sandbox's netns (found by namespace, not by name) is ours.
        for pid in net.netns_pids(netns):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(net.netns_pids(ns) for ns in netns_list), WAIT_LIMIT,
               "processes in %s to end" % ", ".join(netns_list))
    for netns in netns_list:
        if net.netns_exists(netns):
            run(["ip", "netns", "del", netns])
    subnet = sbx.data.get("subnet")
    net.delete_network(addressing.network(sbx.name, subnet) if subnet else None, sbx.name)
    sbx.remove_dir()
    sbx.data = {}


def close_ssh_masters(sbx):
    """Ask ssh control masters of this sandbox (ControlPersist) to exit; they would outlive their hosts."""
    if not os.path.isdir(sbx.ssh_dir):
        return
    for entry in os.listdir(sbx.ssh_dir):
        if entry.startswith("cm-"):
            # A master that does not answer is no reason to stop tearing down: its host is powered off next.
            with contextlib.suppress(SandboxError):
                run(["ssh", "-F", "/dev/null", "-o", "ControlPath=" + os.path.join(sbx.ssh_dir, entry), "-O", "exit",
                     "sandbox-host"], check=False, timeout=5)


def status(name):
    """A description of sandbox ``name`` (plain data, for ``status`` and ``status --json``)."""
    sbx = Sandbox(name).load()
    if not sbx.is_up():
        return {"name": name, "up": False}
    network = sbx.network
    backends = LoadBalancer(sbx).server_states()
    hosts = []
    for host_name, record in sorted(sbx.hosts.items(), key=lambda item: item[1]["slot"]):
        hosts.append({
            "name": host_name, "ip": record["ip"], "failure_domain": record["failure_domain"],
            "state": "running" if host.is_running(sbx, host_name) else "off",
            "partitioned": record.get("partitioned", False), "lb_backend": backends.get(host_name, "absent"),
            "worker_group": record.get("worker_group"),
        })
    return {
        "name": name, "up": True, "state_dir": sbx.dir, "subnet": network.subnet, "bridge": network.bridge,
        "endpoint": "%s:%d" % (network.vip, addressing.API_PORT),
        "load_balancer": "running" if LoadBalancer(sbx).master() else "stopped",
        "failure_domains": sbx.data["failure_domains"], "inventory": sbx.inventory, "ssh_config": sbx.ssh_config,
        "mirror": sbx.mirror_dir, "versions": node_software.release_versions(sbx.releases_dir),
        "real_timings": sbx.data.get("real_timings", False),
        "hosts": hosts,
    }
