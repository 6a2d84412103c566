# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How much the flows cost over the commands they run: create(3), scale 3 -> 5 and 5 -> 3, a rollout of the 3
machines to the next minor with max_surge 0, a rollout with max_surge 1 (rollout.after), an in-place upgrade of the
3 machines to the next patch, and the remediation of one machine whose kubelet stopped, on the sandbox, each against
a floor measured in the same run.

The floor is an operator doing the same work by hand over SSH, one step after another (the manual walk's steps,
tests/sandbox/tests/walk): node software installed on the new hosts at once, then ``kubeadm init`` (create) or a
fresh join command, then ``kubeadm join --control-plane`` on each new host in turn, each followed by the pod
network's configuration; to scale down, ``kubeadm reset`` (which removes the host's etcd member) and ``kubectl delete
node`` for each machine the flow removes (SCALED_DOWN, the oldest), in turn; to roll out, the kubeadm-config
ConfigMap's kubernetesVersion set by hand, then for each machine in turn ``kubeadm reset``, ``kubectl delete node``,
the new version's node software and a fresh join; with max_surge 1, for each machine in turn the node software and
a join on a spare host of its failure domain, then
``kubeadm reset`` and ``kubectl delete node`` of the old one; in place, for each machine in turn the new version's
node software, ``kubeadm upgrade apply`` (the first) or ``kubeadm upgrade node``, ``kubectl drain``, the kubelet
restarted, ``kubectl uncordon`` and the wait until its Node reports the version; to remediate, ``kubeadm reset`` and
``kubectl delete node`` of the unhealthy machine and a fresh join on its host (the wait until the machine is found
unhealthy is in neither figure; in both, that machine holds a workload's pod, which its drain evicts and waits out).
The cluster is created at the minor before the newest, rolled out to the newest minor's first patch (max_surge 0,
then max_surge 1 by rollout.after), then upgraded in place to its last patch. What the flows add on top: observing
the cluster and etcd each pass, the lock, the host records, the etcd snapshot before each membership change and
before the first machine upgraded in place, waiting for each new or upgraded machine's pods to be ready, the drain
before a removal, and each in-place step recorded on the Node. The in-place upgrade pins etcd.local.imageTag to the
mirror's 3.5 tag: the sandbox's etcd is 3.5.1, and the in-place upgrade's etcd path check refuses to move it to 3.7.

