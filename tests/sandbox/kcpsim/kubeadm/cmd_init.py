# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm init`` and ``kubeadm init phase <name>``: kubeadm's init phases in its order
(kubeadm-reference.md §1). Wiring only: decisions come from the pure modules, I/O from the adapters."""

from __future__ import annotations

import datetime
import time

from kcpsim import kubeconfig, pki
from kcpsim.kubeadm import (bootstraptoken, certplan, certsecret, clusterobjects, config, controlplanecheck, dryrun,
                            durations, images, kubeletconfig, manifests, preflight)
from kcpsim.kubeadm.cluster import Cluster
from kcpsim.kubeadm.context import KubeadmError, Phase, describe, refuse_unemulated, run_phases
from kcpsim.kubeadm.kubelet import Kubelet, KubeletError
from kcpsim.kubeadm.patches import PatchSet, patched_objects
from kcpsim.kubeadm.pkifiles import Files
from kcpsim.kubeadm.waiting import wait_for

KUBERNETES_DIR = "/etc/kubernetes"
TMP_DIR = KUBERNETES_DIR + "/tmp"
ADMIN_CONF = KUBERNETES_DIR + "/admin.conf"
SUPER_ADMIN_CONF = KUBERNETES_DIR + "/super-admin.conf"
KUBELET_CONF = KUBERNETES_DIR + "/kubelet.conf"
KUBELET_PEM = "/var/lib/kubelet/pki/kubelet-client-current.pem"


def decode_config_file(ctx, path):
    """The decoded documents of the configuration file ``path``, its warnings not yet printed, or KubeadmError
    (exit 1) for what kubeadm cannot read."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise KubeadmError("unable to read config from \"%s\": %s" % (path, exc.strerror))
    try:
        return config.read_documents(text, ctx.release)
    except config.ConfigLoadError as exc:
        raise KubeadmError(str(exc))


def read_config_file(ctx, path):
    """The decoded documents of ``--config`` (None without one), its warnings printed."""
    if not path:
        return None
    docs = decode_config_file(ctx, path)
    for warning in docs.warnings:
        ctx.warn(warning)
    return docs


def check_control_plane_version(ctx, cluster):
    """kubeadm refuses control planes older than its minor-1 and warns about ones newer than itself."""
    version = config.cluster_version(cluster)
    if not config.is_control_plane_version_supported(version, ctx.release):
        raise KubeadmError(config.describe_unsupported_version(version, ctx.release))
    return version


class InitData:
    """Everything the init phases share."""

    def __init__(self, ctx, settings, flags, real_host=None):
        self.ctx = ctx
        self.settings = settings
        self.cluster = settings.cluster
        self.init = settings.init
        self.flags = flags
        self.host = ctx.host
        self.real_host = real_host or ctx.host  # what preflight examines, also in a dry run
        self.dry_run = bool(settings.init.get("dryRun"))
        self.kubelet = dryrun.DryRunKubelet(ctx.host, ctx.out) if self.dry_run else Kubelet(ctx.host)
        self.upload_certs = bool(flags.get("upload-certs"))
        self.certificate_key = self.init.get("certificateKey") or ""
        self.skip_token_print = bool(flags.get("skip-token-print"))
        self.skip_key_print = bool(flags.get("skip-certificate-key-print"))
        self._admin = None
        self.algorithm = certplan.cluster_key_algorithm(settings.cluster, ctx.key_algorithm_override())
        self.files = Files(ctx.host, self.cluster["certificatesDir"], ctx.out, self.algorithm,
                           self.cluster["certificateValidityPeriod"], self.cluster["caCertificateValidityPeriod"])
        self.started = time.monotonic()
        self.patches = PatchSet()  # --patches / patches.directory (patches.py)

    @property
    def node_name(self):
        return self.settings.node_name

    @property
    def advertise_address(self):
        return self.settings.advertise_address

    @property
    def bind_port(self):
        return self.settings.bind_port

    @property
    def local_etcd(self):
        return not certplan.is_external_etcd(self.cluster)

    @property
    def timeouts(self):
        return self.init["timeouts"]

    def admin(self):
        """The admin.conf client; on first use the CRB kubeadm:cluster-admins is ensured with super-admin.conf."""
        if self._admin is None:
            if self.host.exists(SUPER_ADMIN_CONF):
                super_admin = self._client(SUPER_ADMIN_CONF)
                try:
                    super_admin.apply([clusterobjects.cluster_admins_binding()])
                finally:
                    super_admin.close()
            self._admin = self._client(ADMIN_CONF)
        return self._admin

    def _client(self, path):
        """1.37 aims init's admin clients at this instance (no load balancer needed yet); before, the kubeconfig's
        server (the controlPlaneEndpoint), whose first calls kubeadm retries until it forwards. A dry run's
        client prints what it would send."""
        if self.dry_run:
            return dryrun.cluster(self.ctx.out)
        if self.ctx.release.minor >= 37:
            local = "https://%s" % manifests.join_host_port(self.advertise_address, self.bind_port)
            client = Cluster.from_kubeconfig(self.host.path(path), server=local)
        else:
            client = Cluster.from_kubeconfig(self.host.path(path))
        try:
            # kubeadm retries its first API calls until the server serves them (its system namespaces exist).
            wait_for(lambda: client.get("v1", "namespaces", "kube-system"), self.timeouts["kubernetesAPICall"], 0.5,
                     "the API server to serve namespace kube-system")
        except TimeoutError as exc:
            client.close()
            raise KubeadmError(str(exc))
        return client

    def close(self):
        if self._admin is not None:
            self._admin.close()
            self._admin = None


