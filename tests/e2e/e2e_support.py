# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the end-to-end tests share (tests/e2e): a sandbox of bare hosts as a test drives it, the play recap, the
newest version the mirror offers. A module of its own, not conftest, because every test directory has a conftest
and only one of them can be imported under that name in a whole-suite run."""

import calendar
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import yaml
from ansible_run import run
from kubernetes import client as k8s
from kubernetes import config as k8s_config

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SANDBOX_DIR = os.path.join(ROOT, "tests", "sandbox")
for _path in (SANDBOX_DIR, os.path.join(SANDBOX_DIR, "tests", "walk")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from kcpsandbox import state  # noqa: E402  (the sandbox's package, found through SANDBOX_DIR)
# the manual walk's operator steps (a cluster built by hand with kubeadm), for the tests that need them
import walk_support as walk  # noqa: E402  # pylint: disable=unused-import

CLI = os.path.join(SANDBOX_DIR, "sandbox")
BIN = os.path.dirname(sys.executable)


class E2ESandbox:
    """A sandbox of bare hosts as a test drives it: its inventory, ansible-playbook, and SSH for checks."""

    def __init__(self, name, snapshot_dir=None):
        self.name = name
        self.record = state.Sandbox(name).load()
        # where the flows the test runs keep their etcd snapshots on the controller (kcp_etcd_snapshot_dir)
        self.snapshot_dir = snapshot_dir

    @property
    def inventory(self):
        return self.record.inventory

    @property
    def mirror_dir(self):
        return self.record.mirror_dir

    def hosts(self):
        return sorted(self.record.hosts)

    def ssh(self, host, command, check=True, timeout=60):
        done = subprocess.run(["ssh", "-F", self.record.ssh_config, host, command], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise AssertionError("ssh %s %r failed (exit %d): %s" % (host, command, done.returncode, done.stderr))
        return done

    def fault(self, kind, host, *args):
        """Inject a sandbox fault (etcd-stop, etcd-start, certs-expire-soon DAYS, ...; tests/sandbox/README.md) on a host."""
        done = subprocess.run([CLI, "--name", self.name, "fault", kind, host] + [str(arg) for arg in args], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr

    def machine_create(self, name, failure_domain=None, worker_group=None):
        """A new bare host from the sandbox's provider (``sandbox machine create``), in the inventory and behind the
        load balancer from now on, as a provider hands one to an operator; with ``worker_group``, a worker host of that
        group (inventory group workers, no load balancer backend)."""
        where = ["--failure-domain", failure_domain] if failure_domain else []
        group = ["--worker-group", worker_group] if worker_group else []
        done = subprocess.run([CLI, "--name", self.name, "machine", "create", "--name", name] + where + group,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        self.reload()

    def reload(self):
        """Read the sandbox's hosts again (a machine provider's create or delete tasks changed them)."""
        self.record = state.Sandbox(self.name).load()

    def admin_conf(self):
        """/etc/kubernetes/admin.conf of the first host that holds one; None when none does (no cluster yet)."""
        for host in self.hosts():
            got = self.ssh(host, "cat /etc/kubernetes/admin.conf", check=False)
            if got.returncode == 0:
                return got.stdout
        return None

    @contextlib.contextmanager
    def writing(self, endpoint):
        """A BackgroundWriter through ``endpoint`` (host:port) for the time of the ``with`` block, or None when
        there is no cluster to write to."""
        admin_conf = self.admin_conf()
        if admin_conf is None:
            yield None
            return
        with BackgroundWriter(admin_conf, endpoint) as writer:
            yield writer

    def _playbook_command(self, playbook, extra_vars=None, limit=None, check=False, inventory=None):
        """(argv, env) of ansible-playbook against the sandbox's inventory (or ``inventory``, one a test made from it),
        as an operator runs it."""
        argv = [os.path.join(BIN, "ansible-playbook"), "-i", inventory or self.inventory, playbook]
        if extra_vars:
            argv += ["-e", json.dumps(extra_vars)]
        if limit:
            argv += ["--limit", limit]
        if check:
            argv.append("--check")
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], ANSIBLE_NOCOLOR="1",
                   ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"))
        env.pop("ANSIBLE_INVENTORY", None)
        return argv, env

    def playbook(self, playbook, extra_vars=None, limit=None, check=False, timeout=900, inventory=None):
        """ansible-playbook against the sandbox's inventory (or ``inventory``); the CompletedProcess (stdout: the
        play's output)."""
        argv, env = self._playbook_command(playbook, extra_vars, limit, check, inventory)
        return subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def playbook_killed(self, playbook, extra_vars, line, after, timeout=900, inventory=None):
        """ansible-playbook against the sandbox's inventory (or ``inventory``) killed with every process under it
        (:func:`kill_tree`, as a lost controller leaves it) ``after`` seconds after it printed a line containing
        ``line``; the output it printed. Fails when the run ends before that line."""
        return self.playbook_meanwhile(playbook, extra_vars, line, lambda process: kill_tree(process.pid), after, timeout, inventory)[1]

    def playbook_meanwhile(self, playbook, extra_vars, line, then, after=0, timeout=900, inventory=None):
        """ansible-playbook against the sandbox's inventory (or ``inventory``), with ``then(process)`` called
        ``after`` seconds after it printed a line containing ``line`` (a fault injected, another run's lock written,
        the run killed); (its exit code, the output it printed) once it ended. Fails when the run ends before that
        line."""
        argv, env = self._playbook_command(playbook, extra_vars, inventory=inventory)
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
        printed, act_at = [], None
        deadline = time.monotonic() + timeout
        reader = threading.Thread(target=lambda: printed.extend(iter(process.stdout.readline, "")), daemon=True)
        reader.start()
        try:
            while process.poll() is None and time.monotonic() < deadline:
                if act_at is None and any(line in seen for seen in list(printed)):
                    act_at = time.monotonic() + after
                if act_at is not None and time.monotonic() >= act_at:
                    then(process)
                    break
                time.sleep(0.2)
            else:
                raise AssertionError("the run ended (or timed out) before it printed %r:\n%s" % (line, "".join(printed)[-6000:]))
            process.wait(max(1, deadline - time.monotonic()))
        finally:
            if process.poll() is None:
                kill_tree(process.pid)
            process.wait()
            reader.join(5)
        return process.returncode, "".join(printed)


