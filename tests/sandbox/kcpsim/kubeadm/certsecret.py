# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``kube-system/kubeadm-certs`` Secret: the shared CA and service-account keys, encrypted under the
certificate key (kubeadm-reference.md §5.3). Pure: no I/O, only cryptography.

The rules:

* The certificate key is 32 random bytes written as 64 hex characters.
* Each file becomes one data entry named by its path under the certificates dir with ``/`` turned into
  ``-`` (``etcd/ca.crt`` -> ``etcd-ca.crt``); its value is a 12-byte nonce followed by the AES-256-GCM
  ciphertext (and tag) of the file's bytes.
* The Secret is owned (controller reference) by the 2-hour token's Secret, so it goes when that token does.
* A wrong key fails with "cipher: message authentication failed".
"""

from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SECRET_NAME = "kubeadm-certs"
LOCAL_ETCD_FILES = ("ca.crt", "ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.pub", "sa.key",
                    "etcd/ca.crt", "etcd/ca.key")
EXTERNAL_ETCD_FILES = ("ca.crt", "ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.pub", "sa.key")
# External etcd client files travel under these names.
EXTERNAL_ETCD_NAMES = {"caFile": "external-etcd-ca.crt", "certFile": "external-etcd.crt",
                       "keyFile": "external-etcd.key"}


class DecryptError(Exception):
    """The certificate key does not open an entry."""


def new_key():
    """A fresh certificate key (64 hex characters)."""
    return binascii.hexlify(os.urandom(32)).decode("ascii")


def _aes(key_hex):
    try:
        key = binascii.unhexlify(key_hex)
    except (binascii.Error, ValueError):
        raise DecryptError("the certificate key is not hexadecimal")
    if len(key) != 32:
        raise DecryptError("the certificate key must be 32 bytes (64 hexadecimal characters)")
    return AESGCM(key)


def entry_name(relative_path):
    return relative_path.replace("/", "-")


def encrypt(key_hex, data, nonce=None):
    nonce = nonce or os.urandom(12)
    return nonce + _aes(key_hex).encrypt(nonce, data, None)


def decrypt(key_hex, blob):
    if len(blob) < 13:
        raise DecryptError("cipher: message authentication failed (entry too short)")
    try:
        return _aes(key_hex).decrypt(blob[:12], blob[12:], None)
    except InvalidTag:
        raise DecryptError("cipher: message authentication failed")


def secret(key_hex, files, owner):
    """The Secret object; ``files``: {entry name: bytes}; ``owner``: the token Secret (name, uid)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": SECRET_NAME,
            "namespace": "kube-system",
            "ownerReferences": [{
                "apiVersion": "v1", "kind": "Secret", "name": owner["metadata"]["name"],
                "uid": owner["metadata"].get("uid", ""), "controller": True, "blockOwnerDeletion": True,
            }],
        },
        "type": "Opaque",
        "data": {name: base64.b64encode(encrypt(key_hex, data)).decode("ascii") for name, data in sorted(files.items())},
    }


def open_secret(key_hex, secret_object):
    """{entry name: bytes} decrypted from the Secret; DecryptError naming the entry on a wrong key."""
    out = {}
    for name, value in sorted((secret_object.get("data") or {}).items()):
        try:
            out[name] = decrypt(key_hex, base64.b64decode(value))
        except DecryptError as exc:
            raise DecryptError("error decoding secret data with provided key: %s (entry %s)" % (exc, name))
    return out
