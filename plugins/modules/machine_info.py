#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: machine_info
short_description: Read what a control plane host knows about its machine, in one round trip
version_added: "0.1.0"
description:
  - Runs on a control plane candidate host and returns, for the observed snapshot (C(docs/snapshot.md)) -
  - the machine record the host keeps (C(/etc/kubernetes/control-plane-machine.json), C(docs/state.md));
  - whether the host holds an admin kubeconfig (C(/etc/kubernetes/admin.conf)), which says a cluster exists, and
    the etcd client credentials the observation reads etcd with (C(pki/etcd/ca.crt) and C(healthcheck-client.crt)
    and C(.key)), which a host half way through C(kubeadm reset) has lost;
  - when the machine's kubeadm certificates expire, as C(kubeadm certs check-expiration) lists them (the
    certificates under C(pki/) and C(pki/etcd/) but the CAs, and the client certificates embedded in the
    kubeconfigs), and the earliest of them;
  - when the CAs kubeadm made expire (C(pki/ca.crt), C(pki/etcd/ca.crt), C(pki/front-proxy-ca.crt)), and the
    earliest of them;
  - when the kubelet's client certificate (C(pki/kubelet-client-current.pem) under O(kubelet_dir)) expires, and
    whether the kubelet renews it itself (C(rotateCertificates) in its C(config.yaml); the kubelet's default is
    not to);
  - the certificate renewal in place under way on the host, if any (the record
    M(kubeadm.control_plane.certificate_renewal) keeps in C(certificate-renewal/record.json) until its last step).
  - Reads only. Returns no key and no certificate, only names and dates.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  kubernetes_dir:
    description: kubeadm's directory.
    type: path
    default: /etc/kubernetes
  kubelet_dir:
    description: The kubelet's directory.
    type: path
    default: /var/lib/kubelet
attributes:
  check_mode:
    support: full
    description: The module only reads, so check mode returns the same answer.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: Runs on the host; needs only the Python standard library.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - A record that is not a JSON object is returned as null with C(record_error) saying why, so the observation
    names the host at fault instead of failing on it.
  - A certificate that cannot be read is listed with C(error) instead of a date; it is not counted in
    C(certificates_expire).
seealso:
  - module: kubeadm.control_plane.kcp_observe
"""

EXAMPLES = r"""
- name: Read what each candidate host knows about its machine
  kubeadm.control_plane.machine_info:
  register: machine
"""

RETURN = r"""
record:
  description: The machine record, or null when the host has none (or it is not a JSON object).
  returned: always
  type: dict
record_error:
  description: Why the record could not be read; null when it was read or is absent.
  returned: always
  type: str
admin_kubeconfig:
  description: Whether C(admin.conf) exists in O(kubernetes_dir).
  returned: always
  type: bool
etcd_client_credentials:
  description: Whether the CA, certificate and key the observation reads etcd with exist under O(kubernetes_dir).
  returned: always
  type: bool
certificates_expire:
  description: The earliest expiry of the machine's kubeadm certificates (RFC 3339, UTC); null when it has none.
  returned: always
  type: str
certificates:
  description: Each certificate read, with C(name) and C(expires), or C(error) when it could not be read.
  returned: always
  type: list
  elements: dict
certificate_authorities_expire:
  description: The earliest expiry of the CAs kubeadm made (RFC 3339, UTC); null when the host has none.
  returned: always
  type: str
certificate_authorities:
  description: Each CA read, with C(name) and C(expires), or C(error) when it could not be read.
  returned: always
  type: list
  elements: dict
certificates_expired:
  description:
    - Whether one of those certificates has expired by the host's clock; its API server, etcd member or kubeconfigs
      are then refused, and C(playbooks/certificates.yml) renews them through the host (C(docs/certificates.md)).
  returned: always
  type: bool
kubelet_certificate_expire:
  description: When the kubelet's client certificate expires (RFC 3339, UTC); null when it has none or it cannot be read.
  returned: always
  type: str
kubelet_certificate_rotates:
  description: Whether the kubelet's configuration has it renew its client certificate (C(rotateCertificates)).
  returned: always
  type: bool