def process_tree(pid):
    """``pid`` and the processes under it, read from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry, encoding="utf-8", errors="replace") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(parent, []).append(int(entry))
    tree, queue = [], [pid]
    while queue:
        tree.append(queue.pop())
        queue.extend(children.get(tree[-1], []))
    return tree


def kill_tree(pid):
    """SIGKILL to ``pid`` and every process under it, stopped first so that none forks meanwhile. Its process group
    alone is not the run: ansible-core starts each worker in a session of its own, so a task in flight would run
    to its end (a host given back, a member removed) after its controller was gone."""
    stopped = set()
    while True:
        tree = set(process_tree(pid)) - stopped
        if not tree:
            break
        for each in tree:
            with contextlib.suppress(ProcessLookupError):
                os.kill(each, signal.SIGSTOP)
        stopped |= tree
    for each in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(each, signal.SIGKILL)


def write_inventory(sandbox, path, groups):
    """The sandbox's inventory with the hosts of ``groups`` ({host: worker group}) moved from the control plane
    candidates to the group `workers`, each with its `worker_group`; the path written."""
    with open(sandbox.inventory, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    kept, workers = [], ["[workers]"]
    for line in lines:
        name = line.split(" ", 1)[0]
        if name in groups:
            workers.append("%s worker_group=%s" % (line, json.dumps(groups[name])))
        else:
            kept.append(line)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(kept + [""] + workers) + "\n")
    return str(path)


def recap(output):
    """{host: {ok, changed, failed, ...}} of a play's PLAY RECAP (ints)."""
    totals = {}
    for line in output.split("PLAY RECAP", 1)[-1].splitlines()[1:]:
        if ":" not in line:
            continue
        host, counts = line.split(":", 1)
        totals[host.strip()] = {key: int(value) for key, value in (pair.split("=") for pair in counts.split())}
    return totals


def snapshot_copies(directory, cluster):
    """{file name: path} of the controller's copies of the etcd snapshots of every cluster named ``cluster`` under
    ``directory`` (kcp_etcd_snapshot_dir): one directory per cluster identity below the name (docs/etcd-client.md)."""
    found = {}
    named = os.path.join(str(directory), cluster)
    for identity in sorted(os.listdir(named)) if os.path.isdir(named) else []:
        for name in os.listdir(os.path.join(named, identity)):
            if name.endswith(".db"):
                found[name] = os.path.join(named, identity, name)
    return found


