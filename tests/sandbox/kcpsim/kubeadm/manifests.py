# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The static pod manifests kubeadm writes into /etc/kubernetes/manifests. Pure, no I/O
(kubeadm-reference.md §1.3).

The rules:

* Every manifest: a v1 Pod in ``kube-system`` named for its component, labels ``component`` and
  ``tier: control-plane``, ``hostNetwork``, priority class ``system-node-critical`` (2000001000), seccomp
  ``RuntimeDefault``, ``imagePullPolicy`` from nodeRegistration, keys sorted as kubeadm's encoder writes them.
* ``command`` is the component's name followed by its flags as ``--name=value``, sorted by name; a user's
  ``extraArgs`` replaces a default of the same name and may repeat a name (v1beta4).
* Probes: liveness delay 10 s / timeout 15 s / period 10 s / 8 failures; readiness 0 / 15 / 1 / 3;
  startup 10 / 15 / 10 / 24 failures. From 1.34 every probe names its port ``probe-port`` and the container
  declares that port (``ports: [{containerPort, name: probe-port, protocol: TCP}]``); before, the number.
* etcd: annotation ``kubeadm.kubernetes.io/etcd.advertise-client-urls``; an ``init`` names only itself in
  ``--initial-cluster`` and leaves out ``--initial-cluster-state``; a join lists every member and adds
  ``--initial-cluster-state=existing``. Probes on 127.0.0.1:2381: liveness ``/livez``, readiness and startup
  ``/readyz``. Corruption check and watch progress: ``--experimental-initial-corrupt-check=true`` and
  ``--experimental-watch-progress-notify-interval=5s`` for etcd 3.5, ``--feature-gates=InitialCorruptCheck=true``
  and ``--watch-progress-notify-interval=5s`` for etcd 3.6+ (release.py says when).
* kube-apiserver: annotation ``kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint``, probes
  HTTPS on the advertise address and bind port (live ``/livez``, ready ``/readyz``, startup ``/livez``).
* kube-controller-manager: liveness and startup ``/healthz`` over HTTPS on 127.0.0.1:10257; kube-scheduler:
  liveness and startup ``/livez``, readiness ``/readyz`` on 127.0.0.1:10259.
"""

from __future__ import annotations

import posixpath

import yaml

from kcpsim.kubeadm import images

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
CONTROL_PLANE_COMPONENTS = COMPONENTS[1:]
MANIFEST_DIR = "/etc/kubernetes/manifests"
ETCD_ENDPOINT_ANNOTATION = "kubeadm.kubernetes.io/etcd.advertise-client-urls"
APISERVER_ENDPOINT_ANNOTATION = "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"
KUBERNETES_DIR = "/etc/kubernetes"


def join_host_port(host, port):
    return "[%s]:%s" % (host, port) if ":" in host else "%s:%s" % (host, port)


def build_command(component, defaults, extra_args):
    """``[component, --k=v, ...]``: defaults overridden by name, user duplicates kept, sorted by name."""
    overridden = {arg["name"] for arg in extra_args}
    args = [(name, value) for name, value in defaults.items() if name not in overridden]
    args += [(arg["name"], arg["value"]) for arg in extra_args]
    args.sort(key=lambda pair: pair[0])  # stable: duplicates keep the user's order
    return [component] + ["--%s=%s" % pair for pair in args]


def _probe(host, path, port, scheme, delay, timeout, period, failures):
    probe = {
        "failureThreshold": failures,
        "httpGet": {"host": host, "path": path, "port": port, "scheme": scheme},
        "periodSeconds": period,
        "timeoutSeconds": timeout,
    }
    if delay:
        probe["initialDelaySeconds"] = delay
    return probe


def _liveness(host, path, port, scheme):
    return _probe(host, path, port, scheme, 10, 15, 10, 8)


def _readiness(host, path, port, scheme):
    return _probe(host, path, port, scheme, 0, 15, 1, 3)


def _startup(host, path, port, scheme):
    return _probe(host, path, port, scheme, 10, 15, 10, 24)


def _host_path_volume(name, path, path_type):
    return {"hostPath": {"path": path, "type": path_type}, "name": name}


def _mount(name, path, read_only):
    mount = {"mountPath": path, "name": name}
    if read_only:
        mount["readOnly"] = True
    return mount


_CA_VOLUMES = (
    ("ca-certs", "/etc/ssl/certs"),
    ("etc-ca-certificates", "/etc/ca-certificates"),
    ("usr-local-share-ca-certificates", "/usr/local/share/ca-certificates"),
    ("usr-share-ca-certificates", "/usr/share/ca-certificates"),
)


PROBE_PORT_NAME = "probe-port"


def _probes(release, port, probes):
    """``probes`` ({kind: probe}) with their port named as ``release`` names it, and the container's ``ports``."""
    if not release.probes_use_named_port:
        return dict(probes)
    out = {}
    for kind, probe in probes.items():
        out[kind] = dict(probe, httpGet=dict(probe["httpGet"], port=PROBE_PORT_NAME))
    out["ports"] = [{"containerPort": port, "name": PROBE_PORT_NAME, "protocol": "TCP"}]
    return out


