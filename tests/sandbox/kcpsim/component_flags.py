# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command-line flags each emulated component has, per minor, so that one it does not have is refused as the
real binary refuses it (``unknown flag: --name``, and the component exits 1). Data, no I/O.

The names (long, without dashes) are those the Linux binaries register for 1.33, then what each later minor adds
and removes. The shared option packages (k8s.io/apiserver, component-base, controller-manager, cloud-provider,
apiextensions-apiserver, kube-aggregator) were read at their v0.33.0 - v0.36.0 tags and v0.37.0-beta.0; the
options in each binary's own code (cmd/<binary>/app/options) as of 1.33, with the removals confirmed later:
the kubelet's ``--pod-infra-container-image`` is gone from 1.35 (kubernetes/kubernetes#133779), with four
kubelet flags deprecated for removal around then. ``-h`` and ``-v`` are shorthands of ``help`` and ``v``; pflag's
normalizer reads ``_`` as ``-`` (kcpsim/flags.py does too).

A flag a binary gained in its own code after 1.33 is missing here and would be refused: add it to its minor's
``ADDED`` when one is found (tests/sandbox/DESIGN.md, "Component flags").
"""

_KUBE_APISERVER_1_33 = """
    admission-control-config-file advertise-address aggregator-reject-forwarding-redirect allow-metric-labels
    allow-metric-labels-manifest allow-privileged anonymous-auth api-audiences apiserver-count
    audit-log-batch-buffer-size audit-log-batch-max-size audit-log-batch-max-wait audit-log-batch-throttle-burst
    audit-log-batch-throttle-enable audit-log-batch-throttle-qps audit-log-compress audit-log-format
    audit-log-maxage audit-log-maxbackup audit-log-maxsize audit-log-mode audit-log-path
    audit-log-truncate-enabled audit-log-truncate-max-batch-size audit-log-truncate-max-event-size
    audit-log-version audit-policy-file audit-webhook-batch-buffer-size audit-webhook-batch-initial-backoff
    audit-webhook-batch-max-size audit-webhook-batch-max-wait audit-webhook-batch-throttle-burst
    audit-webhook-batch-throttle-enable audit-webhook-batch-throttle-qps audit-webhook-config-file
    audit-webhook-initial-backoff audit-webhook-mode audit-webhook-truncate-enabled
    audit-webhook-truncate-max-batch-size audit-webhook-truncate-max-event-size audit-webhook-version
    authentication-config authentication-kubeconfig authentication-skip-lookup
    authentication-token-webhook-cache-ttl authentication-token-webhook-config-file
    authentication-token-webhook-version authentication-tolerate-lookup-failure authorization-always-allow-paths
    authorization-config authorization-kubeconfig authorization-mode authorization-policy-file
    authorization-webhook-cache-authorized-ttl authorization-webhook-cache-unauthorized-ttl
    authorization-webhook-config-file authorization-webhook-version bind-address cert-dir client-ca-file
    contention-profiling cors-allowed-origins debug-socket-path default-not-ready-toleration-seconds
    default-unreachable-toleration-seconds default-watch-cache-size delete-collection-workers
    disable-admission-plugins disable-http2-serving disabled-metrics egress-selector-config-file
    emulated-version emulation-forward-compatible enable-admission-plugins enable-aggregator-routing
    enable-bootstrap-token-auth enable-garbage-collector enable-logs-handler enable-priority-and-fairness
    encryption-provider-config encryption-provider-config-automatic-reload endpoint-reconciler-type etcd-cafile
    etcd-certfile etcd-compaction-interval etcd-count-metric-poll-period etcd-db-metric-poll-interval
    etcd-healthcheck-timeout etcd-keyfile etcd-prefix etcd-readycheck-timeout etcd-servers
    etcd-servers-overrides event-ttl external-hostname feature-gates goaway-chance help
    http2-max-streams-per-connection identity-lease-duration-seconds identity-lease-renew-interval-seconds
    kubeconfig kubelet-certificate-authority kubelet-client-certificate kubelet-client-key
    kubelet-preferred-address-types kubelet-timeout kubernetes-service-node-port lease-reuse-duration-seconds
    livez-grace-period log-flush-frequency log-json-info-buffer-size log-json-split-stream
    log-text-info-buffer-size log-text-split-stream logging-format max-connection-bytes-per-sec
    max-mutating-requests-inflight max-requests-inflight min-request-timeout oidc-ca-file oidc-client-id
    oidc-groups-claim oidc-groups-prefix oidc-issuer-url oidc-required-claim oidc-signing-algs
    oidc-username-claim oidc-username-prefix peer-advertise-ip peer-advertise-port peer-ca-file
    permit-address-sharing permit-port-sharing profiling proxy-client-cert-file proxy-client-key-file
    request-timeout requestheader-allowed-names requestheader-client-ca-file requestheader-extra-headers-prefix
    requestheader-group-headers requestheader-uid-headers requestheader-username-headers runtime-config
    runtime-config-emulation-forward-compatible secure-port service-account-extend-token-expiration
    service-account-issuer service-account-jwks-uri service-account-key-file service-account-lookup
    service-account-max-token-expiration service-account-signing-endpoint service-account-signing-key-file
    service-cluster-ip-range service-node-port-range show-hidden-metrics-for-version shutdown-delay-duration
    shutdown-send-retry-after shutdown-watch-termination-grace-period storage-backend
    storage-initialization-timeout storage-media-type strict-transport-security-directives tls-cert-file
    tls-cipher-suites tls-min-version tls-private-key-file tls-sni-cert-key token-auth-file tracing-config-file
    v version vmodule watch-cache watch-cache-sizes
