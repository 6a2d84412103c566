# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kube-apiserver`` entry point: the flags kubeadm's manifest passes (kubeadm-reference.md §1.3).

Used: --advertise-address, --bind-address, --secure-port, --etcd-servers (comma-separated, tried in turn),
--etcd-cafile/--etcd-certfile/--etcd-keyfile, --tls-cert-file/--tls-private-key-file, --client-ca-file,
--enable-bootstrap-token-auth, --kubelet-client-certificate/--kubelet-client-key (the identity pods/log is asked of
kubelets with) and --etcd-readycheck-timeout (default 1s here, 2s in the real server); how long a
request waits for etcd is the emulation's own ``KCPSIM_ETCD_REQUEST_TIMEOUT`` (a Go duration, default 5s: the
real server has no flag for it). --service-account-key-file and
--service-account-signing-key-file must name readable files and --service-account-issuer must be set, as the
real server refuses to start otherwise. Every other flag the real kube-apiserver of this minor has is accepted
and ignored; one it does not have is refused (kcpsim/component_flags.py).

Exit status: 1 when a flag is wrong or a file cannot be read (the kubelet restarts it), 0 after SIGTERM.
"""

import os
import signal
import sys
import threading

from kcpsim import etcdclient, flags, version
from kcpsim.apiserver import api, klog, server, storage
from kcpsim.kubeadm import durations

ETCD_REQUEST_TIMEOUT_ENV = "KCPSIM_ETCD_REQUEST_TIMEOUT"
FLAGS = {
    "advertise-address": ("str", ""),
    "bind-address": ("str", "0.0.0.0"),
    "secure-port": ("int", 6443),
    "etcd-servers": ("list", []),
    "etcd-cafile": ("str", ""),
    "etcd-certfile": ("str", ""),
    "etcd-keyfile": ("str", ""),
    "tls-cert-file": ("str", ""),
    "tls-private-key-file": ("str", ""),
    "client-ca-file": ("str", ""),
    "enable-bootstrap-token-auth": ("bool", False),
    "etcd-readycheck-timeout": ("duration", 1.0),
    "service-account-key-file": ("str", ""),
    "service-account-signing-key-file": ("str", ""),
    "service-account-issuer": ("str", ""),
    "kubelet-client-certificate": ("str", ""),
    "kubelet-client-key": ("str", ""),
    "v": ("int", 0),
    "version": ("bool", False),
}


def check(values):
    """Every problem with the flag values, as the messages the process exits with."""
    problems = []
    if not values["etcd-servers"]:
        problems.append("--etcd-servers must be specified")
    if not values["tls-cert-file"] or not values["tls-private-key-file"]:
        problems.append("--tls-cert-file and --tls-private-key-file are required (no self-signed serving "
                        "certificate in the emulation)")
    if not values["service-account-issuer"]:
        problems.append("service-account-issuer is a required flag")
    if not values["service-account-signing-key-file"]:
        problems.append("service-account-signing-key-file is a required flag")
    for name in ("etcd-cafile", "etcd-certfile", "etcd-keyfile", "tls-cert-file", "tls-private-key-file",
                 "client-ca-file", "service-account-key-file", "service-account-signing-key-file",
                 "kubelet-client-certificate", "kubelet-client-key"):
        if values[name] and not os.access(values[name], os.R_OK):
            problems.append("--%s: cannot read %s" % (name, values[name]))
    if not values["etcd-cafile"]:
        problems.append("--etcd-cafile is required: etcd is only reached over TLS")
    return problems


def etcd_request_timeout():
    """Seconds a request waits for etcd: ``KCPSIM_ETCD_REQUEST_TIMEOUT`` (a Go duration), else 5."""
    return durations.parse(os.environ.get(ETCD_REQUEST_TIMEOUT_ENV) or "5s")


def main(argv=None):
    log = klog.logger("kube-apiserver")
    try:
        values, ignored = flags.parse(sys.argv[1:] if argv is None else argv, FLAGS,
                                      flags.no_arguments("kube-apiserver"), flags.known_flags("kube-apiserver"))
    except flags.FlagError as exc:
        log("Error: %s" % exc, "E")
        return 1
    if values["version"]:
        print("Kubernetes %s" % version.current())
        return 0
    problems = check(values)
    if problems:
        for problem in problems:
            log("Error: %s" % problem, "E")
        return 1
    if ignored and values["v"] >= 2:
        log("flags accepted but not emulated: %s" % ", ".join(sorted(set(ignored))))
    context = etcdclient.tls_context(values["etcd-cafile"], values["etcd-certfile"] or None,
                                     values["etcd-keyfile"] or None)
    store = storage.Store(values["etcd-servers"], context, timeout=etcd_request_timeout())
    address = "%s:%d" % (values["advertise-address"] or values["bind-address"], values["secure-port"])
    kubelet_client = (values["kubelet-client-certificate"], values["kubelet-client-key"]) \
        if values["kubelet-client-certificate"] else None
    app = api.Api(store, address, bootstrap_token_auth=values["enable-bootstrap-token-auth"],
                  ready_timeout=values["etcd-readycheck-timeout"], log=log, kubelet_client=kubelet_client)
    try:
        tls = server.server_context(values["tls-cert-file"], values["tls-private-key-file"],
                                    values["client-ca-file"] or None)
        httpd = server.serve(app, values["bind-address"], values["secure-port"], tls,
                             access_log=log if values["v"] >= 3 else None)
    except (OSError, ValueError) as exc:
        log("Error: cannot serve on %s:%d: %s" % (values["bind-address"], values["secure-port"], exc), "E")
        return 1

    def stop(signum, frame):
        app.close()
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    app.start()
    log("Serving securely on %s:%d (etcd: %s)" % (values["bind-address"], values["secure-port"],
                                                  ",".join(values["etcd-servers"])))
    httpd.serve_forever(poll_interval=0.5)
    httpd.server_close()
    store.close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
