# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm join`` (worker and ``--control-plane``): discovery, preflight, control-plane-prepare, check-etcd,
kubelet-start, etcd-join, kubelet-wait-bootstrap, control-plane-join, wait-control-plane, in kubeadm's order
(kubeadm-reference.md §2; kubeadm-reference-1.32-plus.md for the 1.33+ order).

ControlPlaneKubeletLocalMode (on from 1.33, locked from 1.35): a joining control plane node's kubelet
bootstraps against its own API server, which cannot serve before the local etcd member exists, so etcd is joined
(etcd-join) before the wait for the kubelet's TLS bootstrap; control-plane-join/etcd then does nothing. With the
gate off, etcd-join does nothing and control-plane-join/etcd joins etcd after the bootstrap, as before 1.33."""

from __future__ import annotations

import time

from kcpsim import kubeconfig
from kcpsim.kubeadm import (bootstraptoken, certplan, certsecret, config, discovery, dryrun, images,
                            kubeletconfig, manifests, preflight)
from kcpsim.kubeadm.cluster import ApiUnavailable, Cluster
from kcpsim.kubeadm.cmd_init import (ADMIN_CONF, KUBELET_CONF, KUBERNETES_DIR, annotate_cri_socket,
                                     check_control_plane_version, finish_dry_run, mark_control_plane,
                                     node_local_cri_socket, read_config_file, start_kubelet,
                                     wait_all_components, wait_kubelet, write_kubelet_files, write_manifest)
from kcpsim.kubeadm.context import KubeadmError, Phase, refuse_unemulated, run_phases
from kcpsim.kubeadm.etcd import EtcdAdmin, EtcdAdminError
from kcpsim.kubeadm.hostfs import FAULTS_DIR
from kcpsim.kubeadm.kubelet import Kubelet
from kcpsim.kubeadm.patches import PatchSet
from kcpsim.kubeadm.pkifiles import Files
from kcpsim.kubeadm.waiting import wait_for

BOOTSTRAP_KUBELET_CONF = KUBERNETES_DIR + "/bootstrap-kubelet.conf"
JOIN_FAIL_NEXT = FAULTS_DIR + "/join-fail-next"
DISCOVERY_RETRY_INTERVAL = 1.0


def etcd_endpoints_from_pods(client):
    """The client URLs in the etcd mirror pods' annotations (kubeadm's way to find stacked etcd)."""
    urls = []
    for pod in client.pods("kube-system", label_selector="component=etcd,tier=control-plane"):
        url = ((pod.get("metadata") or {}).get("annotations") or {}).get(manifests.ETCD_ENDPOINT_ANNOTATION)
        if url and url not in urls:
            urls.append(url)
    return urls


def etcd_admin(host, cluster, endpoints):
    cert_dir = cluster["certificatesDir"]
    return EtcdAdmin(endpoints, host.path(cert_dir + "/etcd/ca.crt"), host.path(cert_dir + "/apiserver-etcd-client.crt"),
                     host.path(cert_dir + "/apiserver-etcd-client.key"))


class JoinData:
    def __init__(self, ctx, settings, real_host=None):
        self.ctx = ctx
        self.settings = settings
        self.join = settings.join
        self.host = ctx.host
        self.real_host = real_host or ctx.host  # what preflight examines, also in a dry run
        self.dry_run = bool(settings.join.get("dryRun"))
        self.kubelet = dryrun.DryRunKubelet(ctx.host, ctx.out) if self.dry_run else Kubelet(ctx.host)
        self.cluster = None          # the stored ClusterConfiguration, after discovery
        self.kubelet_config = None   # the kubelet-config ConfigMap's document
        self.server = None           # the API server named in cluster-info
        self.ca_pem = None
        self.files = None
        self._bootstrap = None
        self._admin = None
        self.patches = PatchSet()  # --patches / patches.directory (patches.py)

    @property
    def control_plane(self):
        return self.settings.control_plane

    @property
    def node_name(self):
        return self.settings.node_name

    @property
    def timeouts(self):
        return self.join["timeouts"]

    @property
    def local_etcd(self):
        return not certplan.is_external_etcd(self.cluster)

    @property
    def kubelet_local_mode(self):
        """A control plane node's kubelet talks to its own API server (ControlPlaneKubeletLocalMode)."""
        return self.control_plane is not None and \
            self.ctx.release.gate("ControlPlaneKubeletLocalMode", self.cluster.get("featureGates"))

    @property
    def advertise_address(self):
        return self.control_plane["localAPIEndpoint"]["advertiseAddress"]

    @property
    def bind_port(self):
        return self.control_plane["localAPIEndpoint"]["bindPort"]

    def bootstrap_client(self):
        if self._bootstrap is None:
            self._bootstrap = Cluster.with_token(self.server, self.ca_pem, self.join["discovery"]["tlsBootstrapToken"])
        return self._bootstrap

    def admin(self):
        """admin.conf's client; a dry run's reads through it and prints its writes."""
        if self._admin is None:
            self._admin = Cluster.from_kubeconfig(self.host.path(ADMIN_CONF))
            if self.dry_run:
                self._admin = dryrun.cluster(self.ctx.out, reader=self._admin)
        return self._admin

    def close(self):
        for client in (self._bootstrap, self._admin):
            if client is not None:
                client.close()


