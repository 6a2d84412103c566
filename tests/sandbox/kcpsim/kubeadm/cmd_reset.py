# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm reset``: preflight (the prompt), remove-etcd-member, cleanup-node (kubeadm-reference.md §3)."""

from __future__ import annotations

import yaml

from kcpsim import kubeconfig, pki
from kcpsim.kubeadm import certplan, config, manifests
from kcpsim.kubeadm.cluster import Cluster
from kcpsim.kubeadm.cmd_init import ADMIN_CONF, KUBELET_CONF, KUBERNETES_DIR, TMP_DIR, read_config_file
from kcpsim.kubeadm.cmd_join import etcd_admin, etcd_endpoints_from_pods
from kcpsim.kubeadm.context import KubeadmError, Phase, describe, refuse_unemulated, run_phases
from kcpsim.kubeadm.kubelet import Kubelet, KubeletError
from kcpsim.kubeadm.waiting import wait_for

KUBECONFIG_FILES = ("admin.conf", "super-admin.conf", "kubelet.conf", "bootstrap-kubelet.conf",
                    "controller-manager.conf", "scheduler.conf")


class ResetData:
    def __init__(self, ctx, flags, reset_cfg):
        self.ctx = ctx
        self.host = ctx.host
        self.flags = flags
        self.reset_cfg = reset_cfg or {}
        self.force = bool(flags.get("force") or self.reset_cfg.get("force"))
        self.cleanup_tmp = bool(flags.get("cleanup-tmp-dir") or self.reset_cfg.get("cleanupTmpDir"))
        self.cert_dir = flags.get("cert-dir") or self.reset_cfg.get("certificatesDir") or config.DEFAULT_CERT_DIR
        self.kubeconfig_path = flags.get("kubeconfig") or ADMIN_CONF
        self.cluster = None          # ClusterConfiguration, when it could be fetched
        self.advertise_address = None
        self.emptied_etcd_dir = None
        self.kubelet = Kubelet(ctx.host)


def node_name_from_kubelet_conf(host):
    """The node's name: the CN ``system:node:<name>`` of kubelet.conf's client certificate."""
    cert = kubeconfig.client_certificate(host.path(KUBELET_CONF))
    if cert is None:
        return None
    common_name = pki.common_name(cert)
    return common_name[len("system:node:"):] if common_name.startswith("system:node:") else None


def cluster_client(data):
    """A client from ``--kubeconfig``, or None when that file gives none (missing, empty, not a kubeconfig): kubeadm
    then reads nothing from the cluster and says so only at ``--v=1``, so reset works from the host alone."""
    try:
        return Cluster.from_kubeconfig(data.host.path(data.kubeconfig_path), timeout=5.0)
    except kubeconfig.KubeconfigError:
        return None


def fetch_cluster_state(data, client, attempts_timeout=10.0):
    """kubeadm-config, this node's Node (with its cri-socket annotation unless NodeLocalCRISocket) and its one
    kube-apiserver mirror pod with the endpoint annotation, read with ``client``; LookupError when any is missing."""
    ctx = data.ctx
    try:
        if not data.host.exists(KUBELET_CONF):
            raise LookupError("%s is missing" % KUBELET_CONF)
        node_name = node_name_from_kubelet_conf(data.host)
        if not node_name:
            raise LookupError("the node name could not be read from %s" % KUBELET_CONF)
        stored = client.configmap_data("kube-system", "kubeadm-config")
        if not stored or "ClusterConfiguration" not in stored:
            raise LookupError('configmaps "kubeadm-config" not found')
        cluster = config.read_stored_cluster(stored["ClusterConfiguration"], ctx.release)
        node = client.node(node_name)
        if node is None:
            raise LookupError('nodes "%s" not found' % node_name)
        annotations = (node.get("metadata") or {}).get("annotations") or {}
        # With NodeLocalCRISocket the socket is the node's own file and the Node carries no annotation.
        if not ctx.release.gate("NodeLocalCRISocket", cluster.get("featureGates")) and \
                not annotations.get("kubeadm.alpha.kubernetes.io/cri-socket"):
            raise LookupError("node %s doesn't have the kubeadm.alpha.kubernetes.io/cri-socket annotation" % node_name)

        def one_apiserver_endpoint():
            pods = client.pods("kube-system", label_selector="component=kube-apiserver,tier=control-plane",
                               field_selector="spec.nodeName=%s" % node_name)
            pods = [p for p in pods if (p.get("spec") or {}).get("nodeName", node_name) == node_name]
            if len(pods) != 1:
                raise LookupError("expected exactly one kube-apiserver pod on node %s, found %d" % (node_name, len(pods)))
            endpoint = ((pods[0].get("metadata") or {}).get("annotations") or {}).get(
                manifests.APISERVER_ENDPOINT_ANNOTATION)
            if not endpoint:
                raise LookupError("the kube-apiserver pod of node %s has no endpoint annotation" % node_name)
            return endpoint

        endpoint = wait_for(one_apiserver_endpoint, attempts_timeout, 1.0, "the kube-apiserver mirror pod")
        host = config.split_host_port(endpoint, config.DEFAULT_BIND_PORT)[0]
        return cluster, host
    finally:
        client.close()


def _preflight(data):
    ctx = data.ctx
    ctx.out("[reset] Reading configuration from the cluster...")
    ctx.out("[reset] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'")
    client = cluster_client(data)
    if client is not None:
        try:
            data.cluster, data.advertise_address = fetch_cluster_state(data, client)
        except Exception as exc:  # noqa: BLE001 - any miss means "reset without cluster configuration"
            ctx.warn("[reset] Unable to fetch the kubeadm-config ConfigMap from cluster: failed to get config map: %s"
                     % describe(exc))
    if not data.force:
        ctx.warn("[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.")
        if not ctx.confirm("[reset] Are you sure you want to proceed?"):
            raise KubeadmError("won't proceed; the user didn't answer (Y|y) in order to continue")
    ctx.out("[preflight] Running pre-flight checks")


