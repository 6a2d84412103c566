#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kubeadm_config
short_description: Write the kubeadm configuration one control plane machine is built from
version_added: 0.1.0
description:
  - Renders, from the control plane spec, the configuration C(kubeadm init) (the first machine; InitConfiguration
    and ClusterConfiguration), C(kubeadm join --control-plane) (every other machine; JoinConfiguration) or
    C(kubeadm join) of a worker node (a JoinConfiguration without C(controlPlane)) reads, and writes it on the
    machine with mode 0600, because it holds this run's bootstrap token (and certificate key).
  - The spec's kubeadm documents are used as written; the module sets the Kubernetes version, the endpoint and the
    cluster name, the node's name and advertise address, its failure-domain label
    (C(topology.kubernetes.io/zone), through the kubelet's C(--node-labels)), and the secrets.
  - A worker's JoinConfiguration starts from O(join_configuration), not from the spec's C(join_configuration)
    (the control plane machines'); the module sets its node's name, its C(control-plane.kubeadm.io/worker-group)
    label from O(machine.worker_group) (and its zone label from O(machine.failure_domain)), and the discovery
    through the spec's endpoint.
  - The secrets never appear in the result or the diff. With O(state=absent) the file is removed, as the flows
    do once kubeadm has read it.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  spec:
    description:
      - The control plane spec (see M(kubeadm.control_plane.kcp_validate)); it is validated again here and an
        invalid one is refused before anything is written.
    type: dict
  machine:
    description: The machine the configuration is for.
    type: dict
    suboptions:
      name:
        description: The machine's name, which becomes its node name.
        type: str
        required: true
      address:
        description: The address its API server and etcd advertise.
        type: str
        required: true
      failure_domain:
        description: Its failure domain, set as the node's C(topology.kubernetes.io/zone) label.
        type: str
      worker_group:
        description:
          - A worker's group (V(worker)), set as its Node's C(control-plane.kubeadm.io/worker-group) label; a
            Kubernetes label value. None leaves the worker in the unnamed group.
        type: str
  bootstrap:
    description: V(init) for the machine that runs C(kubeadm init), V(join) for one that joins the control plane,
      V(worker) for a worker node that joins the cluster.
    type: str
    choices: [init, join, worker]
  token:
    description:
      - The bootstrap token to join with (V(join), V(worker)), or the one the cluster is created with (V(init)).
      - V(init) without it - the module makes one on the machine (C(<id>.<secret>), random), or keeps the one its
        earlier write of the file holds; it never leaves the file, and RV(cluster_secrets) names its Secret.
    type: str
  certificate_key:
    description:
      - The key that decrypts (V(join)) or encrypts (V(init)) the shared certificates in C(kubeadm-certs); required
        by V(join), unused by V(worker).
      - V(init) without it - made on the machine (32 random bytes in hex) or kept from the earlier write, like the token.
    type: str
  ca_cert_hashes:
    description: The cluster CA's public key hashes a joining machine pins (V(sha256:<hex>)); V(join) and V(worker).
    type: list
    elements: str
    default: []
  join_configuration:
    description:
      - V(worker) only - the worker's own JoinConfiguration fields (C(nodeRegistration), C(discovery) timeouts, ...),
        what the one written is made from; without C(controlPlane) and without secrets (the module sets them).
    type: dict
    default: {}
  path:
    description: Where the configuration is written.
    type: path
    default: /etc/kubernetes/kubeadm-control-plane.yaml
  state:
    description:
      - V(present) writes the file, V(absent) removes it, and with it any temporary file beside it that a write killed
        half way left (C(.kubeadm-config-*)).
    type: str
    choices: [present, absent]
    default: present
attributes:
  check_mode:
    support: full
    description: Reports whether the file would change, and how (secrets redacted), without writing it.
  diff_mode:
    support: full
    description: The documents before and after, secrets redacted.
  platform:
    platforms: posix
    description: Runs on the machine being built.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Write the configuration of the first machine, its token and certificate key made there
  kubeadm.control_plane.kubeadm_config:
    spec: "{{ kcp }}"
    machine: {name: cp-1, address: 10.0.0.11, failure_domain: fd-1}
    bootstrap: init
  register: init_config

- name: Write the configuration of a worker node of the group md-0
  kubeadm.control_plane.kubeadm_config:
    spec: "{{ kcp }}"
    machine: {name: worker-1, address: 10.0.0.21, worker_group: md-0}
    bootstrap: worker
    token: "{{ bootstrap_token }}"
    ca_cert_hashes: "{{ ca_hashes }}"
  no_log: true

- name: Remove it once kubeadm has read it
  kubeadm.control_plane.kubeadm_config:
    state: absent
"""

RETURN = r"""
path:
  description: The file written or removed.
  returned: always
  type: str
  sample: /etc/kubernetes/kubeadm-control-plane.yaml
cluster_secrets:
  description:
    - The C(kube-system) Secrets that the secrets of the file give the cluster once kubeadm runs on it (O(state=present)),
      or gave it (the file removed, O(state=absent)), for the caller to delete once kubeadm is done with them, or
      when a run that was stopped left them valid; C(bootstrap-token-<id>) for each bootstrap token (a token is
      C(<id>.<secret>), the ID its public part), C(kubeadm-certs) when the file held the certificate key of an upload of the
      shared certificates.
  returned: always
  type: list
  elements: str
  sample: [bootstrap-token-abcdef, kubeadm-certs]
kinds:
  description: The kinds of the documents written.
  returned: when state is present
  type: list
  elements: str
  sample: [InitConfiguration, ClusterConfiguration]
"""

import os
import secrets
import string

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.kubeadm_config import documents, cluster_secrets, init_secrets, redacted
from ansible_collections.kubeadm.control_plane.plugins.module_utils.private_file import partial_writes, replaced_whole
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import WORKER_GROUP_RULE, is_worker_group_name, normalize_spec
from ansible_collections.kubeadm.control_plane.plugins.module_utils.validation import describe

try:
    import yaml
    HAS_YAML = True
except ImportError:
    HAS_YAML = False


def render(docs):
    return yaml.safe_dump_all(docs, sort_keys=True, default_flow_style=False)


def current_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def redacted_text(text):
    if text is None:
        return ""
    try:
        return render(redacted([doc for doc in yaml.safe_load_all(text) if doc]))
    except yaml.YAMLError:
        return "(not YAML)\n"


def parsed(text):
    """The YAML documents of ``text`` (mappings only), none when it is missing or no YAML."""
    if text is None:
        return []
    try:
        return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]
    except yaml.YAMLError:
        return []


def random_text(length):
    """``length`` random characters of a bootstrap token's alphabet ([a-z0-9])."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for position in range(length))


def made_here(before):
    """(token, certificate key) of an init configuration: the earlier write's, else new random ones."""
    token, key = init_secrets(parsed(before))
    if token is None:
        token = "%s.%s" % (random_text(6), random_text(16))
        key = secrets.token_hex(32)
    return token, key


def main():
    module = AnsibleModule(
        argument_spec=dict(
            spec=dict(type="dict"),
            machine=dict(type="dict", options=dict(name=dict(type="str", required=True),
                                                   address=dict(type="str", required=True),
                                                   failure_domain=dict(type="str"),
                                                   worker_group=dict(type="str"))),
            bootstrap=dict(type="str", choices=["init", "join", "worker"]),
            token=dict(type="str", no_log=True),
            certificate_key=dict(type="str", no_log=True),
            ca_cert_hashes=dict(type="list", elements="str", default=[]),
            join_configuration=dict(type="dict", default={}),
            path=dict(type="path", default="/etc/kubernetes/kubeadm-control-plane.yaml"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
        ),
        required_if=[("state", "present", ("spec", "machine", "bootstrap")),
                     ("bootstrap", "join", ("token", "certificate_key")), ("bootstrap", "worker", ("token",))],
        supports_check_mode=True,
    )
    params = module.params
    path = params["path"]
    before = current_text(path)
    if not HAS_YAML:
        module.fail_json(msg="the PyYAML library is required on the machine")
    if params["state"] == "absent":
        partial = partial_writes(path)
        given = cluster_secrets(parsed(before))
        if not module.check_mode:
            for name in ([path] if before is not None else []) + partial:
                os.remove(name)
        module.exit_json(changed=before is not None or bool(partial), path=path, cluster_secrets=given,
                         diff=dict(before=redacted_text(before), after=""))
    if params["bootstrap"] in ("join", "worker") and not params["ca_cert_hashes"]:
        module.fail_json(msg="ca_cert_hashes: a joining machine must pin the cluster CA (at least one sha256 hash)")
    worker_group = params["machine"].get("worker_group")
    if worker_group is not None and not is_worker_group_name(worker_group):
        module.fail_json(msg="machine.worker_group: " + WORKER_GROUP_RULE)
    spec, errors = normalize_spec(params["spec"])
    if errors:
        module.fail_json(msg="the control plane spec is invalid: " + describe(errors), errors=errors)
    token, certificate_key = params["token"], params["certificate_key"]
    if params["bootstrap"] == "init" and not (token and certificate_key):
        if token or certificate_key:
            module.fail_json(msg="token, certificate_key: give both to kubeadm init, or neither to have them made on the machine")
        token, certificate_key = made_here(before)
    try:
        docs = documents(spec, params["machine"], params["bootstrap"], token, certificate_key,
                         params["ca_cert_hashes"], params["join_configuration"])
    except ValueError as exc:
        module.fail_json(msg="join_configuration: %s" % exc)
    text = render(docs)
    changed = text != before or (os.stat(path).st_mode & 0o777) != 0o600
    if changed and not module.check_mode:
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        with replaced_whole(path) as out:
            out.write(to_bytes(text))
    module.exit_json(changed=changed, path=path, kinds=[doc["kind"] for doc in docs], cluster_secrets=cluster_secrets(docs),
                     diff=dict(before=redacted_text(before), after=render(redacted(docs))))


if __name__ == "__main__":
    main()