# ---------------------------------------------------------------------------------------------- discovery

def discover(data):
    """Token or file discovery: sets the trusted server and CA (kubeadm-reference.md §2.1)."""
    discovery_cfg = data.join["discovery"]
    if discovery_cfg.get("file"):
        path = discovery_cfg["file"]["kubeConfigPath"]
        if path.startswith("https://"):
            raise KubeadmError("discovery from an https URL is not emulated by the sandbox's kubeadm")
        creds = kubeconfig.load_credentials(path)
        data.server, data.ca_pem = creds.server, creds.ca_pem
        return
    token_cfg = discovery_cfg["bootstrapToken"]
    token_id, token_secret = bootstraptoken.split(token_cfg["token"])
    endpoint = token_cfg["apiServerEndpoint"]
    host, port = config.split_host_port(endpoint, config.DEFAULT_BIND_PORT)
    server = "https://%s:%d" % ("[%s]" % host if ":" in host else host, port)

    def signed_cluster_info():
        insecure = Cluster.anonymous(server)
        try:
            info = insecure.get("v1", "configmaps", "cluster-info", "kube-public")
        finally:
            insecure.close()
        if info is None:
            raise discovery.NotSignedYet("the cluster-info ConfigMap does not exist yet")
        try:
            return discovery.verify_signature(info.get("data") or {}, token_id, token_secret)
        except discovery.Untrusted as exc:
            return exc  # a definite answer: stop polling

    try:
        outcome = wait_for(signed_cluster_info, data.timeouts["discovery"], DISCOVERY_RETRY_INTERVAL,
                           "a signed cluster-info from %s" % endpoint)
    except TimeoutError as exc:
        raise KubeadmError("couldn't validate the identity of the API Server: %s" % exc)
    if isinstance(outcome, discovery.Untrusted):
        raise KubeadmError("couldn't validate the identity of the API Server: %s" % outcome)
    cluster_server, ca_pem = discovery.cluster_of(outcome)
    try:
        discovery.check_pin(ca_pem, token_cfg.get("caCertHashes") or [], token_cfg.get("unsafeSkipCAVerification"))
    except discovery.Untrusted as exc:
        raise KubeadmError("couldn't validate the identity of the API Server: %s" % exc)
    # Read cluster-info again, now over TLS verified against the CA we just trusted: it must be the same.
    secure = Cluster.anonymous(server, ca_pem=ca_pem)
    try:
        again = secure.get("v1", "configmaps", "cluster-info", "kube-public")
    except ApiUnavailable as exc:
        raise KubeadmError("couldn't validate the identity of the API Server: %s" % exc)
    finally:
        secure.close()
    if again is None or (again.get("data") or {}).get("kubeconfig") != outcome:
        raise KubeadmError("couldn't validate the identity of the API Server: cluster-info changed between the "
                           "insecure and the secure read")
    data.server, data.ca_pem = cluster_server, ca_pem
    data.ctx.out('[discovery] Cluster info signature and contents are valid and TLS certificate validates against '
                 'pinned roots, will use API Server "%s"' % endpoint)


