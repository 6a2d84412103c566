# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm certs check-expiration``: which certificates it lists and how it prints them. Pure, no I/O
(kubeadm-reference.md §5.1).

The rules:

* Rows, by name: admin.conf, apiserver, apiserver-etcd-client, apiserver-kubelet-client,
  controller-manager.conf, etcd-healthcheck-client, etcd-peer, etcd-server, front-proxy-client,
  scheduler.conf, super-admin.conf (the etcd rows only with local etcd); kubelet.conf is never listed. Then
  the CAs ca, etcd-ca, front-proxy-ca.
* Dates as ``Jun 06, 2027 15:28 UTC``; residual time as Kubernetes' HumanDuration (``364d``, ``9y``,
  ``6y362d``; ``<invalid>`` once expired); a missing file is the row ``!MISSING! <name>``.
* A certificate is externally managed when its CA's key is absent.
* Columns are padded like Go's tabwriter (minimum width 10, padding 3).
* ``-o json|yaml`` (1.30+): ``output.kubeadm.k8s.io/v1alpha3`` ``CertificateExpirationInfo``, residual times
  in nanoseconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import yaml

# name -> (file relative to /etc/kubernetes, CA name, needs local etcd)
CERTIFICATES = (
    ("admin.conf", "admin.conf", "ca", False),
    ("apiserver", "pki/apiserver.crt", "ca", False),
    ("apiserver-etcd-client", "pki/apiserver-etcd-client.crt", "etcd-ca", True),
    ("apiserver-kubelet-client", "pki/apiserver-kubelet-client.crt", "ca", False),
    ("controller-manager.conf", "controller-manager.conf", "ca", False),
    ("etcd-healthcheck-client", "pki/etcd/healthcheck-client.crt", "etcd-ca", True),
    ("etcd-peer", "pki/etcd/peer.crt", "etcd-ca", True),
    ("etcd-server", "pki/etcd/server.crt", "etcd-ca", True),
    ("front-proxy-client", "pki/front-proxy-client.crt", "front-proxy-ca", False),
    ("scheduler.conf", "scheduler.conf", "ca", False),
    ("super-admin.conf", "super-admin.conf", "ca", False),
)
# What ``certs renew`` says about each of them.
DESCRIPTIONS = {
    "admin.conf": "certificate embedded in the kubeconfig file for the admin to use and for kubeadm itself",
    "apiserver": "certificate for serving the Kubernetes API",
    "apiserver-etcd-client": "certificate the apiserver uses to access etcd",
    "apiserver-kubelet-client": "certificate for the API server to connect to kubelet",
    "controller-manager.conf": "certificate embedded in the kubeconfig file for the controller manager to use",
    "etcd-healthcheck-client": "certificate for liveness probes to healthcheck etcd",
    "etcd-peer": "certificate for etcd nodes to communicate with each other",
    "etcd-server": "certificate for serving etcd",
    "front-proxy-client": "certificate for the front proxy client",
    "scheduler.conf": "certificate embedded in the kubeconfig file for the scheduler manager to use",
    "super-admin.conf": "certificate embedded in the kubeconfig file for the super-admin",
}
AUTHORITIES = (
    ("ca", "pki/ca", False),
    ("etcd-ca", "pki/etcd/ca", True),
    ("front-proxy-ca", "pki/front-proxy-ca", False),
)
OUTPUT_API_VERSION = "output.kubeadm.k8s.io/v1alpha3"


def certificates(local_etcd):
    return [entry for entry in CERTIFICATES if local_etcd or not entry[3]]


def authorities(local_etcd):
    return [entry for entry in AUTHORITIES if local_etcd or not entry[2]]


@dataclass(frozen=True)
class Row:
    name: str
    expires: object = None          # aware datetime, None when the file is missing
    ca_name: str = ""
    externally_managed: bool = False

    @property
    def missing(self):
        return self.expires is None