"""

_KUBE_CONTROLLER_MANAGER_1_33 = """
    allocate-node-cidrs allow-metric-labels allow-metric-labels-manifest allow-untagged-cloud
    attach-detach-reconcile-sync-period authentication-kubeconfig authentication-skip-lookup
    authentication-token-webhook-cache-ttl authentication-tolerate-lookup-failure
    authorization-always-allow-paths authorization-kubeconfig authorization-webhook-cache-authorized-ttl
    authorization-webhook-cache-unauthorized-ttl bind-address cert-dir cidr-allocator-type client-ca-file
    cloud-config cloud-provider cluster-cidr cluster-name cluster-signing-cert-file cluster-signing-duration
    cluster-signing-key-file cluster-signing-kube-apiserver-client-cert-file
    cluster-signing-kube-apiserver-client-key-file cluster-signing-kubelet-client-cert-file
    cluster-signing-kubelet-client-key-file cluster-signing-kubelet-serving-cert-file
    cluster-signing-kubelet-serving-key-file cluster-signing-legacy-unknown-cert-file
    cluster-signing-legacy-unknown-key-file concurrent-cron-job-syncs concurrent-daemonset-syncs
    concurrent-deployment-syncs concurrent-endpoint-syncs concurrent-ephemeralvolume-syncs concurrent-gc-syncs
    concurrent-horizontal-pod-autoscaler-syncs concurrent-job-syncs concurrent-namespace-syncs
    concurrent-rc-syncs concurrent-replicaset-syncs concurrent-resource-quota-syncs
    concurrent-selinux-warning-syncs concurrent-service-endpoint-syncs concurrent-service-syncs
    concurrent-serviceaccount-token-syncs concurrent-statefulset-syncs concurrent-ttl-after-finished-syncs
    concurrent-validating-admission-policy-status-syncs configure-cloud-routes contention-profiling
    controller-start-interval controllers disable-attach-detach-reconcile-sync disable-force-detach-on-timeout
    disable-http2-serving disabled-metrics emulated-version enable-dynamic-provisioning enable-garbage-collector
    enable-hostpath-provisioner enable-leader-migration endpoint-updates-batch-period
    endpointslice-updates-batch-period external-cloud-volume-plugin feature-gates flex-volume-plugin-dir help
    horizontal-pod-autoscaler-cpu-initialization-period horizontal-pod-autoscaler-downscale-stabilization
    horizontal-pod-autoscaler-initial-readiness-delay horizontal-pod-autoscaler-sync-period
    horizontal-pod-autoscaler-tolerance http2-max-streams-per-connection kube-api-burst kube-api-content-type
    kube-api-qps kubeconfig large-cluster-size-threshold leader-elect leader-elect-lease-duration
    leader-elect-renew-deadline leader-elect-resource-lock leader-elect-resource-name
    leader-elect-resource-namespace leader-elect-retry-period leader-migration-config
    legacy-service-account-token-clean-up-period log-flush-frequency log-json-info-buffer-size
    log-json-split-stream log-text-info-buffer-size log-text-split-stream logging-format master
    max-endpoints-per-slice min-resync-period mirroring-concurrent-service-endpoint-syncs
    mirroring-endpointslice-updates-batch-period mirroring-max-endpoints-per-subset namespace-sync-period
    node-cidr-mask-size node-cidr-mask-size-ipv4 node-cidr-mask-size-ipv6 node-eviction-rate
    node-monitor-grace-period node-monitor-period node-startup-grace-period node-sync-period
    permit-address-sharing permit-port-sharing profiling pv-recycler-increment-timeout-nfs
    pv-recycler-minimum-timeout-hostpath pv-recycler-minimum-timeout-nfs
    pv-recycler-pod-template-filepath-hostpath pv-recycler-pod-template-filepath-nfs
    pv-recycler-timeout-increment-hostpath pvclaimbinder-sync-period requestheader-allowed-names
    requestheader-client-ca-file requestheader-extra-headers-prefix requestheader-group-headers
    requestheader-uid-headers requestheader-username-headers resource-quota-sync-period root-ca-file
    route-reconciliation-period secondary-node-eviction-rate secure-port service-account-private-key-file
    service-cluster-ip-range show-hidden-metrics-for-version terminated-pod-gc-threshold tls-cert-file
    tls-cipher-suites tls-min-version tls-private-key-file tls-sni-cert-key unhealthy-zone-threshold
    use-service-account-credentials v version vmodule volume-host-allow-local-loopback volume-host-cidr-denylist