# --------------------------------------------------------------------------------------------- preflight

def _preflight(data):
    ctx = data.ctx
    ctx.out("[init] Using Kubernetes version: %s" % data.cluster["kubernetesVersion"])
    ctx.out("[preflight] Running pre-flight checks")
    checks = preflight.Checks(data.real_host, data.kubelet)
    target = config.cluster_version(data.cluster)
    node_checks = checks.port(10250) + checks.ip_forward() + checks.swap() + checks.executables(ctx.environ.get("PATH"))
    node_checks += checks.cri(data.init["nodeRegistration"]["criSocket"])
    node_checks += checks.kubelet_version(ctx.release, target)
    node_checks += checks.cgroups(checks.installed_kubelet_version(ctx.release))
    node_checks += checks.hostname(data.node_name) + checks.kubelet_service()
    results = checks.control_plane(data.cluster, data.bind_port, node_checks,
                                   preflight.port_addresses(ctx.release, data.cluster, data.advertise_address))
    if (target.major, target.minor) > (ctx.version.major, ctx.version.minor):
        results.append(preflight.Result("KubernetesVersion", "warning",
                                        "Kubernetes version is greater than kubeadm version. Please consider to "
                                        "upgrade kubeadm. Kubernetes version: %s. Kubeadm version: %d.%d.x"
                                        % (target, ctx.version.major, ctx.version.minor)))
    ignored = data.init["nodeRegistration"]["ignorePreflightErrors"]
    preflight.report(ctx, results, ignored)
    ctx.out("[preflight] Pulling images required for setting up a Kubernetes cluster")
    ctx.out("[preflight] This might take a minute or two, depending on the speed of your internet connection")
    warning = images.etcd_version_warning(data.cluster, ctx.release)
    if warning:
        ctx.warn(warning)
    preflight.report(ctx, checks.images(images.all_images(data.cluster, ctx.release)), ignored)


# ------------------------------------------------------------------------------------------------ certs

def _certs_intro(data):
    data.ctx.out('[certs] Using certificateDir folder "%s"' % data.cluster["certificatesDir"])


