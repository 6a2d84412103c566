# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Token discovery's trust decisions: is this cluster-info signed by our token, and is its CA the pinned one?
Pure, no I/O (kubeadm-reference.md §2.1).

The rules:

* ``cluster-info`` must carry ``jws-kubeconfig-<token id>`` (absent: not signed yet — kubeadm retries);
  that value is a detached JWS ``<header>..<signature>`` whose header names ``alg: HS256`` and
  ``kid: <token id>`` and whose signature is HMAC-SHA256, keyed by the token secret, over
  ``<header>.<base64url(kubeconfig)>`` — otherwise the API server cannot be trusted (no retry).
* The kubeconfig's CA must hash (sha256 of its DER SubjectPublicKeyInfo) to one of the pinned
  ``caCertHashes``, unless ``unsafeSkipCAVerification``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization

JWS_PREFIX = "jws-kubeconfig-"


class NotSignedYet(Exception):
    """cluster-info has no signature for this token (yet): kubeadm keeps trying."""


class Untrusted(Exception):
    """The answer cannot be trusted: kubeadm stops."""


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(kubeconfig_text, token_id, token_secret):
    """The detached JWS the bootstrap signer writes (used by tests and to check our own reading)."""
    header = _b64url(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":"), sort_keys=True).encode())
    payload = _b64url(kubeconfig_text.encode("utf-8"))
    signature = hmac.new(token_secret.encode("utf-8"), ("%s.%s" % (header, payload)).encode("ascii"),
                         hashlib.sha256).digest()
    return "%s..%s" % (header, _b64url(signature))


def verify_signature(data, token_id, token_secret):
    """The signed kubeconfig text of cluster-info's ``data``; NotSignedYet or Untrusted otherwise."""
    kubeconfig_text = data.get("kubeconfig")
    if not kubeconfig_text:
        raise Untrusted("there is no kubeconfig key in the cluster-info ConfigMap")
    detached = data.get(JWS_PREFIX + token_id)
    if not detached:
        raise NotSignedYet('the cluster-info ConfigMap does not yet contain a JWS signature for token ID "%s", '
                           "will try again" % token_id)
    parts = detached.split(".")
    try:
        if len(parts) != 3 or parts[1]:
            raise ValueError("not a detached JWS")
        header = json.loads(_unb64url(parts[0]))
        signature = _unb64url(parts[2])
    except ValueError:
        raise Untrusted("failed to verify JWS signature of received cluster info object, can't trust this API Server")
    payload = _b64url(kubeconfig_text.encode("utf-8"))
    expected = hmac.new(token_secret.encode("utf-8"), ("%s.%s" % (parts[0], payload)).encode("ascii"),
                        hashlib.sha256).digest()
    if header.get("alg") != "HS256" or header.get("kid") != token_id or not hmac.compare_digest(expected, signature):
        raise Untrusted("failed to verify JWS signature of received cluster info object, can't trust this API Server")
    return kubeconfig_text


def cluster_of(kubeconfig_text):
    """``(server, ca_pem)`` of cluster-info's kubeconfig."""
    try:
        doc = yaml.safe_load(kubeconfig_text)
        cluster = doc["clusters"][0]["cluster"]
        return cluster["server"], base64.b64decode(cluster["certificate-authority-data"])
    except (yaml.YAMLError, KeyError, IndexError, TypeError, ValueError):
        raise Untrusted("the kubeconfig in the cluster-info ConfigMap has no cluster with a server and a CA")


def ca_hash(ca_pem):
    cert = x509.load_pem_x509_certificate(ca_pem)
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(spki).hexdigest()


def check_pin(ca_pem, pinned_hashes, unsafe_skip):
    if unsafe_skip:
        return
    actual = ca_hash(ca_pem)
    if actual not in pinned_hashes:
        raise Untrusted('cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "%s" are '
                        "pinned" % actual)