The floor also holds the safety steps a careful operator takes (over SSH, on a machine that stays): before each step
(a join, a removal, the kubeadm-config update, an in-place upgrade) one ``etcdctl endpoint health --cluster`` and
one ``kubectl get --raw /readyz``; before each membership change an ``etcdctl snapshot save`` copied to the
controller (and before the first machine upgraded in place); before each removal a ``kubectl drain``. And the
waits that work needs: after each host joins or is upgraded, until its control plane pods report Ready (the static
pods' startup probes, 10 s before their first check, as kubeadm writes them). A flow takes no next membership step
before the machine it added is healthy (docs/flows.md), and neither does the careful operator.

Printed for each flow: its time, the floor with its parts (commands, safety steps, waits), their ratio (target
<= 1.5), the tasks Ansible ran, the SSH invocations it made and the ten tasks that took longest (a callback,
bench/callback/task_times.py), and what it took beyond the floor, split (split_beyond_floor): Ansible's own cost
(its start, its plays, and each task at the cost per_task_costs measures in the same run for a task of its kind),
the floor's own work done slower or faster than by hand, part by part, and the flows' bookkeeping, task by task;
then a converged reconcile of the 3 machines (nothing to do, target <= 5 s) and a run refused for a bad spec
(target <= 3 s), each the median of three runs, and the converged reconcile again with each of ansible.cfg's
connection settings off and with no SSH connection left open by the runs before it (an AWX job's case). Own
sandbox ``benchflow`` (172.31.241.0/24), 6 hosts over 3 failure domains (max_surge 1 needs a spare host in each);
needs root.

    .venv/bin/python bench/flows.py
"""

import calendar
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANDBOX_DIR = os.path.join(ROOT, "tests", "sandbox")
sys.path[:0] = [SANDBOX_DIR, os.path.join(SANDBOX_DIR, "tests", "walk")]
import node_setup  # noqa: E402  (needs the path set above)
import walk_support as walk  # noqa: E402

NAME, SUBNET, TARGET = "benchflow", "172.31.241.0/24", 1.5
UNHEALTHY_AFTER_SECONDS = 5
# seconds the drain of a Node whose kubelet stopped waits for a pod past its deletion, in the flows and the floor alike
UNREACHABLE_POD_TIMEOUT = 5
# The machines scale 5 -> 3 removes, in the floor as in the flow: the flow removes the oldest machine of a failure
# domain with the most (Cluster API's rule, docs/flows.md), and the first holds the cluster's CoreDNS pods, which
# both drains then evict and wait for; removing the newest instead would drain Nodes with nothing to evict. main()
# checks that the flow removed these.
SCALED_DOWN = ("cp-1", "cp-2")
# seconds: a converged reconcile of 3 machines (nothing to do), a run refused for its spec
CONVERGED_TARGET, REFUSED_TARGET = 5, 3
# runs of each short run (converged, refused) of which the median is kept: one run of a few seconds moves by a second
# with what else the machine does
SHORT_RUNS = 3
# tasks of each kind the per-task costs are the mean of (per_task_costs)
CALIBRATION_TASKS = 40
# the converged reconcile again with each of ansible.cfg's connection settings turned off
CONNECTION_SETTINGS_OFF = (("converged, no pipelining", {"ANSIBLE_PIPELINING": "False"}),
                           ("converged, no SSH multiplexing", {"ANSIBLE_SSH_ARGS": "-o ControlMaster=no -o ControlPath=none"}))
BIN = os.path.dirname(sys.executable)
# From the in-place upgrade on (module docstring): the sandbox's etcd is 3.5.1 whatever the image tag.
ETCD_PINNED = {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}, "etcd": {"local": {"imageTag": "3.5.24-0"}}}}


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "
# the operator's etcdctl on a control plane host, with the host's etcd health-check client certificate
ETCDCTL = ("ETCDCTL_API=3 /opt/kcpsim/releases/etcd/3.5.1/etcdctl --endpoints https://127.0.0.1:2379"
           " --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/etcd/healthcheck-client.crt"
           " --key /etc/kubernetes/pki/etcd/healthcheck-client.key ")


def floor(operator, workdir, new, patch):
    """[{"commands", "safety", "waits"} seconds] of create(3), scale 3 -> 5, scale 5 -> 3, rollout(3) to ``new``
    with max_surge 0, rollout(3) to ``new`` with max_surge 1, in place to ``patch``, remediation of one machine: the
    operator's steps by hand, the safety steps they take before each, and the waits until each new or upgraded
    machine is healthy."""
    hosts = operator.inventory()[0]
    mirror_dir = operator.mirror()[0]
    parts = {"safety": 0.0, "waits": 0.0}

    def spent(part, action, *argv):
        start = time.perf_counter()
        action(*argv)
        parts[part] += time.perf_counter() - start

    def healthy(host):
        """Wait until ``host``'s control plane pods are all Ready."""
        spent("waits", wait_pods_ready, operator, host)

    def checked(via, membership=True, drained=None):
        """The safety steps before a step taken through ``via``: the health of etcd and of the API server; an
        etcd snapshot copied to the controller before a membership change; the drain of a machine to remove."""
        def steps():
            operator.ssh(via, ETCDCTL + "endpoint health --cluster")
            operator.ssh(via, ADMIN + "get --raw /readyz")
            if membership:
                operator.ssh(via, "umask 077 && " + ETCDCTL + "snapshot save /root/floor-snapshot.db")
                os.unlink(operator.fetch(via, "/root/floor-snapshot.db", workdir))
                operator.ssh(via, "rm /root/floor-snapshot.db")
            if drained:
                # a Node whose kubelet stopped never confirms a pod gone: not waited for past the flows' setting
                operator.ssh(via, ADMIN + "drain %s --ignore-daemonsets --delete-emptydir-data --timeout 120s"
                                          " --skip-wait-for-delete-timeout=%d" % (drained, UNREACHABLE_POD_TIMEOUT))
        spent("safety", steps)

    def create():
        operator.prepare_hosts(["cp-1", "cp-2", "cp-3"])
        output = operator.init_first_control_plane("cp-1", hosts["cp-1"]["failure_domain"], workdir)
        operator.install_pod_network("cp-1")
        healthy("cp-1")
        join = walk.control_plane_join_command(output)
        for host in ("cp-2", "cp-3"):
            checked("cp-1")
            operator.join_control_plane(host, join)
            operator.install_pod_network(host)
            healthy(host)

    def scale():
        operator.prepare_hosts(["cp-4", "cp-5"])
        for host in ("cp-4", "cp-5"):
            checked("cp-1")
            operator.join_control_plane(host, operator.fresh_control_plane_join_command("cp-1"))
            operator.install_pod_network(host)
            healthy(host)

    def scale_down():
        for host in SCALED_DOWN:
            checked("cp-3", drained=host)
            operator.ssh(host, "kubeadm reset --force")
            operator.ssh("cp-3", ADMIN + "delete node %s" % host)

    def rollout():
        checked("cp-4", membership=False)
        operator.ssh("cp-4", ADMIN + "-n kube-system get configmap kubeadm-config"
                     " -o yaml | sed 's/kubernetesVersion: .*/kubernetesVersion: %s/'"
                     " | kubectl --kubeconfig /etc/kubernetes/admin.conf replace -f -" % new)
        for host, via in (("cp-3", "cp-4"), ("cp-4", "cp-5"), ("cp-5", "cp-3")):
            checked(via, drained=host)
            operator.ssh(host, "kubeadm reset --force")
            operator.ssh(via, ADMIN + "delete node %s" % host)
            operator.node(host).prepare(mirror_dir, new, hosts[host]["failure_domain"])
            checked(via)
            operator.join_control_plane(host, operator.fresh_control_plane_join_command(via))
            operator.install_pod_network(host)
            healthy(host)

    def rollout_surge():
        for spare, old, via in (("cp-1", "cp-3", "cp-4"), ("cp-2", "cp-4", "cp-5"), ("cp-6", "cp-5", "cp-1")):
            operator.node(spare).prepare(mirror_dir, new, hosts[spare]["failure_domain"])
            checked(via)
            operator.join_control_plane(spare, operator.fresh_control_plane_join_command(via))
            operator.install_pod_network(spare)
            healthy(spare)
            checked(via, drained=old)
            operator.ssh(old, "kubeadm reset --force")
            operator.ssh(via, ADMIN + "delete node %s" % old)

    def in_place():
        for index, (host, upgrade) in enumerate((("cp-1", "apply %s --yes" % patch), ("cp-2", "node"), ("cp-6", "node"))):
            checked(host, membership=index == 0)
            operator.node(host).prepare(mirror_dir, patch, hosts[host]["failure_domain"])
            operator.ssh(host, "kubeadm upgrade %s" % upgrade)
            operator.ssh(host, ADMIN + "drain %s --ignore-daemonsets --delete-emptydir-data" % host)
            operator.ssh(host, "systemctl restart kubelet")
            operator.ssh(host, ADMIN + "uncordon %s" % host)
            operator.ssh(host, "timeout 300 sh -c 'until %s get node %s -o jsonpath={.status.nodeInfo.kubeletVersion} | grep -qx %s; "
                               "do sleep 1; done'" % (ADMIN.strip(), host, patch))
            healthy(host)

    def remediation():
        checked("cp-2", drained="cp-1")
        operator.ssh("cp-1", "kubeadm reset --force")
        operator.ssh("cp-2", ADMIN + "delete node cp-1")
        checked("cp-2")
        operator.join_control_plane("cp-1", operator.fresh_control_plane_join_command("cp-2"))
        operator.install_pod_network("cp-1")
        healthy("cp-1")

    def measured(action):
        """{"commands", "safety", "waits"}: the action's seconds apart from its safety steps and waits, and those."""
        parts.update(safety=0.0, waits=0.0)
        seconds = timed(action)
        return dict(parts, commands=seconds - parts["safety"] - parts["waits"])

    figures = [measured(create), measured(scale), measured(scale_down), measured(rollout), measured(rollout_surge), measured(in_place)]
    make_unhealthy(operator, "cp-1")
    return figures + [measured(remediation)]


def wait_pods_ready(operator, host):
    """Poll (every 0.2 s) until the 4 control plane pods of ``host`` report Ready."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        pods = admin_json(operator, "-n kube-system get pods -l tier=control-plane --field-selector spec.nodeName=%s" % host)["items"]
        if len(pods) >= 4 and all(any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
                                  for p in pods):
            return
        time.sleep(0.2)
    raise SystemExit("the control plane pods of %s were not Ready within 300 s" % host)


# The workload the machine to remediate holds in the floor and the flow alike (make_unhealthy): a ReplicaSet's pod
# kept on that node, which its drain evicts and then waits for past the pod's 30 s grace period, no kubelet there
# to end it sooner.
WORKLOAD = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: bench-workload, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: bench-workload}}
  template:
    metadata: {labels: {app: bench-workload}}
    spec:
      nodeSelector: {kubernetes.io/hostname: %s}
      tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
      containers: [{name: app, image: registry.k8s.io/pause:3.10.1}]
"""


def make_unhealthy(operator, host):
    """Give ``host`` a workload's pod (WORKLOAD), stop its kubelet and wait until the flows' health check finds it
    unhealthy (not timed): its Node Ready Unknown for longer than the spec's timeout."""
    via = next(name for name in sorted(operator.inventory()[0]) if name != host
               and operator.ssh(name, "test -e /etc/kubernetes/admin.conf", check=False).returncode == 0)
    operator.ssh(via, ADMIN + "apply -f - <<'EOF'\n%s\nEOF" % (WORKLOAD % host))
    # kubectl wait finds no pod until the ReplicaSet has made it
    operator.ssh(via, "timeout 120 sh -c 'until %sget pods -l app=bench-workload -o name | grep -q .; do sleep 0.2; done' && %s"
                      "wait --for=condition=Ready pod -l app=bench-workload --timeout=120s" % (ADMIN, ADMIN), timeout=270)
    operator.sandbox("fault", "kubelet-stop", host)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready = next((c for c in admin_json(operator, "get node %s" % host)["status"].get("conditions") or [] if c["type"] == "Ready"), {})
        if ready.get("status") == "Unknown" and time.time() - calendar.timegm(
                time.strptime(ready["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")) > UNHEALTHY_AFTER_SECONDS + 1:
            return
        time.sleep(1)
    raise SystemExit("%s was not found unhealthy within 300 s" % host)


def admin_json(operator, args):
    """kubectl's JSON answer from the first host that holds an admin kubeconfig and answers."""
    for host in sorted(operator.inventory()[0]):
        done = operator.ssh(host, "kubectl --kubeconfig /etc/kubernetes/admin.conf %s -o json" % args, check=False)
        if done.returncode == 0:
            return json.loads(done.stdout)
    raise SystemExit("no host answers kubectl %s" % args)


def ansible_env(**settings):
    """The environment ansible-playbook runs in as an operator runs it from this checkout (its ansible.cfg, this
    collection), with ``settings`` added."""
    return dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"), **settings)


def flow(operator, playbook, replicas, workdir, version, max_surge=0, refused=False, environment=None, extra_vars=None, **spec):
    """{seconds, tasks, ssh, top, times} of one flow run by ansible-playbook, as an operator runs it (``top``: its
    ten costliest tasks, (seconds, runs, name); ``times``: each task's, bench/callback/task_times.py); ``spec``: more
    fields of the spec; ``refused``: the run must fail; ``environment``: more of Ansible's environment (settings
    measured against the collection's ansible.cfg); ``extra_vars``: more extra vars."""
    inventory = os.path.join(operator.state, "inventory.ini")
    variables = operator.inventory()[1]
    mirror_dir = operator.mirror()[0]
    extra = {"kcp_bundle_dir": mirror_dir, "kcp_etcd_snapshot_dir": os.path.join(workdir, "snapshots"),
             "ansible_ssh_executable": counting_ssh(workdir),
             "machine_delete_unreachable_pod_timeout": UNREACHABLE_POD_TIMEOUT,
             "kcp": {"cluster_name": "bench", "replicas": replicas, "version": version, "rollout": {"max_surge": max_surge},
                     "health_check": {"unhealthy_conditions": [
                         {"type": "Ready", "status": status, "timeout": "%ds" % UNHEALTHY_AFTER_SECONDS} for status in ("Unknown", "False")]},
                     "endpoint": {"host": variables["sandbox_endpoint_host"], "port": 6443},
                     "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}}
    extra["kcp"].update(spec)
    extra.update(extra_vars or {})
    count_file, times_file = os.path.join(workdir, "ssh-count"), os.path.join(workdir, "task-times.json")
    open(count_file, "w").close()
    env = ansible_env(ANSIBLE_NOCOLOR="1", ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "bench", "callback"),
                      ANSIBLE_CALLBACKS_ENABLED="task_times", KCP_BENCH_TASK_TIMES=times_file, **(environment or {}))
    start = time.perf_counter()
    done = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, os.path.join(ROOT, "playbooks", playbook),
                           "-e", json.dumps(extra)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=1800, check=False)
    seconds = time.perf_counter() - start
    if (done.returncode != 0) != refused:
        raise SystemExit("%s %s (exit %d):\n%s" % (playbook, "was not refused" if refused else "failed", done.returncode, done.stdout[-4000:]))
    with open(times_file, encoding="utf-8") as handle:
        times = json.load(handle)["tasks"]
    top = sorted(((entry["seconds"], entry["runs"], name) for name, entry in times.items()), reverse=True)[:10]
    with open(count_file, encoding="utf-8") as handle:
        return {"seconds": seconds, "tasks": len(re.findall(r"^TASK \[", done.stdout, re.MULTILINE)),
                "ssh": len(handle.readlines()), "top": top, "times": times}


def per_task_costs(operator, workdir):
    """(seconds, seconds, seconds, seconds, seconds, seconds): what Ansible costs, with this repository's settings, for
    a task that runs no module (a set_fact, as much of the flows' bookkeeping is), for one that runs a module on the
    controller (ansible.builtin.ping on localhost, the least a module does), for one that runs it on a sandbox host
    over its SSH connection, for each more host the same task runs it on at once (the sandbox's hosts share the
    machine's CPUs: on 6 hosts a module costs several times what it costs on one), and the same two for a task that
    runs a command on the host and no module (ansible.builtin.raw, as machine_info does): a play of
    CALIBRATION_TASKS such tasks against the same play with one, per task added, measured in this run."""
    inventory = os.path.join(operator.state, "inventory.ini")

    def seconds(hosts, task, count):
        path = os.path.join(workdir, "calibration.yml")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump([{"hosts": hosts, "gather_facts": False, "tasks": [dict(task, name="task %d" % n) for n in range(count)]}], handle)
        # the least of three: what the tasks cost, not what else the machine did meanwhile
        return min(timed(lambda: subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, path], cwd=ROOT, env=ansible_env(),
                                                stdin=subprocess.DEVNULL, capture_output=True, check=True, timeout=600))
                   for _attempt in range(3))

    def per_task(hosts, task):
        return (seconds(hosts, task, CALIBRATION_TASKS) - seconds(hosts, task, 1)) / (CALIBRATION_TASKS - 1)

    hosts = sorted(operator.inventory()[0])
    ping, raw = {"ansible.builtin.ping": {}}, {"ansible.builtin.raw": "true"}
    on_host, command_on_host = per_task("cp-1", ping), per_task("cp-1", raw)
    return (per_task("localhost", {"ansible.builtin.set_fact": {"calibration": 1}}), per_task("localhost", ping), on_host,
            (per_task(",".join(hosts), ping) - on_host) / (len(hosts) - 1), command_on_host,
            (per_task(",".join(hosts), raw) - command_on_host) / (len(hosts) - 1))


# The flows' tasks that do the floor's work, by the floor's part (their names): the rest is the flows' own
# bookkeeping (the host records, the lock, the plan, the Node's records, the join's configuration and its cleanup).
# The observation is the flows' health check before each step, as the floor's etcdctl and readyz are.
FLOOR_WORK = (
    ("commands", re.compile(r"Install the node software|Install the new |Run kubeadm|Reset the (host|machine) with kubeadm|: Delete the Node$"
                            r"|Remove the machine's etcd member|pod network configuration$|Make a bootstrap token|Upload the shared certificates"
                            r"|: Take the step |: Uncordon the Node$|Update the cluster's kubeadm configuration$|: Restart the kubelet$"
                            # the operator's one line that reads kubeadm-config, edits it and writes it back
                            r"|Read the kubeadm-config ConfigMap$|Work out the ClusterConfiguration|Set the spec's fields in the ClusterConfiguration")),
    ("safety", re.compile(r"Read the cluster, etcd and the host records|Save an etcd snapshot|Drain the Node")),
    ("waits", re.compile(r": Wait until ")),
)


# Why each bookkeeping task stays (the first pattern its name matches): the closing account of a flow's time beyond
# its floor and Ansible's cost per task. A task no pattern names is printed as not accounted for.
BOOKKEEPING_REASONS = (
    ("the observation's host side, each pass: every candidate host's record read again, so that a step acts on what"
     " is true now and a killed run is found where it stopped",
     re.compile(r"observe : (Read what this host knows|Keep the snapshot|Leave out of this observation|Refuse to go on when no host)")),
    ("the records that let the next run finish a step a killed run left half done: the host record before and after"
     " each step, the Node's annotations",
     re.compile(r"[Hh]ost record|Record on the Node|Mark the Node deleting|Clear the remediation|Give the host back to the pool"
                r"|Record what was found|record of the upgrade|Write down that the step is done|Record it on the Node|what the Node records"
                r"|for the record$|what the upgrade has done|^Record the remediation|the remediation of ")),
    ("the cluster lock: one run at a time, checked right before each membership change, given back at the end",
     re.compile(r"cluster lock")),
    ("secrets kept short-lived: each join's kubeadm configuration written 0600 and removed once read, its bootstrap"
     " token and uploaded certificates deleted once used",
     re.compile(r"bootstrap token|kubeadm configuration")),
    ("checks before acting: bad input refused, the bundle's checksums, a join or an init a stopped run left, a host"
     " that stopped answering",
     re.compile(r"Refuse|Check the bundle|Read whether this machine already|Ask the cluster|Read the etcd members|Stop when"
                r"|Wait while a kubeadm|Take the join as done|Take the kubeadm init|Keep when kubeadm init|Undo a join|: Say "
                r"|Fail with the reason|Stop the run when a host|Stop this pass|Stop where the plan waits")),
    ("the pass itself: its plays and includes, the plan from the observation, the step picked and handed to its host",
     re.compile(r"^Observe and plan$|^Act$|Plan the next step|Choose what|Pick the host|Say whether|Say the flow|In check mode"
                r"|The whole plan|This pass's step|Hand the step|Leave hosts an earlier|Leave the host|Validating arguments"
                r"|Finish the flow|^Build the machine$|^Join the control plane|^Remove the machine$|machine provider"
                r"|Take the provider's host|Name the machine|^Run kubeadm init, or|^Save an etcd snapshot before|^Wait until"
                r"|steps that remain|^Upgrade the node in place$|node_upgrade : Read the Nodes$")),
    ("the report: the status from the final observation, shown and published to AWX",
     re.compile(r"Plan from the snapshot|Read the status|Show where|Publish the status")),
)
NOT_ACCOUNTED = "not accounted for"


def bookkeeping_by_reason(bookkeeping):
    """[(seconds, reason, [(seconds, runs, task)])]: ``bookkeeping`` (split_beyond_floor's) summed by
    BOOKKEEPING_REASONS, the largest first; the tasks no reason names under NOT_ACCOUNTED."""
    groups = {}
    for seconds, runs, task in bookkeeping:
        reason = next((why for why, pattern in BOOKKEEPING_REASONS if pattern.search(task)), NOT_ACCOUNTED)
        groups.setdefault(reason, []).append((seconds, runs, task))
    return sorted(((sum(entry[0] for entry in tasks), reason, sorted(tasks, reverse=True)) for reason, tasks in groups.items()),
                  reverse=True)


def split_beyond_floor(run, parts, costs):
    """What a flow took beyond its floor, split: Ansible's own cost (its start and its plays, outside any task; each
    task's cost by its kind, ``costs`` as per_task_costs measures them), the floor's work (FLOOR_WORK) done in more
    or less time than the floor's, part by part, and each bookkeeping task's time beyond its cost. Each task's time
    beyond its cost is an estimate: the hosts of one task run at once, and a task's cost is a mean."""
    ansible_tasks, work, bookkeeping = 0.0, dict.fromkeys(parts, 0.0), []
    no_module, local, on_host, each_more_host, command_on_host, each_more_command_host = costs
    for name, entry in run["times"].items():
        cost = (entry["kinds"][0] * no_module + entry["kinds"][1] * local + entry["kinds"][2] * on_host
                + (entry["remote_hosts"] - entry["kinds"][2]) * each_more_host + entry["kinds"][3] * command_on_host
                + (entry["command_hosts"] - entry["kinds"][3]) * each_more_command_host)
        ansible_tasks += cost
        part = next((part for part, pattern in FLOOR_WORK if pattern.search(name)), None)
        if part:
            work[part] += entry["seconds"] - cost
        else:
            bookkeeping.append((entry["seconds"] - cost, entry["runs"], name))
    outside = run["seconds"] - sum(entry["seconds"] for entry in run["times"].values())
    return {"outside": outside, "ansible_tasks": ansible_tasks, "slower": {part: work[part] - parts[part] for part in parts},
            "bookkeeping": sorted(bookkeeping, reverse=True)}


def median_run(run):
    """The run of median time of SHORT_RUNS calls of ``run`` (a flow's figures), with every run's seconds as ``all``."""
    runs = sorted((run() for _attempt in range(SHORT_RUNS)), key=lambda figures: figures["seconds"])
    return dict(runs[len(runs) // 2], all=[figures["seconds"] for figures in runs])


def control_plane_nodes(operator):
    """The control plane Nodes' names, sorted."""
    return sorted(node["metadata"]["name"] for node in admin_json(operator, "get nodes -l node-role.kubernetes.io/control-plane")["items"])


def counting_ssh(workdir):
    """An ssh that counts its invocations in <workdir>/ssh-count (one a round trip, whatever ControlPersist
    reuses underneath) and runs the real ssh."""
    path = os.path.join(workdir, "ssh")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\necho >> %s\nexec %s \"$@\"\n" % (os.path.join(workdir, "ssh-count"), shutil.which("ssh")))
    os.chmod(path, stat.S_IRWXU)
    return path


def main():
    operator = walk.Operator(NAME)
    workdir = tempfile.mkdtemp(prefix="bench-flows-")
    try:
        operator.down()
        operator.up(6, 3, SUBNET)
        mirror_dir = operator.mirror()[0]
        # created at the minor before the newest, rolled out to the newest minor's first patch, then to its last
        names = sorted(os.listdir(mirror_dir), key=lambda v: tuple(int(p) for p in v.lstrip("v").split(".")))
        patch = names[-1]
        new = next(v for v in names if v.split(".")[:2] == patch.split(".")[:2])
        old = node_setup.newest([v for v in names if v.split(".")[:2] != patch.split(".")[:2]])
        walk.WALK_VERSION = old
        floors = floor(operator, workdir, new, patch)
        operator.down()
        operator.up(6, 3, SUBNET)
        figures = [("create(3)", flow(operator, "create.yml", 3, workdir, old)),
                   ("scale 3->5", flow(operator, "scale.yml", 5, workdir, old)),
                   ("scale 5->3", flow(operator, "scale.yml", 3, workdir, old))]
        scaled_down = sorted({"cp-1", "cp-2", "cp-3", "cp-4", "cp-5"} - set(control_plane_nodes(operator)))
        if scaled_down != sorted(SCALED_DOWN):
            raise SystemExit("scale 5->3 removed %s, the floor %s: not the same work" % (", ".join(scaled_down), ", ".join(SCALED_DOWN)))
        figures += [("rollout s0", flow(operator, "rollout.yml", 3, workdir, new, max_surge=0)),
                    ("rollout s1", flow(operator, "rollout.yml", 3, workdir, new, max_surge=1,
                                        rollout={"max_surge": 1, "after": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})),
                    ("in place", flow(operator, "upgrade.yml", 3, workdir, patch, upgrade={"strategy": "in_place"}, kubeadm=ETCD_PINNED))]
        sick = control_plane_nodes(operator)[0]
        make_unhealthy(operator, sick)
        figures.append(("remediate", flow(operator, "remediate.yml", 3, workdir, patch, kubeadm=ETCD_PINNED)))
        figures = [figure + (parts,) for figure, parts in zip(figures, floors)]
        fixed = [("converged", median_run(lambda: flow(operator, "reconcile.yml", 3, workdir, patch, kubeadm=ETCD_PINNED)), CONVERGED_TARGET),
                 ("refused", median_run(lambda: flow(operator, "reconcile.yml", 3, workdir, "v1.37", refused=True, kubeadm=ETCD_PINNED)),
                  REFUSED_TARGET)]
        # the connection settings of ansible.cfg (docs/flows.md "How fast"), each turned off in turn: no target, the difference
        # and with SSH connections opened anew (their master sockets in a directory of its own), as in an AWX job's
        # container, where no earlier run left one open
        reuse = [(name, flow(operator, "reconcile.yml", 3, workdir, patch, environment=setting, kubeadm=ETCD_PINNED))
                 for name, setting in CONNECTION_SETTINGS_OFF + (
                     ("converged, SSH opened anew", {"ANSIBLE_SSH_CONTROL_PATH_DIR": os.path.join(workdir, "control-paths")}),)]
        costs = per_task_costs(operator, workdir)
    finally:
        operator.down()
        shutil.rmtree(workdir)
    verdicts = []  # printed, like the other benchmarks' targets: a missed one is a figure to act on, not a crash
    for name, run, parts in figures:
        floor_seconds = parts["commands"] + parts["safety"] + parts["waits"]
        ratio = run["seconds"] / floor_seconds
        verdicts.append(ratio <= TARGET)
        print("%-11s %6.1f s  floor %5.1f s (commands %5.1f + safety %4.1f + waits %4.1f) = %4.2f x floor (target <= %.1f: %s)"
              "  %4d tasks  %4d ssh invocations"
              % (name, run["seconds"], floor_seconds, parts["commands"], parts["safety"], parts["waits"], ratio, TARGET,
                 "met" if ratio <= TARGET else "MISSED", run["tasks"], run["ssh"]))
        beyond = split_beyond_floor(run, parts, costs)
        bookkeeping = sum(seconds for seconds, _runs, _task in beyond["bookkeeping"])
        print("            beyond the floor %5.1f s = Ansible's own cost %5.1f s (start and plays %4.1f s, tasks %4.1f s)"
              " + the floor's work, slower by %4.1f s (%s) + bookkeeping %4.1f s"
              % (run["seconds"] - floor_seconds, beyond["outside"] + beyond["ansible_tasks"], beyond["outside"], beyond["ansible_tasks"],
                 sum(beyond["slower"].values()), ", ".join("%s %+.1f" % item for item in beyond["slower"].items()), bookkeeping))
        print("            bookkeeping by why it stays (each task's time beyond Ansible's cost for it; the largest tasks):")
        for seconds, reason, tasks in bookkeeping_by_reason(beyond["bookkeeping"]):
            print("    %6.1f s  %s" % (seconds, reason))
            for task_seconds, runs, task in tasks[:len(tasks) if reason == NOT_ACCOUNTED else 3]:
                print("        %6.1f s %4d x  %s" % (task_seconds, runs, task[:100]))
        print("            the costliest tasks:")
        for seconds, runs, task in run["top"]:
            print("    %6.1f s %4d x  %s" % (seconds, runs, task[:110]))
    for name, run, target in fixed:
        verdicts.append(run["seconds"] <= target)
        print("%-11s %6.1f s, the median of %s s  (target <= %.0f s: %s)  %4d tasks  %4d ssh invocations"
              % (name, run["seconds"], " / ".join("%.1f" % seconds for seconds in run["all"]), target,
                 "met" if run["seconds"] <= target else "MISSED", run["tasks"], run["ssh"]))
        split = split_beyond_floor(run, dict.fromkeys(("commands", "safety", "waits"), 0.0), costs)
        print("            Ansible's own cost %4.1f s (start and plays %4.1f s, tasks %4.1f s), the observation's reads beyond it %4.1f s,"
              " the rest %4.1f s" % (split["outside"] + split["ansible_tasks"], split["outside"], split["ansible_tasks"],
                                     sum(split["slower"].values()), sum(seconds for seconds, _runs, _task in split["bookkeeping"])))
        for seconds, runs, task in run["top"][:5]:
            print("    %6.1f s %4d x  %s" % (seconds, runs, task[:110]))
    for name, run in reuse:
        print("%-30s %6.1f s  %4d tasks  %4d ssh invocations" % (name, run["seconds"], run["tasks"], run["ssh"]))
    print("Ansible's cost per task: %.0f ms without a module, %.0f ms with a module on the controller, %.0f ms with a module on a sandbox host,"
          " %.0f ms more for each more host it runs on at once; %.0f ms with a command and no module on a sandbox host, %.0f ms more for each"
          " more host" % tuple(cost * 1000 for cost in costs))
    print("target %s" % ("met for every flow" if all(verdicts) else "MISSED"))


if __name__ == "__main__":
    main()
