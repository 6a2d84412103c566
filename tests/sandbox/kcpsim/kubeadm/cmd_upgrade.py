# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm upgrade plan | apply <version> | node`` (kubeadm-reference.md §4)."""

from __future__ import annotations

import datetime
import secrets
import string

from kcpsim import kubeconfig, pki
from kcpsim.kubeadm import (certplan, clusterobjects, config, durations, images, kubeletconfig, manifests,
                            preflight, upgrade_policy)
from kcpsim.kubeadm.cluster import ApiUnavailable, Cluster
from kcpsim.kubeadm.cmd_init import (ADMIN_CONF, KUBELET_CONF, TMP_DIR, read_config_file,
                                     write_manifest)
from kcpsim.kubeadm.cmd_join import etcd_admin, etcd_endpoints_from_pods
from kcpsim.kubeadm.cmd_reset import node_name_from_kubelet_conf
from kcpsim.kubeadm.context import KubeadmError, Phase, describe, refuse_unemulated, run_phases
from kcpsim.kubeadm.etcd import EtcdAdminError
from kcpsim.kubeadm.kubelet import Kubelet, KubeletError
from kcpsim.kubeadm.patches import PatchSet, patched_objects
from kcpsim.kubeadm.pkifiles import Files
from kcpsim.kubeadm.release import parse_version
from kcpsim.kubeadm.waiting import wait_for

CONFIG_HASH = "kubernetes.io/config.hash"
# Which certificates an upgraded component gets renewed (kubeadm-reference.md §4.2 step 4).
RENEWED_WITH = {
    "etcd": ("etcd/server", "etcd/peer", "etcd/healthcheck-client"),
    "kube-apiserver": ("apiserver", "apiserver-kubelet-client", "front-proxy-client", "apiserver-etcd-client"),
    "kube-controller-manager": ("controller-manager.conf",),
    "kube-scheduler": ("scheduler.conf",),
}


def _timestamp():
    return datetime.datetime.now().strftime("%Y-%m-%d-%H-%M-%S")


def _random_suffix(length=5):
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for position in range(length))


class UpgradeData:
    """What the upgrade commands share: the cluster's configuration and this node's identity."""

    def __init__(self, ctx, flags, verb):
        self.ctx = ctx
        self.version_arg = None
        self.renew = True
        self.etcd_upgrade = True
        self.skip_phases = []
        self.target = None
        self.current = None
        self.patches = PatchSet()  # --patches / patches.directory (patches.py): written again at each upgrade
        self.host = ctx.host
        self.flags = flags
        # ``upgrade node`` on a worker talks to the API as the node itself.
        default = KUBELET_CONF if verb == "node" and not self.is_control_plane else ADMIN_CONF
        self.kubeconfig_path = flags.get("kubeconfig") or default
        self.upgrade_cfg = {}
        self.cluster = None
        self.kubelet_document = None
        self.node_name = None
        self.advertise_address = None
        self.bind_port = config.DEFAULT_BIND_PORT
        self.cri_socket = config.DEFAULT_CRI_SOCKET
        self.client = None
        self.files = None

    def option(self, section, field, flag, default):
        """A flag wins over UpgradeConfiguration's ``<section>.<field>``, which wins over the default."""
        if self.flags.get(flag) is not None:
            return self.flags[flag]
        value = (self.upgrade_cfg.get(section) or {}).get(field)
        return default if value is None else value

    @property
    def ignored(self):
        return list(self.flags.get("ignore-preflight-errors") or [])

    @property
    def local_etcd(self):
        return not certplan.is_external_etcd(self.cluster)

    @property
    def is_control_plane(self):
        return self.host.exists(manifests.manifest_path("kube-apiserver"))

    def close(self):
        if self.client is not None:
            self.client.close()


def load(ctx, flags, verb):
    """Fetch the cluster's configuration and this node's identity; KubeadmError when kubeadm would stop."""
    data = UpgradeData(ctx, flags, verb)
    try:
        return _load(data, ctx, flags)
    except BaseException:
        data.close()
        raise