def fetch_cluster_configuration(data):
    ctx = data.ctx
    ctx.out("[preflight] Reading configuration from the cluster...")
    ctx.out("[preflight] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config "
            "-o yaml'")
    client = data.bootstrap_client()
    stored = client.configmap_data("kube-system", "kubeadm-config")
    if not stored or "ClusterConfiguration" not in stored:
        raise KubeadmError('unable to fetch the kubeadm-config ConfigMap: configmaps "kubeadm-config" not found')
    try:
        data.cluster = config.read_stored_cluster(stored["ClusterConfiguration"], ctx.release)
    except config.ConfigLoadError as exc:
        raise KubeadmError("unable to decode the kubeadm-config ConfigMap: %s" % exc)
    check_control_plane_version(ctx, data.cluster)
    kubelet = client.configmap_data("kube-system", kubeletconfig.CONFIGMAP_NAME)
    if not kubelet or kubeletconfig.CONFIGMAP_KEY not in kubelet:
        raise KubeadmError('unable to fetch the kubelet configuration: configmaps "kubelet-config" not found')
    data.kubelet_config = kubeletconfig.parse(kubelet[kubeletconfig.CONFIGMAP_KEY])


# ---------------------------------------------------------------------------------------------- preflight

def node_checks(data, checks):
    """The checks of every joining node (kubeadm's JoinNodeChecks). Only a worker must not hold the cluster CA's
    certificate yet: a control plane node may hold the shared certificates, copied in before the join."""
    worker = data.control_plane is None
    results = checks.dir_available(manifests.MANIFEST_DIR) if worker else []
    results += checks.file_available(KUBELET_CONF) + checks.file_available(BOOTSTRAP_KUBELET_CONF)
    results += checks.ip_forward() + checks.swap() + checks.executables(data.ctx.environ.get("PATH"))
    results += checks.cri(data.join["nodeRegistration"]["criSocket"])
    results += checks.kubelet_version(data.ctx.release, None) + checks.port(10250)
    results += checks.cgroups(checks.installed_kubelet_version(data.ctx.release))
    results += checks.hostname(data.node_name) + checks.kubelet_service()
    return results + (checks.file_available(data.join["caCertPath"]) if worker else [])


def _preflight(data):
    ctx = data.ctx
    ctx.out("[preflight] Running pre-flight checks")
    checks = preflight.Checks(data.real_host, data.kubelet)
    ignored = data.join["nodeRegistration"]["ignorePreflightErrors"]
    preflight.report(ctx, node_checks(data, checks), ignored)
    discover(data)
    fetch_cluster_configuration(data)
    if data.control_plane is None:
        return
    check_ready_for_control_plane(data)
    ctx.out("[preflight] Running pre-flight checks before initializing the new control plane instance")
    addresses = preflight.port_addresses(ctx.release, data.cluster, data.advertise_address)
    preflight.report(ctx, checks.control_plane(data.cluster, data.bind_port, addresses=addresses), ignored)
    ctx.out("[preflight] Pulling images required for setting up a Kubernetes cluster")
    preflight.report(ctx, checks.images(images.all_images(data.cluster, ctx.release)), ignored)


def check_ready_for_control_plane(data):
    """A stable controlPlaneEndpoint, and the shared certificates on disk unless a certificate key is given."""
    problems = []
    if not data.cluster.get("controlPlaneEndpoint"):
        problems.append("unable to add a new control plane instance to a cluster that doesn't have a stable "
                        "controlPlaneEndpoint address")
    if not data.control_plane.get("certificateKey"):
        missing = []
        for relative in certplan.shared_files(data.cluster):
            path = "%s/%s" % (data.cluster["certificatesDir"], relative)
            if data.host.exists(path):
                continue
            if relative in certplan.OPTIONAL_SHARED_FILES:
                if not data.host.exists(path[:-len(".key")] + ".crt"):
                    continue  # the missing certificate is the error reported below
                data.ctx.warn("[preflight] the key %s is missing: the node can join, but will not be able to sign "
                              "certificates with it (external CA mode)" % path)
                continue
            missing.append("failure loading %s: couldn't load %s: open %s: no such file or directory"
                           % (relative, path, path))
        if missing:
            problems.append("[" + ", ".join(missing) + "]")
    if problems:
        raise KubeadmError("\nOne or more conditions for hosting a new control plane instance is not satisfied.\n\n"
                           + "\n".join(problems) + "\n\nPlease ensure that:\n"
                           "* The cluster has a stable controlPlaneEndpoint address.\n"
                           "* The certificates that must be shared among control plane instances are provided.\n")