"""

_KUBE_SCHEDULER_1_33 = """
    allow-metric-labels allow-metric-labels-manifest authentication-kubeconfig authentication-skip-lookup
    authentication-token-webhook-cache-ttl authentication-tolerate-lookup-failure
    authorization-always-allow-paths authorization-kubeconfig authorization-webhook-cache-authorized-ttl
    authorization-webhook-cache-unauthorized-ttl bind-address cert-dir client-ca-file config
    contention-profiling disable-http2-serving disabled-metrics emulated-version feature-gates help
    http2-max-streams-per-connection kube-api-burst kube-api-content-type kube-api-qps kubeconfig leader-elect
    leader-elect-lease-duration leader-elect-renew-deadline leader-elect-resource-lock
    leader-elect-resource-name leader-elect-resource-namespace leader-elect-retry-period log-flush-frequency
    log-json-info-buffer-size log-json-split-stream log-text-info-buffer-size log-text-split-stream
    logging-format master permit-address-sharing permit-port-sharing pod-max-in-unschedulable-pods-duration
    profiling requestheader-allowed-names requestheader-client-ca-file requestheader-extra-headers-prefix
    requestheader-group-headers requestheader-uid-headers requestheader-username-headers secure-port
    show-hidden-metrics-for-version tls-cert-file tls-cipher-suites tls-min-version tls-private-key-file
    tls-sni-cert-key v version vmodule write-config-to