def status_table(sandbox, extra_vars):
    """The status playbook's table lines (changing nothing): the next step, the control plane's conditions, then a
    row a machine (name, ..., its etcd member's role)."""
    done = sandbox.playbook(os.path.join(ROOT, "playbooks", "status.yml"), extra_vars)
    assert done.returncode == 0, done.stdout[-6000:]
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values())
    shown = done.stdout.split("Show where the control plane stands", 1)[1]
    lines, indent = [], None
    for line in shown.splitlines():
        depth = len(line) - len(line.lstrip())
        if line.strip().startswith("- "):
            lines.append(line.strip()[2:])
            indent = depth
        elif indent is not None and line.strip() and depth > indent:
            lines[-1] += " " + line.strip()  # the YAML callback folds a long line
        else:
            indent = None
    return [line.strip("'") for line in lines]


def steps_taken(output):
    """What each pass of a flow did, as its "This pass's step" task names it (pass N, <what>)."""
    return [line.split(", ", 1)[1].rstrip("] *") for line in output.splitlines() if "This pass's step: pass" in line]


def kubectl_json(sandbox, args, but=()):
    """kubectl's JSON answer from the first host (not in ``but``) that holds an admin kubeconfig and answers."""
    for host in sandbox.hosts():
        if host in but:
            continue
        got = sandbox.ssh(host, "kubectl --kubeconfig /etc/kubernetes/admin.conf %s -o json" % args, check=False)
        if got.returncode == 0:
            return json.loads(got.stdout) if got.stdout.strip() else None
    raise AssertionError("no host answers kubectl %s" % args)


# A pod that kubectl drain evicts rather than refuses (as it refuses an unmanaged one): a ReplicaSet's, kept on one
# node by a nodeSelector; it tolerates the control plane's taint, so any node may hold it.
OWNER = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: guarded, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: guarded}}
  template:
    metadata: {labels: {app: guarded}}
    spec:
      nodeSelector: {kubernetes.io/hostname: %s}
      tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
      containers: [{name: app, image: registry.k8s.io/pause:3.10.1}]
"""
BUDGET = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: guarded}}
"""


def bind_owned_pod(sandbox, via, node, budget):
    """The ReplicaSet ``guarded``, its one pod kept on ``node`` (a nodeSelector) and Ready, made through the admin
    kubeconfig of ``via``; with ``budget``, a PodDisruptionBudget (minAvailable 1) keeps it from being evicted. An
    evicted pod is made again by the ReplicaSet and waits, Pending, until ``node`` takes pods again."""
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    sandbox.ssh(via, admin + "apply -f - <<'EOF'\n%s\nEOF" % ((OWNER % node) + ("---" + BUDGET if budget else "")))
    deadline = time.monotonic() + 120
    while not guarded_pods_on(sandbox, via, node):
        assert time.monotonic() < deadline, "no pod of the ReplicaSet guarded on %s within 120 s" % node
        time.sleep(1)
    sandbox.ssh(via, admin + "wait --for=condition=Ready pod -l app=guarded --timeout=120s", timeout=150)


def guarded_pods_on(sandbox, via, node):
    """The names of the ReplicaSet guarded's pods bound to ``node``."""
    admin = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
    return sandbox.ssh(via, admin + "get pods -l app=guarded --field-selector spec.nodeName=%s -o name" % node).stdout.split()