def _load(data, ctx, flags):
    docs = None
    if flags.get("config"):
        docs = read_config_file(ctx, flags["config"])
        data.upgrade_cfg = docs.get("UpgradeConfiguration") or {}
    ctx.out("[upgrade/config] Reading configuration from the cluster...")
    ctx.out("[upgrade/config] FYI: You can look at this config file with 'kubectl -n kube-system get cm "
            "kubeadm-config -o yaml'")
    if not ctx.host.exists(data.kubeconfig_path):
        raise KubeadmError("[upgrade/config] FATAL: failed to load admin kubeconfig: open %s: no such file or "
                           "directory" % data.kubeconfig_path)
    data.client = Cluster.from_kubeconfig(ctx.host.path(data.kubeconfig_path))
    try:
        stored = data.client.configmap_data("kube-system", "kubeadm-config")
    except ApiUnavailable as exc:
        raise KubeadmError("[upgrade/config] FATAL: unable to fetch the kubeadm-config ConfigMap: %s" % exc)
    if not stored or "ClusterConfiguration" not in stored:
        raise KubeadmError('[upgrade/config] FATAL: unable to fetch the kubeadm-config ConfigMap: configmaps '
                           '"kubeadm-config" not found')
    try:
        data.cluster = config.read_stored_cluster(stored["ClusterConfiguration"], ctx.release)
    except config.ConfigLoadError as exc:
        raise KubeadmError("[upgrade/config] FATAL: %s" % exc)
    version = config.cluster_version(data.cluster)
    if not config.is_control_plane_version_supported(version, ctx.release):
        raise KubeadmError("[upgrade/config] FATAL: %s" % config.describe_unsupported_version(version, ctx.release))
    kubelet = data.client.configmap_data("kube-system", kubeletconfig.CONFIGMAP_NAME) or {}
    if kubeletconfig.CONFIGMAP_KEY in kubelet:
        data.kubelet_document = kubeletconfig.parse(kubelet[kubeletconfig.CONFIGMAP_KEY])
    data.node_name = node_name_from_kubelet_conf(ctx.host) if ctx.host.exists(KUBELET_CONF) else None
    if not data.node_name:
        raise KubeadmError("[upgrade/config] FATAL: could not read this node's name from %s" % KUBELET_CONF)
    node = data.client.node(data.node_name)
    annotations = ((node or {}).get("metadata") or {}).get("annotations") or {}
    data.cri_socket = annotations.get(clusterobjects.CRI_SOCKET_ANNOTATION) or _local_cri_socket(ctx.host) or ""
    if not data.cri_socket:
        raise KubeadmError("[upgrade/config] FATAL: node %s doesn't have kubeadm.alpha.kubernetes.io/cri-socket "
                           "annotation" % data.node_name)
    if data.is_control_plane:
        pod = data.client.get("v1", "pods", "kube-apiserver-" + data.node_name, "kube-system")
        endpoint = (((pod or {}).get("metadata") or {}).get("annotations") or {}).get(
            manifests.APISERVER_ENDPOINT_ANNOTATION)
        if not endpoint:
            raise KubeadmError("[upgrade/config] FATAL: failed to get the API server endpoint of node %s: the "
                               "kube-apiserver mirror pod or its %s annotation is missing"
                               % (data.node_name, manifests.APISERVER_ENDPOINT_ANNOTATION))
        data.advertise_address, data.bind_port = config.split_host_port(endpoint, config.DEFAULT_BIND_PORT)
    algorithm = certplan.cluster_key_algorithm(data.cluster, ctx.key_algorithm_override())
    data.files = Files(ctx.host, data.cluster["certificatesDir"], ctx.out, algorithm,
                       data.cluster["certificateValidityPeriod"], data.cluster["caCertificateValidityPeriod"])
    return data


def _local_cri_socket(host):
    """The node's CRI socket from instance-config.yaml, else from kubeadm-flags.env; None when neither says."""
    if host.exists(kubeletconfig.INSTANCE_CONFIG_PATH):
        try:
            instance = kubeletconfig.parse(host.read_text(kubeletconfig.INSTANCE_CONFIG_PATH))
            return instance.get("containerRuntimeEndpoint")
        except ValueError:
            return None
    if host.exists(kubeletconfig.FLAGS_PATH):
        return kubeletconfig.flag_value(host.read_text(kubeletconfig.FLAGS_PATH), "container-runtime-endpoint")
    return None


# ---------------------------------------------------------------------------------------------- health

def _job(name, cluster, release):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(release.health_job_timeout),
            "ttlSecondsAfterFinished": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "securityContext": {"runAsUser": 999, "runAsGroup": 999, "runAsNonRoot": True},
                    "tolerations": [{"key": clusterobjects.CONTROL_PLANE_LABEL, "effect": "NoSchedule"}],
                    "containers": [{"name": name, "image": images.pause_image(cluster, release),
                                    "args": ["-v"]}],
                },
            },
        },
    }


def _check_job(data):
    ctx, client = data.ctx, data.client
    if all((n.get("spec") or {}).get("unschedulable") for n in client.nodes()):
        ctx.warn("[upgrade/health] The upgrade health check Job was skipped: no schedulable nodes")
        return []
    name = "upgrade-health-check-" + _random_suffix()
    job = _job(name, data.cluster, ctx.release)
    try:
        client.client.create("batch/v1", "jobs", job, namespace="kube-system")

        def complete():
            current = client.get("batch/v1", "jobs", name, "kube-system") or {}
            return any(c.get("type") == "Complete" and c.get("status") == "True"
                       for c in (current.get("status") or {}).get("conditions") or [])

        wait_for(complete, ctx.release.health_job_timeout, 0.5, "the Job %s to complete" % name)
    except Exception as exc:  # noqa: BLE001 - a health check reports, it does not crash
        return [preflight.Result("CreateJob", "error", "could not create or wait for Job kube-system/%s: %s"
                                 % (name, describe(exc)))]
    finally:
        try:
            client.delete("batch/v1", "jobs", name, "kube-system")
        except Exception:  # noqa: BLE001 - best effort; the TTL controller would remove it too
            pass
    return []