def _fault_injection(data):
    if data.host.consume(JOIN_FAIL_NEXT):
        raise KubeadmError("sandbox fault injection: join-fail-next (%s)" % JOIN_FAIL_NEXT)


# ---------------------------------------------------------------------------------- control-plane-prepare

def _control_plane_only(step):
    return lambda data: step(data) if data.control_plane is not None else None


def _download_certs(data):
    key = data.control_plane.get("certificateKey")
    if not key:
        data.ctx.out("[download-certs] Skipping certs download")
        return
    ctx = data.ctx
    ctx.out('[download-certs] Downloading the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace')
    secret = data.bootstrap_client().get("v1", "secrets", certsecret.SECRET_NAME, "kube-system")
    if secret is None:
        raise KubeadmError('error downloading the secret: Secret "kubeadm-certs" was not found in the "kube-system" '
                           "Namespace. This Secret might have expired. Please, run `kubeadm init phase upload-certs "
                           "--upload-certs` on a control plane to generate a new one")
    try:
        entries = certsecret.open_secret(key, secret)
    except certsecret.DecryptError as exc:
        raise KubeadmError("error downloading certs: %s" % exc)
    cert_dir = data.cluster["certificatesDir"]
    ctx.out('[download-certs] Saving the certificates to the folder: "%s"' % cert_dir)
    relative_names = {certsecret.entry_name(r): r for r in certsecret.LOCAL_ETCD_FILES}
    external = data.cluster["etcd"].get("external") or {}
    for field, entry in certsecret.EXTERNAL_ETCD_NAMES.items():
        if external.get(field):
            relative_names[entry] = external[field]
    for name, content in entries.items():
        relative = relative_names.get(name)
        if relative is None:
            continue
        path = relative if relative.startswith("/") else "%s/%s" % (cert_dir, relative)
        private = relative.endswith(".key") or relative.endswith("sa.pub")
        data.host.write(path, content, 0o600 if private else 0o644)


def _certs(data):
    cert_dir = data.cluster["certificatesDir"]
    data.ctx.out('[certs] Using certificateDir folder "%s"' % cert_dir)
    for leaf in certplan.leaves(data.cluster, data.node_name, data.advertise_address, data.ctx.release):
        ca_cert, ca_key = data.files.load_ca(leaf.ca)
        data.files.ensure_leaf(leaf, ca_cert, ca_key)
    data.files.ensure_sa()


def _kubeconfigs(data):
    data.ctx.out("[certs] Valid certificates and keys now exist in \"%s\"" % data.cluster["certificatesDir"])
    data.ctx.out("[kubeconfig] Generating kubeconfig files")
    data.ctx.out('[kubeconfig] Using kubeconfig folder "%s"' % KUBERNETES_DIR)
    ca_cert, ca_key = data.files.load_ca("ca")
    for spec in certplan.kubeconfigs(data.cluster, data.node_name, data.advertise_address, data.bind_port,
                                     with_super_admin=False, with_kubelet=False):
        data.files.ensure_kubeconfig(spec, data.cluster["clusterName"], ca_cert, ca_key)


def _control_plane_manifests(data):
    ctx = data.ctx
    ctx.out("[control-plane] Using manifest folder \"%s\"" % manifests.MANIFEST_DIR)
    pods = manifests.control_plane_pods(data.cluster, ctx.release, data.advertise_address, data.bind_port,
                                        data.join["nodeRegistration"]["imagePullPolicy"])
    for component in manifests.CONTROL_PLANE_COMPONENTS:
        ctx.out('[control-plane] Creating static Pod manifest for "%s"' % component)
        write_manifest(data.host, component, data.patches.apply(component, pods[component], ctx.out))


