# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What machine_info reads on a host, in one POSIX shell command (``read_command``), and its answer from what that
command printed (``answer``). The command prints only what the answer needs, never a key: the host record, the
certificates (a kubeconfig's embedded client certificate alone, the certificate blocks alone of the kubelet's
certificate-and-key file), the kubelet's rotateCertificates line and the renewal and restore records. Its action
plugin runs the command over the task's connection, with no Python started on the host and no module sent to it (each
candidate host is read this way every pass); the module runs it on the host where the task runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import re
from datetime import datetime, timezone

from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_dates import first_pem_certificate, not_after
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_renewal import RECORD as RENEWAL_RECORD
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_renewal import progress
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_restore import RECORD as RESTORE_RECORD

RECORD = "control-plane-machine.json"
STAMP = "%Y-%m-%dT%H:%M:%SZ"
MARK = "#kcp-machine-info#"
ROTATES = re.compile(r"^rotateCertificates:\s*(true|false)\s*$", re.M)

# $k: kubeadm's directory, $l: the kubelet's, $h: the host record and $n: the renewal record (both relative to $k), $r:
# the restore record.
# Each section: a line "MARK kind status name" (status read, absent or error), then what was read, or why not.
_SCRIPT = r"""
LC_ALL=C
export LC_ALL
emit() {
  if [ ! -e "$3" ]; then
    printf '%s %s absent %s\n' "$m" "$1" "$2"
  elif out=$(sed -n "${4:-p}" "$3" 2>/dev/null); then
    printf '%s %s read %s\n%s\n' "$m" "$1" "$2" "$out"
  else
    printf '%s %s error %s\n%s\n' "$m" "$1" "$2" "$(sed -n p "$3" 2>&1 >/dev/null)"
  fi
}
printf '%s now read now\n%s\n' "$m" "$(date -u +%s)"
emit record "$k/$h" "$k/$h"
if [ -e "$k/admin.conf" ]; then printf '%s exists read admin.conf\n' "$m"; fi
for f in ca.crt healthcheck-client.crt healthcheck-client.key; do
  if [ -f "$k/pki/etcd/$f" ]; then printf '%s exists read pki/etcd/%s\n' "$m" "$f"; fi
done
for d in pki pki/etcd; do
  for f in "$k/$d"/*.crt; do
    case $f in *ca.crt) ;; *) if [ -f "$f" ]; then emit certificate "$d/${f##*/}" "$f"; fi ;; esac
  done
done
for f in admin.conf super-admin.conf controller-manager.conf scheduler.conf; do
  if [ -e "$k/$f" ]; then
    emit kubeconfig "$f" "$k/$f" 's/^.*client-certificate-data:[[:space:]]*\([^[:space:]]*\).*$/\1/p'
  fi
done
for f in pki/ca.crt pki/etcd/ca.crt pki/front-proxy-ca.crt; do
  if [ -e "$k/$f" ]; then emit authority "$f" "$k/$f"; fi
done
emit kubelet pki/kubelet-client-current.pem "$l/pki/kubelet-client-current.pem" '/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p'
emit kubelet-config config.yaml "$l/config.yaml" '/^rotateCertificates:/p'
emit renewal "$k/$n" "$k/$n"
emit restore "$r" "$r"
"""


def _quoted(value):
    return "'%s'" % value.replace("'", "'\"'\"'")


def read_command(kubernetes_dir, kubelet_dir):
    """The shell command that prints what the answer needs of the host (module docstring)."""
    # one brace group: Ansible adds to the command it runs (" && sleep 0")
    values = (MARK, kubernetes_dir.rstrip("/") or "/", kubelet_dir.rstrip("/") or "/", RECORD, RENEWAL_RECORD, RESTORE_RECORD)
    return "m=%s k=%s l=%s h=%s n=%s r=%s\n{%s}" % (tuple(_quoted(value) for value in values) + (_SCRIPT,))


def sections(output):
    """[(kind, status, name, text)] of what read_command printed, in its order."""
    found = []
    for line in output.splitlines():
        if line.startswith(MARK + " "):
            kind, status, name = line[len(MARK) + 1:].split(" ", 2)
            found.append([kind, status, name, []])
        elif found:
            found[-1][3].append(line)
    return [(kind, status, name, "\n".join(lines)) for kind, status, name, lines in found]


