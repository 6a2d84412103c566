# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeadm configuration one machine is built from, rendered from the one spec. Pure: no I/O.

``kubeadm init`` (the first machine) reads an InitConfiguration and the ClusterConfiguration; ``kubeadm join
--control-plane`` (every other one) a JoinConfiguration. The spec's documents are taken as written, and the
collection sets what is its to set: the version, endpoint and cluster name (ClusterConfiguration), the node's
name, advertise address and failure-domain label (nodeRegistration, localAPIEndpoint), and the per-run secrets
(bootstrap token, certificate key, CA hashes), which only ever reach the rendered file (mode 0600).

A worker node (``kubeadm join`` without ``--control-plane``) reads a JoinConfiguration with no ``controlPlane``:
the spec's ``join_configuration`` is the control plane machines' and is not used; the document starts from the
worker's own (``written``, empty by default), and the collection sets its node's name, its worker-group label (and
its zone label when it has a failure domain) and the discovery through the stable endpoint.

The cluster's own copy, the ClusterConfiguration in the ``kube-system/kubeadm-config`` ConfigMap, is what
``kubeadm join --control-plane`` and ``kubeadm upgrade`` build a machine's control plane from. Like KCP before
it scales up, the collection keeps the fields of that copy that a spec may change (:data:`MANAGED_FIELDS`) equal
to the spec's: :func:`cluster_configuration_differences` names those that differ, and
:func:`updated_cluster_configuration` returns the copy with them set from the spec, the rest as observed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.kubeadm.control_plane.plugins.module_utils.kubeadm_releases import V1BETA3
from ansible_collections.kubeadm.control_plane.plugins.module_utils.observation import WORKER_GROUP_LABEL
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import etcd_is_external

ZONE_LABEL = "topology.kubernetes.io/zone"
REDACTED = "<redacted>"
BOOTSTRAP_TOKEN_ID = re.compile(r"[a-z0-9]{6}")  # a bootstrap token is <id>.<secret>, the ID [a-z0-9]{6}
BOOTSTRAP_TOKEN = re.compile(r"[a-z0-9]{6}\.[a-z0-9]{16}")
CERTIFICATE_KEY = re.compile(r"[a-f0-9]{64}")  # 32 random bytes in hex, an AES-256 key (kubeadm certs certificate-key)
# kubeadm writes this into the stored ClusterConfiguration when the configuration names no repository
# (every supported kubeadm, 1.33 to 1.37).
DEFAULT_IMAGE_REPOSITORY = "registry.k8s.io"


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
    doc = _joining(spec, spec["kubeadm"]["join_configuration"], machine, token, ca_cert_hashes)
    control_plane = doc.setdefault("controlPlane", {})
    control_plane.setdefault("localAPIEndpoint", {})["advertiseAddress"] = machine["address"]
    control_plane["certificateKey"] = certificate_key
    return doc


def worker_join_configuration(spec, machine, token, ca_cert_hashes, written=None):
    """The JoinConfiguration of a worker node (no ``controlPlane``) joining through the stable endpoint, from the
    worker's own ``written`` document (not the control plane machines' ``join_configuration``); ``machine``'s
    ``worker_group`` becomes its Node's worker-group label. Raises ValueError when ``written`` has a
    ``controlPlane`` section (that would make the node a control plane machine)."""
    if "controlPlane" in (written or {}):
        raise ValueError("a worker's JoinConfiguration has no controlPlane section: a worker runs no control plane")
    return _joining(spec, written or {}, machine, token, ca_cert_hashes)


def documents(spec, machine, bootstrap, token, certificate_key=None, ca_cert_hashes=(), written=None):
    """The documents of ``bootstrap`` (``init``: Init + Cluster; ``join``: Join; ``worker``: a worker's Join, from
    ``written``) for ``machine``."""
    if bootstrap == "init":
        return [init_configuration(spec, machine, token, certificate_key), cluster_configuration(spec)]
    if bootstrap == "worker":
        return [worker_join_configuration(spec, machine, token, ca_cert_hashes, written)]
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


def cluster_secrets(docs):
    """The kube-system Secrets that the secrets of ``docs`` gave the cluster, to delete once kubeadm is done with
    them: ``bootstrap-token-<id>`` for each bootstrap token (the ID is a token's public part), ``kubeadm-certs`` when
    a certificate key encrypted an upload of the shared certificates."""
    names = []
    uploaded = False
    for doc in docs:
        bootstrap = (doc.get("discovery") or {}).get("bootstrapToken") or {}
        for token in (doc.get("bootstrapTokens") or []) + [bootstrap]:
            token_id = str((token or {}).get("token") or "").split(".", 1)[0]
            if BOOTSTRAP_TOKEN_ID.fullmatch(token_id) and "bootstrap-token-" + token_id not in names:
                names.append("bootstrap-token-" + token_id)
        uploaded = uploaded or bool(doc.get("certificateKey") or (doc.get("controlPlane") or {}).get("certificateKey"))
    return names + (["kubeadm-certs"] if uploaded else [])