def _prepare_files(data):
    """The certificate writer, once the cluster's configuration is known."""
    algorithm = certplan.cluster_key_algorithm(data.cluster, data.ctx.key_algorithm_override())
    data.files = Files(data.host, data.cluster["certificatesDir"], data.ctx.out, algorithm,
                       data.cluster["certificateValidityPeriod"], data.cluster["caCertificateValidityPeriod"])


# -------------------------------------------------------------------------------------------- check-etcd

def _check_etcd(data):
    if data.control_plane is None or not data.local_etcd:
        return
    data.ctx.out("[check-etcd] Checking that the etcd cluster is healthy")
    endpoints = etcd_endpoints_from_pods(data.admin())
    if not endpoints:
        raise KubeadmError("etcd cluster is not healthy: no etcd pods with a client URL annotation were found")
    admin = etcd_admin(data.host, data.cluster, endpoints)
    try:
        synced = admin.sync_endpoints()
        bad = admin.unhealthy_endpoints()
    except Exception as exc:  # noqa: BLE001 - any failure to reach etcd is "not healthy"
        raise KubeadmError("etcd cluster is not healthy: %s" % exc)
    finally:
        admin.close()
    if data.ctx.release.etcd_unhealthy(synced, bad):
        raise KubeadmError("etcd cluster is not healthy: failed to dial endpoint %s: %s" % bad[0])


# ----------------------------------------------------------------------------------------- kubelet-start

def _kubelet_start(data):
    """Write the bootstrap kubeconfig and the kubelet's files, and start the kubelet; the wait for its TLS
    bootstrap is kubelet-wait-bootstrap."""
    ctx = data.ctx
    client = data.bootstrap_client()
    node = client.get("v1", "nodes", data.node_name)
    if node is not None and _is_ready(node):
        raise KubeadmError('a Node with name "%s" and status "Ready" already exists in the cluster. You must delete '
                           "the existing Node or change the name of this new joining Node" % data.node_name)
    token = data.join["discovery"]["tlsBootstrapToken"]
    server = "https://%s" % manifests.join_host_port(data.advertise_address, data.bind_port) \
        if data.kubelet_local_mode else data.server
    bootstrap = kubeconfig.build(server, data.ca_pem, "tls-bootstrap-token-user",
                                 cluster_name=data.cluster["clusterName"], token=token)
    kubeconfig.write(data.host.path(BOOTSTRAP_KUBELET_CONF), bootstrap)
    if not data.host.exists(data.join["caCertPath"]):
        data.host.write(data.join["caCertPath"], data.ca_pem, 0o644)
    # The kubelet configuration is cluster-wide: a join takes it from kubelet-config, never from --config.
    write_kubelet_files(ctx, data.join["nodeRegistration"], data.cluster,
                        data.patches.apply("kubeletconfiguration", data.kubelet_config, ctx.out))
    start_kubelet(ctx, data.kubelet)


def _kubelet_wait_bootstrap(data):
    ctx = data.ctx
    if data.dry_run:
        ctx.out("[dryrun] Would wait for the kubelet to be healthy and to perform the TLS Bootstrap")
        return
    wait_kubelet(ctx, data.kubelet, data.timeouts["kubeletHealthCheck"])
    ctx.out("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap")
    started = time.monotonic()
    try:
        wait_for(lambda: _kubelet_conf_ready(data), data.timeouts["tlsBootstrap"], 0.5,
                 "the kubelet to perform the TLS Bootstrap (write %s)" % KUBELET_CONF)
    except TimeoutError as exc:
        raise KubeadmError(str(exc))
    data.host.remove(BOOTSTRAP_KUBELET_CONF)
    ctx.out("[kubelet-start] The kubelet performed the TLS Bootstrap after %.1fs" % (time.monotonic() - started))
    if node_local_cri_socket(ctx, data.cluster):
        return
    node_client = Cluster.from_kubeconfig(data.host.path(KUBELET_CONF))
    try:
        annotate_cri_socket(node_client, data.node_name, data.join["nodeRegistration"]["criSocket"],
                            data.timeouts["kubernetesAPICall"] * 4)
    finally:
        node_client.close()