def _check_control_plane_nodes(data):
    not_ready = []
    for node in data.client.nodes(label_selector=clusterobjects.CONTROL_PLANE_LABEL):
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (node.get("status") or {}).get("conditions") or [])
        if not ready:
            not_ready.append(node["metadata"]["name"])
    if not_ready:
        return [preflight.Result("ControlPlaneNodesReady", "error", "there are NotReady control-planes in the "
                                                                    "cluster: [%s]" % " ".join(sorted(not_ready)))]
    return []


def _check_manifests(data):
    missing = [manifests.manifest_path(c) for c in manifests.CONTROL_PLANE_COMPONENTS
               if not data.host.exists(manifests.manifest_path(c))]
    if missing:
        return [preflight.Result("StaticPodManifest", "error", "the static Pod manifests %s do not exist"
                                 % ", ".join(missing))]
    return []


def _etcd(data):
    return etcd_admin(data.host, data.cluster, etcd_endpoints_from_pods(data.client))


def check_etcd_health(data):
    if not data.local_etcd:
        return
    admin = _etcd(data)
    try:
        endpoints = admin.sync_endpoints()
        bad = admin.unhealthy_endpoints()
    except Exception as exc:  # noqa: BLE001 - unreachable etcd is unhealthy etcd
        raise KubeadmError("[upgrade/etcd] FATAL: etcd cluster is not healthy: %s" % describe(exc))
    finally:
        admin.close()
    for endpoint, reason in bad:
        data.ctx.warn("[upgrade/etcd] etcd endpoint %s is not healthy: %s" % (endpoint, reason))
    if data.ctx.release.etcd_unhealthy(endpoints, bad):
        raise KubeadmError("[upgrade/etcd] FATAL: etcd cluster is not healthy: failed to dial endpoint %s: %s" % bad[0])


def check_images(data):
    """Every image of the target configuration must be in the registry (ImagePull, ignorable)."""
    results = preflight.Checks(data.host, None).images(images.all_images(data.cluster, data.ctx.release))
    fatal = preflight.classify(results, data.ignored)[0]
    if fatal:
        raise KubeadmError(str(preflight.PreflightError(fatal)))


def check_host(data, target):
    """SystemVerification against the version the node moves to: the cgroup rule of kubelet 1.35+ applies as
    soon as the target is 1.35 or newer, before the kubelet itself is upgraded."""
    preflight.report(data.ctx, preflight.Checks(data.host, None).cgroups(target), data.ignored)


def health_checks(data):
    ctx = data.ctx
    ctx.out("[upgrade] Running cluster health checks")
    results = _check_job(data) + _check_control_plane_nodes(data) + _check_manifests(data)
    fatal, warnings = preflight.classify(results, data.ignored)
    for result in warnings:
        ctx.out("\t[WARNING %s]: %s" % (result.name, result.message))
    if fatal:
        raise KubeadmError("[upgrade/health] FATAL: %s" % preflight.PreflightError(fatal))


# ------------------------------------------------------------------------------------------ the versions

def _kubelet_versions(data):
    out = []
    for node in data.client.nodes():
        text = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
        try:
            out.append((node["metadata"]["name"], parse_version(text)))
        except ValueError:
            continue
    return out


def _component_tags(data, component):
    """[(node, image tag)] of every ``component`` mirror pod."""
    out = []
    for pod in data.client.pods("kube-system", label_selector="component=%s" % component):
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        tag = containers[0].get("image", "").rpartition(":")[2]
        out.append(((pod.get("spec") or {}).get("nodeName") or pod["metadata"]["name"], tag))
    return sorted(out)


def enforce_policy(data, current, target, force, allow_experimental, allow_rc):
    ctx = data.ctx
    verdict = upgrade_policy.check(ctx.version, current, target,
                                   kubelets=[version for node, version in _kubelet_versions(data)],
                                   allow_experimental=allow_experimental, allow_rc=allow_rc,
                                   kubelet_skew=ctx.release.kubelet_skew_minors)
    if verdict.fatal:
        raise KubeadmError("[upgrade/version] FATAL: the --version argument is invalid due to these fatal errors:\n\n"
                           + "\n".join("- " + m for m in verdict.fatal)
                           + "\n\nPlease fix the misalignments highlighted above and try upgrading again")
    if verdict.forceable and not force:
        raise KubeadmError("[upgrade/version] FATAL: the --version argument is invalid due to these errors:\n\n"
                           + "\n".join("- " + m for m in verdict.forceable)
                           + "\n\nCan be bypassed if you pass the --force flag")
    for message in verdict.forceable:
        ctx.warn("[upgrade/version] Found %s" % message)


