# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An operator's manual walk on a sandbox: the steps the walk test and the walk benchmark share.

Everything reaches the hosts as an operator does from a controller: the sandbox's command line stands for
the cloud console (up, machine create, faults), ``ssh`` / ``scp`` with the generated ssh_config run
everything on the hosts, and the cluster is checked through the load balancer VIP with the real kubectl,
the official Python client and the collection's etcd adapter, using credentials copied off a host over
scp. The pure helpers (kubeadm configuration, reading kubeadm's output, node / pod / etcd verdicts) do no I/O.
"""

import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import time

import node_setup
import yaml
from kcpsandbox import state

HERE = os.path.dirname(os.path.abspath(__file__))
SANDBOX_CLI = os.path.normpath(os.path.join(HERE, "..", "..", "sandbox"))
KUBECTL = "/usr/bin/kubectl"

# The node software of the walk: None takes the newest version the mirror offers, as an operator would.
WALK_VERSION = None
CONTROL_PLANE_COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
ZONE_LABEL = "topology.kubernetes.io/zone"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
INIT_CONFIG_PATH = "/root/kubeadm-init.yaml"
ETCD_CLIENT_FILES = ("/etc/kubernetes/pki/etcd/ca.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
                     "/etc/kubernetes/pki/etcd/healthcheck-client.key")
_CERTIFICATE_KEY = re.compile(r"^[0-9a-f]{64}$")


class Secret(str):
    """A string that holds a secret (a join command's token and certificate key): its repr, which pytest
    prints in tracebacks, withholds it."""

    def __repr__(self):
        return "'<secret withheld>'"


class WalkError(AssertionError):
    """A step of the walk failed; the message says which, and what the tool answered."""


def poll(condition, timeout, what, interval=0.25):
    """The first truthy value ``condition()`` returns within ``timeout`` seconds, else WalkError naming ``what``
    and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise WalkError("timed out after %ss waiting for %s (last seen: %r)" % (timeout, what, value))
        time.sleep(interval)


def settle(problems, timeout, what, interval=0.25):
    """Poll ``problems()`` (a list of what is still wrong) until it is empty within ``timeout`` seconds, else
    WalkError naming ``what`` and the problems last seen."""
    still = []

    def cleared():
        still[:] = problems()
        return not still

    try:
        poll(cleared, timeout, what, interval)
    except WalkError:
        raise WalkError("timed out after %ss waiting for %s; still: %s" % (timeout, what, "; ".join(still))) from None


# -- pure helpers --------------------------------------------------------------------------------------------

def version_minor(version):
    """``"v1.31.2"`` → 31."""
    match = re.match(r"^v?1\.(\d+)\.\d+", version.strip())
    if not match:
        raise ValueError("not a Kubernetes version: %r" % version)
    return int(match.group(1))


def init_configuration(node_name, failure_domain, endpoint, kubernetes_version, encryption_algorithm="ECDSA-P256"):
    """The kubeadm configuration file an operator writes for ``kubeadm init`` on the first control plane host.

    v1beta4 where kubeadm has it (1.31+), with ``encryption_algorithm`` keys (None: kubeadm's default); v1beta3
    before. The operator repeats the node's
    zone label in nodeRegistration.kubeletExtraArgs (a map in v1beta3, a list of name/value pairs in v1beta4);
    the kubelet merges it with the operator's /etc/default/kubelet.
    """
    labels = "%s=%s" % (ZONE_LABEL, failure_domain)
    v1beta4 = version_minor(kubernetes_version) >= 31
    api_version = "kubeadm.k8s.io/v1beta4" if v1beta4 else "kubeadm.k8s.io/v1beta3"
    extra_args = [{"name": "node-labels", "value": labels}] if v1beta4 else {"node-labels": labels}
    init = {"apiVersion": api_version, "kind": "InitConfiguration",
            "nodeRegistration": {"name": node_name, "kubeletExtraArgs": extra_args}}
    cluster = {"apiVersion": api_version, "kind": "ClusterConfiguration", "kubernetesVersion": kubernetes_version,
               "controlPlaneEndpoint": endpoint}
    if v1beta4 and encryption_algorithm:
        cluster["encryptionAlgorithm"] = encryption_algorithm
    return yaml.safe_dump_all([init, cluster], default_flow_style=False, sort_keys=False)


def control_plane_join_command(init_output):
    """The control plane join command ``kubeadm init --upload-certs`` prints (backslash-continued lines), as
    one line."""
    section = init_output.partition("join any number of control-plane nodes")[2]
    match = re.search(r"kubeadm join (?:[^\n]*\\\n)*[^\n]*", section)
    if not match:
        raise ValueError("kubeadm init printed no control plane join command")
    command = " ".join(match.group(0).replace("\\\n", " ").split())
    if "--control-plane" not in command or "--certificate-key" not in command:
        raise ValueError("the join command kubeadm init printed lacks --control-plane --certificate-key")
    return Secret(command)


def certificate_key(upload_certs_output):
    """The key ``kubeadm init phase upload-certs --upload-certs`` printed (the line after "Using certificate
    key:")."""
    lines = [line.strip() for line in upload_certs_output.splitlines()]
    for announced, key in zip(lines, lines[1:]):
        if announced.endswith("Using certificate key:") and _CERTIFICATE_KEY.match(key):
            return key
    raise ValueError("kubeadm printed no certificate key")


def with_certificate_key(print_join_command_output, key):
    """A worker join command (``kubeadm token create --print-join-command``) turned into a control plane one."""
    command = " ".join(print_join_command_output.split())
    if not command.startswith("kubeadm join "):
        raise ValueError("not a kubeadm join command: %r" % command[:40])
    return Secret("%s --control-plane --certificate-key %s" % (command, key))


def parse_inventory(text):
    """The sandbox's inventory.ini: ``({host: {"ip", "failure_domain"}}, {variable: value})``."""
    hosts, variables, section = {}, {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "all:vars":
            name, _sep, value = line.partition("=")
            variables[name.strip()] = value.strip()
        elif section == "control_plane_candidates":
            words = shlex.split(line)
            fields = dict(word.split("=", 1) for word in words[1:])
            hosts[words[0]] = {"ip": fields["ansible_host"], "failure_domain": fields["failure_domain"]}
    return hosts, variables


def is_ready(obj):
    """Whether a Node's or Pod's Ready condition is True (``obj`` as the API serves it, a dict)."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def control_plane_nodes(nodes):
    """``{name: zone}`` of the Ready nodes that carry the control plane role."""
    return {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(ZONE_LABEL)
            for n in nodes if is_ready(n) and CONTROL_PLANE_ROLE in (n["metadata"].get("labels") or {})}


def unready_mirror_pods(pods, hosts):
    """The mirror pods ``<component>-<host>`` the kubelets of ``hosts`` should post in kube-system that are
    missing, not mirrors, on another node, or not Ready (sorted names; empty = all there)."""
    by_name = {p["metadata"]["name"]: p for p in pods}
    problems = []
    for host in sorted(hosts):
        for component in CONTROL_PLANE_COMPONENTS:
            pod = by_name.get("%s-%s" % (component, host))
            if (pod is None or MIRROR_ANNOTATION not in (pod["metadata"].get("annotations") or {})
                    or pod["spec"].get("nodeName") != host or not is_ready(pod)):
                problems.append("%s-%s" % (component, host))
    return problems


def etcd_problems(section, names):
    """What keeps an ``etcd_client.gather`` section from being a healthy cluster of voting members named
    ``names``, one leader, no alarms (empty = healthy)."""
    members = section["members"]
    problems = []
    if sorted(m["name"] for m in members) != sorted(names):
        problems.append("members %s, expected %s" % (sorted(m["name"] or m["id"] for m in members), sorted(names)))
    problems += ["%s is a learner" % m["name"] for m in members if m["learner"]]
    problems += ["%s does not answer: %s" % (m["name"], m["error"]) for m in members if not m["responsive"]]
    problems += ["%s has alarms %s" % (m["name"], m["alarms"]) for m in members if m["alarms"]]
    leaders = [m["name"] for m in members if m["leader"]]
    if len(leaders) != 1:
        problems.append("leaders: %s" % (leaders or "none"))
    if len({m["cluster_id"] for m in members}) != 1:
        problems.append("members answer for different clusters")
    return problems


# -- the operator's tools ------------------------------------------------------------------------------------

class Operator:
    """An operator at the controller of sandbox ``name``: its console (the sandbox CLI), ssh / scp to its hosts
    with the generated ssh_config, and kubectl."""

    def __init__(self, name):
        self.name = name
        self.state = os.path.join(state.state_root(), name)
        self.ssh_config = os.path.join(self.state, "ssh", "ssh_config")

    def sandbox(self, *argv, timeout=180):
        """Run a sandbox command; its standard output. WalkError when it fails."""
        done = subprocess.run([SANDBOX_CLI, "--name", self.name] + list(argv), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise WalkError("sandbox %s failed (exit %d):\n%s%s"
                            % (" ".join(argv), done.returncode, done.stdout[-3000:], done.stderr[-3000:]))
        return done.stdout

    def up(self, machines, failure_domains, subnet, real_timings=False):
        argv = ["up", "--machines", str(machines), "--failure-domains", str(failure_domains), "--subnet", subnet]
        return self.sandbox(*(argv + ["--real-timings"] if real_timings else argv))

    def down(self):
        return self.sandbox("down", timeout=120)

    def inventory(self):
        with open(os.path.join(self.state, "inventory.ini"), encoding="utf-8") as handle:
            return parse_inventory(handle.read())

    def mirror(self):
        """The mirror's directory (controller side) and the version the walk installs from it."""
        mirror_dir = self.inventory()[1]["sandbox_mirror_dir"]
        return mirror_dir, WALK_VERSION or node_setup.newest_version(mirror_dir)

    def endpoint(self):
        variables = self.inventory()[1]
        return "%s:%s" % (variables["sandbox_endpoint_host"], variables["sandbox_endpoint_port"])

    def ssh(self, host, command, timeout=300, check=True, shown=None):
        """Run ``command`` on ``host``; ``shown`` replaces it in error messages when it carries secrets."""
        done = subprocess.run(["ssh", "-F", self.ssh_config, host, command], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise WalkError("on %s, %s failed (exit %d):\n--- stdout\n%s\n--- stderr\n%s"
                            % (host, shown or command, done.returncode, done.stdout[-3000:], done.stderr[-3000:]))
        return done

    def scp_to(self, host, local, remote):
        self._scp(local, "%s:%s" % (host, remote))

    def fetch(self, host, remote, directory):
        """Copy ``remote`` off ``host`` into ``directory``, readable by its owner only (it may hold a key)."""
        local = os.path.join(directory, os.path.basename(remote))
        self._scp("%s:%s" % (host, remote), local)
        os.chmod(local, 0o600)
        return local

    def _scp(self, source, target):
        done = subprocess.run(["scp", "-q", "-F", self.ssh_config, source, target], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise WalkError("scp %s %s failed (exit %d): %s" % (source, target, done.returncode, done.stderr))

    def kubectl(self, kubeconfig, *argv, timeout=30):
        return subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "--request-timeout", "10s"] + list(argv),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False)

    # -- steps ---------------------------------------------------------------------------------------------

    def node(self, host):
        return node_setup.Node(self.ssh_config, host)

    def prepare_hosts(self, hosts):
        """The operator's steps on bare hosts before kubeadm, on all of them at once as Ansible's forks would:
        node software from the mirror, the zone label, forwarding (node_setup)."""
        mirror_dir, version = self.mirror()
        zones = {host: facts["failure_domain"] for host, facts in self.inventory()[0].items()}
        with concurrent.futures.ThreadPoolExecutor(len(hosts)) as pool:
            for done in [pool.submit(self.node(host).prepare, mirror_dir, version, zones[host]) for host in hosts]:
                done.result()

    def install_pod_network(self, host):
        """The pod network's config on ``host`` (its pod subnet numbered after its address)."""
        address = self.inventory()[0][host]["ip"]
        self.node(host).install_pod_network(*self.mirror(), int(address.rsplit(".", 1)[1]))

    def node_ready_condition(self, kubeconfig, host):
        """``host``'s Ready condition as kubectl sees it, None when it does not answer."""
        done = self.kubectl(kubeconfig, "get", "node", host, "-o", "json")
        if done.returncode != 0:
            return None
        return next((c for c in json.loads(done.stdout)["status"].get("conditions") or [] if c["type"] == "Ready"),
                    None)

    def init_first_control_plane(self, host, failure_domain, workdir, encryption_algorithm="ECDSA-P256"):
        """``kubeadm init --upload-certs`` on ``host`` from a configuration file copied over; kubeadm's output."""
        version = self.ssh(host, "kubeadm version -o short", timeout=30).stdout.strip()
        config = os.path.join(workdir, "kubeadm-init.yaml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(init_configuration(host, failure_domain, self.endpoint(), version, encryption_algorithm))
        self.scp_to(host, config, INIT_CONFIG_PATH)
        return self.ssh(host, "kubeadm init --config %s --upload-certs" % INIT_CONFIG_PATH).stdout

    def join_control_plane(self, host, join_command):
        """``join_command`` (a control plane join) on ``host``. The printed join command carries no kubelet flags:
        the Node's zone label comes from the host's /etc/default/kubelet, which the operator wrote."""
        return self.ssh(host, join_command, shown="kubeadm join (control plane; token and key withheld)").stdout

    def fresh_control_plane_join_command(self, via):
        """A new control plane join command made on control plane host ``via``: certificates uploaded again
        under a new key, a new token."""
        uploaded = self.ssh(via, "kubeadm init phase upload-certs --upload-certs", timeout=120).stdout
        printed = self.ssh(via, "kubeadm token create --print-join-command", timeout=120).stdout
        return with_certificate_key(printed, certificate_key(uploaded))

    def ready_control_plane_nodes(self, kubeconfig):
        """``{name: zone}`` of the Ready control plane nodes, as kubectl sees them (empty when it fails)."""
        done = self.kubectl(kubeconfig, "get", "nodes", "-o", "json")
        if done.returncode != 0:
            return {}
        return control_plane_nodes(json.loads(done.stdout)["items"])
