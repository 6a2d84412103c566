# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bootstrap signer's and token cleaner's decisions. Pure, no I/O.

Bootstrap signer: ConfigMap ``kube-public/cluster-info`` holds, besides ``kubeconfig``, one
``jws-kubeconfig-<token id>`` per live signing token — a Secret ``kube-system/bootstrap-token-<id>`` of type
``bootstrap.kubernetes.io/token`` with ``usage-bootstrap-signing: "true"`` and no past ``expiration`` — and no
other ``jws-kubeconfig-*`` key. The value is a detached JWS (``detached_jws``) of the ``kubeconfig`` value: the
compact serialization ``<protected header>..<signature>`` with the payload left out, header exactly
``{"alg":"HS256","kid":"<token id>"}`` (no spaces, the form go-jose writes), HMAC-SHA256 keyed with the token
secret over ``<b64url(header)>.<b64url(kubeconfig)>``, base64url without padding. kubeadm's discovery
recomputes it and compares the strings.

Token cleaner: a bootstrap token Secret whose ``expiration`` has passed is deleted (the real cleaner reads the
same field; an unreadable expiration counts as expired).
"""

import base64
import hashlib
import hmac
import json

from kcpsim.apiserver import auth

SECRET_TYPE = "bootstrap.kubernetes.io/token"
SIGNATURE_PREFIX = "jws-kubeconfig-"


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def detached_jws(content, token_id, token_secret):
    """The detached JWS kubeadm's discovery verifies (see the module docstring)."""
    header = _b64url(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode("utf-8"))
    payload = _b64url(content.encode("utf-8") if isinstance(content, str) else content)
    signature = hmac.new(token_secret.encode("utf-8"), ("%s.%s" % (header, payload)).encode("ascii"),
                         hashlib.sha256).digest()
    return "%s..%s" % (header, _b64url(signature))


def _data(secret, key):
    raw = (secret.get("data") or {}).get(key)
    try:
        return base64.b64decode(raw).decode("utf-8") if raw is not None else None
    except (ValueError, UnicodeDecodeError):
        return None


def is_token_secret(secret):
    return secret.get("type") == SECRET_TYPE


def signing_tokens(secrets, now):
    """``{token id: token secret}`` of the live tokens allowed to sign."""
    tokens = {}
    for secret in secrets:
        if not is_token_secret(secret) or auth.token_expired(secret, now):
            continue
        if _data(secret, "usage-bootstrap-signing") != "true":
            continue
        token_id, token_secret = _data(secret, "token-id"), _data(secret, "token-secret")
        if token_id and token_secret and auth.bootstrap_token_id("%s.%s" % (token_id, token_secret)):
            tokens[token_id] = token_secret
    return tokens


def signed_cluster_info(data, tokens):
    """The ``cluster-info`` data with exactly the signatures ``tokens`` call for, or None when it already has
    them (or has no ``kubeconfig`` to sign)."""
    content = (data or {}).get("kubeconfig")
    if content is None:
        return None
    wanted = {k: v for k, v in data.items() if not k.startswith(SIGNATURE_PREFIX)}
    for token_id, token_secret in tokens.items():
        wanted[SIGNATURE_PREFIX + token_id] = detached_jws(content, token_id, token_secret)
    return None if wanted == data else wanted


def expired_tokens(secrets, now):
    """The bootstrap token Secrets the cleaner deletes."""
    return [secret for secret in secrets if is_token_secret(secret) and auth.token_expired(secret, now)]