# ------------------------------------------------------------------------------- the control plane instance

def _mirror_pod(data, component):
    return data.client.get("v1", "pods", "%s-%s" % (component, data.node_name), "kube-system")


def _hash_of(pod):
    return (((pod or {}).get("metadata") or {}).get("annotations") or {}).get(CONFIG_HASH)


def _running(pod):
    return ((pod or {}).get("status") or {}).get("phase") == "Running"


def _renew(data, component):
    """Renew the certificates a component uses (its leaves, or its kubeconfig's client certificate)."""
    for item in RENEWED_WITH[component]:
        if item.endswith(".conf"):
            ca_cert, ca_key = data.files.load_ca("ca")
            if ca_key is not None and data.host.exists("/etc/kubernetes/" + item):
                data.files.renew_kubeconfig(item, ca_cert, ca_key)
            continue
        if item.startswith("etcd/") or item == "apiserver-etcd-client":
            if not data.local_etcd:
                continue
            ca_base = "etcd/ca"
        elif item == "front-proxy-client":
            ca_base = "front-proxy-ca"
        else:
            ca_base = "ca"
        if not data.files.has(item + ".crt"):
            continue
        ca_cert, ca_key = data.files.load_ca(ca_base)
        if ca_key is not None:
            data.files.renew_leaf(item, ca_cert, ca_key)


def _wait_component(data, component, old_hash, timeout):
    ctx = data.ctx
    ctx.out("[upgrade/staticpods] Waiting for the kubelet to restart the component")
    ctx.out("[upgrade/staticpods] This can take up to %s" % durations.render(timeout))

    def restarted():
        pod = _mirror_pod(data, component)
        if _hash_of(pod) in (None, old_hash):
            return False
        pods = data.client.pods("kube-system", label_selector="component=%s" % component)
        return all(_running(p) for p in pods)

    wait_for(restarted, timeout, 1.0, "the %s mirror pod to run the new manifest" % component)
    ctx.out("[upgrade/staticpods] Component %s restarted successfully!" % component)


def _upgrade_component(data, component, new_pod, backup_dir, renew, timeout, changed):
    """Install one component's new manifest (unless it is unchanged) and wait for the kubelet to run it."""
    ctx = data.ctx
    path = manifests.manifest_path(component)
    new_text = manifests.render(new_pod)
    if data.host.exists(path) and data.host.read_text(path) == new_text:
        ctx.out("[upgrade/staticpods] Current and new manifests of %s are equal, skipping upgrade" % component)
        return
    old_hash = _hash_of(_mirror_pod(data, component))
    if old_hash is None:
        raise KubeadmError("failed to obtain static Pod hash for component %s on Node %s" % (component, data.node_name))
    if renew:
        _renew(data, component)
    ctx.out('[upgrade/staticpods] Moving new manifest to "%s" and backing up old manifest to "%s/%s.yaml"'
            % (path, backup_dir, component))
    if data.host.exists(path):
        data.host.move(path, "%s/%s.yaml" % (backup_dir, component))
    changed.append(component)
    write_manifest(data.host, component, new_pod)
    _wait_component(data, component, old_hash, timeout)


def _rollback(data, changed, backup_dir):
    for component in changed:
        backup = "%s/%s.yaml" % (backup_dir, component)
        if data.host.exists(backup):
            data.host.write(manifests.manifest_path(component), data.host.read(backup), 0o600)