def _etcd_data_dir(data):
    if data.cluster is not None and data.cluster["etcd"].get("local"):
        return data.cluster["etcd"]["local"]["dataDir"]
    path = manifests.manifest_path("etcd")
    if data.host.exists(path):
        try:
            pod = yaml.safe_load(data.host.read_text(path))
            for volume in pod["spec"]["volumes"]:
                if volume.get("name") == "etcd-data":
                    return volume["hostPath"]["path"]
        except (yaml.YAMLError, KeyError, TypeError, OSError):
            pass
    return config.DEFAULT_ETCD_DATA_DIR


def _remove_etcd_member(data):
    ctx = data.ctx
    if data.cluster is not None and not certplan.is_external_etcd(data.cluster) and \
            data.host.exists(manifests.manifest_path("etcd")):
        try:
            remove_own_member(data)
        except Exception as exc:  # noqa: BLE001 - kubeadm only warns and goes on
            ctx.warn("[reset] Failed to remove etcd member: %s, please manually remove this etcd member using etcdctl"
                     % describe(exc))
    elif data.cluster is None:
        ctx.warn("[reset] No kubeadm config, using etcd pod spec to get data directory")
    data_dir = _etcd_data_dir(data)
    if data.host.exists(data_dir):
        data.host.empty_dir(data_dir)
        data.emptied_etcd_dir = data_dir
        ctx.out("[reset] Deleted contents of the etcd data directory: %s" % data_dir)


def remove_own_member(data):
    """Remove this node's member (by peer URL) unless it is the last one, or it is already gone: from 1.32 kubeadm
    removes the member only when it is present (kubeadm-reference-1.32-plus.md, reset), so a member removed before
    the reset is no warning."""
    admin_client = Cluster.from_kubeconfig(data.host.path(data.kubeconfig_path), timeout=5.0)
    try:
        endpoints = etcd_endpoints_from_pods(admin_client)
    finally:
        admin_client.close()
    adv = "[%s]" % data.advertise_address if ":" in data.advertise_address else data.advertise_address
    cluster = dict(data.cluster, certificatesDir=data.cert_dir)
    admin = etcd_admin(data.host, cluster, endpoints or ["https://%s:2379" % adv])
    try:
        members = admin.members()
        peer_url = "https://%s:2380" % adv
        if len(members) == 1 and peer_url in members[0].peer_urls:
            data.ctx.out("[reset] This is the only remaining etcd member in the etcd cluster, skip removing it")
            return
        own = [m for m in members if peer_url in m.peer_urls]
        if not own:
            return
        admin.remove(own[0].id)
        data.ctx.out("[reset] Removed etcd member %s (%s)" % (own[0].name or "%x" % own[0].id, peer_url))
    finally:
        admin.close()


def _cleanup_node(data):
    ctx = data.ctx
    ctx.out("[reset] Stopping the kubelet service")
    try:
        data.kubelet.stop()
    except KubeletError as exc:
        ctx.warn("[reset] The kubelet service could not be stopped by kubeadm: [%s]" % exc)
    ctx.out('[reset] Unmounting mounted directories in "/var/lib/kubelet"')
    ctx.out("[reset] Removing Kubernetes-managed containers")
    data.host.stop_pods()
    if data.emptied_etcd_dir:
        # The emulated kubelet restarts an exited etcd sooner than the real one's crash-loop back-off, so the
        # removed member may have written a fresh data dir before the kubelet stopped: the end state must be
        # what kubeadm leaves, an empty data dir.
        data.host.empty_dir(data.emptied_etcd_dir)
    dirs = [manifests.MANIFEST_DIR, "/var/lib/kubelet", data.cert_dir]
    if data.cleanup_tmp:
        dirs.append(TMP_DIR)
    ctx.out("[reset] Deleting contents of directories: [%s]" % " ".join(dirs))
    for directory in dirs:
        data.host.empty_dir(directory)
    files = ["%s/%s" % (KUBERNETES_DIR, name) for name in KUBECONFIG_FILES]
    ctx.out("[reset] Deleting files: [%s]" % " ".join(files))
    for path in files:
        data.host.remove(path)
    for line in ("", "The reset process does not clean CNI configuration. To do so, you must remove /etc/cni/net.d",
                 "", "The reset process does not reset or clean up iptables rules or IPVS tables.",
                 "If you wish to reset iptables, you must do so manually by using the \"iptables\" command.", "",
                 "If your cluster was setup to utilize IPVS, run ipvsadm --clear (or similar)",
                 "to reset your system's IPVS tables.", "",
                 "The reset process does not clean your kubeconfig files and you must remove them manually.",
                 "Please, check the contents of the $HOME/.kube/config file.", ""):
        ctx.out(line)


PHASES = [
    Phase("preflight", _preflight),
    Phase("remove-etcd-member", _remove_etcd_member),
    Phase("cleanup-node", _cleanup_node),
]


def run(ctx, flags):
    reset_cfg = None
    if flags.get("config"):
        docs = read_config_file(ctx, flags["config"])
        reset_cfg = docs.get("ResetConfiguration")
        if reset_cfg is None:
            raise KubeadmError("no ResetConfiguration found in %s" % flags["config"])
    refuse_unemulated({"dry-run": flags.get("dry-run") or (reset_cfg or {}).get("dryRun")})
    data = ResetData(ctx, flags, reset_cfg)
    skip = list(flags.get("skip-phases") or []) + list((reset_cfg or {}).get("skipPhases") or [])
    run_phases(PHASES, data, skip)
    return 0