def init_secrets(docs):
    """(token, certificate key) of the InitConfiguration among ``docs``, or (None, None): what an earlier write of
    the same machine's init configuration made, to write again unchanged."""
    for doc in docs:
        if doc.get("kind") == "InitConfiguration":
            token = str(_first(doc.get("bootstrapTokens")).get("token") or "")
            key = str(doc.get("certificateKey") or "")
            if BOOTSTRAP_TOKEN.fullmatch(token) and CERTIFICATE_KEY.fullmatch(key):
                return token, key
    return None, None


def _document(spec, kind, written):
    doc = copy.deepcopy(written)
    doc.update(apiVersion=spec["kubeadm"]["api_version"], kind=kind)
    return doc


def _first(tokens):
    return copy.deepcopy(tokens[0]) if tokens else {}


def _joining(spec, written, machine, token, ca_cert_hashes):
    """A JoinConfiguration from ``written``: the node named and labelled, discovery through the stable endpoint."""
    doc = _document(spec, "JoinConfiguration", written)
    _node_registration(spec, doc, machine)
    discovery = doc.setdefault("discovery", {})
    discovery["bootstrapToken"] = dict(discovery.get("bootstrapToken") or {}, apiServerEndpoint=endpoint_address(spec),
                                       token=token, caCertHashes=list(ca_cert_hashes))
    return doc


def _node_registration(spec, doc, machine):
    """The node is named for the machine and labelled, through the kubelet's ``--node-labels``, with its failure
    domain and, for a worker, its worker group: labels the NodeRestriction admission lets a kubelet set on its own
    Node (the zone is one kubelets may set; the worker group is outside the kubernetes.io and k8s.io prefixes)."""
    registration = doc.setdefault("nodeRegistration", {})
    registration["name"] = machine["name"]
    labels = [(key, machine.get(field)) for key, field in ((ZONE_LABEL, "failure_domain"), (WORKER_GROUP_LABEL, "worker_group"))
              if machine.get(field)]
    if not labels:
        return
    args = registration.setdefault("kubeletExtraArgs", [])
    if isinstance(args, dict):  # v1beta3: a mapping
        args["node-labels"] = _with_labels(args.get("node-labels"), labels)
        return
    for arg in args:
        if arg.get("name") == "node-labels":
            arg["value"] = _with_labels(arg.get("value"), labels)
            return
    args.append({"name": "node-labels", "value": _with_labels("", labels)})


def _with_labels(written, labels):
    """``--node-labels`` with the machine's ``labels`` ([(key, value)]) in place of any the user wrote for those keys."""
    keys = tuple(key + "=" for key, unused in labels)
    kept = [item for item in (written or "").split(",") if item and not item.startswith(keys)]
    return ",".join(kept + ["%s=%s" % label for label in labels])


# --- the cluster's stored ClusterConfiguration ------------------------------------------------------------

# How a managed field compares and is written:
#   version     kubernetesVersion: the spec's version, with or without the leading v;
#   scalar      a string override: unset and empty mean kubeadm's default (the third item), which is what kubeadm
#               stores or derives when the configuration names none, so a removed override is set back;
#   collection  a list or a mapping, compared exactly, a missing one equal to an empty one;
#   args        extraArgs: a v1beta3 map or a v1beta4 list, compared as {name, value} pairs in name order (the
#               relative order of a repeated flag kept), as the spec hash counts them;
#   section     apiServer, controllerManager, scheduler: every field inside, each compared as above.
VERSION_FIELD, SCALAR, COLLECTION, ARGS, SECTION = "version", "scalar", "collection", "args", "section"
LOCAL, EXTERNAL = "local", "external"

# KCP's mutable cluster configuration paths (spec_update.MUTABLE_PATHS) that a joining or upgrading machine reads
# from the ConfigMap, with the etcd topology each applies to. The etcd certificate SANs go beyond KCP's update (a
# joining member's certificates are made from them); etcd.local.dataDir is left out, as KCP leaves it: ``kubeadm
# upgrade`` re-renders a running member's etcd from the ConfigMap, and a changed data directory would start that
# member on an empty one.
MANAGED_FIELDS = (
    (("kubernetesVersion",), VERSION_FIELD, None, None),
    (("imageRepository",), SCALAR, DEFAULT_IMAGE_REPOSITORY, None),
    (("featureGates",), COLLECTION, None, None),
    (("apiServer",), SECTION, None, None),
    (("controllerManager",), SECTION, None, None),
    (("scheduler",), SECTION, None, None),
    (("etcd", "local", "imageRepository"), SCALAR, None, LOCAL),
    (("etcd", "local", "imageTag"), SCALAR, None, LOCAL),
    (("etcd", "local", "extraArgs"), ARGS, None, LOCAL),
    (("etcd", "local", "serverCertSANs"), COLLECTION, None, LOCAL),
    (("etcd", "local", "peerCertSANs"), COLLECTION, None, LOCAL),
    (("etcd", "external", "endpoints"), COLLECTION, None, EXTERNAL),
    (("etcd", "external", "caFile"), SCALAR, None, EXTERNAL),
    (("etcd", "external", "certFile"), SCALAR, None, EXTERNAL),
    (("etcd", "external", "keyFile"), SCALAR, None, EXTERNAL),
    (("dns", "imageRepository"), SCALAR, None, None),
    (("dns", "imageTag"), SCALAR, None, None),
)

