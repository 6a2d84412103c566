# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An etcd snapshot saved to a file, as ``etcdctl snapshot save`` saves one: streamed from one member's
Maintenance.Snapshot, checked against the SHA-256 etcd appends to the stream, written only under a temporary
name (mode 0600, the snapshot holds every Secret of the cluster) and renamed into place once whole. The file keeps
the trailing checksum, as etcdctl's does, so ``etcdutl snapshot restore`` verifies it. I/O only."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import (
    EtcdError,
    EtcdUnavailable,
    GatewayClient,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.private_file import replaced_whole

SUFFIX = ".db"  # what a snapshot file is named with, and all that rotation counts
DIGEST_SIZE = 32  # etcd ends the stream with the SHA-256 of everything before it
# In a cluster's directory of copies: which run took the snapshot that is that run's first (a JSON object).
FIRST_OF_RUN = ".first-of-run"
_PEM_CERTIFICATE = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)


class SnapshotFailed(Exception):
    """No member gave a whole snapshot; the message says what each one answered."""


def save(endpoints, context, dest, timeout):
    """Save a snapshot from the first of ``endpoints`` that gives a whole one; returns {endpoint, bytes, sha256}.

    ``timeout`` bounds each read, not the whole transfer (a large database takes longer than one read)."""
    failures = []
    for endpoint in endpoints:
        try:
            return dict(_save_from(GatewayClient(endpoint, context, timeout), dest), endpoint=endpoint)
        except (EtcdError, EtcdUnavailable, ValueError) as exc:
            failures.append("%s: %s" % (endpoint, exc))
    raise SnapshotFailed("no etcd member gave a whole snapshot (%s)" % "; ".join(failures))


def _save_from(gateway, dest):
    digest, whole = hashlib.sha256(), hashlib.sha256()  # of the database; of the file written
    tail = b""
    size = 0
    with replaced_whole(dest) as out:
        for result in gateway.stream("maintenance/snapshot"):
            chunk = base64.b64decode(result.get("blob") or "")
            # hold back the last 32 bytes seen: they are the checksum, not the database
            data = tail + chunk
            body, tail = data[:-DIGEST_SIZE], data[-DIGEST_SIZE:]
            digest.update(body)
            whole.update(body)
            out.write(body)
            size += len(body)
        if len(tail) != DIGEST_SIZE or digest.digest() != tail:
            raise ValueError("the snapshot's checksum does not match its content (%d bytes received)" % (size + len(tail)))
        whole.update(tail)
        out.write(tail)
    return {"bytes": size + DIGEST_SIZE, "sha256": whole.hexdigest()}


def rotate(directory, suffix, keep, spare=()):
    """Remove all but the ``keep`` newest files ending in ``suffix`` in ``directory`` (by modification time, then
    name), and but the names in ``spare``; returns the removed paths."""
    names = [n for n in os.listdir(directory) if n.endswith(suffix) and os.path.isfile(os.path.join(directory, n))]
    ordered = sorted(names, key=lambda n: (os.path.getmtime(os.path.join(directory, n)), n), reverse=True)
    removed = []
    for name in ordered[keep:]:
        if name in spare:
            continue
        os.unlink(os.path.join(directory, name))
        removed.append(os.path.join(directory, name))
    return removed


def cluster_identity(ca_file):
    """The first 16 hex digits of the SHA-256 of the etcd CA certificate (DER) in ``ca_file``: made by kubeadm init
    for each cluster, kept for its life, so two clusters of one name have two identities. None when the file holds
    no certificate."""
    try:
        with open(ca_file, "rb") as handle:
            return identity_of(handle.read())
    except OSError:
        return None


def identity_of(pem):
    """:func:`cluster_identity` of the etcd CA certificate ``pem`` (bytes); None when it holds no certificate."""
    try:
        found = _PEM_CERTIFICATE.search(pem)
        der = base64.b64decode(b"".join(found.group(1).split()), validate=True) if found else None
    except (binascii.Error, ValueError):
        return None
    return hashlib.sha256(der).hexdigest()[:16] if der else None


def first_of_run(directory, run, name):
    """The name of the first snapshot the run ``run`` saved in ``directory``, ``name`` when that is this one (the
    run saves its first, or ``run`` is None: nothing to tell runs apart by). Kept in the directory's FIRST_OF_RUN
    file, replaced by each run's first snapshot."""
    path = os.path.join(directory, FIRST_OF_RUN)
    try:
        with open(path, encoding="utf-8") as handle:
            kept = json.load(handle)
    except (OSError, ValueError):
        kept = None
    if run is not None and isinstance(kept, dict) and kept.get("run") == run and isinstance(kept.get("name"), str):
        return kept["name"]
    with replaced_whole(path) as out:
        out.write(json.dumps({"run": run, "name": name}).encode("utf-8"))
    return name