def _pod(component, image, pull_policy, command, probes, resources, volumes, annotations, extra_envs):
    """A static pod; ``volumes`` = [(name, hostPath, mountPath, type, readOnly)]."""
    container = {
        "command": command,
        "image": image,
        "imagePullPolicy": pull_policy,
        "name": component,
        "resources": {"requests": resources},
        "volumeMounts": sorted((_mount(v[0], v[2], v[4]) for v in volumes), key=lambda m: m["mountPath"]),
    }
    container.update(probes)
    if extra_envs:
        container["env"] = [dict(env) for env in extra_envs]
    metadata = {
        "creationTimestamp": None,
        "labels": {"component": component, "tier": "control-plane"},
        "name": component,
        "namespace": "kube-system",
    }
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": [container],
            "hostNetwork": True,
            "priority": 2000001000,
            "priorityClassName": "system-node-critical",
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "volumes": sorted((_host_path_volume(v[0], v[1], v[3]) for v in volumes), key=lambda v: v["name"]),
        },
        "status": {},
    }


def _user_volumes(component_cfg):
    out = []
    for vol in component_cfg.get("extraVolumes") or []:
        out.append((vol.get("name"), vol.get("hostPath"), vol.get("mountPath"), vol.get("pathType") or "",
                    bool(vol.get("readOnly"))))
    return out


def etcd_pod(cluster, release, node_name, advertise_address, pull_policy, initial_cluster=None):
    """etcd.yaml. ``initial_cluster``: [(name, peerURL)] of every member for a join; None for ``init``."""
    local = cluster["etcd"]["local"]
    pki = cluster["certificatesDir"]
    adv = "[%s]" % advertise_address if ":" in advertise_address else advertise_address
    loopback = "[::1]" if ":" in advertise_address else "127.0.0.1"
    peer_url = "https://%s:2380" % adv
    client_url = "https://%s:2379" % adv
    defaults = {
        "name": node_name,
        "listen-client-urls": "https://%s:2379,%s" % (loopback, client_url),
        "advertise-client-urls": client_url,
        "listen-peer-urls": peer_url,
        "initial-advertise-peer-urls": peer_url,
        "data-dir": local["dataDir"],
        "listen-metrics-urls": "http://%s:2381" % loopback,
        "cert-file": pki + "/etcd/server.crt",
        "key-file": pki + "/etcd/server.key",
        "trusted-ca-file": pki + "/etcd/ca.crt",
        "client-cert-auth": "true",
        "peer-cert-file": pki + "/etcd/peer.crt",
        "peer-key-file": pki + "/etcd/peer.key",
        "peer-trusted-ca-file": pki + "/etcd/ca.crt",
        "peer-client-cert-auth": "true",
        "snapshot-count": "10000",
    }
    image = images.etcd_image(cluster, release)
    if release.etcd_uses_36_flags(image.rpartition(":")[2]):
        defaults.update({"feature-gates": "InitialCorruptCheck=true", "watch-progress-notify-interval": "5s"})
    else:
        defaults.update({"experimental-initial-corrupt-check": "true",
                         "experimental-watch-progress-notify-interval": "5s"})
    if initial_cluster is None:
        defaults["initial-cluster"] = "%s=%s" % (node_name, peer_url)
    else:
        defaults["initial-cluster"] = ",".join("%s=%s" % pair for pair in initial_cluster)
        defaults["initial-cluster-state"] = "existing"
    probe_host = loopback.strip("[]")
    probes = _probes(release, 2381, {
        "livenessProbe": _liveness(probe_host, "/livez", 2381, "HTTP"),
        "readinessProbe": _readiness(probe_host, "/readyz", 2381, "HTTP"),
        "startupProbe": _startup(probe_host, "/readyz", 2381, "HTTP"),
    })
    volumes = [
        ("etcd-data", local["dataDir"], local["dataDir"], "DirectoryOrCreate", False),
        ("etcd-certs", pki + "/etcd", pki + "/etcd", "DirectoryOrCreate", False),
    ]
    return _pod("etcd", image, pull_policy,
                build_command("etcd", defaults, local.get("extraArgs") or []), probes,
                {"cpu": "100m", "memory": "100Mi"}, volumes, {ETCD_ENDPOINT_ANNOTATION: client_url},
                local.get("extraEnvs"))