def _cert_phases():
    """certs/<name> sub-phases in kubeadm's order: each CA right before the leaves it signs."""
    def ca_step(ca):
        return lambda data: data.files.ensure_ca(ca)

    def leaf_step(name):
        def run(data):
            leaf = certplan.leaf_by_name(data.cluster, data.node_name, data.advertise_address, data.ctx.release, name)
            ca_cert, ca_key = data.files.load_ca(leaf.ca)
            data.files.ensure_leaf(leaf, ca_cert, ca_key)
        return run

    def etcd_only(step):
        return lambda data: step(data) if data.local_etcd else None

    return [
        Phase("ca", ca_step(certplan.CA_ROOT)),
        Phase("apiserver", leaf_step("apiserver")),
        Phase("apiserver-kubelet-client", leaf_step("apiserver-kubelet-client")),
        Phase("front-proxy-ca", ca_step(certplan.CA_FRONT_PROXY)),
        Phase("front-proxy-client", leaf_step("front-proxy-client")),
        Phase("etcd-ca", etcd_only(ca_step(certplan.CA_ETCD))),
        Phase("etcd-server", etcd_only(leaf_step("etcd-server"))),
        Phase("etcd-peer", etcd_only(leaf_step("etcd-peer"))),
        Phase("etcd-healthcheck-client", etcd_only(leaf_step("etcd-healthcheck-client"))),
        Phase("apiserver-etcd-client", etcd_only(leaf_step("apiserver-etcd-client"))),
        Phase("sa", lambda data: data.files.ensure_sa()),
    ]


# ------------------------------------------------------------------------------------------- kubeconfig

def _kubeconfig_intro(data):
    data.ctx.out('[kubeconfig] Using kubeconfig folder "%s"' % KUBERNETES_DIR)


def _kubeconfig_step(file_name):
    def run(data):
        local_mode = data.ctx.release.gate("ControlPlaneKubeletLocalMode", data.cluster.get("featureGates"))
        specs = certplan.kubeconfigs(data.cluster, data.node_name, data.advertise_address, data.bind_port,
                                     with_super_admin=True, with_kubelet=True, kubelet_local=local_mode)
        spec = next(s for s in specs if s.name == file_name)
        ca_cert, ca_key = data.files.load_ca("ca")
        data.files.ensure_kubeconfig(spec, data.cluster["clusterName"], ca_cert, ca_key)
    return run


# ----------------------------------------------------------------------------------- etcd, control plane

def write_manifest(host, component, pod):
    host.mkdir(manifests.MANIFEST_DIR, 0o700)
    host.write(manifests.manifest_path(component), manifests.render(pod), 0o600)


def _etcd_local(data):
    if not data.local_etcd:
        data.ctx.out("[etcd] External etcd mode: Skipping the creation of a manifest for local etcd")
        return
    data.host.mkdir(data.cluster["etcd"]["local"]["dataDir"], 0o700)
    data.ctx.out('[etcd] Creating static Pod manifest for local etcd in "%s"' % manifests.MANIFEST_DIR)
    pod = manifests.etcd_pod(data.cluster, data.ctx.release, data.node_name, data.advertise_address,
                             data.init["nodeRegistration"]["imagePullPolicy"])
    write_manifest(data.host, "etcd", data.patches.apply("etcd", pod, data.ctx.out))


def _control_plane_intro(data):
    data.ctx.out('[control-plane] Using manifest folder "%s"' % manifests.MANIFEST_DIR)


def _control_plane_step(component):
    def run(data):
        data.ctx.out('[control-plane] Creating static Pod manifest for "%s"' % component)
        pods = manifests.control_plane_pods(data.cluster, data.ctx.release, data.advertise_address, data.bind_port,
                                            data.init["nodeRegistration"]["imagePullPolicy"])
        write_manifest(data.host, component, data.patches.apply(component, pods[component], data.ctx.out))
    return run


# ------------------------------------------------------------------------------------------ kubelet-start

def node_local_cri_socket(ctx, cluster):
    return ctx.release.gate("NodeLocalCRISocket", cluster.get("featureGates"))


def write_kubelet_files(ctx, node_registration, cluster, kubelet_document):
    """kubeadm-flags.env, instance-config.yaml (NodeLocalCRISocket) and config.yaml, as kubelet-start writes them."""
    local_socket = node_local_cri_socket(ctx, cluster)
    pause = images.pause_image(cluster, ctx.release) if ctx.release.writes_pod_infra_container_image else None
    ctx.out('[kubelet-start] Writing kubelet environment file with flags to file "%s"' % kubeletconfig.FLAGS_PATH)
    ctx.host.write(kubeletconfig.FLAGS_PATH,
                   kubeletconfig.flags_env(node_registration, ctx.host.hostname(), pause, not local_socket), 0o644)
    if local_socket:
        ctx.out('[kubelet-start] Writing instance kubelet configuration to file "%s"'
                % kubeletconfig.INSTANCE_CONFIG_PATH)
        ctx.host.write(kubeletconfig.INSTANCE_CONFIG_PATH,
                       kubeletconfig.instance_config(node_registration["criSocket"]), 0o644)
        kubelet_document = dict(kubelet_document,
                                containerRuntimeEndpoint=kubeletconfig.cri_endpoint(node_registration["criSocket"]))
    ctx.out('[kubelet-start] Writing kubelet configuration to file "%s"' % kubeletconfig.CONFIG_PATH)
    ctx.host.write(kubeletconfig.CONFIG_PATH, kubeletconfig.render(kubelet_document), 0o644)


