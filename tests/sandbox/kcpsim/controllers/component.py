# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What kube-controller-manager and kube-scheduler share: their common flags, the client from ``--kubeconfig``,
the HTTPS ``/healthz`` endpoint, leader election, and the run loop that calls the component's work while it
leads and stops on SIGTERM (exit 0) or when leadership is lost (exit 1, the kubelet restarts it).

The health endpoint serves ``--tls-cert-file`` / ``--tls-private-key-file`` when given, else a self-signed
certificate made at start (as the real components do without ``--cert-dir`` files). It answers anonymous
``GET /healthz`` (and ``/livez``, ``/readyz``): the real components always allow those paths.
"""

import datetime
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from kcpsim import flags, informer, kubeclient, pki, version
from kcpsim.apiserver import api, klog, server
from kcpsim.controllers import leaderelection

COMMON_FLAGS = {
    "kubeconfig": ("str", ""),
    "authentication-kubeconfig": ("str", ""),
    "authorization-kubeconfig": ("str", ""),
    "bind-address": ("str", "0.0.0.0"),
    "tls-cert-file": ("str", ""),
    "tls-private-key-file": ("str", ""),
    "leader-elect": ("bool", True),
    "leader-elect-lease-duration": ("duration", 15.0),
    "leader-elect-renew-deadline": ("duration", 10.0),
    "leader-elect-retry-period": ("duration", 2.0),
    "leader-elect-resource-name": ("str", ""),
    "v": ("int", 0),
    "version": ("bool", False),
}


class Health:
    """The ``/healthz`` application: ok while the process runs."""

    PATHS = ("/healthz", "/livez", "/readyz")

    def handle(self, request):
        path = request.path.rstrip("/")
        if request.method not in ("GET", "HEAD"):
            return api.text_response(405, "method not allowed")
        if any(path == known or path.startswith(known + "/") for known in self.PATHS):
            return api.text_response(200, "ok")
        return api.text_response(404, "404 page not found")


def _self_signed(name, bind_address):
    """Serving cert and key files for ``name`` in a private temp dir (the caller removes it once loaded)."""
    ca, ca_key = pki.new_ca("%s-ca@%d" % (name, int(datetime.datetime.now().timestamp())), algorithm="ECDSA-P256")
    addresses = ["127.0.0.1"] + ([bind_address] if bind_address not in ("", "0.0.0.0", "::", "127.0.0.1") else [])
    cert, key = pki.new_leaf(ca, ca_key, "%s@%d" % (name, int(datetime.datetime.now().timestamp())),
                             dns_names=("localhost",), ip_addresses=addresses, usages=("server",),
                             algorithm="ECDSA-P256")
    directory = tempfile.mkdtemp(prefix="kcpsim-%s-" % name)
    pki.write_pair(directory, "serving", cert, key)
    return directory, os.path.join(directory, "serving.crt"), os.path.join(directory, "serving.key")


def health_server(name, bind_address, port, cert_file="", key_file=""):
    """A started-but-not-serving HTTPS health server."""
    directory = None
    if not cert_file:
        directory, cert_file, key_file = _self_signed(name, bind_address)
    try:
        context = server.server_context(cert_file, key_file)
    finally:
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
    return server.serve(Health(), bind_address, port, context)


def parse(argv, name, extra_flags):
    """``(values, log)``, or ``(None, log)`` after logging why the flags are refused."""
    log = klog.logger(name)
    spec = dict(COMMON_FLAGS)
    spec.update(extra_flags)
    try:
        values = flags.parse(argv, spec, flags.no_arguments(name), flags.known_flags(name))[0]
    except flags.FlagError as exc:
        log("Error: %s" % exc, "E")
        return None, log
    return values, log


def periodic(syncs, log, tick):
    """The ``work`` of :func:`run` for syncs on periods: while leading, each ``(name, period, sync)`` of the table
    ``syncs(client, lister)`` returns runs every ``period`` seconds (looked at every ``tick``); an API error is
    logged and the sync runs again at its next turn. ``lister`` (kcpsim/informer.py Listers) is what the syncs
    read through: shared informers started on first use and stopped when leadership ends, as the real
    components' informers are; the syncs call the API server only to write."""
    def work(client, stopping, leading):
        reads = client.clone()
        lister = informer.Listers(lambda: reads, log=lambda message: log("informer " + message))
        try:
            table = syncs(client, lister)
            next_run = {entry[0]: 0.0 for entry in table}
            while not stopping.is_set() and leading.is_set():
                for sync_name, period, sync in table:
                    if time.monotonic() < next_run[sync_name]:
                        continue
                    next_run[sync_name] = time.monotonic() + period
                    try:
                        sync()
                    except (kubeclient.ApiUnavailable, kubeclient.ApiError) as exc:
                        log("%s: %s" % (sync_name, exc), "E")
                stopping.wait(tick)
        finally:
            lister.stop()
            reads.close()
    return work


def main(argv, name, extra_flags, prepare):
    """A component's entry point: its flags, then ``prepare(values, log)`` for its ``work`` (None when it cannot
    start, having logged why: exit 1), then :func:`run`."""
    values, log = parse(sys.argv[1:] if argv is None else argv, name, extra_flags)
    if values is None:
        return 1
    work = prepare(values, log)
    if work is None:
        return 1
    return run(name, values, log, work)


def run(name, values, log, work):
    """Serve health, elect a leader (unless ``--leader-elect=false``) and call ``work(client, stopping,
    leading)`` while leading, until SIGTERM. ``work`` returns when ``stopping`` is set or ``leading`` cleared.
    ``--version`` prints the version instead."""
    if values["version"]:
        print("Kubernetes %s" % version.current())
        return 0
    if not values["kubeconfig"]:
        log("Error: --kubeconfig is required (the emulation has no in-cluster configuration)", "E")
        return 1
    try:
        client = kubeclient.KubeClient.from_kubeconfig(values["kubeconfig"], user_agent=name)
        election_client = kubeclient.KubeClient.from_kubeconfig(values["kubeconfig"], user_agent=name)
        health = health_server(name, values["bind-address"], values["secure-port"],
                               values["tls-cert-file"], values["tls-private-key-file"])
    except Exception as exc:  # noqa: BLE001 - any start-up failure ends the process with its reason
        log("Error: %s" % exc, "E")
        return 1
    stopping = threading.Event()
    elector = leaderelection.LeaderElector(
        election_client, values["leader-elect-resource-name"] or name, leaderelection.new_identity(),
        values["leader-elect-lease-duration"], values["leader-elect-renew-deadline"],
        values["leader-elect-retry-period"], log=log)

    def stop(signum, frame):
        stopping.set()
        elector.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=health.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
    log("Serving healthz securely on %s:%d" % (values["bind-address"], health.server_address[1]))
    outcome = {"lost": False}

    def elect():
        if not elector.run():
            outcome["lost"] = True
        stopping.set()

    election = threading.Thread(target=elect, name="leader-election", daemon=True)
    if values["leader-elect"]:
        log("attempting to acquire leader lease kube-system/%s..." % elector.name)
        election.start()
    else:
        elector.is_leader.set()
    while not stopping.is_set():
        if elector.is_leader.wait(0.5):
            work(client, stopping, elector.is_leader)
    elector.stopping.set()
    if election.is_alive():
        election.join(5.0)  # let it release the Lease
    health.shutdown()
    return 1 if outcome["lost"] else 0