def _upgrade_etcd(data, target_release, backup_dir, renew, timeout, changed):
    ctx = data.ctx
    if not data.local_etcd or not data.host.exists(manifests.manifest_path("etcd")):
        return
    stamp = _timestamp()
    data_dir = data.cluster["etcd"]["local"]["dataDir"]
    backup_etcd = "%s/kubeadm-backup-etcd-%s" % (TMP_DIR, stamp)
    data.host.mkdir(backup_etcd, 0o700)
    data.host.copy_tree(data_dir, backup_etcd + "/etcd")
    current_pod = manifests.load(data.host.read_text(manifests.manifest_path("etcd")))
    current_tag = manifests.image_tag(current_pod)
    wanted = data.patches.apply("etcd", manifests.etcd_pod(
        data.cluster, target_release, data.node_name, data.advertise_address,
        current_pod["spec"]["containers"][0].get("imagePullPolicy", "IfNotPresent")), ctx.out)
    wanted_tag = manifests.image_tag(wanted)
    if _etcd_tag_key(wanted_tag) < _etcd_tag_key(current_tag):
        ctx.warn('[upgrade/etcd] Won\'t downgrade etcd: the desired etcd version "%s" is older than the currently '
                 'installed "%s". Skipping etcd upgrade' % (wanted_tag, current_tag))
        return
    # Like every component, etcd is compared by its whole rendered manifest (flags, probes, image), not its tag:
    # any difference renews its certificates and restarts it.
    try:
        _upgrade_component(data, "etcd", wanted, backup_dir, renew, timeout, changed)
        admin = _etcd(data)
        try:
            admin.wait_available(retries=10, interval=15.0)
        finally:
            admin.close()
    except (KubeadmError, TimeoutError, EtcdAdminError) as exc:
        _rollback(data, [c for c in changed if c == "etcd"], backup_dir)
        raise KubeadmError("fatal error when trying to upgrade the etcd cluster, rolled the state back to "
                           "pre-upgrade state: %s" % describe(exc))


def _etcd_tag_key(tag):
    numbers = []
    for part in tag.replace("-", ".").split("."):
        numbers.append(int(part) if part.isdigit() else 0)
    return tuple(numbers)


def upgrade_control_plane_instance(data, target_release, renew, etcd_upgrade):
    """Steps 3 – 5 of ``upgrade apply`` (kubeadm-reference.md §4.2), shared with ``upgrade node``."""
    ctx = data.ctx
    timeout = durations.parse("5m")
    for component in manifests.CONTROL_PLANE_COMPONENTS:
        if _hash_of(_mirror_pod(data, component)) is None:
            raise KubeadmError("[upgrade/apply] FATAL: failed to obtain static Pod hash for component %s on Node %s"
                               % (component, data.node_name))
    backup_dir = "%s/kubeadm-backup-manifests-%s" % (TMP_DIR, _timestamp())
    data.host.mkdir(backup_dir, 0o700)
    temp_dir = data.host.make_temp_dir(TMP_DIR, "kubeadm-upgraded-manifests")
    changed = []
    try:
        if etcd_upgrade:
            _upgrade_etcd(data, target_release, backup_dir, renew, timeout, changed)
        pull_policy = "IfNotPresent"
        pods = manifests.control_plane_pods(data.cluster, target_release, data.advertise_address, data.bind_port,
                                            pull_policy)
        pods = {component: data.patches.apply(component, pod, ctx.out) for component, pod in pods.items()}
        for component in manifests.CONTROL_PLANE_COMPONENTS:
            data.host.write("%s/%s.yaml" % (temp_dir, component), manifests.render(pods[component]), 0o600)
        for component in manifests.CONTROL_PLANE_COMPONENTS:
            _upgrade_component(data, component, pods[component], backup_dir, renew, timeout, changed)
    except (KubeadmError, TimeoutError) as exc:
        _rollback(data, changed, backup_dir)
        raise KubeadmError("[upgrade/apply] FATAL: couldn't upgrade control plane. kubeadm has tried to recover "
                           "everything into the earlier state. Errors faced: %s" % describe(exc))
    finally:
        data.host.remove_tree(temp_dir)
    if renew and data.host.exists(ADMIN_CONF):
        ca_cert, ca_key = data.files.load_ca("ca")
        if ca_key is not None:
            data.files.renew_kubeconfig("admin.conf", ca_cert, ca_key)
    ctx.out("[upgrade/staticpods] The control plane instance for this node was successfully updated!")
    if ctx.release.gate("ControlPlaneKubeletLocalMode", data.cluster.get("featureGates")):
        _kubelet_to_local_api_server(data)


def _kubelet_to_local_api_server(data):
    """ControlPlaneKubeletLocalMode's upgrade step: kubelet.conf's server becomes this node's own API server
    (kubeadm's hidden phase), and the kubelet is restarted to use it."""
    if not data.host.exists(KUBELET_CONF):
        return
    local = certplan.local_server(data.advertise_address, data.bind_port)
    current = kubeconfig.load(data.host.path(KUBELET_CONF))
    clusters = current.get("clusters") or []
    if not clusters or all((entry.get("cluster") or {}).get("server") == local for entry in clusters):
        return
    for entry in clusters:
        entry.setdefault("cluster", {})["server"] = local
    kubeconfig.write(data.host.path(KUBELET_CONF), current)
    data.ctx.out('[upgrade] Updated the server of "%s" to this node\'s API server %s' % (KUBELET_CONF, local))
    try:
        Kubelet(data.host).restart()
    except KubeletError as exc:
        data.ctx.warn("[upgrade] WARNING: unable to restart the kubelet: %s" % exc)