def wait_ready(sandbox, names, status, longer_than=0, timeout=180):
    """Until each Node of ``names`` has said Ready ``status`` for more than ``longer_than`` seconds (for Unknown,
    the node lifecycle's verdict on a silent kubelet: past a health check's timeout the machine is unhealthy)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = {}
        for node in kubectl_json(sandbox, "get nodes", but=names if status == "Unknown" else ())["items"]:
            if node["metadata"]["name"] in names:
                seen[node["metadata"]["name"]] = next((c for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), {})
        if all(seen.get(name, {}).get("status") == status and _held_for(seen[name]) > longer_than for name in names):
            return
        assert time.monotonic() < deadline, "Nodes %s not Ready %s for %d s within %d s: %s" % (names, status, longer_than, timeout, seen)
        time.sleep(1)


STACKED_COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd")


def wait_control_plane_ready(sandbox, names, timeout=180, components=STACKED_COMPONENTS):
    """Until each machine of ``names`` is back: its Node Ready, then its static pods (``components``; no etcd with
    external etcd) running and ready (a restarted kubelet reports them only after the Node, and until then the
    status says PodProvisioning)."""
    wait_ready(sandbox, names, "True", timeout=timeout)
    deadline = time.monotonic() + timeout
    wanted = {"%s-%s" % (component, name) for name in names for component in components}
    while True:
        ready = {pod["metadata"]["name"] for pod in kubectl_json(sandbox, "-n kube-system get pods")["items"] if pod_is_ready(pod)}
        if wanted <= ready:
            return
        assert time.monotonic() < deadline, "static pods not ready within %d s: %s" % (timeout, sorted(wanted - ready))
        time.sleep(1)


def wait_pod_started_since(sandbox, pod, since, timeout=180):
    """Until static pod ``pod`` (kube-system) runs a container started at ``since`` (epoch seconds) or later and is
    Ready. A member whose own etcd was down could not report its pods (its kubelet talks to its own API server, and
    that one to its own etcd): until the kubelet reports the restart, the API still shows the status from before."""
    deadline = time.monotonic() + timeout
    while True:
        status = kubectl_json(sandbox, "-n kube-system get pod %s" % pod)["status"]
        started = [state["running"]["startedAt"] for state in (c.get("state") or {} for c in status.get("containerStatuses") or [])
                   if "running" in state]
        if started and calendar.timegm(time.strptime(started[0], "%Y-%m-%dT%H:%M:%SZ")) >= int(since) and any(
                c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or []):
            return
        assert time.monotonic() < deadline, "%s did not start again within %d s: %s" % (pod, timeout, status)
        time.sleep(1)


def pod_is_ready(pod):
    """Running, and its Ready condition True."""
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])


def _held_for(condition):
    since = calendar.timegm(time.strptime(condition["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ"))
    return time.time() - since


def _versions(mirror_dir):
    return sorted(os.listdir(mirror_dir), key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))


def newest(mirror_dir):
    """The newest Kubernetes version the sandbox's mirror offers."""
    return _versions(mirror_dir)[-1]


def newest_minor_start(mirror_dir):
    """The first patch of the newest minor the sandbox's mirror offers (a minor upgrade's target, from which the
    newest patch is a patch upgrade)."""
    minor = newest(mirror_dir).split(".")[:2]
    return [v for v in _versions(mirror_dir) if v.split(".")[:2] == minor][0]


def previous_minor(mirror_dir):
    """The newest version of the minor before the newest one (a minor-to-minor rollout's starting point)."""
    minor = newest(mirror_dir).split(".")[:2]
    return [v for v in _versions(mirror_dir) if v.split(".")[:2] != minor][-1]