def apiserver_pod(cluster, release, advertise_address, bind_port, pull_policy):
    pki = cluster["certificatesDir"]
    defaults = {
        "advertise-address": advertise_address,
        "allow-privileged": "true",
        "authorization-mode": "Node,RBAC",
        "client-ca-file": pki + "/ca.crt",
        "enable-admission-plugins": "NodeRestriction",
        "enable-bootstrap-token-auth": "true",
        "kubelet-client-certificate": pki + "/apiserver-kubelet-client.crt",
        "kubelet-client-key": pki + "/apiserver-kubelet-client.key",
        "kubelet-preferred-address-types": "InternalIP,ExternalIP,Hostname",
        "proxy-client-cert-file": pki + "/front-proxy-client.crt",
        "proxy-client-key-file": pki + "/front-proxy-client.key",
        "requestheader-allowed-names": "front-proxy-client",
        "requestheader-client-ca-file": pki + "/front-proxy-ca.crt",
        "requestheader-extra-headers-prefix": "X-Remote-Extra-",
        "requestheader-group-headers": "X-Remote-Group",
        "requestheader-username-headers": "X-Remote-User",
        "secure-port": str(bind_port),
        "service-account-issuer": "https://kubernetes.default.svc." + cluster["networking"]["dnsDomain"],
        "service-account-key-file": pki + "/sa.pub",
        "service-account-signing-key-file": pki + "/sa.key",
        "service-cluster-ip-range": cluster["networking"]["serviceSubnet"],
        "tls-cert-file": pki + "/apiserver.crt",
        "tls-private-key-file": pki + "/apiserver.key",
    }
    external = cluster["etcd"].get("external")
    if external:
        defaults["etcd-servers"] = ",".join(external["endpoints"])
        for flag, key in (("etcd-cafile", "caFile"), ("etcd-certfile", "certFile"), ("etcd-keyfile", "keyFile")):
            if external.get(key):
                defaults[flag] = external[key]
    else:
        defaults["etcd-servers"] = "https://127.0.0.1:2379"
        defaults["etcd-cafile"] = pki + "/etcd/ca.crt"
        defaults["etcd-certfile"] = pki + "/apiserver-etcd-client.crt"
        defaults["etcd-keyfile"] = pki + "/apiserver-etcd-client.key"
    probes = _probes(release, bind_port, {
        "livenessProbe": _liveness(advertise_address, "/livez", bind_port, "HTTPS"),
        "readinessProbe": _readiness(advertise_address, "/readyz", bind_port, "HTTPS"),
        "startupProbe": _startup(advertise_address, "/livez", bind_port, "HTTPS"),
    })
    volumes = [(name, path, path, "DirectoryOrCreate", True) for name, path in _CA_VOLUMES]
    volumes.append(("k8s-certs", pki, pki, "DirectoryOrCreate", True))
    return _component_pod(cluster, "kube-apiserver", "apiServer", pull_policy, defaults, probes, "250m", volumes,
                          {APISERVER_ENDPOINT_ANNOTATION: join_host_port(advertise_address, bind_port)})


def _component_pod(cluster, name, section, pull_policy, defaults, probes, cpu, volumes, annotations=None):
    """The static pod of control plane component ``name``: its image, its ``defaults`` flags and ``volumes``
    with the user's extraArgs, extraVolumes and extraEnvs from ``cluster[section]`` added."""
    component = cluster[section]
    return _pod(name, images.component_image(cluster, name), pull_policy,
                build_command(name, defaults, component.get("extraArgs") or []), probes, {"cpu": cpu},
                volumes + _user_volumes(component), annotations, component.get("extraEnvs"))


def _controller_flags(kubeconfig):
    """The flags kube-controller-manager and kube-scheduler get alike: local health port, leader election, and
    their kubeconfig for the API, authentication and authorization."""
    return {
        "bind-address": "127.0.0.1",
        "leader-elect": "true",
        "kubeconfig": kubeconfig,
        "authentication-kubeconfig": kubeconfig,
        "authorization-kubeconfig": kubeconfig,
    }


