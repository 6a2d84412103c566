# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers of the kubelet / runtime / build tests: free loopback ports, processes that are stopped by PID, and
a scratch host for one kubelet. (A module of its own, not conftest.py, so that the tests import it by a name no
other test directory uses.)"""

import os
import random
import signal
import socket
import subprocess

from kcpsandbox.commands import wait_until
from kcpsim import version
from kcpsim.runtime import processes

SYSTEM_PYTHON = "/usr/bin/python3"


# Below the kernel's ephemeral ports (32768 and up by default). A port is chosen here and bound seconds later by the
# process under test; an ephemeral one may meanwhile become a source port of another process's loopback connection
# (make test runs the unit and integration tests beside these), and etcd then fails to listen on it.
UNSHARED_PORTS = range(20000, 32768)


def free_port():
    """A port of UNSHARED_PORTS that nothing on 127.0.0.1 holds now."""
    port = next((port for port in random.sample(UNSHARED_PORTS, 200) if _bindable(port)), None)
    if port is None:
        raise RuntimeError("no free port on 127.0.0.1 in %d-%d" % (UNSHARED_PORTS[0], UNSHARED_PORTS[-1]))
    return port


def _bindable(port):
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Processes:
    """Starts processes in their own sessions and stops them by PID at teardown, pods included."""

    def __init__(self):
        self.started = []
        self.run_dirs = []

    def start(self, argv, env=None, log=None):
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                       start_new_session=True)
        finally:
            if log:
                out.close()
        self.started.append(process)
        return process

    def stop(self, process, timeout=10):
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout)

    def cleanup(self):
        try:
            for process in reversed(self.started):
                self.stop(process)
        finally:
            for run_dir, log_dir in self.run_dirs:  # static pods outlive their kubelet: stop them by recorded PID
                if os.path.isdir(os.path.join(run_dir, "pods")):
                    processes.ProcessRuntime(run_dir, log_dir).stop_all(grace=5)


class KubeletHost:
    """A scratch "host" for one kubelet: its dirs, config.yaml, a containerd stand-in, and the kubelet itself."""

    def __init__(self, root, releases, procs, node_name="node-1"):
        self.root = root
        self.releases = releases
        self.procs = procs
        self.node_name = node_name
        self.manifests = root / "manifests"
        self.run_dir = root / "run"
        self.log_dir = root / "log"
        self.manifests.mkdir()
        self.socket = str(root / "containerd.sock")
        self.healthz_port = free_port()
        self.api_port = free_port()
        self.config = root / "config.yaml"
        self.write_config()
        self.cni_conf_dir, self.cni_bin_dir = root / "cni-net.d", root / "cni-bin"
        self.install_pod_network()
        procs.run_dirs.append((str(self.run_dir), str(self.log_dir)))
        self.kubelet = None

    def write_config(self, **extra):
        lines = ["apiVersion: kubelet.config.k8s.io/v1beta1", "kind: KubeletConfiguration",
                 "staticPodPath: %s" % self.manifests, "healthzPort: %d" % self.healthz_port,
                 "address: 127.0.0.1", "port: %d" % self.api_port]
        lines += ["%s: %s" % item for item in extra.items()]
        self.config.write_text("\n".join(lines) + "\n")

    def install_pod_network(self):
        """What an operator's CNI step leaves on a node: a network config and the plugin it names."""
        self.cni_conf_dir.mkdir(exist_ok=True)
        self.cni_bin_dir.mkdir(exist_ok=True)
        plugin = self.cni_bin_dir / "bridge"
        if not plugin.exists():
            plugin.symlink_to(self.releases / "cni" / version.CNI_PLUGINS_VERSIONS[-1] / "bridge")
        (self.cni_conf_dir / "10-bridge.conflist").write_text(
            '{"cniVersion": "1.0.0", "name": "bridge", "plugins": [{"type": "bridge"}]}\n')

    def env(self, **extra):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KCPSIM_IMAGES": str(self.releases / "images.json"),
               "KCPSIM_RUN_DIR": str(self.run_dir), "KCPSIM_LOG_DIR": str(self.log_dir),
               "KCPSIM_PROBE_SCALE": "0.1", "KCPSIM_HEARTBEAT": "1",
               "KCPSIM_CNI_CONF_DIR": str(self.cni_conf_dir), "KCPSIM_CNI_BIN_DIR": str(self.cni_bin_dir)}
        env.update(extra)
        return env

    def start_containerd(self, release=version.CONTAINERD_VERSIONS[-1]):
        process = self.procs.start([str(self.releases / "containerd" / release / "containerd"),
                                    "--address", self.socket], log=str(self.root / "containerd.log"))
        wait_until(lambda: os.path.exists(self.socket), 10, "the containerd socket")
        return process

    def kubelet_argv(self, version="v1.37.1", *flags):
        return [SYSTEM_PYTHON, str(self.releases / version / "bin" / "kubelet"), "--config=%s" % self.config,
                "--container-runtime-endpoint=unix://%s" % self.socket, "--node-ip=127.0.0.1",
                "--hostname-override=%s" % self.node_name] + list(flags)

    def start_kubelet(self, *flags, version="v1.37.1", **env):
        self.kubelet = self.procs.start(self.kubelet_argv(version, *flags), env=self.env(**env),
                                        log=str(self.root / "kubelet.log"))
        return self.kubelet

    def log(self):
        path = self.root / "kubelet.log"
        return path.read_text() if path.exists() else ""

    def pid(self, pod):
        path = self.run_dir / "pods" / (pod + ".pid")
        try:
            pid = int(path.read_text())
        except (OSError, ValueError):
            return None
        return pid if processes.proc_start_time(pid) is not None else None

    def cmdline(self, pid):
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return handle.read().decode().split("\0")[:-1]