"""

_KUBELET_1_33 = """
    address allowed-unsafe-sysctls anonymous-auth application-metrics-count-limit authentication-token-webhook
    authentication-token-webhook-cache-ttl authorization-mode authorization-webhook-cache-authorized-ttl
    authorization-webhook-cache-unauthorized-ttl boot-id-file bootstrap-kubeconfig cert-dir cgroup-driver
    cgroup-root cgroups-per-qos client-ca-file cloud-config cloud-provider cluster-dns cluster-domain config
    config-dir container-hints container-log-max-files container-log-max-size container-log-max-workers
    container-log-monitor-interval container-runtime-endpoint containerd containerd-namespace
    contention-profiling cpu-cfs-quota cpu-cfs-quota-period cpu-manager-policy cpu-manager-policy-options
    cpu-manager-reconcile-period docker docker-env-metadata-whitelist docker-only docker-root docker-tls
    docker-tls-ca docker-tls-cert docker-tls-key enable-controller-attach-detach enable-debugging-handlers
    enable-load-reader enable-server enforce-node-allocatable event-burst event-qps event-storage-age-limit
    event-storage-event-limit eviction-hard eviction-max-pod-grace-period eviction-minimum-reclaim
    eviction-pressure-transition-period eviction-soft eviction-soft-grace-period exit-on-lock-contention
    experimental-allocatable-ignore-eviction experimental-mounter-path fail-cgroupv1 fail-swap-on feature-gates
    file-check-frequency global-housekeeping-interval hairpin-mode healthz-bind-address healthz-port help
    hostname-override housekeeping-interval http-check-frequency image-credential-provider-bin-dir
    image-credential-provider-config image-gc-high-threshold image-gc-low-threshold image-service-endpoint
    kernel-memcg-notification kube-api-burst kube-api-content-type kube-api-qps kube-reserved
    kube-reserved-cgroup kubeconfig kubelet-cgroups local-storage-capacity-isolation lock-file
    log-cadvisor-usage log-flush-frequency log-json-info-buffer-size log-json-split-stream
    log-text-info-buffer-size log-text-split-stream logging-format machine-id-file make-iptables-util-chains
    manifest-url manifest-url-header max-open-files max-pods maximum-dead-containers
    maximum-dead-containers-per-container memory-manager-policy minimum-container-ttl-duration
    minimum-image-ttl-duration node-ip node-labels node-status-max-images node-status-update-frequency
    oom-score-adj pod-cidr pod-infra-container-image pod-manifest-path pod-max-pids pods-per-core port
    protect-kernel-defaults provider-id qos-reserved read-only-port register-node register-schedulable
    register-with-taints registry-burst registry-qps reserved-cpus reserved-memory resolv-conf root-dir
    rotate-certificates rotate-server-certificates runonce runtime-cgroups runtime-request-timeout
    seccomp-default serialize-image-pulls storage-driver-buffer-duration storage-driver-db storage-driver-host
    storage-driver-password storage-driver-secure storage-driver-table storage-driver-user
    streaming-connection-idle-timeout sync-frequency system-cgroups system-reserved system-reserved-cgroup
    tls-cert-file tls-cipher-suites tls-min-version tls-private-key-file topology-manager-policy
    topology-manager-policy-options topology-manager-scope v version vmodule volume-plugin-dir
    volume-stats-agg-period
"""

BASE = {
    "kube-apiserver": frozenset(_KUBE_APISERVER_1_33.split()),
    "kube-controller-manager": frozenset(_KUBE_CONTROLLER_MANAGER_1_33.split()),
    "kube-scheduler": frozenset(_KUBE_SCHEDULER_1_33.split()),
    "kubelet": frozenset(_KUBELET_1_33.split()),
}
BASE_MINOR, LAST_MINOR = 33, 37

# What a minor adds: the component-base compatibility flag in 1.35, the TLS curve preferences in 1.36.
ADDED = {
    35: {
        "kube-apiserver": ("min-compatibility-version",),
        "kube-controller-manager": ("min-compatibility-version",),
        "kube-scheduler": ("min-compatibility-version",),
    },
    36: {
        "kube-apiserver": ("tls-curve-preferences",),
        "kube-controller-manager": ("tls-curve-preferences",),
        "kube-scheduler": ("tls-curve-preferences",),
    },
}

# What a minor removes.
REMOVED = {
    35: {
        "kubelet": ("cloud-config", "experimental-allocatable-ignore-eviction", "experimental-mounter-path",
                    "pod-infra-container-image", "register-schedulable"),
    },
}


def known(component, minor):
    """The flag names ``component`` has in 1.``minor``; None for a minor outside 1.33 - 1.37 (nothing is refused)."""
    if not BASE_MINOR <= minor <= LAST_MINOR:
        return None
    names = set(BASE[component])
    for step in range(BASE_MINOR + 1, minor + 1):
        names |= set(ADDED.get(step, {}).get(component, ()))
        names -= set(REMOVED.get(step, {}).get(component, ()))
    return frozenset(names)