restore:
  description:
    - The restore from a backup made or under way on the host (M(kubeadm.control_plane.etcd_restore)'s record), null
      when none was; C(backup) names the backup, C(step) the last step done (C(done) once finished).
  returned: always
  type: dict
  sample: {backup: 20261129T030012Z, step: done, started: "2026-11-29T05:00:00Z", finished: "2026-11-29T05:00:41Z"}
certificate_renewal:
  description:
    - The certificate renewal in place under way on the host, null when none is; C(step) is the last step done
      (null before the first), C(failed_step) and C(error) what failed last, if a step did.
    - A record that cannot be read is reported as a renewal stopped before its first step, with the reason as its
      error, so that it is finished rather than ignored.
  returned: always
  type: dict
  sample: {started: "2026-11-28T23:10:00Z", step: etcd, failed_step: kube-apiserver, error: "kube-apiserver did not answer ..."}
"""

import base64
import json
import os
import re
from datetime import datetime, timezone

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_renewal import RECORD as RENEWAL_RECORD
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_renewal import progress
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_restore import RECORD as RESTORE_RECORD
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_dates import expiry_of_file, first_pem_certificate, not_after

RECORD = "control-plane-machine.json"
ETCD_CLIENT_FILES = ("ca.crt", "healthcheck-client.crt", "healthcheck-client.key")
KUBECONFIGS = ("admin.conf", "super-admin.conf", "controller-manager.conf", "scheduler.conf")
AUTHORITIES = ("pki/ca.crt", "pki/etcd/ca.crt", "pki/front-proxy-ca.crt")
KUBELET_CERTIFICATE = "pki/kubelet-client-current.pem"
ROTATES = re.compile(r"^rotateCertificates:\s*(true|false)\s*$", re.M)
STAMP = "%Y-%m-%dT%H:%M:%SZ"
CLIENT_CERTIFICATE = re.compile(r"client-certificate-data:\s*(\S+)")


def certificate_files(kubernetes_dir):
    """(name, path) of kubeadm's leaf certificates under pki/ and pki/etcd/ (not the CAs)."""
    found = []
    for sub in ("pki", os.path.join("pki", "etcd")):
        directory = os.path.join(kubernetes_dir, sub)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            if name.endswith(".crt") and not name.endswith("ca.crt"):
                found.append((os.path.join(sub, name), os.path.join(directory, name)))
    return found


def _read_file(name, path):
    """``{name, expires}`` of the first certificate in the PEM file ``path``, or ``{name, error}``."""
    try:
        return {"name": name, "expires": expiry_of_file(path)}
    except (OSError, ValueError) as exc:
        return {"name": name, "error": str(exc)}


def read_authorities(kubernetes_dir):
    """The CAs kubeadm made that the host has (an external etcd's CA is the etcd operator's, not listed)."""
    return [_read_file(name, os.path.join(kubernetes_dir, name)) for name in AUTHORITIES
            if os.path.exists(os.path.join(kubernetes_dir, name))]


def read_kubelet(kubelet_dir):
    """(when the kubelet's client certificate expires or None, whether the kubelet rotates it)."""
    path = os.path.join(kubelet_dir, KUBELET_CERTIFICATE)
    found = _read_file(KUBELET_CERTIFICATE, path) if os.path.exists(path) else {}
    try:
        with open(os.path.join(kubelet_dir, "config.yaml"), encoding="utf-8") as handle:
            match = ROTATES.search(handle.read())
    except OSError:
        match = None
    return found.get("expires"), bool(match and match.group(1) == "true")


def _earliest(certificates):
    dates = [c["expires"] for c in certificates if "expires" in c]
    return min(dates).strftime(STAMP) if dates else None


def _listed(certificates):
    return [dict(c, expires=c["expires"].strftime(STAMP)) if "expires" in c else c for c in certificates]


def read_certificates(kubernetes_dir):
    certificates = [_read_file(name, path) for name, path in certificate_files(kubernetes_dir)]
    for name in KUBECONFIGS:
        path = os.path.join(kubernetes_dir, name)
        if not os.path.exists(path):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                match = CLIENT_CERTIFICATE.search(handle.read())
            if match:  # a kubeconfig whose client certificate is a file has nothing embedded to read
                certificates.append({"name": name, "expires": not_after(first_pem_certificate(base64.b64decode(match.group(1))))})
        except (OSError, ValueError) as exc:
            certificates.append({"name": name, "error": str(exc)})
    return certificates


def _read_json_object(path):
    """(the JSON object in ``path`` or None, why it could not be read or None); a missing file is (None, None)."""
    try:
        with open(path, encoding="utf-8") as handle:
            found = json.load(handle)
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, "%s: %s" % (path, exc)
    if not isinstance(found, dict):
        return None, "%s: not a JSON object" % path
    return found, None


def read_record(kubernetes_dir):
    """(record or None, why it could not be read or None)."""
    return _read_json_object(os.path.join(kubernetes_dir, RECORD))


def read_renewal(kubernetes_dir):
    """The renewal under way on the host (``certificate_renewal.progress``), or None; a record that cannot be read is
    one stopped before its first step, with the reason as its error."""
    record, problem = _read_json_object(os.path.join(kubernetes_dir, RENEWAL_RECORD))
    if problem is not None:
        record = {"failed": {"error": problem}}
    return progress(record)


def main():
    module = AnsibleModule(argument_spec=dict(kubernetes_dir=dict(type="path", default="/etc/kubernetes"),
                                              kubelet_dir=dict(type="path", default="/var/lib/kubelet")),
                           supports_check_mode=True)
    directory = module.params["kubernetes_dir"]
    record, record_error = read_record(directory)
    certificates = read_certificates(directory)
    authorities = read_authorities(directory)
    kubelet_expires, kubelet_rotates = read_kubelet(module.params["kubelet_dir"])
    module.exit_json(
        changed=False,
        record=record,
        record_error=record_error,
        admin_kubeconfig=os.path.exists(os.path.join(directory, "admin.conf")),
        etcd_client_credentials=all(os.path.isfile(os.path.join(directory, "pki", "etcd", name)) for name in ETCD_CLIENT_FILES),
        certificates_expire=_earliest(certificates),
        # by the host's clock, which its TLS peers go by
        certificates_expired=any(c["expires"] <= datetime.now(timezone.utc) for c in certificates if "expires" in c),
        certificates=_listed(certificates),
        certificate_authorities_expire=_earliest(authorities),
        certificate_authorities=_listed(authorities),
        kubelet_certificate_expire=kubelet_expires.strftime(STAMP) if kubelet_expires else None,
        kubelet_certificate_rotates=kubelet_rotates,
        certificate_renewal=read_renewal(directory),
        restore=_read_json_object(RESTORE_RECORD)[0],
    )


if __name__ == "__main__":
    main()