def controller_manager_pod(cluster, release, pull_policy):
    pki = cluster["certificatesDir"]
    kubeconfig = posixpath.join(KUBERNETES_DIR, "controller-manager.conf")
    defaults = _controller_flags(kubeconfig)
    defaults.update({
        "client-ca-file": pki + "/ca.crt",
        "requestheader-client-ca-file": pki + "/front-proxy-ca.crt",
        "root-ca-file": pki + "/ca.crt",
        "service-account-private-key-file": pki + "/sa.key",
        "cluster-signing-cert-file": pki + "/ca.crt",
        "cluster-signing-key-file": pki + "/ca.key",
        "use-service-account-credentials": "true",
        "controllers": "*,bootstrapsigner,tokencleaner",
        "cluster-name": cluster["clusterName"],
    })
    net = cluster["networking"]
    if net.get("podSubnet"):
        defaults["allocate-node-cidrs"] = "true"
        defaults["cluster-cidr"] = net["podSubnet"]
        if net.get("serviceSubnet"):
            defaults["service-cluster-ip-range"] = net["serviceSubnet"]
    # kube-controller-manager has no readiness probe and stays on /healthz "until it supports /livez".
    probes = _probes(release, 10257, {
        "livenessProbe": _liveness("127.0.0.1", "/healthz", 10257, "HTTPS"),
        "startupProbe": _startup("127.0.0.1", "/healthz", 10257, "HTTPS"),
    })
    volumes = [(name, path, path, "DirectoryOrCreate", True) for name, path in _CA_VOLUMES]
    volumes += [
        ("k8s-certs", pki, pki, "DirectoryOrCreate", True),
        ("kubeconfig", kubeconfig, kubeconfig, "FileOrCreate", True),
    ]
    if release.minor < 36:  # 1.36 stopped mounting the flex-volume directory
        volumes.append(("flexvolume-dir", "/usr/libexec/kubernetes/kubelet-plugins/volume/exec",
                        "/usr/libexec/kubernetes/kubelet-plugins/volume/exec", "DirectoryOrCreate", False))
    return _component_pod(cluster, "kube-controller-manager", "controllerManager", pull_policy, defaults, probes,
                          "200m", volumes)


def scheduler_pod(cluster, release, pull_policy):
    kubeconfig = posixpath.join(KUBERNETES_DIR, "scheduler.conf")
    defaults = _controller_flags(kubeconfig)
    probes = _probes(release, 10259, {
        "livenessProbe": _liveness("127.0.0.1", "/livez", 10259, "HTTPS"),
        "readinessProbe": _readiness("127.0.0.1", "/readyz", 10259, "HTTPS"),
        "startupProbe": _startup("127.0.0.1", "/livez", 10259, "HTTPS"),
    })
    volumes = [("kubeconfig", kubeconfig, kubeconfig, "FileOrCreate", True)]
    return _component_pod(cluster, "kube-scheduler", "scheduler", pull_policy, defaults, probes, "100m", volumes)


def control_plane_pods(cluster, release, advertise_address, bind_port, pull_policy):
    """``{component: pod}`` for kube-apiserver, kube-controller-manager and kube-scheduler."""
    return {
        "kube-apiserver": apiserver_pod(cluster, release, advertise_address, bind_port, pull_policy),
        "kube-controller-manager": controller_manager_pod(cluster, release, pull_policy),
        "kube-scheduler": scheduler_pod(cluster, release, pull_policy),
    }


def render(pod):
    """The manifest's YAML text, keys sorted, long lines unfolded."""
    return yaml.safe_dump(pod, sort_keys=True, default_flow_style=False, width=1 << 20)


def load(text):
    """A manifest's Pod dict from its YAML text."""
    pod = yaml.safe_load(text)
    if not isinstance(pod, dict) or pod.get("kind") != "Pod":
        raise ValueError("not a static Pod manifest")
    return pod


def manifest_path(component, manifest_dir=MANIFEST_DIR):
    return posixpath.join(manifest_dir, component + ".yaml")


def image_tag(pod):
    """The tag of a manifest's first container image (``3.5.15-0``), or "" when it has none."""
    image = pod["spec"]["containers"][0]["image"]
    name, tag = image.rpartition(":")[::2]
    return tag if name and "/" not in tag else ""


def command_flags(pod):
    """``{flag: value}`` of a manifest's command (the last of repeated flags wins)."""
    out = {}
    for item in pod["spec"]["containers"][0].get("command", [])[1:]:
        if item.startswith("--"):
            name, value = item[2:].partition("=")[::2]
            out[name] = value
    return out
