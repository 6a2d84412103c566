# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who is asking. Pure, no I/O (the caller fetches the token Secret); what they may do is authz.py's.

Authentication, in the real server's order:

1. A client certificate the TLS layer verified against ``--client-ca-file``: user = subject CN, groups = the
   subject's O values.
2. ``Authorization: Bearer <id>.<secret>`` (with ``--enable-bootstrap-token-auth``): valid when Secret
   ``kube-system/bootstrap-token-<id>`` has type ``bootstrap.kubernetes.io/token``, the same ``token-secret``,
   ``usage-bootstrap-authentication: "true"``, no past ``expiration``, and ``auth-extra-groups`` that all start
   with ``system:bootstrappers:``. User ``system:bootstrap:<id>``, groups ``system:bootstrappers`` plus the
   extra groups. Any other bearer token, or a bootstrap token that fails a check, is 401.
3. Nothing: ``system:anonymous`` in ``system:unauthenticated``.

Authenticated users also get the group ``system:authenticated``.
"""

import base64
import collections
import datetime
import hmac
import re

User = collections.namedtuple("User", "name groups uid")

ANONYMOUS = User("system:anonymous", ("system:unauthenticated",), "")
AUTHENTICATED = "system:authenticated"
BOOTSTRAPPERS = "system:bootstrappers"
TOKEN_SECRET_TYPE = "bootstrap.kubernetes.io/token"
TOKEN_SECRET_PREFIX = "bootstrap-token-"
TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")


def certificate_user(peer_cert):
    """The user of a verified client certificate (``ssl.getpeercert()`` form), or None without one."""
    if not peer_cert:
        return None
    common_name, organizations = None, []
    for rdn in peer_cert.get("subject", ()):
        for attribute, value in rdn:
            if attribute == "commonName":
                common_name = value
            elif attribute == "organizationName":
                organizations.append(value)
    if not common_name:
        return None
    return User(common_name, tuple(organizations) + (AUTHENTICATED,), "")


def bootstrap_token_id(bearer):
    """``(token_id, token_secret)`` when the bearer token has the bootstrap token form, else None."""
    match = TOKEN.match(bearer or "")
    return (match.group(1), match.group(2)) if match else None


def _secret_data(secret, key):
    raw = (secret.get("data") or {}).get(key)
    if raw is None:
        return None
    try:
        return base64.b64decode(raw).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def parse_time(text):
    """An RFC 3339 timestamp as an aware datetime, or None when it does not parse."""
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return None
    return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)


def token_expired(secret, now):
    """Whether a bootstrap token Secret's ``expiration`` has passed (an unreadable one counts as expired)."""
    expiration = _secret_data(secret, "expiration")
    if not expiration:
        return False
    when = parse_time(expiration)
    return when is None or when <= now


def bootstrap_token_user(secret, token_id, token_secret, now):
    """The user a bootstrap token authenticates as, or None if the Secret does not vouch for it."""
    if not secret or secret.get("type") != TOKEN_SECRET_TYPE:
        return None
    if (secret.get("metadata") or {}).get("deletionTimestamp"):
        return None
    if _secret_data(secret, "token-id") != token_id:
        return None
    if not hmac.compare_digest((_secret_data(secret, "token-secret") or "").encode(), token_secret.encode()):
        return None
    if _secret_data(secret, "usage-bootstrap-authentication") != "true":
        return None
    if token_expired(secret, now):
        return None
    extra = [group.strip() for group in (_secret_data(secret, "auth-extra-groups") or "").split(",") if group.strip()]
    if any(not group.startswith(BOOTSTRAPPERS + ":") for group in extra):
        return None
    return User("system:bootstrap:" + token_id, (BOOTSTRAPPERS,) + tuple(extra) + (AUTHENTICATED,), "")