def _certificate(name, status, text):
    """``{name, expires}`` of the first PEM certificate of ``text``, or ``{name, error}``."""
    if status == "error":
        return {"name": name, "error": text}
    try:
        return {"name": name, "expires": not_after(first_pem_certificate(text.encode("ascii", "replace")))}
    except ValueError as exc:
        return {"name": name, "error": str(exc)}


def _embedded(name, status, text):
    """A kubeconfig's client certificate, as _certificate; None when none is embedded (it names a file)."""
    if status == "error":
        return {"name": name, "error": text}
    data = text.split("\n", 1)[0]
    if not data:
        return None
    try:
        return {"name": name, "expires": not_after(first_pem_certificate(base64.b64decode(data)))}
    except ValueError as exc:
        return {"name": name, "error": str(exc)}


def _json_object(path, status, text):
    """(the JSON object read or None, why it could not be read or None); an absent file is (None, None)."""
    if status == "absent":
        return None, None
    if status == "error":
        return None, "%s: %s" % (path, text)
    try:
        found = json.loads(text)
    except ValueError as exc:
        return None, "%s: %s" % (path, exc)
    if not isinstance(found, dict):
        return None, "%s: not a JSON object" % path
    return found, None


def _earliest(certificates):
    dates = [c["expires"] for c in certificates if "expires" in c]
    return min(dates).strftime(STAMP) if dates else None


def _listed(certificates):
    return [dict(c, expires=c["expires"].strftime(STAMP)) if "expires" in c else c for c in certificates]


def answer(output):
    """machine_info's result from what read_command printed (plugins/modules/machine_info.py documents it)."""
    read = sections(output)
    by_kind = {}
    for kind, status, name, text in read:
        by_kind.setdefault(kind, []).append((name, status, text))
    now = datetime.fromtimestamp(int(by_kind["now"][0][2]), timezone.utc)
    exists = {name for name, _status, _text in by_kind.get("exists", [])}
    certificates = [_certificate(name, status, text) for name, status, text in by_kind.get("certificate", [])]
    certificates += [found for found in (_embedded(name, status, text) for name, status, text in by_kind.get("kubeconfig", [])) if found]
    authorities = [_certificate(name, status, text) for name, status, text in by_kind.get("authority", [])]
    (kubelet_name, kubelet_status, kubelet_text), = by_kind["kubelet"]
    kubelet = _certificate(kubelet_name, kubelet_status, kubelet_text) if kubelet_status != "absent" else {}
    (_config, config_status, config_text), = by_kind["kubelet-config"]
    rotates = ROTATES.search(config_text) if config_status == "read" else None
    (record_path, record_status, record_text), = by_kind["record"]
    record, record_error = _json_object(record_path, record_status, record_text)
    renewal, renewal_problem = _json_object(*by_kind["renewal"][0])
    (restore_path, restore_status, restore_text), = by_kind["restore"]
    return dict(
        changed=False,
        record=record,
        record_error=record_error,
        admin_kubeconfig="admin.conf" in exists,
        etcd_client_credentials=all("pki/etcd/" + name in exists for name in ("ca.crt", "healthcheck-client.crt", "healthcheck-client.key")),
        certificates_expire=_earliest(certificates),
        # by the host's clock, which its TLS peers go by
        certificates_expired=any(c["expires"] <= now for c in certificates if "expires" in c),
        certificates=_listed(certificates),
        certificate_authorities_expire=_earliest(authorities),
        certificate_authorities=_listed(authorities),
        kubelet_certificate_expire=kubelet["expires"].strftime(STAMP) if "expires" in kubelet else None,
        kubelet_certificate_rotates=bool(rotates and rotates.group(1) == "true"),
        # a renewal record that cannot be read is a renewal stopped before its first step, with the reason as its error
        certificate_renewal=progress({"failed": {"error": renewal_problem}} if renewal_problem is not None else renewal),
        restore=_json_object(restore_path, restore_status, restore_text)[0],
    )
