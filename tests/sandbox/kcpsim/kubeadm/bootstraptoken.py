# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bootstrap tokens and the join command (kubeadm-reference.md §1.4, §5.4). Pure apart from drawing random
tokens.

The rules:

* A token is ``<id>.<secret>``: 6 and 16 characters of ``[a-z0-9]``.
* It lives in Secret ``kube-system/bootstrap-token-<id>`` of type ``bootstrap.kubernetes.io/token`` with
  ``token-id``, ``token-secret``, ``expiration`` (RFC 3339, absent for a TTL of 0), ``usage-bootstrap-<u>:
  "true"`` per usage, ``auth-extra-groups`` (comma-joined) and ``description``.
* The join command is ``kubeadm join <host:port> --token <t> --discovery-token-ca-cert-hash sha256:<hex>``,
  plus ``--control-plane --certificate-key <k>`` for control planes. ``--print-join-command`` prints it on
  one line (a worker's ends with a space); ``init`` prints it broken with `` \\`` + newline + tab.
"""

from __future__ import annotations

import base64
import re
import secrets
from datetime import datetime, timedelta, timezone

TOKEN_SECRET_TYPE = "bootstrap.kubernetes.io/token"
SECRET_PREFIX = "bootstrap-token-"
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
CERTS_TOKEN_DESCRIPTION = "Proxy for managing TTL for the kubeadm-certs secret"
CERTS_TOKEN_TTL = 2 * 3600.0


def generate():
    """A fresh random token."""
    return "%s.%s" % ("".join(secrets.choice(_ALPHABET) for position in range(6)),
                      "".join(secrets.choice(_ALPHABET) for position in range(16)))


def split(token):
    """``(id, secret)`` of a token, or ValueError naming the format."""
    match = _TOKEN.match(token or "")
    if not match:
        raise ValueError('the bootstrap token is invalid: it must be of the form "[a-z0-9]{6}.[a-z0-9]{16}"')
    return match.group(1), match.group(2)


def rfc3339(moment):
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def secret(token, ttl_seconds, usages, groups, description, now):
    """The Secret object for ``token`` (``now``: an aware datetime)."""
    token_id, token_secret = split(token)
    data = {"token-id": token_id, "token-secret": token_secret}
    if description:
        data["description"] = description
    if ttl_seconds and ttl_seconds > 0:
        data["expiration"] = rfc3339(now + timedelta(seconds=ttl_seconds))
    for usage in usages:
        data["usage-bootstrap-%s" % usage] = "true"
    if groups:
        data["auth-extra-groups"] = ",".join(groups)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET_PREFIX + token_id, "namespace": "kube-system"},
        "type": TOKEN_SECRET_TYPE,
        "data": {key: _b64(value) for key, value in sorted(data.items())},
    }


def secret_fields(secret_object):
    """The decoded data of a bootstrap token Secret."""
    out = {}
    for key, value in (secret_object.get("data") or {}).items():
        out[key] = base64.b64decode(value).decode("utf-8")
    return out


def is_expired(fields, now):
    expiration = fields.get("expiration")
    if not expiration:
        return False
    moment = datetime.fromisoformat(expiration.replace("Z", "+00:00"))
    return moment <= now


def join_command(host_port, token, ca_hashes, control_plane=False, certificate_key=""):
    """The multi-line join command ``init`` prints (lines joined by `` \\`` + newline + tab)."""
    text = "kubeadm join %s --token %s \\\n\t" % (host_port, token)
    text += "".join("--discovery-token-ca-cert-hash %s " % h for h in ca_hashes)
    if control_plane:
        text += "\\\n\t--control-plane "
        if certificate_key:
            text += "--certificate-key %s" % certificate_key
    return text


def one_line(command):
    """``--print-join-command``'s form of a join command."""
    return command.replace("\\\n\t", "")
