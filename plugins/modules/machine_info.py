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
  - Become, when the task sets it, applies to the shell command.
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
    description:
      - Reads the host with one POSIX shell command (C(sh), C(sed), C(date)) over the task's connection, which the
        action plugin runs and answers from on the controller; no Python is started on the host and no module sent
        to it (every candidate host is read this way each pass of a flow).
      - The command prints only what the answer needs, never a key - a kubeconfig's embedded client certificate
        alone, the certificate blocks alone of the kubelet's certificate-and-key file.
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


from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils.machine_info_read import answer, read_command


def main():
    module = AnsibleModule(argument_spec=dict(kubernetes_dir=dict(type="path", default="/etc/kubernetes"),
                                              kubelet_dir=dict(type="path", default="/var/lib/kubelet")),
                           supports_check_mode=True)
    rc, out, err = module.run_command(["/bin/sh", "-c", read_command(module.params["kubernetes_dir"], module.params["kubelet_dir"])])
    if rc != 0:
        module.fail_json(msg="reading the host's kubeadm files failed (exit %d): %s" % (rc, err.strip()))
    module.exit_json(**answer(out))


if __name__ == "__main__":
    main()