def start_kubelet(ctx, kubelet):
    ctx.out("[kubelet-start] Starting the kubelet")
    try:
        kubelet.restart()
    except KubeletError as exc:
        ctx.warn("[kubelet-start] WARNING: unable to start the kubelet service: [%s]" % exc)
        ctx.warn("[kubelet-start] Please ensure kubelet is reloaded and running manually.")


def _kubelet_start(data):
    document = kubeletconfig.kubelet_configuration(data.cluster, data.settings.kubelet)
    document = data.patches.apply("kubeletconfiguration", document, data.ctx.out)
    write_kubelet_files(data.ctx, data.init["nodeRegistration"], data.cluster, document)
    start_kubelet(data.ctx, data.kubelet)


def wait_kubelet(ctx, kubelet, timeout):
    started = time.monotonic()
    ctx.out("[kubelet-check] Waiting for a healthy kubelet at http://127.0.0.1:10248/healthz. This can take up to %s"
            % durations.render(timeout))
    try:
        kubelet.wait_healthy(timeout)
    except KubeletError as exc:
        raise KubeadmError("%s\n\nUnfortunately, an error has occurred, likely caused by:\n"
                           "\t- The kubelet is not running\n"
                           "\t- The kubelet is unhealthy due to a misconfiguration of the node in some way\n" % exc)
    ctx.out("[kubelet-check] The kubelet is healthy after %s" % _elapsed(started))


def _elapsed(started):
    return durations.render(round(time.monotonic() - started, 3))


def wait_all_components(ctx, pods, timeout):
    """The control-plane-check: every component's health endpoint, or the error naming those not healthy."""
    failed = controlplanecheck.wait_all(ctx.out, pods, timeout)
    if failed:
        raise KubeadmError("failed while waiting for the control plane to start: %s not healthy\n"
                           "A control plane component may have crashed or exited when started by the container "
                           "runtime. To troubleshoot, check the kubelet and the static Pods in %s"
                           % (", ".join(failed), manifests.MANIFEST_DIR))


def wait_control_plane_components(ctx, cluster, pods, timeout, wait_api):
    """All three components (WaitForAllControlPlaneComponents), else only the API server through ``wait_api``."""
    if ctx.release.gate("WaitForAllControlPlaneComponents", cluster.get("featureGates")):
        wait_all_components(ctx, pods, timeout)
        return
    started = time.monotonic()
    ctx.out("[api-check] Waiting for a healthy API server. This can take up to %s" % durations.render(timeout))
    try:
        wait_api(timeout)
    except TimeoutError as exc:
        raise KubeadmError("%s\nUnfortunately, an error has occurred: the control plane did not become healthy. "
                           "It may be that the static Pods could not start: check the kubelet" % exc)
    ctx.out("[api-check] The API server is healthy after %s" % _elapsed(started))


def _wait_control_plane(data):
    ctx = data.ctx
    if data.dry_run:
        ctx.out("[dryrun] Would wait for the kubelet to boot up the control plane as static Pods")
        ctx.out("[dryrun] Would wait for healthy control plane components")
        return
    ctx.out('[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from '
            'directory "%s"' % manifests.MANIFEST_DIR)
    wait_kubelet(ctx, data.kubelet, data.timeouts["kubeletHealthCheck"])
    pods = manifests.control_plane_pods(data.cluster, ctx.release, data.advertise_address, data.bind_port,
                                        data.init["nodeRegistration"]["imagePullPolicy"])
    client = Cluster.from_kubeconfig(data.host.path(ADMIN_CONF))
    try:
        wait_control_plane_components(ctx, data.cluster, pods, data.timeouts["controlPlaneComponentHealthCheck"],
                                      client.wait_healthy)
    finally:
        client.close()


