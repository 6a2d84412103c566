# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An external etcd cluster of the sandbox's own (``sandbox up --external-etcd N``): hosts ``etcd-1`` .. ``etcd-N``,
each running the real etcd as a service (``etcd.service``, enabled, started at boot by the host's
``multi-user.target``) with TLS everywhere: clients and peers authenticate with certificates of the cluster's own CA.

What an operator hands to the control plane hosts for kubeadm's external etcd (kubeadm's "external etcd" layout): the
CA certificate as ``/etc/kubernetes/pki/etcd/ca.crt`` and a client certificate as
``/etc/kubernetes/pki/apiserver-etcd-client.crt`` / ``.key`` (mode 0600), written on every control plane candidate
before it boots, the ones ``machine create`` adds later too. The CA key never leaves the sandbox's state directory.

The etcd hosts are in the inventory group ``external_etcd``, not among the control plane candidates and not behind
the load balancer; ``sandbox_external_etcd_endpoints`` lists their client URLs for the spec's ``etcd.external``.
"""

import json
import os
import shutil
import ssl
import urllib.request

from . import host
from .commands import WAIT_LIMIT, wait_until
from .state import write_file

ROLE = "etcd"
PREFIX = "etcd"
CLIENT_PORT, PEER_PORT = 2379, 2380
# Where the etcd hosts keep their certificates and data, and where the control plane hosts get theirs.
HOST_PKI = "/etc/etcd/pki"
DATA_DIR = "/var/lib/etcd"
HANDED_OVER = {"ca.crt": "/etc/kubernetes/pki/etcd/ca.crt",
               "client.crt": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
               "client.key": "/etc/kubernetes/pki/apiserver-etcd-client.key"}
UNIT = "etcd.service"


def host_names(count):
    return ["%s-%d" % (PREFIX, number) for number in range(1, count + 1)]


def is_etcd_host(record):
    return record.get("role") == ROLE


def members(sbx):
    """(name, ip) of the external etcd hosts, by name."""
    return sorted((name, record["ip"]) for name, record in sbx.hosts.items() if is_etcd_host(record))


def client_urls(sbx):
    return ["https://%s:%d" % (ip, CLIENT_PORT) for _name, ip in members(sbx)]


def pki_dir(sbx):
    """The cluster's CA and the client certificate handed over, in the sandbox's state directory (0700)."""
    return os.path.join(sbx.dir, "external-etcd")


def issue(sbx):
    """The cluster's CA and the control plane's client certificate, made once."""
    directory = pki_dir(sbx)
    if os.path.exists(os.path.join(directory, "client.key")):
        return
    from kcpsim import pki  # the emulation's PKI (tests/sandbox is on sys.path)

    os.makedirs(directory, mode=0o700, exist_ok=True)
    ca_cert, ca_key = pki.new_ca("etcd-ca")
    client_cert, client_key = pki.new_leaf(ca_cert, ca_key, "kube-apiserver-etcd-client", usages=("client",))
    write_file(os.path.join(directory, "ca.key"), pki.key_pem(ca_key), 0o600)
    write_file(os.path.join(directory, "ca.crt"), pki.cert_pem(ca_cert), 0o644)
    write_file(os.path.join(directory, "client.key"), pki.key_pem(client_key), 0o600)
    write_file(os.path.join(directory, "client.crt"), pki.cert_pem(client_cert), 0o644)


def _ca(sbx):
    from kcpsim import pki

    with open(os.path.join(pki_dir(sbx), "ca.crt"), "rb") as cert, open(os.path.join(pki_dir(sbx), "ca.key"), "rb") as key:
        return pki.load_cert_pem(cert.read()), pki.load_key_pem(key.read())


def prepare_member(sbx, name, etcd_binary):
    """An etcd host's disk before it boots: the binary, its server and peer certificates, the enabled unit."""
    from kcpsim import pki

    record = sbx.hosts[name]
    ca_cert, ca_key = _ca(sbx)
    certs = sbx.host_overlay(name, "/etc") + HOST_PKI[len("/etc"):]
    os.makedirs(certs, mode=0o700, exist_ok=True)
    for kind, usages in (("server", ("server", "client")), ("peer", ("server", "client"))):
        cert, key = pki.new_leaf(ca_cert, ca_key, name, dns_names=(name, "localhost"), ip_addresses=(record["ip"], "127.0.0.1"),
                                 usages=usages)
        write_file(os.path.join(certs, kind + ".crt"), pki.cert_pem(cert), 0o644)
        write_file(os.path.join(certs, kind + ".key"), pki.key_pem(key), 0o600)
    shutil.copy(os.path.join(pki_dir(sbx), "ca.crt"), os.path.join(certs, "ca.crt"))
    binaries = sbx.host_fs(name, "/usr/local/bin")
    os.makedirs(binaries, exist_ok=True)
    shutil.copy2(etcd_binary, os.path.join(binaries, "etcd"))
    units = os.path.join(sbx.host_overlay(name, "/etc"), "systemd", "system")
    write_file(os.path.join(units, UNIT), render_unit(name, record["ip"], members(sbx), sbx.name), 0o644)
    wants = os.path.join(units, "multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    if not os.path.lexists(os.path.join(wants, UNIT)):
        os.symlink("../" + UNIT, os.path.join(wants, UNIT))


def render_unit(name, ip, cluster, sandbox_name):
    """etcd.service of member ``name`` at ``ip`` in ``cluster`` [(name, ip)] (pure)."""
    flags = [
        "--name=%s" % name, "--data-dir=%s" % DATA_DIR,
        "--listen-client-urls=https://%s:%d,https://127.0.0.1:%d" % (ip, CLIENT_PORT, CLIENT_PORT),
        "--advertise-client-urls=https://%s:%d" % (ip, CLIENT_PORT),
        "--listen-peer-urls=https://%s:%d" % (ip, PEER_PORT),
        "--initial-advertise-peer-urls=https://%s:%d" % (ip, PEER_PORT),
        "--initial-cluster=%s" % ",".join("%s=https://%s:%d" % (member, address, PEER_PORT) for member, address in cluster),
        "--initial-cluster-state=new", "--initial-cluster-token=sandbox-%s-external-etcd" % sandbox_name,
        "--client-cert-auth=true", "--trusted-ca-file=%s/ca.crt" % HOST_PKI,
        "--cert-file=%s/server.crt" % HOST_PKI, "--key-file=%s/server.key" % HOST_PKI,
        "--peer-client-cert-auth=true", "--peer-trusted-ca-file=%s/ca.crt" % HOST_PKI,
        "--peer-cert-file=%s/peer.crt" % HOST_PKI, "--peer-key-file=%s/peer.key" % HOST_PKI,
    ]
    return "\n".join([
        "# The sandbox's external etcd member %s (test infrastructure); generated, do not edit." % name,
        "[Unit]", "Description=etcd (external to the control plane)", "",
        "[Service]", "ExecStart=/usr/local/bin/etcd " + " ".join(flags), "Restart=always", "RestartSec=1", "",
        "[Install]", "WantedBy=multi-user.target", "",
    ])


def client_context(sbx):
    """TLS with the client certificate handed over to the control plane hosts, verifying the cluster's CA."""
    context = ssl.create_default_context(cafile=os.path.join(pki_dir(sbx), "ca.crt"))
    context.load_cert_chain(os.path.join(pki_dir(sbx), "client.crt"), os.path.join(pki_dir(sbx), "client.key"))
    return context


def serving_members(sbx, context):
    """The members a member answering over ``context`` (client_context) lists as started (name and client URLs
    published): etcd's gRPC gateway, ``/v3/cluster/member/list``; an empty list while none answers."""
    for url in client_urls(sbx):
        request = urllib.request.Request(url + "/v3/cluster/member/list", data=b"{}", method="POST")
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as response:
                listed = json.load(response).get("members", [])
        except (OSError, ValueError):  # no answer yet (urllib's URLError is an OSError), or not JSON
            continue
        return sorted(member["name"] for member in listed if member.get("name") and member.get("clientURLs"))
    return []


def wait_serving(sbx):
    """Until every member has started and published its client URLs: what an operator hands over is a running
    cluster (a member that has not published yet is listed without client URLs)."""
    expected = [name for name, _ip in members(sbx)]
    context = client_context(sbx)
    wait_until(lambda: serving_members(sbx, context) == expected, WAIT_LIMIT, "external etcd members %s to serve" % ", ".join(expected),
               logs=[host.console_log(sbx, name) for name in expected], interval=0.2)


def hand_over(sbx, name):
    """What an operator copies to a control plane host for kubeadm's external etcd: the CA and the client certificate."""
    for source, target in HANDED_OVER.items():
        path = sbx.host_fs(name, target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(os.path.join(pki_dir(sbx), source), "rb") as handle:
            write_file(path, handle.read(), 0o600 if target.endswith(".key") else 0o644)