# v1beta3 kept the control plane's start-up timeout in apiServer; it is an init setting no joining machine reads,
# and v1beta4 (what kubeadm stores since 1.31) moved it out of the ClusterConfiguration.
_NOT_COMPARED = ("timeoutForControlPlane",)


def cluster_configuration_differences(spec, observed):
    """The managed fields (dotted paths, :data:`MANAGED_FIELDS` order; a section's fields one by one) in which
    ``observed``, a stored ClusterConfiguration, differs from what the normalized ``spec`` says."""
    wanted = cluster_configuration(spec)
    fields = []
    for keys, kind, default in _managed(spec, observed):
        mine, theirs = _get(wanted, keys), _get(observed, keys)
        if kind == SECTION:
            mine, theirs = _section(mine), _section(theirs)
            fields.extend(_dotted(keys + (key,)) for key in sorted(set(mine) | set(theirs))
                          if _canonical(key, mine.get(key)) != _canonical(key, theirs.get(key)))
        elif _compared(kind, default, mine) != _compared(kind, default, theirs):
            fields.append(_dotted(keys))
    return fields


def updated_cluster_configuration(spec, observed):
    """``observed`` (a stored ClusterConfiguration, not changed) with every managed field set from the normalized
    ``spec``, written the way ``observed`` is (a v1beta3 document gets maps of extraArgs, any other lists); every
    other field as observed. Applied to its own result it changes nothing."""
    wanted = cluster_configuration(spec)
    updated = copy.deepcopy(observed)
    as_map = observed.get("apiVersion") == V1BETA3
    for keys, kind, default in _managed(spec, observed):
        value = copy.deepcopy(_get(wanted, keys))
        if kind == SECTION:
            before = _get(observed, keys)
            value = dict((key, _written(key, item, as_map)) for key, item in (value or {}).items() if key not in _NOT_COMPARED)
            value.update((key, item) for key, item in (before if isinstance(before, dict) else {}).items() if key in _NOT_COMPARED)
            _put(updated, keys, value if value or before is not None else None)
        elif kind == ARGS:
            _put(updated, keys, _written(keys[-1], value, as_map) if value else None)
        elif kind == SCALAR:
            _put(updated, keys, value or default)
        else:
            _put(updated, keys, value or None)
    return updated


def _managed(spec, observed):
    """The managed fields for the spec's etcd topology; none of etcd's when the observed one is the other topology
    (the spec may not switch it, and this is not the place to)."""
    topology, other = (EXTERNAL, LOCAL) if etcd_is_external(spec) else (LOCAL, EXTERNAL)
    switched = _get(observed, ("etcd", other)) is not None
    return [(keys, kind, default) for keys, kind, default, applies_to in MANAGED_FIELDS
            if applies_to is None or (applies_to == topology and not switched)]


def _compared(kind, default, value):
    if kind == VERSION_FIELD:
        return value if not isinstance(value, str) or value.startswith("v") else "v" + value
    if kind == SCALAR:
        return value if value not in (None, "") else default
    if kind == ARGS:
        return _args(value)
    return value or None


def _section(value):
    """A component section without the fields it holds empty (missing == empty) and without those not compared."""
    if not isinstance(value, dict):
        return {}
    return dict((key, item) for key, item in value.items() if key not in _NOT_COMPARED and item not in (None, "", [], {}))


def _canonical(key, value):
    return _args(value) if key == "extraArgs" else value


def _args(value):
    """extraArgs as (name, value) pairs in name order, whichever way they are written; missing == empty."""
    if isinstance(value, dict):
        pairs = list(value.items())
    else:
        pairs = [(arg.get("name"), arg.get("value")) for arg in value or () if isinstance(arg, dict)]
    return sorted(pairs, key=lambda pair: str(pair[0]))


def _written(key, value, as_map):
    """A section field as the stored document's API version writes it (only extraArgs differ)."""
    if key != "extraArgs" or value is None:
        return value
    if as_map:
        return dict(value) if isinstance(value, dict) else dict((arg["name"], arg["value"]) for arg in value)
    if isinstance(value, dict):  # a v1beta3 spec: kubeadm converts its map to a list in name order
        return [{"name": name, "value": arg} for name, arg in sorted(value.items())]
    return value


def _get(document, keys):
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


def _put(document, keys, value):
    """Sets ``keys`` to ``value``, creating parents; None removes the field (and creates nothing)."""
    *parents, last = keys
    for key in parents:
        if not isinstance(document.get(key), dict):
            if value is None:
                return
            document[key] = {}
        document = document[key]
    if value is None:
        document.pop(last, None)
    else:
        document[last] = value


def _dotted(keys):
    return ".".join(keys)