# ----------------------------------------------------------------------------------------- upload-config

def _upload_config_kubeadm(data):
    data.ctx.out('[upload-config] Storing the configuration used in ConfigMap "kubeadm-config" in the '
                 '"kube-system" Namespace')
    stored = config.stored_cluster_document(data.cluster)
    data.admin().apply(clusterobjects.upload_kubeadm_config(stored))


def _upload_config_kubelet(data):
    data.ctx.out('[kubelet] Creating a ConfigMap "kubelet-config" in namespace kube-system with the configuration '
                 'for the kubelets in the cluster')
    document = kubeletconfig.kubelet_configuration(data.cluster, data.settings.kubelet)
    admin = data.admin()
    admin.apply(clusterobjects.upload_kubelet_config(kubeletconfig.render(document)))
    if not node_local_cri_socket(data.ctx, data.cluster):
        annotate_cri_socket(admin, data.node_name, data.init["nodeRegistration"]["criSocket"],
                            data.timeouts["kubernetesAPICall"] * 4)


def annotate_cri_socket(client, node_name, cri_socket, timeout):
    try:
        client.wait_node(node_name, timeout)
    except TimeoutError as exc:
        raise KubeadmError("error patching Node \"%s\": %s" % (node_name, exc))
    client.patch_node(node_name, clusterobjects.cri_socket_patch(cri_socket))


# ------------------------------------------------------------------------------------------ upload-certs

def upload_certs(ctx, client, cluster, certificate_key, host):
    """Store the shared CA and SA files in kubeadm-certs under ``certificate_key``; owned by a 2 h token."""
    cert_dir = cluster["certificatesDir"]
    files = {}
    if certplan.is_external_etcd(cluster):
        names = certsecret.EXTERNAL_ETCD_FILES
        external = cluster["etcd"]["external"]
        for field, entry in certsecret.EXTERNAL_ETCD_NAMES.items():
            if external.get(field):
                files[entry] = host.read(external[field])
    else:
        names = certsecret.LOCAL_ETCD_FILES
    for relative in names:
        path = "%s/%s" % (cert_dir, relative)
        if host.exists(path):
            files[certsecret.entry_name(relative)] = host.read(path)
    ctx.out('[upload-certs] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace')
    token = bootstraptoken.generate()
    now = datetime.datetime.now(datetime.timezone.utc)
    token_secret = bootstraptoken.secret(token, bootstraptoken.CERTS_TOKEN_TTL, [], [],
                                         bootstraptoken.CERTS_TOKEN_DESCRIPTION, now)
    owner = client.create_or_update("v1", "secrets", "kube-system", token_secret)
    client.create_or_update("v1", "secrets", "kube-system", certsecret.secret(certificate_key, files, owner))
    client.apply(clusterobjects.kubeadm_certs_rbac())


def _upload_certs(data):
    ctx = data.ctx
    if not data.upload_certs:
        ctx.out("[upload-certs] Skipping phase. Please see --upload-certs")
        return
    if not data.certificate_key:
        data.certificate_key = certsecret.new_key()
    upload_certs(ctx, data.admin(), data.cluster, data.certificate_key, data.host)
    ctx.out("[upload-certs] Using certificate key:")
    ctx.out(data.certificate_key if not data.skip_key_print else "<value withheld>")


# ------------------------------------------------------------------------------------ mark-control-plane

def mark_control_plane(ctx, client, node_name, taints, timeout):
    ctx.out("[mark-control-plane] Marking the node %s as control-plane by adding the labels: [%s %s]"
            % (node_name, clusterobjects.CONTROL_PLANE_LABEL, clusterobjects.EXCLUDE_LB_LABEL))
    if taints:
        ctx.out("[mark-control-plane] Marking the node %s as control-plane by adding the taints [%s]"
                % (node_name, " ".join("%s:%s" % (t["key"], t["effect"]) for t in taints)))
    try:
        node = client.wait_node(node_name, timeout)
    except TimeoutError as exc:
        raise KubeadmError("error patching Node \"%s\": %s" % (node_name, exc))
    patch = clusterobjects.control_plane_node_patch((node.get("spec") or {}).get("taints"), taints)
    client.patch_node(node_name, patch)


