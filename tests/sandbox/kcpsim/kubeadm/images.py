# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container images a cluster needs (``kubeadm config images list``). Pure, no I/O
(kubeadm-reference.md §5.4).

The rules: kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy are
``<imageRepository>/<name>:<kubernetesVersion>``; CoreDNS is ``<repo>/coredns/coredns:<tag>`` with the
default repository and ``<repo>/coredns:<tag>`` with a custom one (``dns.imageRepository`` / ``imageTag``
override); pause is ``<repo>/pause:<tag>``; etcd ``<repo>/etcd:<tag>`` only with local etcd
(``etcd.local.imageRepository`` / ``imageTag`` override). Tags follow kubeadm's release (release.py); etcd's
also the cluster's kubernetesVersion (kubeadm's etcd table).
"""

from __future__ import annotations

from kcpsim.kubeadm.config import DEFAULT_IMAGE_REPOSITORY


def _repository(cluster):
    return cluster.get("imageRepository") or DEFAULT_IMAGE_REPOSITORY


def component_image(cluster, name):
    return "%s/%s:%s" % (_repository(cluster), name, cluster["kubernetesVersion"])


def etcd_image(cluster, release):
    """The etcd image of the cluster's kubernetesVersion, from kubeadm's table (release.etcd_image_tag_for)."""
    local = (cluster.get("etcd") or {}).get("local") or {}
    repository = local.get("imageRepository") or _repository(cluster)
    return "%s/etcd:%s" % (repository, local.get("imageTag") or release.etcd_image_tag_for(cluster["kubernetesVersion"])[0])


def etcd_version_warning(cluster, release):
    """kubeadm's warning when its etcd table has no entry for the cluster's kubernetesVersion (images.go), or None."""
    if (cluster.get("etcd") or {}).get("external") or ((cluster.get("etcd") or {}).get("local") or {}).get("imageTag"):
        return None
    tag, nearest = release.etcd_image_tag_for(cluster["kubernetesVersion"])
    if not nearest:
        return None
    return ("could not find officially supported version of etcd for Kubernetes %s, falling back to the nearest etcd "
            "version (%s)" % (cluster["kubernetesVersion"], tag))


def coredns_image(cluster, release):
    dns = cluster.get("dns") or {}
    repository = dns.get("imageRepository") or _repository(cluster)
    path = "coredns/coredns" if repository == DEFAULT_IMAGE_REPOSITORY else "coredns"
    return "%s/%s:%s" % (repository, path, dns.get("imageTag") or release.coredns_image_tag)


def pause_image(cluster, release):
    return "%s/pause:%s" % (_repository(cluster), release.pause_image_tag)


def all_images(cluster, release):
    """What ``kubeadm config images list`` prints, in its order."""
    out = [component_image(cluster, name)
           for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")]
    out.append(coredns_image(cluster, release))
    out.append(pause_image(cluster, release))
    if not (cluster.get("etcd") or {}).get("external"):
        out.append(etcd_image(cluster, release))
    return out
