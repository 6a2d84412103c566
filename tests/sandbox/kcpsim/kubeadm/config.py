# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm's configuration files: which documents a release reads, how they decode, their defaults, how the
command-line flags combine with them, and how ClusterConfiguration is stored. Pure, no I/O.

The rules (kubeadm-reference.md §6, §1.6, §1.7):

* A file holds YAML documents. ``kubeadm.k8s.io/v1beta4`` is read by every release; v1beta3 by 1.33 – 1.36
  (deprecated, with a warning) and refused by 1.37 with advice to migrate with kubeadm v1.36, as v1beta2 and
  older are refused with advice to migrate with v1.22 (release.py). ResetConfiguration and
  UpgradeConfiguration exist only in v1beta4. KubeletConfiguration and KubeProxyConfiguration documents are
  passed through; documents of other kinds are ignored with a warning.
* Decoding is strict about types (a v1beta4 ``extraArgs`` written as a map is a decode error) and lenient
  about names: an unknown field only warns.
* ``extraArgs`` / ``kubeletExtraArgs`` are string maps in v1beta3 and lists of ``{name, value}`` in v1beta4;
  internally they are always lists.
* ``--config`` may not be mixed with flags other than ``--ignore-preflight-errors``, ``--dry-run``,
  ``--kubeconfig``, ``--node-name``, ``--upload-certs``, ``--patches``, ``--v`` and ``--skip-*``.