def _is_ready(node):
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _kubelet_conf_ready(data):
    if not data.host.exists(KUBELET_CONF):
        return False
    try:
        creds = kubeconfig.load_credentials(data.host.path(KUBELET_CONF))
    except kubeconfig.KubeconfigError:
        return False
    return bool(creds.client_cert_pem and creds.client_key_pem)


# ------------------------------------------------------------------------------------- control-plane-join

def _etcd_join(data):
    if data.kubelet_local_mode:
        _join_etcd(data)


def _control_plane_join_etcd(data):
    if not data.kubelet_local_mode:
        _join_etcd(data)


def _join_etcd(data):
    if not data.local_etcd:
        return
    ctx = data.ctx
    endpoints = etcd_endpoints_from_pods(data.admin())
    admin = etcd_admin(data.host, data.cluster, endpoints)
    adv = "[%s]" % data.advertise_address if ":" in data.advertise_address else data.advertise_address
    peer_url = "https://%s:2380" % adv
    try:
        admin.sync_endpoints()
        if data.dry_run:
            _dry_run_etcd(data, admin, peer_url)
            return
        member, added = admin.add_member(data.node_name, peer_url, True, data.timeouts["etcdAPICall"])
        if added:
            ctx.out("[etcd] Announced new etcd member joining to the existing etcd cluster")
        else:
            ctx.out("[etcd] The peer URL %s is already a member: reusing it" % peer_url)
        initial = []
        for m in admin.members():
            url = m.peer_urls[0] if m.peer_urls else ""
            name = m.name or (data.node_name if url == peer_url else "%x" % m.id)
            initial.append((name, url))
        data.host.mkdir(data.cluster["etcd"]["local"]["dataDir"], 0o700)
        ctx.out('[etcd] Creating static Pod manifest for "etcd"')
        pod = manifests.etcd_pod(data.cluster, ctx.release, data.node_name, data.advertise_address,
                                 data.join["nodeRegistration"]["imagePullPolicy"], initial_cluster=initial)
        write_manifest(data.host, "etcd", data.patches.apply("etcd", pod, ctx.out))
        if added or member.is_learner:
            ctx.out("[etcd] Waiting for the new etcd member to be promoted (it must catch up with the leader first)")
            admin.promote(member.id, timeout=data.timeouts["etcdAPICall"])
            ctx.out("[etcd] The learner %s was promoted to a voting member" % data.node_name)
        ctx.out("[etcd] Waiting for the new etcd member to join the cluster. This can take up to 40s")
        admin.wait_available(retries=8, interval=5.0)
    except EtcdAdminError as exc:
        raise KubeadmError(str(exc))
    finally:
        admin.close()


def _dry_run_etcd(data, admin, peer_url):
    """What the etcd step would do: the member it would add and the manifest naming every member."""
    ctx = data.ctx
    ctx.out("[dryrun] Would add etcd member %s (%s) as a learner and promote it" % (data.node_name, peer_url))
    initial = [(m.name or "%x" % m.id, m.peer_urls[0] if m.peer_urls else "") for m in admin.members()]
    pod = manifests.etcd_pod(data.cluster, ctx.release, data.node_name, data.advertise_address,
                             data.join["nodeRegistration"]["imagePullPolicy"],
                             initial_cluster=initial + [(data.node_name, peer_url)])
    write_manifest(data.host, "etcd", data.patches.apply("etcd", pod, ctx.out))


def _mark_control_plane(data):
    mark_control_plane(data.ctx, data.admin(), data.node_name, data.join["nodeRegistration"]["taints"],
                       data.timeouts["kubernetesAPICall"] * 4)


def _wait_control_plane(data):
    """WaitForAllControlPlaneComponents: a control plane join waits for this node's three components."""
    ctx = data.ctx
    if not ctx.release.gate("WaitForAllControlPlaneComponents", data.cluster.get("featureGates")):
        return
    if data.dry_run:
        ctx.out("[dryrun] Would wait for healthy control plane components")
        return
    pods = manifests.control_plane_pods(data.cluster, ctx.release, data.advertise_address, data.bind_port,
                                        data.join["nodeRegistration"]["imagePullPolicy"])
    wait_all_components(ctx, pods, data.timeouts["controlPlaneComponentHealthCheck"])


