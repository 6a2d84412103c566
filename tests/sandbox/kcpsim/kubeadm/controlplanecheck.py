# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``[control-plane-check]``: init and join wait for all three control plane components
(WaitForAllControlPlaneComponents, kubeadm-reference-1.32-plus.md §2).

The rule: kube-apiserver at ``https://<--advertise-address>:<--secure-port>/livez``, kube-controller-manager at
``https://<--bind-address>:<--secure-port, 10257>/healthz`` (it has no /livez yet) and kube-scheduler at
``https://<--bind-address>:<--secure-port, 10259>/livez``, the addresses and ports taken from the components'
flags as the manifests carry them. Each must answer 200 within ``controlPlaneComponentHealthCheck``. kubeadm does
not verify these serving certificates (the controllers' are self-signed).
"""

from __future__ import annotations

import http.client
import ssl
import threading
import time

from kcpsim.kubeadm import durations, manifests

_INSECURE = ssl.create_default_context()
_INSECURE.check_hostname = False
_INSECURE.verify_mode = ssl.CERT_NONE


def endpoints(pods):
    """``[(component, url)]`` in kubeadm's order, from the rendered control plane ``pods`` ({component: pod})."""
    api = manifests.command_flags(pods["kube-apiserver"])
    kcm = manifests.command_flags(pods["kube-controller-manager"])
    scheduler = manifests.command_flags(pods["kube-scheduler"])
    return [
        ("kube-apiserver", "https://%s/livez" % manifests.join_host_port(api["advertise-address"],
                                                                         api.get("secure-port", "6443"))),
        ("kube-controller-manager", "https://%s/healthz" % manifests.join_host_port(
            kcm.get("bind-address", "127.0.0.1"), kcm.get("secure-port", "10257"))),
        ("kube-scheduler", "https://%s/livez" % manifests.join_host_port(
            scheduler.get("bind-address", "127.0.0.1"), scheduler.get("secure-port", "10259"))),
    ]


def healthy(url):
    """True when ``url`` answers 200 (no certificate verification, no proxy)."""
    host_port, path = url[len("https://"):].split("/", 1)
    host, port = host_port.rsplit(":", 1)
    conn = http.client.HTTPSConnection(host.strip("[]"), int(port), timeout=2, context=_INSECURE)
    try:
        conn.request("GET", "/" + path)
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def wait_all(out, pods, timeout, interval=0.5):
    """Print kubeadm's lines and wait for every component; the names of those not healthy in time ([] = all)."""
    targets = endpoints(pods)
    out("[control-plane-check] Waiting for healthy control plane components. This can take up to %s"
        % durations.render(timeout))
    for component, url in targets:
        out("[control-plane-check] Checking %s at %s" % (component, url))
    started = time.monotonic()
    lines, failed = {}, []

    def watch(component, url):
        deadline = started + timeout
        while not healthy(url):
            if time.monotonic() >= deadline:
                lines[component] = "[control-plane-check] %s is not healthy after %s" % (
                    component, durations.render(timeout))
                failed.append(component)
                return
            time.sleep(interval)
        lines[component] = "[control-plane-check] %s is healthy after %s" % (
            component, durations.render(round(time.monotonic() - started, 3)))

    threads = [threading.Thread(target=watch, args=target, daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for component, unused_url in targets:
        out(lines[component])
    return sorted(failed)