def rewrite_kubelet_config(data):
    """Back up /var/lib/kubelet/config.yaml and rewrite it from the cluster's kubelet configuration; move the
    CRI socket into instance-config.yaml (NodeLocalCRISocket) and strip the flags kubeadm no longer writes."""
    host, release = data.host, data.ctx.release
    local_socket = release.gate("NodeLocalCRISocket", data.cluster.get("featureGates"))
    stripped = (("container-runtime-endpoint",) if local_socket else ()) + \
        (("pod-infra-container-image",) if release.minor == 35 else ())  # only 1.35 cleans it up
    if local_socket and not host.exists(kubeletconfig.INSTANCE_CONFIG_PATH):
        host.write(kubeletconfig.INSTANCE_CONFIG_PATH, kubeletconfig.instance_config(data.cri_socket), 0o644)
    if stripped and host.exists(kubeletconfig.FLAGS_PATH):
        text = host.read_text(kubeletconfig.FLAGS_PATH)
        host.write(kubeletconfig.FLAGS_PATH, kubeletconfig.flags_without(text, stripped), 0o644)
    if data.kubelet_document is None:
        return
    backup = data.host.make_temp_dir(TMP_DIR, "kubeadm-kubelet-config")
    if data.host.exists(kubeletconfig.CONFIG_PATH):
        data.host.write(backup + "/config.yaml", data.host.read(kubeletconfig.CONFIG_PATH), 0o644)
    data.ctx.out('[upgrade] Backing up kubelet config file to %s/config.yaml' % backup)
    document = data.patches.apply("kubeletconfiguration", data.kubelet_document, data.ctx.out)
    if local_socket:
        document = dict(document, containerRuntimeEndpoint=kubeletconfig.cri_endpoint(data.cri_socket))
    data.host.write(kubeletconfig.CONFIG_PATH, kubeletconfig.render(document), 0o644)
    data.ctx.out('[kubelet-start] Writing kubelet configuration to file "%s"' % kubeletconfig.CONFIG_PATH)


def _addons_due(data):
    """CoreDNS and kube-proxy move only once every kube-apiserver runs the target version."""
    target = str(config.cluster_version(data.cluster))
    behind = [node for node, tag in _component_tags(data, "kube-apiserver") if tag != target]
    if behind:
        data.ctx.out("[upgrade/addons] skip upgrade addons because control plane instances [%s] have not been upgraded"
                     % " ".join(behind))
    return not behind


def _addon_coredns(data):
    if data.cluster["dns"].get("disabled") or not _addons_due(data):
        return
    data.client.apply(patched_objects(data.patches, "corednsdeployment", clusterobjects.coredns_addon(
        data.cluster, data.ctx.release), "Deployment", data.ctx.out))
    data.ctx.out("[addons] Applied essential addon: CoreDNS")


def _addon_kube_proxy(data):
    if data.cluster.get("proxy", {}).get("disabled") or not _addons_due(data):
        return
    server = certplan.cluster_server(data.cluster, data.advertise_address or "127.0.0.1", data.bind_port)
    data.client.apply(patched_objects(data.patches, "kubeproxydaemonset", clusterobjects.kube_proxy_addon(
        data.cluster, server), "DaemonSet", data.ctx.out))
    data.ctx.out("[addons] Applied essential addon: kube-proxy")


def _upload_config_kubeadm(data):
    data.ctx.out('[upload-config] Storing the configuration used in ConfigMap "kubeadm-config" in the "kube-system" '
                 'Namespace')
    data.client.apply(clusterobjects.upload_kubeadm_config(config.stored_cluster_document(data.cluster)))


def _upload_config_kubelet(data):
    if data.kubelet_document is not None:
        data.ctx.out('[kubelet] Creating a ConfigMap "kubelet-config" in namespace kube-system with the configuration '
                     'for the kubelets in the cluster')
        data.client.apply(clusterobjects.upload_kubelet_config(kubeletconfig.render(data.kubelet_document)))


def _kubelet_config(data):
    rewrite_kubelet_config(data)
    data.ctx.out("[upgrade/kubelet-config] The kubelet configuration for this node was successfully upgraded!")


def _bootstrap_token(data):
    """The bootstrap token RBAC, re-applied (cluster-info is init's and stays as it is)."""
    ca_cert = data.files.load_ca("ca")[0]
    server = certplan.cluster_server(data.cluster, data.advertise_address or "127.0.0.1", data.bind_port)
    rbac = [o for o in clusterobjects.bootstrap_token_rbac(server, pki.cert_pem(ca_cert))
            if not (o[1] == "configmaps" and o[3]["metadata"]["name"] == "cluster-info")]
    data.client.apply(rbac)
    data.ctx.out("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to get nodes")


