# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd stand-in: reports its version and holds the CRI socket open; it runs no containers.

``containerd --version`` (its own release, stamped by build.py: the mirror holds several); ``containerd config
default`` (the TOML install guides redirect into /etc/containerd/config.toml); ``containerd [-c|--config FILE]
[-a|--address SOCKET]`` serves a listening unix socket (default /run/containerd/containerd.sock, or the config's
``[grpc] address``) until SIGTERM, then removes it. The kubelet treats the socket's presence as the runtime being
up. Each connection is answered with one JSON line, the fields of CRI's VersionResponse (what the kubelet asks
the runtime for its Node's ``containerRuntimeVersion``), then closed: there is no gRPC here.
"""

import argparse
import contextlib
import json
import os
import select
import signal
import socket
import sys
import tomllib

from kcpsim import version

DEFAULT_CONFIG = "/etc/containerd/config.toml"
DEFAULT_ADDRESS = "/run/containerd/containerd.sock"
REVISION = "7f7fdf5fed64eb6a7caf99b3e12efcf9d60e311c"

DEFAULT_TOML = """version = 2
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
  address = "%s"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.10"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = false
""" % DEFAULT_ADDRESS


def release():
    return version.component_version(version.CONTAINERD_VERSIONS)


def version_line():
    return "containerd github.com/containerd/containerd v%s %s" % (release(), REVISION)


def cri_version():
    """CRI's VersionResponse, as this runtime would answer it."""
    return {"version": "0.1.0", "runtimeName": "containerd", "runtimeVersion": "v" + release(),
            "runtimeApiVersion": "v1"}


def configured_address(config_path, explicit):
    """The socket path: ``--address`` wins, then the config file's ``[grpc] address``, then the default."""
    if explicit:
        return explicit
    try:
        with open(config_path, "rb") as handle:
            config = tomllib.load(handle)
    except FileNotFoundError:
        return DEFAULT_ADDRESS
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit("containerd: failed to load TOML from %s: %s" % (config_path, exc))
    return (config.get("grpc") or {}).get("address") or DEFAULT_ADDRESS


def serve(address):
    os.makedirs(os.path.dirname(address), mode=0o711, exist_ok=True)
    if os.path.exists(address):
        os.unlink(address)  # left by a previous run that was killed
    answer = (json.dumps(cri_version(), sort_keys=True) + "\n").encode()
    # bound and listening under a name of its own, then renamed: the socket appears under its address only once a
    # caller that finds it is answered (one that connected between bind and listen was refused)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    binding = "%s.%d" % (address, os.getpid())
    listener.bind(binding)
    os.chmod(binding, 0o660)
    listener.listen(16)
    os.rename(binding, address)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    print("containerd successfully booted, serving on %s" % address, file=sys.stderr, flush=True)
    try:
        while not stopping:
            readable = select.select([listener], [], [], 0.5)[0]
            if readable:
                connection = listener.accept()[0]
                with contextlib.suppress(OSError):  # a caller that only checks the socket has hung up already
                    connection.sendall(answer)
                connection.close()
    finally:
        listener.close()
        if os.path.exists(address):
            os.unlink(address)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="containerd", add_help=True)
    parser.add_argument("-v", "--version", action="store_true")
    parser.add_argument("-c", "--config", default=DEFAULT_CONFIG)
    parser.add_argument("-a", "--address")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args(argv)
    if args.version:
        print(version_line())
        return 0
    if args.command == ["config", "default"]:
        sys.stdout.write(DEFAULT_TOML)
        return 0
    if args.command:
        print("containerd: the sandbox stand-in has no command %r" % " ".join(args.command), file=sys.stderr)
        return 1
    return serve(configured_address(args.config, args.address))