def _units(major, major_unit, minor, minor_unit):
    """``5m30s``, or ``5m`` when the smaller unit is zero, as HumanDuration writes two units."""
    return "%d%s" % (major, major_unit) + ("%d%s" % (minor, minor_unit) if minor else "")


def human_duration(seconds):
    """Kubernetes' ``duration.HumanDuration`` (about three significant figures)."""
    if int(seconds) < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    total = int(seconds)
    if total < 120:
        return "%ds" % total
    minutes = total // 60
    if minutes < 10:
        return _units(minutes, "m", total % 60, "s")
    if minutes < 180:
        return "%dm" % minutes
    hours = total // 3600
    if hours < 8:
        return _units(hours, "h", minutes % 60, "m")
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        return _units(hours // 24, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    if hours < 24 * 365 * 8:
        return _units(hours // 24 // 365, "y", (hours // 24) % 365, "d")
    return "%dy" % (hours // 24 // 365)


def format_date(moment):
    return moment.strftime("%b %d, %Y %H:%M UTC")


def _yes_no(flag):
    return ("yes" if flag else "no").ljust(8)  # kubeadm prints this last column with %-8v


def _tabulate(lines):
    """Go's tabwriter (minimum width 10, padding 3) over lines whose last column is not a cell: every cell
    but the last of a line is padded; a one-cell line (``!MISSING! <name>``) is a cell of the first column."""
    widths = {}
    for cells in lines:
        for i, cell in enumerate(cells if len(cells) == 1 else cells[:-1]):
            widths[i] = max(widths.get(i, 0), len(cell))
    out = []
    for cells in lines:
        padded = cells if len(cells) == 1 else cells[:-1]
        text = "".join(cell.ljust(max(10, widths[i] + 3)) for i, cell in enumerate(padded))
        out.append(text if len(cells) == 1 else text + cells[-1])
    return out


def render_table(rows, ca_rows, now):
    """The two tables, as text (ends with a newline)."""
    cert_lines = [["CERTIFICATE", "EXPIRES", "RESIDUAL TIME", "CERTIFICATE AUTHORITY", "EXTERNALLY MANAGED"]]
    for row in rows:
        if row.missing:
            cert_lines.append(["!MISSING! " + row.name])
            continue
        cert_lines.append([row.name, format_date(row.expires), human_duration((row.expires - now).total_seconds()),
                           row.ca_name, _yes_no(row.externally_managed)])
    ca_lines = [["CERTIFICATE AUTHORITY", "EXPIRES", "RESIDUAL TIME", "EXTERNALLY MANAGED"]]
    for row in ca_rows:
        if row.missing:
            ca_lines.append(["!MISSING! " + row.name])
            continue
        ca_lines.append([row.name, format_date(row.expires), human_duration((row.expires - now).total_seconds()),
                         _yes_no(row.externally_managed)])
    return "\n".join(_tabulate(cert_lines)) + "\n\n" + "\n".join(_tabulate(ca_lines)) + "\n"


def _rfc3339(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def structured(rows, ca_rows, now):
    """The ``CertificateExpirationInfo`` object."""
    def entry(row, with_ca):
        if row.missing:
            return {"name": row.name, "missing": True}
        item = {
            "name": row.name,
            "expirationDate": _rfc3339(row.expires),
            "residualTime": int((row.expires - now).total_seconds() * 1e9),
        }
        if with_ca:
            item["certificateAuthorityName"] = row.ca_name
        item["externallyManaged"] = row.externally_managed
        return item

    return {
        "kind": "CertificateExpirationInfo",
        "apiVersion": OUTPUT_API_VERSION,
        "certificates": [entry(row, True) for row in rows],
        "certificateAuthorities": [entry(row, False) for row in ca_rows],
    }


def render_structured(rows, ca_rows, now, output):
    info = structured(rows, ca_rows, now)
    if output == "json":
        return json.dumps(info, indent=4) + "\n"
    return yaml.safe_dump(info, sort_keys=False, default_flow_style=False)
