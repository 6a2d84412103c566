# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm certs certificate-key | check-expiration | renew`` (kubeadm-reference.md §5.1 – §5.3)."""

from __future__ import annotations

import datetime
import os

from kcpsim import kubeconfig, pki
from kcpsim.kubeadm import certsecret, config, expiration
from kcpsim.kubeadm.cluster import Cluster
from kcpsim.kubeadm.cmd_init import ADMIN_CONF, KUBERNETES_DIR, read_config_file
from kcpsim.kubeadm.context import KubeadmError, describe


def certificate_key(ctx, flags):
    ctx.out(certsecret.new_key())
    return 0


def load_cluster(ctx, flags, verb, say=None):
    """The ClusterConfiguration from ``--config``, else from the cluster, else kubeadm's defaults (warning).

    ``say`` prints the progress lines (stdout by default; stderr when stdout must stay machine-readable).
    """
    say = say or ctx.out
    if flags.get("config"):
        docs = read_config_file(ctx, flags["config"])
        cluster = config.default_cluster(docs.get("ClusterConfiguration") or {}, ctx.version)
    else:
        say("[%s] Reading configuration from the cluster..." % verb)
        say("[%s] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config "
            "-o yaml'" % verb)
        cluster = None
        path = flags.get("kubeconfig") or ADMIN_CONF
        try:
            client = Cluster.from_kubeconfig(ctx.host.path(path), timeout=5.0)
            try:
                stored = client.configmap_data("kube-system", "kubeadm-config")
            finally:
                client.close()
            if stored and "ClusterConfiguration" in stored:
                cluster = config.read_stored_cluster(stored["ClusterConfiguration"], ctx.release)
            else:
                raise LookupError('configmaps "kubeadm-config" not found')
        except Exception as exc:  # noqa: BLE001 - kubeadm falls back to its defaults
            ctx.warn("[%s] Error reading configuration from the Cluster. Falling back to default configuration: %s"
                     % (verb, describe(exc)))
            cluster = config.default_cluster({}, ctx.version)
    if flags.get("cert-dir"):
        cluster["certificatesDir"] = flags["cert-dir"]
    return cluster


def _file_of(cluster, relative):
    """A check-expiration row's file: kubeconfigs under /etc/kubernetes, certificates under certificatesDir."""
    if relative.startswith("pki/"):
        return "%s/%s" % (cluster["certificatesDir"], relative[len("pki/"):])
    return "%s/%s" % (KUBERNETES_DIR, relative)


def _ca_key_missing(ctx, cluster, ca_name):
    base = {"ca": "ca", "etcd-ca": "etcd/ca", "front-proxy-ca": "front-proxy-ca"}[ca_name]
    return not ctx.host.exists("%s/%s.key" % (cluster["certificatesDir"], base))


def _expiry(ctx, path):
    if not ctx.host.exists(path):
        return None
    if path.endswith(".conf"):
        cert = kubeconfig.client_certificate(ctx.host.path(path))
    else:
        cert = pki.load_cert(ctx.host.path(path))
    return pki.not_after(cert) if cert is not None else None


def check_expiration(ctx, flags):
    output = flags.get("output") or "text"
    if output not in ("text", "json", "yaml"):
        raise KubeadmError('invalid output format "%s": choose one of text, json, yaml' % output)
    # With -o json|yaml stdout carries the document alone, so the progress lines go to stderr.
    say = ctx.out if output == "text" else (lambda line: ctx.stderr.write(line + "\n"))
    cluster = load_cluster(ctx, flags, "check-expiration", say)
    local_etcd = not cluster["etcd"].get("external")
    rows = []
    for name, relative, ca_name, local_only in expiration.certificates(local_etcd):
        expires = _expiry(ctx, _file_of(cluster, relative))
        rows.append(expiration.Row(name, expires, ca_name, _ca_key_missing(ctx, cluster, ca_name)))
    ca_rows = []
    for name, relative, local_only in expiration.authorities(local_etcd):
        expires = _expiry(ctx, _file_of(cluster, relative + ".crt"))
        ca_rows.append(expiration.Row(name, expires, "", _ca_key_missing(ctx, cluster, name)))
    now = datetime.datetime.now(datetime.timezone.utc)
    if output == "text":
        ctx.out("")
        ctx.stdout.write(expiration.render_table(rows, ca_rows, now))
    else:
        ctx.stdout.write(expiration.render_structured(rows, ca_rows, now, output))
    ctx.stdout.flush()
    return 0


def renew(ctx, flags, name):
    valid = [entry[0] for entry in expiration.CERTIFICATES]
    if name != "all" and name not in valid:
        raise KubeadmError('unknown command "%s" for "kubeadm certs renew"' % name)
    cluster = load_cluster(ctx, flags, "renew")
    ctx.out("")
    local_etcd = not cluster["etcd"].get("external")
    validity = datetime.timedelta(seconds=cluster["certificateValidityPeriod"])
    wanted = [e for e in expiration.certificates(local_etcd) if name in ("all", e[0])]
    for cert_name, relative, ca_name, local_only in wanted:
        path = _file_of(cluster, relative)
        description = expiration.DESCRIPTIONS[cert_name]
        if not ctx.host.exists(path):
            ctx.out("MISSING! %s" % description)
            continue
        ca_base = {"ca": "ca", "etcd-ca": "etcd/ca", "front-proxy-ca": "front-proxy-ca"}[ca_name]
        ca_key_path = ctx.host.path("%s/%s.key" % (cluster["certificatesDir"], ca_base))
        if not os.path.exists(ca_key_path):
            ctx.out("Detected external %s, %s can't be renewed" % (ca_name, description))
            continue
        ca_cert, ca_key = pki.load_pair(ctx.host.path(cluster["certificatesDir"]), ca_base)
        if path.endswith(".conf"):
            renewed = kubeconfig.resign_embedded(ctx.host.path(path), ca_cert, ca_key, validity=validity)
            if renewed is None:
                ctx.out("%s references its certificate by file: not renewed" % description)
                continue
        else:
            pki.resign_file(ctx.host.path(path), ca_cert, ca_key, validity=validity)
        ctx.out("%s renewed" % description)
    ctx.out("")
    ctx.out("Done renewing certificates. You must restart the kube-apiserver, kube-controller-manager, "
            "kube-scheduler and etcd, so that they can use the new certificates.")
    return 0
