# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the tests of the sandbox's infrastructure (imported by conftest.py and the tests).

The tests use their own sandboxes, so they never meet the demo sandbox (``kcp``, 172.31.250.0/24) or
the other test sandboxes (DESIGN.md "Subnets in use"): ``t-infra`` on 172.31.251.0/24, shared by the
tests that leave it as they found it, and ``t-down`` on 172.31.249.0/24 for the tests that tear down or
crash a sandbox on purpose.
"""

import datetime
import ipaddress
import json
import os
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kcpsandbox import addressing, net
from kcpsandbox.state import Sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
SANDBOX_DIR = os.path.dirname(os.path.dirname(HERE))
REPO = os.path.dirname(os.path.dirname(SANDBOX_DIR))
CLI = os.path.join(SANDBOX_DIR, "sandbox")
VENV_BIN = os.path.join(REPO, ".venv", "bin")
INFRA_NAME, INFRA_SUBNET, INFRA_MACHINES = "t-infra", "172.31.251.0/24", 3
DOWN_NAME, DOWN_SUBNET = "t-down", "172.31.249.0/24"


def ansible_inventory(path):
    """The inventory at ``path`` as ``ansible-inventory --list`` reads it (groups, ``_meta.hostvars``)."""
    done = subprocess.run([os.path.join(VENV_BIN, "ansible-inventory"), "-i", path, "--list"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("the sandbox needs root (network namespaces, mounts, iptables)")


class SandboxHandle:
    """A sandbox as the tests drive it: through its command line (``cli``: the checkout's, or a copy's),
    over SSH, and by its record."""

    def __init__(self, name, cli=CLI):
        self.name = name
        self.cli_path = cli

    def cli(self, *args, check=True, timeout=120, env=None):
        done = subprocess.run([self.cli_path, "--name", self.name] + list(args), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False, env=env)
        if check and done.returncode != 0:
            raise AssertionError("sandbox %s failed (exit %d):\n%s%s"
                                 % (" ".join(args), done.returncode, done.stdout, done.stderr))
        return done

    @property
    def record(self):
        return Sandbox(self.name).load()

    def status(self):
        return json.loads(self.cli("status", "--json").stdout)

    def hosts(self):
        return sorted(self.record.hosts)

    def ip(self, host):
        return self.record.hosts[host]["ip"]

    def ssh(self, host, command, check=True, timeout=30):
        """``command`` run over real SSH with the generated ssh_config (as the collection reaches hosts)."""
        done = subprocess.run(["ssh", "-F", self.record.ssh_config, host, command], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise AssertionError("ssh %s %r failed (exit %d): %s" % (host, command, done.returncode, done.stderr))
        return done

    def back_door(self, host, *argv, check=True, timeout=30):
        return self.cli("exec", host, "--", *argv, check=check, timeout=timeout)

    def ansible_env(self):
        env = dict(os.environ, PATH=VENV_BIN + ":" + os.environ["PATH"],
                   ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
        env.pop("ANSIBLE_INVENTORY", None)
        return env


def self_signed_server_cert(ip_addresses):
    """(certificate PEM, key PEM) of a self-signed ECDSA server certificate for ``ip_addresses``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sandbox-infra-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))
                                                        for ip in ip_addresses]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def leftovers(name, subnet):
    """Everything of sandbox ``name`` that still exists on the machine: netns, links, iptables rules, routes,
    mounts, the state dir, and processes whose command line names the state dir."""
    state_dir = Sandbox(name).dir
    found = net.leftovers(name, subnet)
    if os.path.exists(state_dir):
        found.append("state dir " + state_dir)
    with open("/proc/self/mountinfo") as handle:
        found += ["mount " + line.split()[4] for line in handle
                  if state_dir in line or addressing.netns_name(name, "") in line]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state_dir + "/" in cmdline or state_dir + " " in cmdline:
            found.append("process %s: %s" % (pid, cmdline[:120]))
    return found