def _mark_control_plane(data):
    mark_control_plane(data.ctx, data.admin(), data.node_name, data.init["nodeRegistration"]["taints"],
                       data.timeouts["kubernetesAPICall"] * 4)


# --------------------------------------------------------------------------------------- bootstrap-token

def create_token_secret(client, token):
    now = datetime.datetime.now(datetime.timezone.utc)
    body = bootstraptoken.secret(token["token"], token.get("ttl"), token["usages"], token["groups"],
                                 token.get("description", ""), now)
    client.create_or_update("v1", "secrets", "kube-system", body)


def _bootstrap_token(data):
    ctx = data.ctx
    admin = data.admin()
    for token in data.init["bootstrapTokens"]:
        if not token.get("token"):
            token["token"] = bootstraptoken.generate()
        shown = token["token"] if not data.skip_token_print else "<value withheld>"
        ctx.out("[bootstrap-token] Using token: %s" % shown)
    ctx.out("[bootstrap-token] Configuring bootstrap tokens, cluster-info ConfigMap, RBAC Roles")
    for token in data.init["bootstrapTokens"]:
        create_token_secret(admin, token)
    ctx.out("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to get nodes")
    ctx.out("[bootstrap-token] Configured RBAC rules to allow Node Bootstrap tokens to post CSRs in order for nodes "
            "to get long term certificate credentials")
    ctx.out("[bootstrap-token] Configured RBAC rules to allow the csrapprover controller automatically approve CSRs "
            "from a Node Bootstrap Token")
    ctx.out("[bootstrap-token] Configured RBAC rules to allow certificate rotation for all node client certificates "
            "in the cluster")
    ctx.out('[bootstrap-token] Creating the "cluster-info" ConfigMap in the "kube-public" namespace')
    ca_cert = data.files.load_ca("ca")[0]
    server = certplan.cluster_server(data.cluster, data.advertise_address, data.bind_port)
    admin.apply(clusterobjects.bootstrap_token_rbac(server, pki.cert_pem(ca_cert)))
    if ctx.release.binds_apiserver_kubelet_client:
        admin.apply(clusterobjects.apiserver_kubelet_client_binding())


# --------------------------------------------------------------------------------------- kubelet-finalize

def _kubelet_finalize(data):
    ctx = data.ctx
    if not data.host.exists(KUBELET_PEM):
        # kubeadm assumes client certificate rotation is off when the kubelet has not written its pem.
        return
    ctx.out('[kubelet-finalize] Updating "%s" to point to a rotatable kubelet client certificate and key' % KUBELET_CONF)
    current = kubeconfig.load(data.host.path(KUBELET_CONF))
    creds = kubeconfig.credentials(current, source=KUBELET_CONF)
    updated = kubeconfig.build(creds.server, creds.ca_pem, creds.user_name, cluster_name=creds.cluster_name,
                               client_cert_file=KUBELET_PEM, client_key_file=KUBELET_PEM)
    kubeconfig.write(data.host.path(KUBELET_CONF), updated)
    try:
        data.kubelet.restart()
    except KubeletError as exc:
        ctx.warn("[kubelet-finalize] WARNING: unable to restart the kubelet: %s" % exc)


# ------------------------------------------------------------------------------------------------- addons

def _addon_coredns(data):
    if data.cluster["dns"].get("disabled"):
        data.ctx.out("[addons] Skipping the CoreDNS addon: disabled in the ClusterConfiguration")
        return
    data.admin().apply(patched_objects(data.patches, "corednsdeployment", clusterobjects.coredns_addon(
        data.cluster, data.ctx.release), "Deployment", data.ctx.out))
    data.ctx.out("[addons] Applied essential addon: CoreDNS")