def _post_upgrade(data):
    """What the upgrade migrates once the rest is done: the API server's kubelet client binding where the release
    grants it that way, and the cri-socket annotation (gone with NodeLocalCRISocket; a merge patch's null removes
    it)."""
    if data.ctx.release.binds_apiserver_kubelet_client:
        data.client.apply(clusterobjects.apiserver_kubelet_client_binding())
    local_socket = data.ctx.release.gate("NodeLocalCRISocket", data.cluster.get("featureGates"))
    data.client.patch_node(data.node_name, clusterobjects.cri_socket_patch(None if local_socket else data.cri_socket))


# --------------------------------------------------------------------------------------------- commands

def plan(data, version_arg):
    ctx = data.ctx
    health_checks(data)
    current = config.cluster_version(data.cluster)
    ctx.out("[upgrade] Fetching available versions to upgrade to")
    ctx.out("[upgrade/versions] Cluster version: %s" % current)
    ctx.out("[upgrade/versions] kubeadm version: %s" % ctx.version)
    ctx.warn("[upgrade/versions] WARNING: Couldn't fetch latest stable version from the internet: unable to get URL "
             '"https://dl.k8s.io/release/stable.txt"')
    ctx.warn("[upgrade/versions] WARNING: Falling back to current kubeadm version as latest stable version")
    target = parse_version(version_arg) if version_arg else ctx.version
    if (target.major, target.minor, target.patch) <= (current.major, current.minor, current.patch):
        ctx.out("")
        ctx.out("Awesome, you're up-to-date! Enjoy!")
        return 0
    rows = [["COMPONENT", "NODE", "CURRENT", "TARGET"]]
    for node, version in _kubelet_versions(data):
        rows.append(["kubelet", node, str(version), str(target)])
    ctx.out("Components that must be upgraded manually after you have upgraded the control plane with "
            "'kubeadm upgrade apply':")
    _table(ctx, rows)
    ctx.out("")
    ctx.out("Upgrade to the latest stable version:")
    ctx.out("")
    rows = [["COMPONENT", "NODE", "CURRENT", "TARGET"]]
    for component in manifests.CONTROL_PLANE_COMPONENTS:
        for node, tag in _component_tags(data, component):
            rows.append([component, node, tag, str(target)])
    rows.append(["kube-proxy", "", str(current)[1:], str(target)])
    rows.append(["CoreDNS", "", data.cluster["dns"].get("imageTag") or ctx.release.coredns_image_tag,
                 ctx.release.coredns_image_tag])
    for node, tag in _component_tags(data, "etcd"):
        rows.append(["etcd", node, tag, ctx.release.etcd_image_tag_for(str(target))[0]])
    _table(ctx, rows)
    for line in ("", "You can now apply the upgrade by executing the following command:", "",
                 "\tkubeadm upgrade apply %s" % target, "", "_" * 69, "",
                 "The table below shows the current state of component configs as understood by this version of "
                 "kubeadm.",
                 'Configs that have a "yes" mark in the "MANUAL UPGRADE REQUIRED" column require manual config '
                 "upgrade or",
                 "resetting to kubeadm defaults before a successful upgrade can be performed. The version to manually",
                 'upgrade to is denoted in the "PREFERRED VERSION" column.', ""):
        ctx.out(line)
    _table(ctx, [["API GROUP", "CURRENT VERSION", "PREFERRED VERSION", "MANUAL UPGRADE REQUIRED"],
                 ["kubeproxy.config.k8s.io", "v1alpha1", "v1alpha1", "no"],
                 ["kubelet.config.k8s.io", "v1beta1", "v1beta1", "no"]])
    ctx.out("_" * 69)
    return 0


