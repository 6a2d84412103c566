# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``sandbox`` — the command line of the sandbox (test and demo infrastructure; see tests/sandbox/README.md).

    sandbox [--name S] up --machines N --failure-domains K [--real-timings] [--subnet CIDR] [--prefix P] [--env K=V]
    sandbox [--name S] down
    sandbox [--name S] status [--json]
    sandbox [--name S] machine create [--failure-domain FD] [--name MACHINE]
    sandbox [--name S] machine delete MACHINE
    sandbox [--name S] fault KIND HOST [ARG]
    sandbox [--name S] exec HOST -- COMMAND...     (harness back door for tests, not for the collection)

The sandbox name comes from ``--name`` (before the subcommand; after it too for up / down / status),
else ``$KCP_SANDBOX_NAME``, else ``kcp``. Exit status: 0 done, 1 refused or failed, 2 bad arguments.
"""

import argparse
import json
import os
import sys
import time
import traceback

from . import faults, host, lifecycle, provider, state
from .errors import InvalidArguments, SandboxError

DEFAULT_SUBNET = "172.31.250.0/24"


def build_parser():
    parser = argparse.ArgumentParser(prog="sandbox", description="The sandbox: test and demo infrastructure "
                                     "(hosts as network namespaces with real sshd, real etcd and HAProxy, "
                                     "emulated kubeadm/kubelet/apiserver).")
    parser.add_argument("--name", dest="sandbox", default=state.default_name(),
                        help="sandbox name (default $KCP_SANDBOX_NAME or kcp)")
    commands = parser.add_subparsers(dest="command", required=True)

    def sandbox_name_option(sub):
        sub.add_argument("--name", dest="sandbox", default=argparse.SUPPRESS, help="sandbox name")

    up = commands.add_parser("up", help="create the sandbox: network, hosts, load balancer, inventory")
    sandbox_name_option(up)
    up.add_argument("--machines", type=int, default=3, help="number of hosts (default 3)")
    up.add_argument("--failure-domains", type=int, default=3, help="failure domains fd-1..fd-K (default 3)")
    up.add_argument("--real-timings", action="store_true",
                    help="run at real timings: none of the sandbox's speed-ups (DESIGN.md \"Time\")")
    up.add_argument("--subnet", default=DEFAULT_SUBNET, help="private IPv4 /24 (default %s)" % DEFAULT_SUBNET)
    up.add_argument("--prefix", default="cp", help="host name prefix (default cp: cp-1, cp-2, ...)")
    up.add_argument("--workers", type=int, default=0,
                    help="worker hosts w-1, w-2, ... besides the machines (inventory group workers; default 0)")
    up.add_argument("--worker-group", default=lifecycle.DEFAULT_WORKER_GROUP,
                    help="the workers' worker_group (default %s)" % lifecycle.DEFAULT_WORKER_GROUP)
    up.add_argument("--external-etcd", type=int, default=0, metavar="N",
                    help="an external etcd cluster of N members (1, 3 or 5) on hosts etcd-1, ... (inventory group "
                         "external_etcd; default 0: the control plane's own, stacked)")
    up.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="environment for every host's SSH sessions and services (overrides a speed-up)")
    down = commands.add_parser("down", help="remove everything the sandbox made (idempotent)")
    sandbox_name_option(down)
    status = commands.add_parser("status", help="hosts, their state, addresses, failure domains, LB backends")
    sandbox_name_option(status)
    status.add_argument("--json", action="store_true", help="print JSON")

    machine = commands.add_parser("machine", help="the machine provider")
    machine = machine.add_subparsers(dest="action", required=True)
    create = machine.add_parser("create", help="create and boot a machine; prints {name, host, failure_domain, worker_group}")
    create.add_argument("--failure-domain", help="default: the failure domain with the fewest machines")
    create.add_argument("--worker-group", help="a worker host of this group (inventory group workers, no load balancer "
                                               "backend); default: a control plane candidate")
    create.add_argument("--name", dest="machine", help="machine name (default <prefix>-<next number>)")
    delete = machine.add_parser("delete", help="power a machine off and remove it and its data")
    delete.add_argument("machine")

    fault = commands.add_parser("fault", help="inject a fault: %s" % ", ".join(sorted(faults.FAULTS)))
    fault.add_argument("kind")
    fault.add_argument("host")
    fault.add_argument("args", nargs="*")

    back_door = commands.add_parser("exec", help="HARNESS BACK DOOR for tests: run a command inside a host's "
                                    "namespaces with nsenter (the collection reaches hosts over SSH only)")
    back_door.add_argument("host")
    back_door.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND")
    return parser


def print_status(info):
    if not info["up"]:
        print("sandbox %s is not up" % info["name"])
        return
    print("sandbox %s: endpoint %s (HAProxy %s), subnet %s, state %s" % (
        info["name"], info["endpoint"], info["load_balancer"], info["subnet"], info["state_dir"]))
    print("inventory %s   ssh -F %s <host>" % (info["inventory"], info["ssh_config"]))
    print("mirror %s: %s; %s timings" % (info["mirror"], ", ".join(info["versions"]) or "no releases",
                                         "real" if info["real_timings"] else "sandbox (sped up)"))
    rows = [("HOST", "STATE", "IP", "FAILURE DOMAIN", "LB BACKEND", "PARTITIONED", "WORKER GROUP")]
    rows += [(h["name"], h["state"], h["ip"], h["failure_domain"], h["lb_backend"],
              "yes" if h["partitioned"] else "no", h.get("worker_group") or "-") for h in info["hosts"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def dispatch(args):
    name = args.sandbox
    if args.command == "up":
        started = time.monotonic()
        lifecycle.up(name, args.subnet, args.machines, args.failure_domains, args.prefix, args.env, args.real_timings,
                     args.workers, args.worker_group, args.external_etcd)
        print_status(lifecycle.status(name))
        print("up in %.1fs" % (time.monotonic() - started))
    elif args.command == "down":
        started = time.monotonic()
        removed = lifecycle.down(name)
        print("sandbox %s %s (%.1fs)" % (name, "is down" if removed else "was not up", time.monotonic() - started))
    elif args.command == "status":
        info = lifecycle.status(name)
        if args.json:
            print(json.dumps(info, indent=2))
        else:
            print_status(info)
        return 0 if info["up"] else 1
    elif args.command == "machine":
        sbx = state.Sandbox(name)
        with sbx.locked():
            require_up(sbx)
            if args.action == "create":
                request = {"name": args.machine, "failure_domain": args.failure_domain, "worker_group": args.worker_group}
                print(json.dumps(provider.create_machines(sbx, [request])[0]))
            else:
                print(json.dumps({"name": args.machine, "deleted": provider.delete_machine(sbx, args.machine)}))
    elif args.command == "fault":
        sbx = state.Sandbox(name)
        with sbx.locked():
            require_up(sbx)
            report = faults.inject(sbx, args.kind, args.host, args.args)
        print("fault %s on %s: done%s" % (args.kind, args.host, "" if report is None else " %s" % json.dumps(report)))
    elif args.command == "exec":
        argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if not argv:
            raise InvalidArguments(["exec: a command is needed after the host (sandbox exec HOST -- COMMAND...)"])
        sbx = state.Sandbox(name).load()
        require_up(sbx)
        os.execvpe("nsenter", host.exec_argv(sbx, args.host, argv), dict(host.HOST_ENV))
    return 0


def require_up(sbx):
    if not sbx.is_up():
        raise SandboxError("sandbox %s is not up (%s)" % (sbx.name, "still being made, or left half made: "
                                                          "`sandbox down` cleans up" if sbx.exists() else
                                                          "no %s" % sbx.state_file))


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        if os.geteuid() != 0:
            raise SandboxError("the sandbox needs root (network namespaces, mounts, iptables)")
        return dispatch(args)
    except InvalidArguments as exc:
        sys.stderr.write("sandbox: invalid arguments:\n%s\n" % "\n".join("  - " + p for p in exc.problems))
        return 2
    except SandboxError as exc:
        sys.stderr.write("sandbox: %s\n" % exc)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("sandbox: interrupted\n")
        return 130
    except Exception as exc:  # pylint: disable=broad-except
        log = os.path.join(state.state_root(), "cli-errors.log")
        os.makedirs(state.state_root(), exist_ok=True)
        with open(log, "a") as handle:
            handle.write("%s sandbox %s\n%s\n" % (time.strftime("%FT%T"), " ".join(sys.argv[1:]), traceback.format_exc()))
        sys.stderr.write("sandbox: unexpected error: %s: %s (traceback in %s)\n" % (type(exc).__name__, exc, log))
        return 1