* Validation collects every error, each naming its field and the rule broken.
* ``kubeadm-config`` keeps cluster-wide fields only, as v1beta4, keys sorted.
* A feature gate the release does not know is refused, and so is a locked (GA) gate set against its value.
"""

from __future__ import annotations

import copy
import ipaddress
import re

import yaml

from kcpsim.kubeadm import durations
from kcpsim.kubeadm.release import V1BETA4, parse_version

DEFAULT_CRI_SOCKET = "unix:///var/run/containerd/containerd.sock"
DEFAULT_SERVICE_SUBNET = "10.96.0.0/12"
DEFAULT_DNS_DOMAIN = "cluster.local"
DEFAULT_CERT_DIR = "/etc/kubernetes/pki"
DEFAULT_IMAGE_REPOSITORY = "registry.k8s.io"
DEFAULT_ETCD_DATA_DIR = "/var/lib/etcd"
DEFAULT_BIND_PORT = 6443
DEFAULT_TOKEN_TTL = 24 * 3600.0
DEFAULT_TOKEN_USAGES = ["signing", "authentication"]
DEFAULT_TOKEN_GROUPS = ["system:bootstrappers:kubeadm:default-node-token"]
CERT_VALIDITY = 8760 * 3600.0
CA_CERT_VALIDITY = 87600 * 3600.0
DEFAULT_TIMEOUTS = {
    "controlPlaneComponentHealthCheck": 240.0,
    "kubeletHealthCheck": 240.0,
    "kubernetesAPICall": 60.0,
    "etcdAPICall": 120.0,
    "tlsBootstrap": 300.0,
    "discovery": 300.0,
    "upgradeManifests": 300.0,
}

KUBELET_CONFIG_API = "kubelet.config.k8s.io/v1beta1"
KUBEPROXY_CONFIG_API = "kubeproxy.config.k8s.io/v1alpha1"

FLAGS_ALLOWED_WITH_CONFIG = ("config", "ignore-preflight-errors", "dry-run", "kubeconfig", "node-name",
                             "upload-certs", "patches", "v", "rootfs")

_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
_CA_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
_CERT_KEY = re.compile(r"^[0-9a-fA-F]{64}$")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(r"^%s(\.%s)*$" % (_DNS_LABEL, _DNS_LABEL))
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")


class ConfigLoadError(Exception):
    """The file could not be decoded (kubeadm exits 1)."""


class FieldError:
    """One validation error: ``field: Invalid value: "x": rule`` (or Required / Unsupported value)."""

    def __init__(self, field, value, rule, kind="Invalid value"):
        self.field, self.value, self.rule, self.kind = field, value, rule, kind

    def __str__(self):
        if self.kind == "Required value":
            return "%s: Required value: %s" % (self.field, self.rule)
        return '%s: %s: %s: %s' % (self.field, self.kind, _quote(self.value), self.rule)

    def __repr__(self):
        return "FieldError(%s)" % self


class ValidationError(Exception):
    """Validation failed (kubeadm exits 3): every error at once."""

    def __init__(self, errors):
        super().__init__("[" + ", ".join(str(e) for e in errors) + "]")
        self.errors = list(errors)


def _quote(value):
    if isinstance(value, str):
        return '"%s"' % value
    return str(value).lower() if isinstance(value, bool) else str(value)


# ---------------------------------------------------------------------------------------------- schema
# A schema maps field names to: a type name; a nested schema (dict); ("list", item schema); or
# ("v3" | "v4", spec) for a field only that API version has.

_ARGS = "args"
_LOCAL_ENDPOINT = {"advertiseAddress": "str", "bindPort": "int"}
_CONTROL_PLANE_COMPONENT = {
    "extraArgs": _ARGS,
    "extraVolumes": ("list", "any"),
    "extraEnvs": ("v4", ("list", "any")),
}
_NODE_REGISTRATION = {
    "name": "str",
    "criSocket": "str",
    "taints": ("list", {"key": "str", "value": "str", "effect": "str", "timeAdded": "any"}),
    "kubeletExtraArgs": _ARGS,
    "ignorePreflightErrors": "strlist",
    "imagePullPolicy": "str",
    "imagePullSerial": ("v4", "bool"),
}
_TIMEOUTS = ("v4", {name: "duration" for name in DEFAULT_TIMEOUTS})
_COMMON_TOP = {"apiVersion": "str", "kind": "str"}

SCHEMAS = {
    "ClusterConfiguration": dict(_COMMON_TOP, **{
        "etcd": {
            "local": {
                "imageRepository": "str", "imageTag": "str", "dataDir": "str", "extraArgs": _ARGS,
                "extraEnvs": ("v4", ("list", "any")), "serverCertSANs": "strlist", "peerCertSANs": "strlist",
            },
            "external": {"endpoints": "strlist", "caFile": "str", "certFile": "str", "keyFile": "str"},
        },
        "networking": {"serviceSubnet": "str", "podSubnet": "str", "dnsDomain": "str"},
        "kubernetesVersion": "str",
        "controlPlaneEndpoint": "str",
        "apiServer": dict(_CONTROL_PLANE_COMPONENT, certSANs="strlist", timeoutForControlPlane=("v3", "duration")),
        "controllerManager": _CONTROL_PLANE_COMPONENT,
        "scheduler": _CONTROL_PLANE_COMPONENT,
        "dns": {"imageRepository": "str", "imageTag": "str", "disabled": ("v4", "bool")},
        "proxy": ("v4", {"disabled": "bool"}),
        "certificatesDir": "str",
        "imageRepository": "str",
        "featureGates": "boolmap",
        "clusterName": "str",
        "encryptionAlgorithm": ("v4", "str"),
        "certificateValidityPeriod": ("v4", "duration"),
        "caCertificateValidityPeriod": ("v4", "duration"),
    }),
    "InitConfiguration": dict(_COMMON_TOP, **{
        "bootstrapTokens": ("list", {
            "token": "str", "description": "str", "ttl": "duration", "expires": "str",
            "usages": "strlist", "groups": "strlist",
        }),
        "nodeRegistration": _NODE_REGISTRATION,
        "localAPIEndpoint": _LOCAL_ENDPOINT,
        "certificateKey": "str",
        "skipPhases": "strlist",
        "patches": {"directory": "str"},
        "dryRun": ("v4", "bool"),
        "timeouts": _TIMEOUTS,
    }),
    "JoinConfiguration": dict(_COMMON_TOP, **{
        "nodeRegistration": _NODE_REGISTRATION,
        "caCertPath": "str",
        "discovery": {
            "bootstrapToken": {
                "token": "str", "apiServerEndpoint": "str", "caCertHashes": "strlist",
                "unsafeSkipCAVerification": "bool",
            },
            "file": {"kubeConfigPath": "str"},
            "tlsBootstrapToken": "str",
            "timeout": ("v3", "duration"),
        },
        "controlPlane": {"localAPIEndpoint": _LOCAL_ENDPOINT, "certificateKey": "str"},
        "skipPhases": "strlist",
        "patches": {"directory": "str"},
        "dryRun": ("v4", "bool"),
        "timeouts": _TIMEOUTS,
    }),
    "ResetConfiguration": dict(_COMMON_TOP, **{
        "certificatesDir": "str", "cleanupTmpDir": "bool", "criSocket": "str", "dryRun": "bool",
        "force": "bool", "ignorePreflightErrors": "strlist", "skipPhases": "strlist",
        "unmountFlags": "strlist", "timeouts": _TIMEOUTS,
    }),
    "UpgradeConfiguration": dict(_COMMON_TOP, **{
        "apply": {
            "kubernetesVersion": "str", "allowExperimentalUpgrades": "bool", "allowRCUpgrades": "bool",
            "certificateRenewal": "bool", "dryRun": "bool", "etcdUpgrade": "bool", "forceUpgrade": "bool",
            "ignorePreflightErrors": "strlist", "patches": {"directory": "str"}, "printConfig": "bool",
            "skipPhases": "strlist", "imagePullPolicy": "str", "imagePullSerial": "bool",
        },
        "node": {
            "certificateRenewal": "bool", "dryRun": "bool", "etcdUpgrade": "bool",
            "ignorePreflightErrors": "strlist", "patches": {"directory": "str"}, "skipPhases": "strlist",
            "imagePullPolicy": "str", "imagePullSerial": "bool",
        },
        "plan": {
            "kubernetesVersion": "str", "allowExperimentalUpgrades": "bool", "allowRCUpgrades": "bool",
            "dryRun": "bool", "ignorePreflightErrors": "strlist", "printConfig": "bool",
        },
        "diff": {"kubernetesVersion": "str", "contextLines": "int"},
        "timeouts": _TIMEOUTS,
    }),
}
V1BETA4_ONLY_KINDS = ("ResetConfiguration", "UpgradeConfiguration")


def _duration_fields(spec, key=""):
    if isinstance(spec, tuple) and spec[0] in ("v3", "v4", "list"):
        return _duration_fields(spec[1], key)
    if isinstance(spec, dict):
        return set().union(*[_duration_fields(sub, name) for name, sub in spec.items()])
    return {key} if spec == "duration" else set()


# The names of the fields that hold a Go duration, in any document (decoded to seconds).
DURATION_FIELDS = frozenset().union(*[_duration_fields(spec) for spec in SCHEMAS.values()])


def _type_name(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


class _Decoder:
    """Decodes one document against its schema, collecting unknown-field warnings and type errors."""

    def __init__(self, api_version, kind):
        self.v4 = api_version == V1BETA4
        self.kind = kind
        self.warnings = []
        self.errors = []

    def _bad(self, path, value, expected):
        self.errors.append('%s.%s: cannot unmarshal %s into a field of type %s'
                           % (self.kind, path, _type_name(value), expected))

    def decode(self, value, spec, path):
        if isinstance(spec, tuple) and spec[0] in ("v3", "v4"):
            spec = spec[1]
        if value is None:
            return None
        if isinstance(spec, dict):
            if not isinstance(value, dict):
                self._bad(path, value, "object")
                return None
            out = {}
            for key, item in value.items():
                sub = "%s.%s" % (path, key) if path else str(key)
                field = spec.get(key)
                if field is None or (isinstance(field, tuple) and field[0] == ("v3" if self.v4 else "v4")):
                    self.warnings.append('strict decoding error: unknown field "%s"' % sub)
                    continue
                out[key] = self.decode(item, field, sub)
            return out
        if isinstance(spec, tuple) and spec[0] == "list":
            if not isinstance(value, list):
                self._bad(path, value, "array")
                return None
            return [self.decode(item, spec[1], "%s[%d]" % (path, i)) for i, item in enumerate(value)]
        return getattr(self, "_" + spec)(value, path)

    def _any(self, value, path):
        return value

    def _str(self, value, path):
        if not isinstance(value, str):
            self._bad(path, value, "string")
            return None
        return value

    def _int(self, value, path):
        if isinstance(value, bool) or not isinstance(value, int):
            self._bad(path, value, "int32")
            return None
        return value

    def _bool(self, value, path):
        if not isinstance(value, bool):
            self._bad(path, value, "bool")
            return None
        return value

    def _strlist(self, value, path):
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self._bad(path, value, "[]string")
            return None
        return list(value)

    def _boolmap(self, value, path):
        if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
            self._bad(path, value, "map[string]bool")
            return None
        return dict(value)

    def _duration(self, value, path):
        if not isinstance(value, str):
            self._bad(path, value, "Duration")
            return None
        try:
            return durations.parse(value)
        except ValueError as exc:
            self.errors.append("%s.%s: %s" % (self.kind, path, exc))
            return None

    def _args(self, value, path):
        if self.v4:
            if not isinstance(value, list):
                self._bad(path, value, "[]v1beta4.Arg")
                return None
            out = []
            for i, item in enumerate(value):
                if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                        or not isinstance(item.get("value", ""), str):
                    self._bad("%s[%d]" % (path, i), item, "v1beta4.Arg {name, value}")
                    continue
                out.append({"name": item["name"], "value": item.get("value", "")})
            return out
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self._bad(path, value, "map[string]string")
            return None
        return [{"name": k, "value": value[k]} for k in sorted(value)]


class Documents:
    """The decoded content of one ``--config`` file."""

    def __init__(self):
        self.by_kind = {}        # kind -> normalized dict (kubeadm kinds)
        self.api_version = {}    # kind -> apiVersion it was written in
        self.kubelet = None      # KubeletConfiguration document, as written
        self.kubeproxy = None    # KubeProxyConfiguration document, as written
        self.warnings = []

    def get(self, kind):
        return self.by_kind.get(kind)


def read_documents(text, release):
    """Decode a configuration file for ``release``; ConfigLoadError for what kubeadm refuses to read."""
    try:
        raw_docs = [doc for doc in yaml.safe_load_all(text or "") if doc is not None]
    except yaml.YAMLError as exc:
        raise ConfigLoadError("error converting YAML to JSON: %s" % str(exc).replace("\n", " "))
    docs = Documents()
    errors = []
    for raw in raw_docs:
        if not isinstance(raw, dict):
            raise ConfigLoadError("invalid configuration: each YAML document must be a mapping")
        api_version, kind = raw.get("apiVersion"), raw.get("kind")
        if not api_version or not kind:
            raise ConfigLoadError("invalid configuration for GroupVersionKind %s/%s: kind and apiVersion "
                                  "are mandatory information that must be specified" % (api_version, kind))
        if api_version == KUBELET_CONFIG_API and kind == "KubeletConfiguration":
            docs.kubelet = raw
            continue
        if api_version == KUBEPROXY_CONFIG_API and kind == "KubeProxyConfiguration":
            docs.kubeproxy = raw
            continue
        group, version = str(api_version).partition("/")[::2]
        if group != "kubeadm.k8s.io" or kind not in SCHEMAS:
            docs.warnings.append("[config] WARNING: Ignored configuration document with GroupVersionKind "
                                 "%s, Kind=%s" % (api_version, kind))
            continue
        migrate_with = release.migrate_with(api_version)
        if migrate_with:
            raise ConfigLoadError(
                'your configuration file uses an old API spec: "%s" (kind: "%s"). Please use kubeadm %s '
                "instead and run 'kubeadm config migrate --old-config old.yaml --new-config new.yaml', which "
                "will write the new, similar spec using a newer API version." % (api_version, kind, migrate_with))
        if api_version not in release.accepted_config_versions or \
                (kind in V1BETA4_ONLY_KINDS and api_version != V1BETA4):
            raise ConfigLoadError('no kind "%s" is registered for version "%s" in scheme '
                                  '"k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/scheme/scheme.go:31"'
                                  % (kind, api_version))
        if kind in docs.by_kind:
            raise ConfigLoadError('invalid configuration: kind "%s" is specified twice in YAML file' % kind)
        if api_version in release.deprecated_config_versions:
            docs.warnings.append('W [config] The "%s" API is deprecated and will be removed in a future '
                                 "release: please use 'kubeadm config migrate --old-config old-config-file "
                                 "--new-config new-config-file', which will write the new, similar spec "
                                 "using a newer API version." % api_version)
        decoder = _Decoder(api_version, kind)
        decoded = decoder.decode(raw, SCHEMAS[kind], "")
        docs.warnings.extend(decoder.warnings)
        errors.extend(decoder.errors)
        decoded.pop("apiVersion", None)
        decoded.pop("kind", None)
        docs.by_kind[kind] = decoded
        docs.api_version[kind] = api_version
    if errors:
        raise ConfigLoadError("; ".join(errors))
    return docs


# -------------------------------------------------------------------------------------------- defaults

def _set_default(mapping, key, value):
    if mapping.get(key) in (None, ""):
        mapping[key] = value
    return mapping[key]


def _sub(mapping, key):
    if not isinstance(mapping.get(key), dict):
        mapping[key] = {}
    return mapping[key]


def default_cluster(cluster, kubeadm_version):
    """ClusterConfiguration with kubeadm's defaults filled in (kubernetesVersion defaults to kubeadm's own)."""
    cfg = copy.deepcopy(cluster or {})
    _set_default(cfg, "kubernetesVersion", str(kubeadm_version))
    _set_default(cfg, "controlPlaneEndpoint", "")
    _set_default(cfg, "clusterName", "kubernetes")
    _set_default(cfg, "certificatesDir", DEFAULT_CERT_DIR)
    _set_default(cfg, "imageRepository", DEFAULT_IMAGE_REPOSITORY)
    _set_default(cfg, "encryptionAlgorithm", "")  # empty: not chosen yet (certplan.key_algorithm decides)
    _set_default(cfg, "certificateValidityPeriod", CERT_VALIDITY)
    _set_default(cfg, "caCertificateValidityPeriod", CA_CERT_VALIDITY)
    net = _sub(cfg, "networking")
    _set_default(net, "serviceSubnet", DEFAULT_SERVICE_SUBNET)
    _set_default(net, "dnsDomain", DEFAULT_DNS_DOMAIN)
    _set_default(net, "podSubnet", "")
    etcd = _sub(cfg, "etcd")
    if not etcd.get("external"):
        etcd.pop("external", None)
        local = _sub(etcd, "local")
        _set_default(local, "dataDir", DEFAULT_ETCD_DATA_DIR)
        for key in ("extraArgs", "extraEnvs", "serverCertSANs", "peerCertSANs"):
            _set_default(local, key, [])
    for component in ("apiServer", "controllerManager", "scheduler"):
        comp = _sub(cfg, component)
        for key in ("extraArgs", "extraVolumes", "extraEnvs"):
            _set_default(comp, key, [])
    _set_default(cfg["apiServer"], "certSANs", [])
    _set_default(cfg["apiServer"], "timeoutForControlPlane", DEFAULT_TIMEOUTS["controlPlaneComponentHealthCheck"])
    _sub(cfg, "dns")
    _sub(cfg, "proxy")
    _set_default(cfg, "featureGates", {})
    return cfg


def _node_registration(raw, flags, hostname, control_plane):
    """The file's nodeRegistration with --node-name and --cri-socket over it, defaulted, and
    --ignore-preflight-errors added to its list (init and join alike)."""
    reg = copy.deepcopy(raw or {})
    if "node-name" in flags:
        reg["name"] = flags["node-name"]
    if "cri-socket" in flags:
        reg["criSocket"] = flags["cri-socket"]
    _set_default(reg, "name", hostname.lower())
    _set_default(reg, "criSocket", DEFAULT_CRI_SOCKET)
    _set_default(reg, "imagePullPolicy", "IfNotPresent")
    _set_default(reg, "kubeletExtraArgs", [])
    _set_default(reg, "ignorePreflightErrors", [])
    if "taints" not in reg or reg["taints"] is None:
        # nil means "the default": the control plane taint on control plane nodes, none on workers.
        reg["taints"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}] \
            if control_plane else []
    reg["ignorePreflightErrors"] = _merge_list(reg["ignorePreflightErrors"], flags.get("ignore-preflight-errors"))
    return reg


def _local_api_endpoint(raw, flags, default_ip):
    """Where this control plane node's API server listens: the file's localAPIEndpoint with
    --apiserver-advertise-address and --apiserver-bind-port over it, defaulted."""
    endpoint = dict(raw or {})
    if "apiserver-advertise-address" in flags:
        endpoint["advertiseAddress"] = flags["apiserver-advertise-address"]
    if "apiserver-bind-port" in flags:
        endpoint["bindPort"] = flags["apiserver-bind-port"]
    _set_default(endpoint, "advertiseAddress", default_ip)
    _set_default(endpoint, "bindPort", DEFAULT_BIND_PORT)
    return endpoint


def _timeouts(doc):
    out = dict(DEFAULT_TIMEOUTS)
    out.update({k: v for k, v in (doc.get("timeouts") or {}).items() if v is not None})
    return out


def _merge_list(existing, extra):
    out = list(existing or [])
    for item in extra or []:
        for part in item.split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    return out


def check_mixed_flags(config_path, changed_flags):
    """kubeadm refuses ``--config`` together with flags that the file should carry instead."""
    if not config_path:
        return None
    mixed = sorted(name for name in changed_flags
                   if name not in FLAGS_ALLOWED_WITH_CONFIG and not name.startswith("skip-"))
    if mixed:
        return "can not mix '--config' with arguments [%s]" % " ".join(mixed)
    return None


class InitSettings:
    """Everything ``kubeadm init`` was asked to do: the ClusterConfiguration and the InitConfiguration."""

    def __init__(self, cluster, init, kubelet, kubeproxy):
        self.cluster = cluster
        self.init = init
        self.kubelet = kubelet
        self.kubeproxy = kubeproxy

    @property
    def node_name(self):
        return self.init["nodeRegistration"]["name"]

    @property
    def advertise_address(self):
        return self.init["localAPIEndpoint"]["advertiseAddress"]

    @property
    def bind_port(self):
        return self.init["localAPIEndpoint"]["bindPort"]


def init_settings(docs, flags, kubeadm_version, hostname, default_ip):
    """Combine the file's documents and the flags into defaulted InitSettings (not yet validated).

    ``flags``: a dict of the init flags that were given (names as on the command line).
    """
    cluster = docs.get("ClusterConfiguration") if docs else None
    init = copy.deepcopy((docs.get("InitConfiguration") if docs else None) or {})
    cluster = dict(cluster or {})
    if "kubernetes-version" in flags:
        cluster["kubernetesVersion"] = flags["kubernetes-version"]
    if "control-plane-endpoint" in flags:
        cluster["controlPlaneEndpoint"] = flags["control-plane-endpoint"]
    if "image-repository" in flags:
        cluster["imageRepository"] = flags["image-repository"]
    if "cert-dir" in flags:
        cluster["certificatesDir"] = flags["cert-dir"]
    networking = dict(cluster.get("networking") or {})
    for flag, field in (("pod-network-cidr", "podSubnet"), ("service-cidr", "serviceSubnet"),
                        ("service-dns-domain", "dnsDomain")):
        if flag in flags:
            networking[field] = flags[flag]
    cluster["networking"] = networking
    if "apiserver-cert-extra-sans" in flags:
        api = dict(cluster.get("apiServer") or {})
        api["certSANs"] = [s for s in flags["apiserver-cert-extra-sans"].split(",") if s]
        cluster["apiServer"] = api
    if "feature-gates" in flags:
        cluster["featureGates"] = parse_feature_gates(flags["feature-gates"])
    cluster = default_cluster(cluster, kubeadm_version)

    init["nodeRegistration"] = _node_registration(init.get("nodeRegistration"), flags, hostname, control_plane=True)
    init["localAPIEndpoint"] = _local_api_endpoint(init.get("localAPIEndpoint"), flags, default_ip)

    if "certificate-key" in flags:
        init["certificateKey"] = flags["certificate-key"]
    _set_default(init, "certificateKey", "")
    if "skip-phases" in flags:
        init["skipPhases"] = _merge_list([], flags["skip-phases"])  # the flag wins over the file
    _set_default(init, "skipPhases", [])
    tokens = init.get("bootstrapTokens") or [{}]
    if "token" in flags:
        tokens[0] = dict(tokens[0], token=flags["token"])
    if "token-ttl" in flags:
        tokens[0] = dict(tokens[0], ttl=flags["token-ttl"])
    init["bootstrapTokens"] = [_default_token(t) for t in tokens]
    explicit_timeouts = init.get("timeouts") or {}
    init["timeouts"] = _timeouts(init)
    if not explicit_timeouts.get("controlPlaneComponentHealthCheck"):
        # v1beta3 carried this timeout in the ClusterConfiguration.
        init["timeouts"]["controlPlaneComponentHealthCheck"] = cluster["apiServer"]["timeoutForControlPlane"]
    init["dryRun"] = bool(init.get("dryRun") or flags.get("dry-run"))
    for phase in ("addon/coredns", "addon/kube-proxy"):
        if phase in init["skipPhases"] or "addon" in init["skipPhases"]:
            # v1beta4 records skipped addons in the stored ClusterConfiguration.
            cluster["dns" if phase.endswith("coredns") else "proxy"]["disabled"] = True
    return InitSettings(cluster, init, docs.kubelet if docs else None, docs.kubeproxy if docs else None)


def _default_token(token):
    token = dict(token or {})
    _set_default(token, "token", "")
    _set_default(token, "description", "")
    if token.get("ttl") is None and not token.get("expires"):
        token["ttl"] = DEFAULT_TOKEN_TTL
    _set_default(token, "usages", list(DEFAULT_TOKEN_USAGES))
    _set_default(token, "groups", list(DEFAULT_TOKEN_GROUPS))
    if isinstance(token.get("ttl"), str):
        token["ttl"] = durations.parse(token["ttl"])
    return token


def parse_feature_gates(text):
    gates = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, value = part.partition("=")[::2]
        gates[name.strip()] = value.strip().lower() == "true"
    return gates


class JoinSettings:
    """Everything ``kubeadm join`` was asked to do."""

    def __init__(self, join, kubelet):
        self.join = join
        self.kubelet = kubelet

    @property
    def control_plane(self):
        return self.join.get("controlPlane")

    @property
    def node_name(self):
        return self.join["nodeRegistration"]["name"]


def join_settings(docs, flags, positional_endpoint, hostname, default_ip):
    """Combine the file's JoinConfiguration and the flags into defaulted JoinSettings (not yet validated)."""
    join = copy.deepcopy((docs.get("JoinConfiguration") if docs else None) or {})
    control_plane = join.get("controlPlane")
    if flags.get("control-plane"):
        control_plane = dict(control_plane or {})
    if control_plane is not None:
        control_plane["localAPIEndpoint"] = _local_api_endpoint(control_plane.get("localAPIEndpoint"), flags, default_ip)
        if "certificate-key" in flags:
            control_plane["certificateKey"] = flags["certificate-key"]
        _set_default(control_plane, "certificateKey", "")
    join["controlPlane"] = control_plane
    join["nodeRegistration"] = _node_registration(join.get("nodeRegistration"), flags, hostname,
                                                  control_plane=control_plane is not None)

    discovery = dict(join.get("discovery") or {})
    token_discovery = dict(discovery.get("bootstrapToken") or {})
    if "token" in flags:
        token_discovery["token"] = flags["token"]
        discovery["tlsBootstrapToken"] = flags["token"]
    if "discovery-token" in flags:
        token_discovery["token"] = flags["discovery-token"]
    if "tls-bootstrap-token" in flags:
        discovery["tlsBootstrapToken"] = flags["tls-bootstrap-token"]
    if positional_endpoint:
        token_discovery["apiServerEndpoint"] = positional_endpoint
    if flags.get("discovery-token-ca-cert-hash"):
        token_discovery["caCertHashes"] = list(flags["discovery-token-ca-cert-hash"])
    if flags.get("discovery-token-unsafe-skip-ca-verification"):
        token_discovery["unsafeSkipCAVerification"] = True
    if "discovery-file" in flags:
        discovery["file"] = {"kubeConfigPath": flags["discovery-file"]}
    if token_discovery and not discovery.get("file"):
        _set_default(token_discovery, "caCertHashes", [])
        _set_default(token_discovery, "unsafeSkipCAVerification", False)
        discovery["bootstrapToken"] = token_discovery
        _set_default(discovery, "tlsBootstrapToken", token_discovery.get("token", ""))
    join["discovery"] = discovery
    _set_default(join, "caCertPath", DEFAULT_CERT_DIR + "/ca.crt")
    if "skip-phases" in flags:
        join["skipPhases"] = _merge_list([], flags["skip-phases"])
    _set_default(join, "skipPhases", [])
    join["timeouts"] = _timeouts(join)
    if discovery.get("timeout"):
        join["timeouts"]["discovery"] = discovery["timeout"]
    join["dryRun"] = bool(join.get("dryRun") or flags.get("dry-run"))
    return JoinSettings(join, docs.kubelet if docs else None)