def _table(ctx, rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        ctx.out("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def _apply_preflight(data):
    """Cluster health, the version policy, the host against the target and the images."""
    ctx = data.ctx
    force = bool(data.option("apply", "forceUpgrade", "force", False))
    yes = bool(data.flags.get("yes"))
    allow_experimental = bool(data.option("apply", "allowExperimentalUpgrades", "allow-experimental-upgrades", False))
    allow_rc = bool(data.option("apply", "allowRCUpgrades", "allow-release-candidate-upgrades", False))
    health_checks(data)
    check_etcd_health(data)
    ctx.out('[upgrade/version] You have chosen to change the cluster version to "%s"' % data.target)
    ctx.out("[upgrade/versions] Cluster version: %s" % data.current)
    ctx.out("[upgrade/versions] kubeadm version: %s" % ctx.version)
    enforce_policy(data, data.current, data.target, force, allow_experimental, allow_rc)
    check_host(data, data.target)
    if not (yes or force):
        if not ctx.confirm("[upgrade] Are you sure you want to proceed?"):
            raise KubeadmError("won't proceed; the user didn't answer (Y|y) in order to continue")
    ctx.out("[upgrade/prepull] Pulling images required for setting up a Kubernetes cluster")
    check_images(data)


def _apply_control_plane(data):
    data.ctx.out('[upgrade/apply] Upgrading your Static Pod-hosted control plane to version "%s" (timeout: 5m0s)...'
                 % data.target)
    upgrade_control_plane_instance(data, data.ctx.release, data.renew, data.etcd_upgrade)


def _node_preflight(data):
    ctx = data.ctx
    ctx.out("[upgrade/preflight] Running pre-flight checks")
    check_host(data, config.cluster_version(data.cluster))
    if data.is_control_plane:
        check_etcd_health(data)
        ctx.out("[upgrade/preflight] Pulling images required for setting up a Kubernetes cluster")
        check_images(data)
    else:
        ctx.out("[upgrade/preflight] Skipping prepull. Not a control plane node.")


def _node_control_plane(data):
    ctx = data.ctx
    if not data.is_control_plane:
        ctx.out("[upgrade/control-plane] Skipping phase. Not a control plane node.")
        return
    ctx.out('[upgrade/control-plane] Upgrading your Static Pod-hosted control plane instance to version "%s"...'
            % config.cluster_version(data.cluster))
    upgrade_control_plane_instance(data, ctx.release, data.renew, data.etcd_upgrade)


def _node_addons(run):
    """An addon phase of ``upgrade node``: only a control plane node applies the addons."""
    def step(data):
        if data.is_control_plane:
            run(data)
    return step


_ADDONS = [Phase("coredns", _addon_coredns), Phase("kube-proxy", _addon_kube_proxy)]
# kubeadm's upgrade workflows since 1.32 (kubeadm-reference-1.32-plus.md §3), each phase skippable by name.
APPLY_PHASES = [
    Phase("preflight", _apply_preflight),
    Phase("control-plane", _apply_control_plane),
    Phase("upload-config", None, [Phase("kubeadm", _upload_config_kubeadm), Phase("kubelet", _upload_config_kubelet)]),
    Phase("kubelet-config", _kubelet_config),
    Phase("bootstrap-token", _bootstrap_token),
    Phase("addon", None, _ADDONS),
    Phase("post-upgrade", _post_upgrade),
]
NODE_PHASES = [
    Phase("preflight", _node_preflight),
    Phase("control-plane", _node_control_plane),
    Phase("kubelet-config", _kubelet_config),
    Phase("addon", None, [Phase(p.name, _node_addons(p.run)) for p in _ADDONS]),
    Phase("post-upgrade"),  # nothing to do on a node yet, as in kubeadm
]


def apply(data):
    """The target version is read before any phase runs, so each phase, the first skipped or not, works towards it."""
    version_text = data.version_arg or (data.upgrade_cfg.get("apply") or {}).get("kubernetesVersion")
    if not version_text:
        raise KubeadmError("missing one or more required arguments. Required arguments: [version]")
    try:
        data.target = parse_version(version_text)
    except ValueError as exc:
        raise KubeadmError("[upgrade/version] FATAL: %s" % exc)
    data.current = config.cluster_version(data.cluster)
    data.cluster = dict(data.cluster, kubernetesVersion=str(data.target))
    run_phases(APPLY_PHASES, data, data.skip_phases)
    ctx = data.ctx
    ctx.out("")
    ctx.out('[upgrade/successful] SUCCESS! Your cluster was upgraded to "%s". Enjoy!' % data.target)
    ctx.out("")
    ctx.out("[upgrade/kubelet] Now that your control plane is upgraded, please proceed with upgrading your kubelets "
            "if you haven't already done so.")
    return 0


def node(data):
    run_phases(NODE_PHASES, data, data.skip_phases)
    ctx = data.ctx
    if data.is_control_plane:
        ctx.out("[upgrade] The control plane instance for this node was successfully upgraded!")
    else:
        ctx.out("[upgrade] The configuration for this node was successfully upgraded!")
    ctx.out("[upgrade] Now you should go ahead and upgrade the kubelet package using your package manager.")
    return 0


def run(ctx, verb, flags, version_arg):
    refuse_unemulated(flags)
    data = load(ctx, flags, verb)
    try:
        section = data.upgrade_cfg.get(verb) or {}
        refuse_unemulated({"dry-run": section.get("dryRun")})
        if verb == "plan":
            return plan(data, version_arg)
        data.patches = PatchSet.load(ctx.host, flags.get("patches") or (section.get("patches") or {}).get("directory"),
                                     ctx.release)
        data.version_arg = version_arg
        data.renew = bool(data.option(verb, "certificateRenewal", "certificate-renewal", True))
        data.etcd_upgrade = bool(data.option(verb, "etcdUpgrade", "etcd-upgrade", True))
        # The flag wins over the configuration's list, as for init and join.
        data.skip_phases = list(flags.get("skip-phases") or section.get("skipPhases") or [])
        return apply(data) if verb == "apply" else node(data)
    finally:
        data.close()
