# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm configuration one machine is built from, rendered from the one spec. Pure: no I/O.

``kubeadm init`` (the first machine) reads an InitConfiguration and the ClusterConfiguration; ``kubeadm join
--control-plane`` (every other one) a JoinConfiguration. The spec's documents are taken as written, and the
collection sets what is its to set: the version, endpoint and cluster name (ClusterConfiguration), the node's
name, advertise address and failure-domain label (nodeRegistration, localAPIEndpoint), and the per-run secrets
(bootstrap token, certificate key, CA hashes), which only ever reach the rendered file (mode 0600).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

ZONE_LABEL = "topology.kubernetes.io/zone"
REDACTED = "<redacted>"


def endpoint_address(spec):
    """``host:port`` of the stable API endpoint of a normalized spec (IPv6 hosts in brackets)."""
    host = spec["endpoint"]["host"]
    return "%s:%d" % ("[%s]" % host if ":" in host else host, spec["endpoint"]["port"])


def cluster_configuration(spec):
    doc = _document(spec, "ClusterConfiguration", spec["kubeadm"]["cluster_configuration"])
    doc.update(kubernetesVersion=spec["version"], controlPlaneEndpoint=endpoint_address(spec),
               clusterName=spec["cluster_name"])
    return doc


def init_configuration(spec, machine, token, certificate_key):
    """The InitConfiguration of the machine that runs ``kubeadm init``; ``token`` is the first bootstrap token."""
    doc = _document(spec, "InitConfiguration", spec["kubeadm"]["init_configuration"])
    _node_registration(spec, doc, machine)
    doc.setdefault("localAPIEndpoint", {})["advertiseAddress"] = machine["address"]
    doc["bootstrapTokens"] = [dict(_first(doc.get("bootstrapTokens")), token=token)]
    doc["certificateKey"] = certificate_key
    return doc


def join_configuration(spec, machine, token, certificate_key, ca_cert_hashes):
    """The JoinConfiguration of a control plane machine joining through the stable endpoint."""
    doc = _document(spec, "JoinConfiguration", spec["kubeadm"]["join_configuration"])
    _node_registration(spec, doc, machine)
    discovery = doc.setdefault("discovery", {})
    discovery["bootstrapToken"] = dict(discovery.get("bootstrapToken") or {}, apiServerEndpoint=endpoint_address(spec),
                                       token=token, caCertHashes=list(ca_cert_hashes))
    control_plane = doc.setdefault("controlPlane", {})
    control_plane.setdefault("localAPIEndpoint", {})["advertiseAddress"] = machine["address"]
    control_plane["certificateKey"] = certificate_key
    return doc


def documents(spec, machine, bootstrap, token, certificate_key, ca_cert_hashes=()):
    """The documents of ``bootstrap`` (``init``: Init + Cluster; ``join``: Join) for ``machine``."""
    if bootstrap == "init":
        return [init_configuration(spec, machine, token, certificate_key), cluster_configuration(spec)]
    return [join_configuration(spec, machine, token, certificate_key, ca_cert_hashes)]


def redacted(docs):
    """The same documents with every secret replaced, for a diff or a log."""
    docs = copy.deepcopy(docs)
    for doc in docs:
        if "certificateKey" in doc:
            doc["certificateKey"] = REDACTED
        for token in doc.get("bootstrapTokens") or []:
            token["token"] = REDACTED
        bootstrap = (doc.get("discovery") or {}).get("bootstrapToken")
        if bootstrap:
            bootstrap["token"] = REDACTED
        if "certificateKey" in (doc.get("controlPlane") or {}):
            doc["controlPlane"]["certificateKey"] = REDACTED
    return docs


def _document(spec, kind, written):
    doc = copy.deepcopy(written)
    doc.update(apiVersion=spec["kubeadm"]["api_version"], kind=kind)
    return doc


def _first(tokens):
    return copy.deepcopy(tokens[0]) if tokens else {}


def _node_registration(spec, doc, machine):
    """The node is named for the machine and labelled with its failure domain through the kubelet's
    ``--node-labels`` (a label the Node authorizer lets a kubelet set on itself)."""
    registration = doc.setdefault("nodeRegistration", {})
    registration["name"] = machine["name"]
    if not machine.get("failure_domain"):
        return
    label = "%s=%s" % (ZONE_LABEL, machine["failure_domain"])
    args = registration.setdefault("kubeletExtraArgs", [])
    if isinstance(args, dict):  # v1beta3: a mapping
        args["node-labels"] = _with_zone(args.get("node-labels"), label)
        return
    for arg in args:
        if arg.get("name") == "node-labels":
            arg["value"] = _with_zone(arg.get("value"), label)
            return
    args.append({"name": "node-labels", "value": label})


def _with_zone(labels, label):
    """``--node-labels`` with the machine's zone label in place of any other zone label."""
    kept = [item for item in (labels or "").split(",") if item and not item.startswith(ZONE_LABEL + "=")]
    return ",".join(kept + [label])