# ------------------------------------------------------------------------------------------ validation

def _valid_ip(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _valid_cidr(text):
    try:
        ipaddress.ip_network(text, strict=False)
        return "/" in text
    except ValueError:
        return False


def split_host_port(endpoint, default_port):
    """``(host, port)`` of ``host[:port]`` / ``[v6]:port``; ValueError when it is not one."""
    text = (endpoint or "").strip()
    if text.startswith("["):
        host, rest = text[1:].partition("]")[::2]
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueError("missing host")
    if port:
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError("port must be a number between 1 and 65535")
        return host, int(port)
    return host, default_port


def _valid_host(host):
    return _valid_ip(host) or bool(_DNS_SUBDOMAIN.match(host.lower())) and len(host) <= 253


def validate_cluster(cfg, release, errors):
    """Append the ClusterConfiguration's field errors to ``errors``."""
    try:
        parse_version(cfg["kubernetesVersion"])
    except ValueError as exc:
        errors.append(FieldError("kubernetesVersion", cfg["kubernetesVersion"], str(exc)))
    endpoint = cfg.get("controlPlaneEndpoint")
    if endpoint:
        try:
            host = split_host_port(endpoint, DEFAULT_BIND_PORT)[0]
            if not _valid_host(host):
                raise ValueError("must be a valid IP address or a DNS name")
        except ValueError as exc:
            errors.append(FieldError("controlPlaneEndpoint", endpoint, str(exc)))
    net = cfg["networking"]
    for name in ("serviceSubnet", "podSubnet"):
        for part in [p for p in (net.get(name) or "").split(",") if p]:
            if not _valid_cidr(part.strip()):
                errors.append(FieldError("networking.%s" % name, net[name], "couldn't parse subnet"))
    if not _DNS_SUBDOMAIN.match(net["dnsDomain"]):
        errors.append(FieldError("networking.dnsDomain", net["dnsDomain"],
                                 "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                 "characters, '-' or '.'"))
    if not str(cfg["certificatesDir"]).startswith("/"):
        errors.append(FieldError("certificatesDir", cfg["certificatesDir"], "path must be absolute"))
    if cfg["encryptionAlgorithm"] and cfg["encryptionAlgorithm"] not in release.encryption_algorithms:
        errors.append(FieldError("encryptionAlgorithm", cfg["encryptionAlgorithm"],
                                 "supported values: %s" % ", ".join('"%s"' % a for a in release.encryption_algorithms),
                                 kind="Unsupported value"))
    etcd = cfg["etcd"]
    if etcd.get("local") and etcd.get("external"):
        errors.append(FieldError("etcd", "local and external", "either .Etcd.Local or .Etcd.External is required",
                                 kind="Invalid value"))
    external = etcd.get("external")
    if external is not None:
        if not external.get("endpoints"):
            errors.append(FieldError("etcd.external.endpoints", [], "must not be empty",
                                     kind="Required value"))
        for i, url in enumerate(external.get("endpoints") or []):
            if not re.match(r"^https?://[^/]+", url):
                errors.append(FieldError("etcd.external.endpoints[%d]" % i, url, "URL parse error"))
    for name in ("certificateValidityPeriod", "caCertificateValidityPeriod"):
        if cfg[name] <= 0:
            errors.append(FieldError(name, durations.render(cfg[name]), "must be positive"))
    if cfg["certificateValidityPeriod"] > cfg["caCertificateValidityPeriod"]:
        errors.append(FieldError("certificateValidityPeriod", durations.render(cfg["certificateValidityPeriod"]),
                                 "must not be longer than caCertificateValidityPeriod"))
    known = release.feature_gates
    for gate, value in sorted((cfg.get("featureGates") or {}).items()):
        if gate not in known:
            errors.append(FieldError("featureGates", gate, "unrecognized feature-gate key: %s" % gate))
        elif known[gate][1] and bool(value) != known[gate][0]:
            errors.append(FieldError("featureGates", gate, "cannot set feature gate %s to %s, feature is locked to %s"
                                     % (gate, str(bool(value)).lower(), str(known[gate][0]).lower())))
    for san in cfg["apiServer"].get("certSANs") or []:
        if not _valid_host(san.lstrip("*.")):
            errors.append(FieldError("apiServer.certSANs", san,
                                     "altname is not a valid IP address, DNS label or a DNS label with subdomain "
                                     "wildcards"))


def validate_node_registration(reg, path, errors):
    if not _DNS_SUBDOMAIN.match(reg["name"]) or len(reg["name"]) > 253:
        errors.append(FieldError(path + ".name", reg["name"],
                                 "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                 "characters, '-' or '.', and must start and end with an alphanumeric character"))
    if not reg["criSocket"].startswith("unix://") and not reg["criSocket"].startswith("/"):
        errors.append(FieldError(path + ".criSocket", reg["criSocket"],
                                 "URL scheme unix is the only one supported on Linux"))
    for i, taint in enumerate(reg["taints"]):
        if not taint.get("key"):
            errors.append(FieldError("%s.taints[%d].key" % (path, i), "", "taint key is required",
                                     kind="Required value"))
        if taint.get("effect") not in _TAINT_EFFECTS:
            errors.append(FieldError("%s.taints[%d].effect" % (path, i), taint.get("effect") or "",
                                     "supported values: NoSchedule, PreferNoSchedule, NoExecute",
                                     kind="Unsupported value"))
    if reg["imagePullPolicy"] not in _PULL_POLICIES:
        errors.append(FieldError(path + ".imagePullPolicy", reg["imagePullPolicy"],
                                 "supported values: Always, IfNotPresent, Never", kind="Unsupported value"))


def _validate_endpoint(endpoint, path, errors):
    if not _valid_ip(endpoint["advertiseAddress"]):
        errors.append(FieldError(path + ".advertiseAddress", endpoint["advertiseAddress"],
                                 "must be a valid IP address"))
    port = endpoint["bindPort"]
    if not isinstance(port, int) or not 0 < port < 65536:
        errors.append(FieldError(path + ".bindPort", port, "must be a valid port number between 1 and 65535"))


def validate_certificate_key(key, path, errors):
    if key and not _CERT_KEY.match(key):
        errors.append(FieldError(path, "<redacted>",
                                 "certificate key must be 64 hexadecimal characters (a 32-byte AES key)"))


def validate_token(token, path, errors):
    if token and not _TOKEN.match(token):
        errors.append(FieldError(path, "<redacted>",
                                 'the bootstrap token is invalid: it must be of the form "[a-z0-9]{6}.[a-z0-9]{16}"'))


def validate_init(settings, release):
    """Every field error of ``kubeadm init``'s configuration (empty list when valid)."""
    errors = []
    validate_cluster(settings.cluster, release, errors)
    validate_node_registration(settings.init["nodeRegistration"], "nodeRegistration", errors)
    _validate_endpoint(settings.init["localAPIEndpoint"], "localAPIEndpoint", errors)
    validate_certificate_key(settings.init["certificateKey"], "certificateKey", errors)
    for i, token in enumerate(settings.init["bootstrapTokens"]):
        validate_token(token.get("token"), "bootstrapTokens[%d].token" % i, errors)
        for usage in token.get("usages") or []:
            if usage not in ("signing", "authentication"):
                errors.append(FieldError("bootstrapTokens[%d].usages" % i, usage,
                                         "supported values: signing, authentication", kind="Unsupported value"))
    return errors


def validate_join(settings):
    """Every field error of ``kubeadm join``'s configuration (empty list when valid)."""
    errors = []
    join = settings.join
    validate_node_registration(join["nodeRegistration"], "nodeRegistration", errors)
    discovery = join["discovery"]
    token_discovery = discovery.get("bootstrapToken")
    file_discovery = discovery.get("file")
    if not token_discovery and not file_discovery:
        errors.append(FieldError("discovery", "", "bootstrapToken or file must be set"))
    if token_discovery and file_discovery:
        errors.append(FieldError("discovery", "", "bootstrapToken and file cannot both be set"))
    if token_discovery:
        validate_token(token_discovery.get("token"), "discovery.bootstrapToken.token", errors)
        if not token_discovery.get("token"):
            errors.append(FieldError("discovery.bootstrapToken.token", "", "the bootstrap token must be set",
                                     kind="Required value"))
        if not token_discovery.get("apiServerEndpoint"):
            errors.append(FieldError("discovery.bootstrapToken.apiServerEndpoint", "",
                                     "the API server endpoint must be set", kind="Required value"))
        else:
            try:
                split_host_port(token_discovery["apiServerEndpoint"], DEFAULT_BIND_PORT)
            except ValueError as exc:
                errors.append(FieldError("discovery.bootstrapToken.apiServerEndpoint",
                                         token_discovery["apiServerEndpoint"], str(exc)))
        hashes = token_discovery.get("caCertHashes") or []
        if not hashes and not token_discovery.get("unsafeSkipCAVerification"):
            errors.append(FieldError("discovery.bootstrapToken", "",
                                     "using token-based discovery without caCertHashes can be unsafe. Set "
                                     "unsafeSkipCAVerification as true in your kubeadm config file or pass "
                                     "--discovery-token-unsafe-skip-ca-verification flag to continue"))
        for i, value in enumerate(hashes):
            if not _CA_HASH.match(value):
                errors.append(FieldError("discovery.bootstrapToken.caCertHashes[%d]" % i, value,
                                         'invalid hash, expected format "sha256:<64 hex characters>"'))
    validate_token(discovery.get("tlsBootstrapToken"), "discovery.tlsBootstrapToken", errors)
    if settings.control_plane is not None:
        _validate_endpoint(settings.control_plane["localAPIEndpoint"], "controlPlane.localAPIEndpoint", errors)
        validate_certificate_key(settings.control_plane.get("certificateKey"), "controlPlane.certificateKey", errors)
    return errors


# ------------------------------------------------------------------------------ stored ClusterConfiguration

def stored_cluster_document(cluster):
    """The ``ClusterConfiguration`` key of ``kube-system/kubeadm-config`` (YAML text, v1beta4)."""
    doc = {
        "apiVersion": V1BETA4,
        "kind": "ClusterConfiguration",
        "kubernetesVersion": cluster["kubernetesVersion"],
        "clusterName": cluster["clusterName"],
        "certificatesDir": cluster["certificatesDir"],
        "imageRepository": cluster["imageRepository"],
        "networking": {k: v for k, v in cluster["networking"].items() if v},
    }
    if cluster.get("controlPlaneEndpoint"):
        doc["controlPlaneEndpoint"] = cluster["controlPlaneEndpoint"]
    if cluster.get("featureGates"):
        doc["featureGates"] = dict(cluster["featureGates"])
    etcd = cluster["etcd"]
    if etcd.get("external"):
        doc["etcd"] = {"external": {k: v for k, v in etcd["external"].items() if v}}
    else:
        local = {k: v for k, v in etcd["local"].items() if v not in (None, "", [], {})}
        if "extraArgs" in local:
            local["extraArgs"] = _stored_args(local["extraArgs"])
        doc["etcd"] = {"local": local}
    for component in ("apiServer", "controllerManager", "scheduler"):
        source = cluster[component]
        out = {}
        if source.get("extraArgs"):
            out["extraArgs"] = _stored_args(source["extraArgs"])
        for key in ("extraVolumes", "extraEnvs"):
            if source.get(key):
                out[key] = source[key]
        if component == "apiServer" and source.get("certSANs"):
            out["certSANs"] = list(source["certSANs"])
        doc[component] = out
    doc["dns"] = {k: v for k, v in cluster["dns"].items() if v not in (None, "")}
    doc["proxy"] = {k: v for k, v in cluster.get("proxy", {}).items() if v}
    doc["encryptionAlgorithm"] = cluster["encryptionAlgorithm"] or "RSA-2048"
    doc["certificateValidityPeriod"] = durations.render(cluster["certificateValidityPeriod"])
    doc["caCertificateValidityPeriod"] = durations.render(cluster["caCertificateValidityPeriod"])
    return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False)


def _stored_args(args):
    return [{"name": a["name"], "value": a["value"]} for a in args]


def read_stored_cluster(text, release):
    """The defaulted ClusterConfiguration from ``kubeadm-config``'s text (as stored: v1beta4 since 1.31)."""
    docs = read_documents(text, release)
    cluster = docs.get("ClusterConfiguration")
    if cluster is None:
        raise ConfigLoadError("the kubeadm-config ConfigMap holds no ClusterConfiguration")
    return default_cluster(cluster, release.version)


def args_dict(args):
    """The effective value of each argument (the last of duplicates wins)."""
    out = {}
    for arg in args or []:
        out[arg["name"]] = arg["value"]
    return out


def cluster_version(cluster):
    return parse_version(cluster["kubernetesVersion"])


def is_control_plane_version_supported(version, release):
    """kubeadm vX.Y refuses control planes older than vX.(Y-1).0."""
    return (version.major, version.minor) >= (release.oldest_control_plane.major, release.oldest_control_plane.minor)


def describe_unsupported_version(version, release):
    return ("this version of kubeadm only supports deploying clusters with the control plane version >= %s. "
            "Current version: %s" % (release.oldest_control_plane, version))