class BackgroundWriter:
    """Writes a ConfigMap through the load balancer (the API endpoint in admin.conf) every ``period`` seconds
    while a flow runs, as a workload's controller would, and keeps when each write finished or failed. Every
    500 ms, a twelfth of the gap it is held to (WRITE_GAP_BOUND): each write goes through the emulated API server
    and every etcd member, and every 100 ms that took 0.14 of a CPU on a 3-machine sandbox (0.01 at 500 ms), CPU
    the end-to-end tests share.

    ``longest_gap()`` is the longest time without a successful write; ``written`` the last value the API server
    accepted, which the ConfigMap must still hold afterwards (nothing acknowledged is lost)."""

    NAME = "e2e-background-writer"

    def __init__(self, admin_conf, endpoint, period=0.5, timeout=(1.0, 3.0)):
        config = yaml.safe_load(admin_conf)
        servers = [cluster["cluster"]["server"] for cluster in config["clusters"]]
        assert servers == ["https://%s" % endpoint], "admin.conf does not go through the load balancer: %s" % servers
        handle, self._kubeconfig = tempfile.mkstemp(prefix="kcp-e2e-writer-", suffix=".conf")
        with os.fdopen(handle, "w") as out:
            out.write(admin_conf)
        self._core = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=self._kubeconfig))
        self._period, self._timeout = period, timeout
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="background-writer", daemon=True)
        self.successes, self.failures, self.errors = [], 0, []
        self.written = None
        self.started = self.stopped = None

    def _write(self, value):
        body = {"metadata": {"name": self.NAME}, "data": {"n": str(value)}}
        try:
            self._core.replace_namespaced_config_map(self.NAME, "default", body, _request_timeout=self._timeout)
        except k8s.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
            self._core.create_namespaced_config_map("default", body, _request_timeout=self._timeout)

    def _run(self):
        value = 0
        while not self._stop.is_set():
            began = time.monotonic()
            value += 1
            try:
                self._write(value)
            except Exception as exc:  # noqa: BLE001 - every failed write counts, whatever failed
                self.failures += 1
                if len(self.errors) < 5:
                    self.errors.append("%.1f s: %s" % (began - self.started, str(exc).splitlines()[0][:200]))
            else:
                self.successes.append(time.monotonic())
                self.written = value
            self._stop.wait(max(0.0, self._period - (time.monotonic() - began)))

    def __enter__(self):
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join(timeout=30)
        self.stopped = time.monotonic()
        os.unlink(self._kubeconfig)
        return False

    def longest_gap(self, outage_at_end_allowed=False):
        """The longest time without a successful write, from the start to the stop; the time after the last
        success is left out when ``outage_at_end_allowed`` (a flow that takes the API down on purpose)."""
        marks = [self.started] + self.successes + ([] if outage_at_end_allowed else [self.stopped])
        return max((later - earlier for earlier, later in zip(marks, marks[1:])), default=0.0)

    def read_back(self):
        """The value the ConfigMap holds now (read through the load balancer)."""
        return int(self._core.read_namespaced_config_map(self.NAME, "default", _request_timeout=self._timeout).data["n"])


# The longest a flow may leave a workload unable to write (docs/flows.md "What a workload sees"): one etcd
# leader election (kubeadm leaves etcd's election timeout at 1 s; a candidate waits 1-2 s, randomised) plus the
# load balancer's time to take a stopped API server out (fall 2 x inter 500 ms) plus one write's timeout (3 s).
WRITE_GAP_BOUND = 2.0 + 1.0 + 3.0


def assert_writes_survived(writer, what, outage_at_end_allowed=False):
    """The writer of a flow's run saw no longer gap than WRITE_GAP_BOUND and nothing it wrote was lost; no-op when
    there was no cluster to write to. A flow that takes the API down on purpose (delete) is judged up to its last
    successful write."""
    if writer is None:
        return
    gap = writer.longest_gap(outage_at_end_allowed)
    print("background writer during %s: %d writes, %d failed, longest without a successful write %.2f s"
          % (what, writer.failures + len(writer.successes), writer.failures, gap))
    assert writer.successes, "%s: no write through the load balancer succeeded (%s)" % (what, writer.errors)
    assert gap <= WRITE_GAP_BOUND, "%s: no write succeeded for %.1f s (%d of %d failed; first errors: %s)" % (
        what, gap, writer.failures, writer.failures + len(writer.successes), writer.errors)
    if not outage_at_end_allowed:
        # a write that timed out may still have been applied: the ConfigMap holds the last acknowledged value or later
        assert writer.read_back() >= writer.written, "%s: an acknowledged write was lost" % what


def lock_holder(sandbox, host):
    """Who holds the cluster lock, read through ``host``; "" when nobody does."""
    found = sandbox.ssh(host, "kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get lease control-plane-kubeadm-io"
                              " -o jsonpath='{.spec.holderIdentity}'", check=False)
    return found.stdout.strip() if found.returncode == 0 else ""


@contextlib.contextmanager
def held_by_another_run(sandbox, host, directory, holder):
    """The cluster lock taken, through ``host``'s admin kubeconfig, by ``holder`` running a rollout; released after."""
    kubeconfig = directory / "admin.conf"
    kubeconfig.write_text(sandbox.ssh(host, "cat /etc/kubernetes/admin.conf").stdout)
    kubeconfig.chmod(0o600)
    lock = dict(kubeconfig=str(kubeconfig), holder=holder, action="rollout")
    assert run("kcp_lock", lock)[0] == "CHANGED"
    try:
        yield
    finally:
        assert run("kcp_lock", dict(lock, state="absent"))[1]["decision"] == "release"