def _addon_kube_proxy(data):
    if data.cluster.get("proxy", {}).get("disabled"):
        data.ctx.out("[addons] Skipping the kube-proxy addon: disabled in the ClusterConfiguration")
        return
    server = certplan.cluster_server(data.cluster, data.advertise_address, data.bind_port)
    data.admin().apply(patched_objects(data.patches, "kubeproxydaemonset", clusterobjects.kube_proxy_addon(
        data.cluster, server, data.settings.kubeproxy), "DaemonSet", data.ctx.out))
    data.ctx.out("[addons] Applied essential addon: kube-proxy")


# --------------------------------------------------------------------------------------- show-join-command

def _show_join_command(data):
    ctx = data.ctx
    ca_cert = data.files.load_ca("ca")[0]
    ca_hash = pki.ca_cert_hash(ca_cert)
    server = certplan.cluster_server(data.cluster, data.advertise_address, data.bind_port)
    host_port = server[len("https://"):]
    token = data.init["bootstrapTokens"][0]["token"] if data.init["bootstrapTokens"] else ""
    shown_token = token if not data.skip_token_print else "<value withheld>"
    shown_key = data.certificate_key if not data.skip_key_print else "<value withheld>"
    lines = [
        "",
        "Your Kubernetes control-plane has initialized successfully!",
        "",
        "To start using your cluster, you need to run the following as a regular user:",
        "",
        "  mkdir -p $HOME/.kube",
        "  sudo cp -i %s $HOME/.kube/config" % ADMIN_CONF,
        "  sudo chown $(id -u):$(id -g) $HOME/.kube/config",
        "",
        "Alternatively, if you are the root user, you can run:",
        "",
        "  export KUBECONFIG=%s" % ADMIN_CONF,
        "",
        "You should now deploy a pod network to the cluster.",
        'Run "kubectl apply -f [podnetwork].yaml" with one of the options listed at:',
        "  https://kubernetes.io/docs/concepts/cluster-administration/addons/",
        "",
    ]
    if data.cluster.get("controlPlaneEndpoint"):
        command = bootstraptoken.join_command(host_port, shown_token, [ca_hash], control_plane=True,
                                              certificate_key=shown_key if data.upload_certs else "")
        if data.upload_certs:
            lines += ["You can now join any number of control-plane nodes running the following command on each "
                      "as root:", "", "  " + command, "",
                      "Please note that the certificate-key gives access to cluster sensitive data, keep it secret!",
                      "As a safeguard, uploaded-certs will be deleted in two hours; If necessary, you can use",
                      '"kubeadm init phase upload-certs --upload-certs" to reload certs afterward.', ""]
        else:
            lines += ["You can now join any number of control-plane nodes by copying certificate authorities",
                      "and service account keys on each node and then running the following as root:", "",
                      "  " + command, ""]
    lines += ["Then you can join any number of worker nodes by running the following on each as root:", "",
              bootstraptoken.join_command(host_port, shown_token, [ca_hash])]
    for line in lines:
        ctx.out(line)


# ------------------------------------------------------------------------------------------------ workflow

PHASES = [
    Phase("preflight", _preflight),
    Phase("certs", _certs_intro, _cert_phases()),
    Phase("kubeconfig", _kubeconfig_intro, [
        Phase("admin", _kubeconfig_step("admin.conf")),
        Phase("super-admin", _kubeconfig_step("super-admin.conf")),
        Phase("kubelet", _kubeconfig_step("kubelet.conf")),
        Phase("controller-manager", _kubeconfig_step("controller-manager.conf")),
        Phase("scheduler", _kubeconfig_step("scheduler.conf")),
    ]),
    Phase("etcd", None, [Phase("local", _etcd_local)]),
    Phase("control-plane", _control_plane_intro, [
        Phase("apiserver", _control_plane_step("kube-apiserver")),
        Phase("controller-manager", _control_plane_step("kube-controller-manager")),
        Phase("scheduler", _control_plane_step("kube-scheduler")),
    ]),
    Phase("kubelet-start", _kubelet_start),
    Phase("wait-control-plane", _wait_control_plane),
    Phase("upload-config", None, [Phase("kubeadm", _upload_config_kubeadm), Phase("kubelet", _upload_config_kubelet)]),
    Phase("upload-certs", _upload_certs),
    Phase("mark-control-plane", _mark_control_plane),
    Phase("bootstrap-token", _bootstrap_token),
    Phase("kubelet-finalize", None, [Phase("enable-client-cert-rotation", _kubelet_finalize)]),
    Phase("addon", None, [Phase("coredns", _addon_coredns), Phase("kube-proxy", _addon_kube_proxy)]),
    Phase("show-join-command", _show_join_command),
]