def _success(data):
    ctx = data.ctx
    if data.control_plane is None:
        lines = ["", "This node has joined the cluster:",
                 "* Certificate signing request was sent to apiserver and a response was received.",
                 "* The Kubelet was informed of the new secure connection details.", "",
                 "Run 'kubectl get nodes' on the control-plane to see this node join the cluster.", ""]
    else:
        lines = ["", "This node has joined the cluster and a new control plane instance was created:", "",
                 "* Certificate signing request was sent to apiserver and approval was received.",
                 "* The Kubelet was informed of the new secure connection details.",
                 "* Control plane label and taint were applied to the new node.",
                 "* The Kubernetes control plane instances scaled up."]
        if data.local_etcd:
            lines.append("* A new etcd member was added to the local/stacked etcd cluster.")
        lines += ["", "To start administering your cluster from this node, you need to run the following as a "
                      "regular user:", "", "\tmkdir -p $HOME/.kube",
                  "\tsudo cp -i %s $HOME/.kube/config" % ADMIN_CONF,
                  "\tsudo chown $(id -u):$(id -g) $HOME/.kube/config", "",
                  "Run 'kubectl get nodes' to see this node join the cluster.", ""]
    for line in lines:
        ctx.out(line)


def phases(release):
    join_children = [Phase("etcd", _control_plane_only(_control_plane_join_etcd)),
                     Phase("mark-control-plane", _control_plane_only(_mark_control_plane))]
    return [
        Phase("preflight", _preflight),
        Phase("sandbox-fault-injection", _fault_injection),
        Phase("control-plane-prepare", _control_plane_only(_prepare_files), [
            Phase("download-certs", _control_plane_only(_download_certs)),
            Phase("certs", _control_plane_only(_certs)),
            Phase("kubeconfig", _control_plane_only(_kubeconfigs)),
            Phase("control-plane", _control_plane_only(_control_plane_manifests)),
        ]),
        Phase("check-etcd", _check_etcd),
        Phase("kubelet-start", _kubelet_start),
        Phase("etcd-join", _control_plane_only(_etcd_join)),
        Phase("kubelet-wait-bootstrap", _kubelet_wait_bootstrap),
        Phase("control-plane-join", None, join_children),
        Phase("wait-control-plane", _control_plane_only(_wait_control_plane)),
    ]


def load_settings(ctx, flags, endpoint):
    mixed = config.check_mixed_flags(flags.get("config"), [k for k in flags if k != "config"])
    if mixed:
        raise KubeadmError(mixed)
    docs = read_config_file(ctx, flags.get("config"))
    settings = config.join_settings(docs, flags, endpoint, ctx.host.hostname(), ctx.host.default_address() or "")
    errors = config.validate_join(settings)
    if errors:
        raise KubeadmError(str(config.ValidationError(errors)), exit_code=3)
    return settings


def run(ctx, flags, endpoint):
    settings = load_settings(ctx, flags, endpoint)
    refuse_unemulated(flags, dry_run_emulated=True)
    real_host = ctx.host
    patch_set = PatchSet.load(real_host, flags.get("patches") or (settings.join.get("patches") or {}).get("directory"),
                              ctx.release)
    if settings.join["dryRun"]:
        ctx.host = dryrun.DryRunHost(real_host, dryrun.make_dir(real_host, "join"))
    data = JoinData(ctx, settings, real_host)
    data.patches = patch_set
    try:
        # The fault hook is the sandbox's, not kubeadm's: a skip list cannot switch it off.
        skip = [name for name in settings.join["skipPhases"] if name != "sandbox-fault-injection"]
        try:
            run_phases(phases(ctx.release), data, skip)
        except KubeadmError as exc:
            if "sandbox-fault-injection" in exc.message:
                raise KubeadmError(exc.message.replace("phase sandbox-fault-injection", "phase preflight"))
            raise
        _success(data)
    finally:
        data.close()
    if data.dry_run:
        finish_dry_run(ctx, manifests.COMPONENTS)
    return 0
