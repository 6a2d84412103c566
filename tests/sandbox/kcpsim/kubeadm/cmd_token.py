# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm token create | list | delete`` (kubeadm-reference.md §5.4)."""

from __future__ import annotations

import datetime

from kcpsim import kubeconfig, pki
from kcpsim.kubeadm import bootstraptoken, config, durations
from kcpsim.kubeadm.cluster import Cluster
from kcpsim.kubeadm.cmd_init import ADMIN_CONF
from kcpsim.kubeadm.context import KubeadmError


def _client(ctx, flags):
    path = flags.get("kubeconfig") or ADMIN_CONF
    if not ctx.host.exists(path):
        raise KubeadmError('failed to load admin kubeconfig: open %s: no such file or directory' % path)
    return path, Cluster.from_kubeconfig(ctx.host.path(path))


def create(ctx, flags, token=None):
    if flags.get("certificate-key") and not flags.get("print-join-command"):
        raise KubeadmError("cannot use --certificate-key without --print-join-command")
    errors = []
    config.validate_certificate_key(flags.get("certificate-key"), "certificate-key", errors)
    token = token or bootstraptoken.generate()
    config.validate_token(token, "token", errors)
    usages = [u for u in (flags.get("usages") or ["signing", "authentication"]) if u]
    for usage in usages:
        if usage not in ("signing", "authentication"):
            errors.append(config.FieldError("usages", usage, "supported values: signing, authentication",
                                            kind="Unsupported value"))
    try:
        ttl = durations.parse(flags.get("ttl") or "24h0m0s")
    except ValueError as exc:
        errors.append(config.FieldError("ttl", flags.get("ttl"), str(exc)))
        ttl = 0
    if errors:
        raise KubeadmError(str(config.ValidationError(errors)), exit_code=3)
    groups = flags.get("groups") or list(config.DEFAULT_TOKEN_GROUPS)
    path, client = _client(ctx, flags)
    try:
        now = datetime.datetime.now(datetime.timezone.utc)
        client.create_or_update("v1", "secrets", "kube-system",
                                bootstraptoken.secret(token, ttl, usages, groups, flags.get("description") or "", now))
    finally:
        client.close()
    if not flags.get("print-join-command"):
        ctx.out(token)
        return 0
    creds = kubeconfig.load_credentials(ctx.host.path(path))
    ca_hash = pki.ca_cert_hash(pki.load_cert_pems(creds.ca_pem)[0])
    host_port = creds.server.split("://", 1)[-1].rstrip("/")
    key = flags.get("certificate-key") or ""
    command = bootstraptoken.join_command(host_port, token, [ca_hash], control_plane=bool(key), certificate_key=key)
    ctx.out(bootstraptoken.one_line(command))
    return 0


def list_tokens(ctx, flags):
    client = _client(ctx, flags)[1]
    try:
        secrets = client.client.list("v1", "secrets", namespace="kube-system",
                                     field_selector="type=" + bootstraptoken.TOKEN_SECRET_TYPE).get("items") or []
    finally:
        client.close()
    now = datetime.datetime.now(datetime.timezone.utc)
    rows = [["TOKEN", "TTL", "EXPIRES", "USAGES", "DESCRIPTION", "EXTRA GROUPS"]]
    for secret in secrets:
        if secret.get("type") != bootstraptoken.TOKEN_SECRET_TYPE:
            continue
        fields = bootstraptoken.secret_fields(secret)
        if bootstraptoken.is_expired(fields, now):
            continue
        expires = fields.get("expiration", "")
        ttl = "<forever>"
        if expires:
            left = datetime.datetime.fromisoformat(expires.replace("Z", "+00:00")) - now
            ttl = "%dh" % (left.total_seconds() // 3600) if left.total_seconds() >= 3600 else \
                "%dm" % (left.total_seconds() // 60)
        usages = ",".join(sorted(k[len("usage-bootstrap-"):] for k, v in fields.items()
                                 if k.startswith("usage-bootstrap-") and v == "true"))
        rows.append(["%s.%s" % (fields.get("token-id"), fields.get("token-secret")), ttl, expires or "<never>",
                     usages or "<none>", fields.get("description") or "<none>", fields.get("auth-extra-groups", "")])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        ctx.out("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    return 0


def delete(ctx, flags, tokens):
    if not tokens:
        raise KubeadmError("missing subcommand; 'token delete' is missing token of form "
                           '"[a-z0-9]{6}" or "[a-z0-9]{6}.[a-z0-9]{16}"')
    client = _client(ctx, flags)[1]
    try:
        for token in tokens:
            token_id = token.split(".")[0]
            if not client.delete("v1", "secrets", bootstraptoken.SECRET_PREFIX + token_id, "kube-system"):
                raise KubeadmError('failed to delete bootstrap token with name "%s%s": secrets "%s%s" not found'
                                   % (bootstraptoken.SECRET_PREFIX, token_id, bootstraptoken.SECRET_PREFIX, token_id))
            ctx.out('bootstrap token "%s" deleted' % token_id)
    finally:
        client.close()
    return 0