def load_settings(ctx, flags):
    """InitSettings from ``--config`` and the flags, validated (KubeadmError exit 3 listing every error)."""
    mixed = config.check_mixed_flags(flags.get("config"), [k for k in flags if k != "config"])
    if mixed:
        raise KubeadmError(mixed)
    docs = read_config_file(ctx, flags.get("config"))
    if "kubernetes-version" not in flags and not (docs and (docs.get("ClusterConfiguration") or {}).get(
            "kubernetesVersion")):
        ctx.warn('could not fetch a Kubernetes version from the internet: unable to get URL '
                 '"https://dl.k8s.io/release/stable-1.txt"')
        ctx.warn("falling back to the local client version: %s" % ctx.version)
    address = ctx.host.default_address() or ""
    try:
        settings = config.init_settings(docs, flags, ctx.version, ctx.host.hostname(), address)
    except ValueError as exc:
        raise KubeadmError(str(exc), exit_code=3)
    if not settings.advertise_address:
        raise KubeadmError("unable to select an IP from default routes: set --apiserver-advertise-address")
    errors = config.validate_init(settings, ctx.release)
    if errors:
        raise KubeadmError(str(config.ValidationError(errors)), exit_code=3)
    check_control_plane_version(ctx, settings.cluster)
    return settings


def run_upload_certs(ctx, flags):
    """``kubeadm init phase upload-certs``: only the upload, with the admin kubeconfig (``--kubeconfig``)."""
    settings = load_settings(ctx, flags)
    data = InitData(ctx, settings, flags)
    if not data.upload_certs:
        ctx.out("[upload-certs] Skipping phase. Please see --upload-certs")
        return 0
    path = flags.get("kubeconfig") or ADMIN_CONF
    if not ctx.host.exists(path):
        raise KubeadmError("error execution phase upload-certs: failed to load admin kubeconfig: open %s: no such "
                           "file or directory" % path)
    client = Cluster.from_kubeconfig(ctx.host.path(path))
    try:
        data.certificate_key = data.certificate_key or certsecret.new_key()
        upload_certs(ctx, client, data.cluster, data.certificate_key, ctx.host)
    except KubeadmError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported the kubeadm way
        raise KubeadmError("error execution phase upload-certs: %s" % describe(exc))
    finally:
        client.close()
    ctx.out("[upload-certs] Using certificate key:")
    ctx.out(data.certificate_key)
    return 0


def run(ctx, flags, only=None):
    """``kubeadm init`` (or, with ``only``, ``kubeadm init phase <only>``)."""
    settings = load_settings(ctx, flags)
    refuse_unemulated(flags, dry_run_emulated=True)
    real_host = ctx.host
    directory = flags.get("patches") or (settings.init.get("patches") or {}).get("directory")
    patch_set = PatchSet.load(real_host, directory, ctx.release)
    if settings.init["dryRun"]:
        ctx.host = dryrun.DryRunHost(real_host, dryrun.make_dir(real_host, "init"))
    data = InitData(ctx, settings, flags, real_host)
    data.patches = patch_set
    skip = settings.init["skipPhases"]
    try:
        run_phases(PHASES, data, skip, only=only)
    finally:
        data.close()
    if data.dry_run:
        finish_dry_run(ctx, manifests.COMPONENTS)
    return 0


def finish_dry_run(ctx, components):
    """A dry run's closing lines: where its files are and the manifests it would have written."""
    ctx.out('[dryrun] Wrote certificates, kubeconfig files and control plane manifests to the "%s" directory'
            % ctx.host.directory)
    ctx.out("[dryrun] The certificates or kubeconfig files would not be printed due to their sensitive nature")
    ctx.out('[dryrun] Please examine the "%s" directory for details about what would be written'
            % ctx.host.directory)
    dryrun.print_manifests(ctx.out, ctx.host, components, manifests.manifest_path)
    ctx.out("[dryrun] Finished dry-running successfully. Above are the resources that would be created")
