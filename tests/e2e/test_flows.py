# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The create, scale, rollout, delete and status playbooks end to end on 5 bare sandbox hosts over 3 failure
domains, run by path over SSH as an operator runs them: check mode prints the plan and changes nothing; create 1,
then scale 1 -> 3 -> 5 -> 3 spread over the failure domains, each machine annotated and recorded, an etcd snapshot
before every membership change; a second run changes nothing; what was written to the cluster before a flow is
still there after it; a run killed after starting a machine, one killed during a scale down and one killed inside
kubeadm join are finished by the next one; the refusals (an invalid spec before any host is touched, no load
balancer at the endpoint, the lock held by another run, an empty lock holder, an etcd member down, worker Nodes left
at delete); the bad days of the lock: a host powered off mid-join stops the run, which gives the lock back; a lock
far shorter than a join is kept alive while a second run is refused all along; a run whose lock another run took
stops before its next membership change; delete 3 -> 0; then a cluster of one whose host is powered off: delete refuses, changing nothing, and finishes once the
host is back; status prints the table. Once a cluster exists,
every flow runs with a background writer through the load balancer (docs/flows.md "What a workload sees").
(Scale 3 -> 1 runs in test_providers.py; rollouts in test_rollout.py.)"""

import getpass
import json
import os
import re
import socket
import stat
import subprocess
import time

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, controller_run
from ansible_run import run
import e2e_support
from e2e_support import ROOT, assert_writes_survived, newest, recap, walk

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-flows", "172.31.243.0/24", 5, 3)
CREATE = os.path.join(ROOT, "playbooks", "create.yml")
DELETE = os.path.join(ROOT, "playbooks", "delete.yml")
SCALE = os.path.join(ROOT, "playbooks", "scale.yml")
ENDPOINT = "172.31.243.100:6443"
ADMIN = "kubectl --kubeconfig /etc/kubernetes/admin.conf "


def flow_vars(sandbox, replicas, endpoint="172.31.243.100", version=None, max_surge=1):
    return {"kcp_bundle_dir": sandbox.mirror_dir, "kcp_etcd_snapshot_dir": sandbox.snapshot_dir,
            "kcp": {"cluster_name": "flows", "replicas": replicas, "version": version or newest(sandbox.mirror_dir),
                    "endpoint": {"host": endpoint, "port": 6443}, "rollout": {"max_surge": max_surge},
                    "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}}


def flow(sandbox, playbook, replicas, check=False, **spec):
    """The flow's run, with a workload writing through the load balancer all along once a cluster exists."""
    with sandbox.writing(ENDPOINT) as writer:
        done = sandbox.playbook(playbook, flow_vars(sandbox, replicas, **spec), check=check, timeout=1200)
    assert done.returncode == 0, done.stdout[-8000:]
    assert_writes_survived(writer, "%s to %d" % (os.path.basename(playbook), replicas), outage_at_end_allowed=playbook == DELETE)
    return done


def kubectl(sandbox, args):
    """kubectl's output on the first host that holds an admin kubeconfig (scaling down retires any machine)."""
    for host in sandbox.hosts():
        got = sandbox.ssh(host, ADMIN + args, check=False)
        if got.returncode == 0:
            return got.stdout
    raise AssertionError("no host answers kubectl %s" % args)


def control_plane_nodes(sandbox):
    """{node: (zone, annotations)} of the control plane Nodes."""
    return {n["metadata"]["name"]: (n["metadata"]["labels"].get("topology.kubernetes.io/zone"), n["metadata"].get("annotations") or {})
            for n in json.loads(kubectl(sandbox, "get nodes -l node-role.kubernetes.io/control-plane -o json"))["items"]}


def snapshot_copies(sandbox):
    """{file name: path} of the controller's copies of the etcd snapshots of the clusters named flows."""
    return e2e_support.snapshot_copies(sandbox.snapshot_dir, "flows")


def record(sandbox, host):
    return json.loads(sandbox.ssh(host, "cat /etc/kubernetes/control-plane-machine.json").stdout)


def started_hosts(sandbox):
    """{host: its host record} of the hosts whose record says a machine was started and not finished."""
    records = {host: sandbox.ssh(host, "cat /etc/kubernetes/control-plane-machine.json", check=False).stdout for host in sandbox.hosts()}
    return {host: json.loads(text) for host, text in records.items()
            if text and json.loads(text).get("step") in ("installing", "joining")}


def usable_bootstrap_tokens(sandbox):
    """The bootstrap token Secrets that can still authenticate or sign (the token kubeadm upload-certs makes to time
    the kubeadm-certs Secret out can do neither)."""
    secrets = json.loads(kubectl(sandbox, "-n kube-system get secrets -o json"))["items"]
    return [secret["metadata"]["name"] for secret in secrets if secret.get("type") == "bootstrap.kubernetes.io/token"
            and {(secret.get("data") or {}).get(usage) for usage in ("usage-bootstrap-authentication", "usage-bootstrap-signing")} != {None}]


def test_check_mode_on_bare_hosts_prints_the_plan_and_changes_nothing(bare_hosts):
    done = flow(bare_hosts, CREATE, 1, check=True)
    assert "no control plane machine exists: create the first one with kubeadm init" in done.stdout
    assert "would run kubeadm init on cp-1" in done.stdout
    for host in bare_hosts.hosts():
        assert bare_hosts.ssh(host, "test -e /usr/local/bin/kubeadm || test -e /etc/kubernetes/control-plane-machine.json",
                              check=False).returncode == 1


def nothing_on(sandbox, host):
    """The host holds no machine: no record, no kubeconfig, no static pod manifest, and no etcd snapshot of the
    cluster it served."""
    return sandbox.ssh(host, "test -e /etc/kubernetes/control-plane-machine.json || test -e /etc/kubernetes/admin.conf"
                             " || test -e /etc/kubernetes/manifests/kube-apiserver.yaml"
                             " || test -e /var/lib/kubeadm-control-plane/etcd-snapshots", check=False).returncode == 1


def test_create_is_refused_when_nothing_accepts_connections_at_the_endpoint(bare_hosts):
    refused = bare_hosts.playbook(CREATE, flow_vars(bare_hosts, 1, endpoint="172.31.243.99"), timeout=600)
    assert refused.returncode != 0
    assert "nothing accepts connections at the API endpoint 172.31.243.99:6443 from cp-1" in refused.stdout
    assert all(nothing_on(bare_hosts, host) for host in bare_hosts.hosts())
    assert bare_hosts.ssh("cp-1", "test -e /usr/local/bin/kubeadm", check=False).returncode == 1


def test_a_first_machine_whose_init_failed_is_reset_and_made_again_by_the_next_run(bare_hosts):
    # what a run killed right after its first step leaves: the host record of a machine being installed
    bare_hosts.ssh("cp-1", "mkdir -p /etc/kubernetes && umask 077 && echo '%s' > /etc/kubernetes/control-plane-machine.json"
                   % json.dumps({"name": "cp-1", "failure_domain": "fd-1", "created": "2026-11-26T10:00:00Z",
                                 "bootstrap": "init", "step": "installing"}))
    # the next run finishes it, and kubeadm init fails at wait-control-plane: the API server refuses a flag's value
    # and never starts. kubeadm has written admin.conf, but no kubeadm-config, cluster-info or RBAC for it.
    failing = flow_vars(bare_hosts, 1)
    failing["kcp"]["kubeadm"]["cluster_configuration"]["apiServer"] = {"extraArgs": [{"name": "v", "value": "loud"}]}
    failing["kcp"]["kubeadm"]["init_configuration"] = {"timeouts": {"controlPlaneComponentHealthCheck": "10s"}}
    refused = bare_hosts.playbook(CREATE, failing, timeout=900)
    assert refused.returncode != 0
    assert "machine cp-1 was started and not finished: finish it first" in refused.stdout
    assert "kubeadm init failed on cp-1" in refused.stdout, refused.stdout[-6000:]
    failed = record(bare_hosts, "cp-1")
    assert failed["init_failed"] and not failed.get("initialized") and failed["step"] == "joining"
    assert bare_hosts.ssh("cp-1", "test -e /etc/kubernetes/admin.conf", check=False).returncode == 0
    # status reads the cluster as not made yet (not through that admin.conf, which its API server would refuse)
    table = status_table(bare_hosts, 1)
    assert any(line.startswith("cp-1 ") for line in table), table
    # with the flag fixed, the next run resets what the failed init left (etcd holds cp-1's member alone) and runs it
    # again (no workload writes meanwhile: the cluster it makes is a new one, with a CA of its own)
    done = bare_hosts.playbook(CREATE, flow_vars(bare_hosts, 1), timeout=1200)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "machine cp-1 was started and not finished: finish it first" in done.stdout
    assert "Reset the machine with kubeadm" in done.stdout and "kubeadm init failed on cp-1" not in done.stdout
    nodes = control_plane_nodes(bare_hosts)
    assert list(nodes) == ["cp-1"]
    zone, annotations = nodes["cp-1"]
    assert zone == "fd-1" and annotations["control-plane.kubeadm.io/bootstrap"] == "init"
    # the machine keeps the creation time it was started with
    assert annotations["control-plane.kubeadm.io/created"] == "2026-11-26T10:00:00Z"
    written = record(bare_hosts, "cp-1")
    assert written["step"] == "joined" and written["spec_hash"] == annotations["control-plane.kubeadm.io/spec-hash"]
    assert written["initialized"] and not written.get("init_failed")
    assert bare_hosts.ssh("cp-1", "stat -c %a /etc/kubernetes/control-plane-machine.json").stdout.strip() == "600"


def test_an_init_kubeadm_finished_after_its_run_was_killed_is_finished_not_made_again(bare_hosts):
    kubectl(bare_hosts, "create configmap written-after-init --from-literal=k=v")
    annotations = control_plane_nodes(bare_hosts)["cp-1"][1]
    # what a run killed while kubeadm init ran leaves once kubeadm finished on its own: the Node without the flow's
    # annotations, the host record at joining with no time of init, the configuration with init's secrets
    kubectl(bare_hosts, "annotate node cp-1 control-plane.kubeadm.io/created- control-plane.kubeadm.io/spec-hash- "
                        "control-plane.kubeadm.io/bootstrap-")
    bare_hosts.ssh("cp-1", "sed -i 's/\"step\": \"joined\"/\"step\": \"joining\"/; s/\"initialized\": \"[^\"]*\"/\"initialized\": null/'"
                           " /etc/kubernetes/control-plane-machine.json"
                           " && umask 077 && printf 'kind: InitConfiguration\\nbootstrapTokens:\\n- token: abcdef.0123456789abcdef\\n'"
                           " > /etc/kubernetes/kubeadm-control-plane.yaml && kubeadm token create abcdef.0123456789abcdef")
    assert record(bare_hosts, "cp-1")["initialized"] is None and usable_bootstrap_tokens(bare_hosts) == ["bootstrap-token-abcdef"]
    done = flow(bare_hosts, CREATE, 1)
    # the cluster answered that init published cluster-info: finished from the record, nothing reset
    assert "machine cp-1 was started and not finished: finish it first" in done.stdout, done.stdout[-6000:]
    assert kubectl(bare_hosts, "get configmap written-after-init -o jsonpath={.data.k}") == "v"
    finished = control_plane_nodes(bare_hosts)["cp-1"][1]
    assert {key: finished.get(key) for key in annotations if key.startswith("control-plane.kubeadm.io/")} == \
        {key: value for key, value in annotations.items() if key.startswith("control-plane.kubeadm.io/")}
    written = record(bare_hosts, "cp-1")
    assert written["step"] == "joined" and written["initialized"]
    # the configuration init read is gone, and the token it held (valid 24 hours) with it
    assert bare_hosts.ssh("cp-1", "test -e /etc/kubernetes/kubeadm-control-plane.yaml", check=False).returncode == 1
    assert not usable_bootstrap_tokens(bare_hosts)


def test_a_second_create_changes_nothing(bare_hosts):
    done = flow(bare_hosts, CREATE, 1)
    assert all(counts["changed"] == 0 for counts in recap(done.stdout).values()), done.stdout[-6000:]
    assert "next step: none (the control plane is as declared)" in done.stdout


def test_scale_up_spreads_over_the_failure_domains_and_keeps_what_the_cluster_holds(bare_hosts):
    bare_hosts.ssh("cp-1", ADMIN + "create configmap written-before-scale --from-literal=k=v")
    # The first step installs the node software of both new machines' hosts at once. Killed while it does: the next
    # run finishes the machine it started, then makes the other on the host installed ahead, which holds no host record
    # (nothing but its software changed there).
    killed = bare_hosts.playbook_killed(SCALE, flow_vars(bare_hosts, 3), "node_software : Install the node software", after=0)
    assert "Hand the step its hosts: cp-2 (and cp-3 ahead)" in killed, killed[-6000:]
    assert set(started_hosts(bare_hosts)) == {"cp-2"} and record(bare_hosts, "cp-2")["step"] == "installing"
    assert bare_hosts.ssh("cp-3", "test -e /etc/kubernetes/control-plane-machine.json", check=False).returncode == 1
    done = flow(bare_hosts, SCALE, 3)
    assert "machine cp-2 was started and not finished: finish it first" in done.stdout, done.stdout[-6000:]
    # init's and each join's bootstrap token and uploaded certificates are gone once it is done, not valid for
    # their TTL, and no host keeps the kubeadm configuration that held them (what stays is the token kubeadm's
    # upload-certs makes to time the Secret out, which can neither authenticate nor sign)
    secrets = json.loads(kubectl(bare_hosts, "-n kube-system get secrets -o json"))["items"]
    assert "kubeadm-certs" not in [secret["metadata"]["name"] for secret in secrets]
    assert not usable_bootstrap_tokens(bare_hosts)
    assert not [host for host in bare_hosts.hosts()
                if bare_hosts.ssh(host, "test -e /etc/kubernetes/kubeadm-control-plane.yaml", check=False).returncode == 0]
    nodes = control_plane_nodes(bare_hosts)
    assert sorted(zone for zone, _annotations in nodes.values()) == ["fd-1", "fd-2", "fd-3"], nodes
    for name, (_zone, annotations) in nodes.items():
        assert annotations["control-plane.kubeadm.io/bootstrap"] == ("init" if name == "cp-1" else "join")
        assert record(bare_hosts, name)["step"] == "joined"
        # the bundle's stand-in network sorts after any pod network's own configuration (docs/node-software.md)
        assert bare_hosts.ssh(name, "ls /etc/cni/net.d").stdout.split() == ["99-kcp-bridge.conflist"]
    assert kubectl(bare_hosts, "get configmap written-before-scale -o jsonpath={.data.k}") == "v"
    # an etcd snapshot from just before each join, private, holding what the cluster held then
    snapshots = sorted(snapshot_copies(bare_hosts))
    assert [name.split("-", 1)[1] for name in snapshots] == ["before-join-cp-2.db", "before-join-cp-3.db"], snapshots
    for name in snapshots:
        path = snapshot_copies(bare_hosts)[name]
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with open(path, "rb") as snapshot:
            assert b"written-before-scale" in snapshot.read()
    again = flow(bare_hosts, SCALE, 3)
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_a_run_is_refused_while_another_holds_the_lock_and_changes_nothing(bare_hosts, tmp_path):
    # an invalid spec is refused before any host is touched: nothing is observed, no lock is taken
    invalid = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 4), timeout=600)
    assert invalid.returncode != 0 and "replicas: must be odd with stacked etcd" in invalid.stdout, invalid.stdout[-6000:]
    assert "kubeadm.control_plane.observe" not in invalid.stdout, invalid.stdout[-6000:]
    # so is a run with no name for the lock, which would act beside any other run, and a lock too short to keep
    for extra, refusal in (({"flow_holder": " "}, "flow_holder: must name this run for the cluster lock"),
                           ({"kcp_lock_duration": 2}, "kcp_lock_duration: must be a whole number of seconds, at least 3")):
        unnamed = bare_hosts.playbook(SCALE, dict(flow_vars(bare_hosts, 5), **extra), timeout=600)
        assert unnamed.returncode != 0 and refusal in " ".join(unnamed.stdout.split()), unnamed.stdout[-6000:]
        assert "kubeadm.control_plane.observe" not in unnamed.stdout, unnamed.stdout[-6000:]
    kubeconfig = tmp_path / "admin.conf"
    kubeconfig.write_text(bare_hosts.ssh("cp-1", "cat /etc/kubernetes/admin.conf").stdout)
    kubeconfig.chmod(0o600)
    lock = dict(kubeconfig=str(kubeconfig), holder="awx job 12 on awx-1", action="scale")
    assert run("kcp_lock", lock)[0] == "CHANGED"
    try:
        refused = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 5), timeout=600)
        assert refused.returncode != 0
        assert "the control plane is locked by awx job 12 on awx-1, running scale since" in refused.stdout
        assert len(control_plane_nodes(bare_hosts)) == 3
    finally:
        assert run("kcp_lock", dict(lock, state="absent"))[1]["decision"] == "release"
    # Another run of this controller (a second terminal): its lock is refused while its process runs, and taken
    # over at once when the process is gone (killed), without waiting for the lock to expire. A sleeping process
    # stands for that run's ansible-playbook; this controller's id is the one the flows above made.
    other_run = subprocess.Popen(["sleep", "600"])
    holder = cluster_lock.run_holder(getpass.getuser(), socket.gethostname(), other_run.pid, controller_run.controller_id())
    lock = dict(lock, holder=holder, action="rollout")
    assert run("kcp_lock", lock)[0] == "CHANGED"
    try:
        refused = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 5), timeout=600)
        assert refused.returncode != 0
        assert "it is another run of this controller, and its process (pid %d) still runs" % other_run.pid in refused.stdout, refused.stdout[-6000:]
        other_run.kill()
        other_run.wait()
        taken = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 3), timeout=600)
        assert taken.returncode == 0, taken.stdout[-6000:]
        assert "was left by a run of this controller that no longer runs" in taken.stdout + taken.stderr, taken.stdout[-6000:]
        assert run("kcp_lock", dict(lock, state="absent"))[1]["decision"] == "leave"  # the run gave it back at its end
    finally:
        if other_run.poll() is None:
            other_run.kill()
            other_run.wait()
        run("kcp_lock", dict(lock, state="absent"))
    assert len(control_plane_nodes(bare_hosts)) == 3


def lease_holder(sandbox):
    """The holder of the cluster lock, or None when nobody holds it."""
    got = kubectl(sandbox, "-n kube-system get lease control-plane-kubeadm-io --ignore-not-found -o json")
    return json.loads(got)["spec"].get("holderIdentity") if got.strip() else None


def test_a_host_that_stops_answering_mid_join_stops_the_run_which_gives_the_lock_back(bare_hosts):
    free = sorted(set(bare_hosts.hosts()) - set(control_plane_nodes(bare_hosts)))
    joining = []

    def power_off_the_joining_host(_process):
        records = {host: bare_hosts.ssh(host, "cat /etc/kubernetes/control-plane-machine.json", check=False) for host in free}
        joining.extend(host for host, found in records.items() if found.returncode == 0 and json.loads(found.stdout)["step"] == "joining")
        bare_hosts.fault("power-off", joining[0])

    try:
        code, output = bare_hosts.playbook_meanwhile(SCALE, flow_vars(bare_hosts, 5), "TASK [kubeadm.control_plane.kubeadm_join : Run kubeadm join]",
                                                     power_off_the_joining_host, timeout=900)
        assert code != 0
        assert "%s stopped answering during scale_up (pass 1): the run stops here" % joining[0] in " ".join(output.split()), output[-6000:]
        # the last play gave the lock back through a host that answers, and printed where the control plane stands
        assert lease_holder(bare_hosts) is None
        assert "PLAY [Finish]" in output, output[-6000:]
    finally:
        if joining:
            bare_hosts.fault("power-on", joining[0])


def test_the_lock_outlives_its_duration_while_the_run_acts_and_another_run_is_refused_all_along(bare_hosts):
    # The run of the test above finished by this one: the machine whose host went off mid-join, then one more.
    # A lock of 10 s, far shorter than one join: it is kept alive while the run acts, and a second run started
    # again and again meanwhile is refused every time, naming the first, and never takes it over.
    duration = 10
    extra = dict(flow_vars(bare_hosts, 5), kcp_lock_duration=duration)
    attempts = []

    def try_again_and_again(process):
        holder = cluster_lock.run_holder(getpass.getuser(), socket.gethostname(), process.pid, controller_run.controller_id())
        while process.poll() is None:
            attempts.append(bare_hosts.playbook(SCALE, extra, timeout=600))
            assert attempts[-1].returncode != 0 or process.poll() is not None, attempts[-1].stdout[-6000:]
            if process.poll() is None:
                assert "the control plane is locked by %s, running scale since" % holder in attempts[-1].stdout, attempts[-1].stdout[-6000:]
            time.sleep(2)

    started = time.monotonic()
    with bare_hosts.writing(ENDPOINT) as writer:
        code, output = bare_hosts.playbook_meanwhile(SCALE, extra, "PLAY [Act on the host the pass picked]", try_again_and_again, timeout=1200)
    assert code == 0, output[-8000:]
    assert_writes_survived(writer, "scale to 5 with a %d s lock" % duration)
    # three passes observe (two joins, then done), yet the run took many times the lock's duration
    assert time.monotonic() - started > 4 * duration and len(attempts) >= 3, (time.monotonic() - started, len(attempts))
    assert not any("has expired" in attempt.stdout + attempt.stderr for attempt in attempts)
    assert "has expired" not in output and lease_holder(bare_hosts) is None
    assert len(control_plane_nodes(bare_hosts)) == 5


def test_a_run_whose_lock_another_run_took_stops_before_its_next_membership_change(bare_hosts):
    # What a controller cut off from the API server for longer than the lock's duration finds: another run took the
    # lock over meanwhile. The check right before the etcd member's removal refuses, naming that run, and leaves its
    # lock alone; the machine stays marked deleting, its member in place, for the next run to finish.
    def take_the_lock_over(_process):
        bare_hosts.ssh("cp-1", ADMIN + "-n kube-system patch lease control-plane-kubeadm-io --type=merge "
                       "-p '{\"spec\": {\"holderIdentity\": \"awx job 99 on awx-2\"}}'")

    try:
        code, output = bare_hosts.playbook_meanwhile(SCALE, flow_vars(bare_hosts, 3), "TASK [kubeadm.control_plane.node_drain : Drain the Node",
                                                     take_the_lock_over, timeout=900)
        assert code != 0
        assert "this run no longer holds the cluster lock: awx job 99 on awx-2 holds it" in " ".join(output.split()), output[-6000:]
        assert lease_holder(bare_hosts) == "awx job 99 on awx-2"
        assert len(control_plane_nodes(bare_hosts)) == 5
        deleting = [name for name, (_zone, notes) in control_plane_nodes(bare_hosts).items() if "control-plane.kubeadm.io/deleting" in notes]
        assert len(deleting) == 1, deleting
        # five etcd members still, one a machine (the row of the machine being deleted says so in a column of its own)
        table = status_table(bare_hosts, 3)
        roles = sorted(role for line in table[3:] for role in line.split() if role in ("leader", "voter"))
        assert len(table[3:]) == 5 and roles == ["leader", "voter", "voter", "voter", "voter"], table
    finally:
        bare_hosts.ssh("cp-1", ADMIN + "-n kube-system delete lease control-plane-kubeadm-io --ignore-not-found")
    # the next run finishes that removal first, then builds the fifth machine again (the test below)


def status_table(sandbox, replicas):
    return e2e_support.status_table(sandbox, flow_vars(sandbox, replicas))


def test_scale_to_five_and_back_to_three_keeps_the_spread_and_returns_hosts_to_the_pool(bare_hosts):
    # The run after the one whose lock was taken (the test above) finishes that removal first, then builds the fifth
    # machine again. It is killed (as a lost controller or a cancelled AWX job is) before that machine's join
    # started, and the next one killed while kubeadm join ran on the same host: kubeadm may go on and finish there,
    # after its run is gone.
    killed = bare_hosts.playbook_killed(SCALE, flow_vars(bare_hosts, 5), "Write the host record (joining)", after=1)
    assert "is being deleted: finish that first" in killed, killed[-6000:]
    (started, started_record), = started_hosts(bare_hosts).items()
    bare_hosts.playbook_killed(SCALE, flow_vars(bare_hosts, 5), "Run kubeadm join", after=1)
    assert set(started_hosts(bare_hosts)) == {started}
    done = flow(bare_hosts, SCALE, 5)
    nodes = control_plane_nodes(bare_hosts)
    assert sorted(zone for zone, _annotations in nodes.values()) == ["fd-1", "fd-1", "fd-2", "fd-2", "fd-3"]
    # finished from its host record, not taken for an adopted machine: every annotation a join writes, the creation
    # time of the first run that started it, its record at joined, no secret left on the host or valid in the cluster
    assert "machine %s was started and not finished: finish it first" % started in done.stdout, done.stdout[-6000:]
    finished = nodes[started][1]
    joined = next(notes for name, (_zone, notes) in nodes.items() if name != started and notes.get("control-plane.kubeadm.io/bootstrap") == "join")
    assert finished["control-plane.kubeadm.io/created"] == started_record["created"]
    for key in ("control-plane.kubeadm.io/spec-hash", "control-plane.kubeadm.io/bootstrap"):
        assert finished[key] == joined[key], (key, finished, joined)
    assert record(bare_hosts, started)["step"] == "joined" and not started_hosts(bare_hosts)
    assert not [host for host in bare_hosts.hosts()
                if bare_hosts.ssh(host, "test -e /etc/kubernetes/kubeadm-control-plane.yaml", check=False).returncode == 0]
    assert not usable_bootstrap_tokens(bare_hosts)
    bare_hosts.ssh("cp-1", ADMIN + "create configmap written-before-scale-down --from-literal=k=v")
    # what a scale down killed after the drain and before the member removal leaves on cp-5: the machine marked
    # deleting (Node annotation and host record) and drained
    bare_hosts.ssh("cp-1", ADMIN + "annotate node cp-5 control-plane.kubeadm.io/deleting=2026-11-26T10:00:00Z")
    bare_hosts.ssh("cp-1", ADMIN + "drain cp-5 --ignore-daemonsets --delete-emptydir-data --timeout=60s")
    bare_hosts.ssh("cp-5", "sed -i 's/\"step\": \"joined\"/\"step\": \"deleting\"/' /etc/kubernetes/control-plane-machine.json")
    assert record(bare_hosts, "cp-5")["step"] == "deleting"
    # kcp_max_steps: 1 stops the run after its first step, which finishes the removal begun; the next run goes on
    one_step = bare_hosts.playbook(SCALE, dict(flow_vars(bare_hosts, 3), kcp_max_steps=1), timeout=1200)
    assert one_step.returncode == 0, one_step.stdout[-8000:]
    assert "cp-5 is being deleted: finish that first" in one_step.stdout
    assert "next step: scale_down (4 machines, 3 declared: remove one" in one_step.stdout, one_step.stdout[-4000:]
    done = flow(bare_hosts, SCALE, 3)
    assert "next step: none (the control plane is as declared)" in done.stdout
    nodes = control_plane_nodes(bare_hosts)
    assert sorted(zone for zone, _annotations in nodes.values()) == ["fd-1", "fd-2", "fd-3"], nodes
    retired = sorted(set(bare_hosts.hosts()) - set(nodes))
    for host in retired:
        assert bare_hosts.ssh(host, "test -e /etc/kubernetes/control-plane-machine.json || test -e /etc/kubernetes/admin.conf"
                                    " || test -e /etc/cni/net.d/99-kcp-bridge.conflist"
                                    " || test -e /var/lib/kubeadm-control-plane/etcd-snapshots", check=False).returncode == 1
    copies = sorted(snapshot_copies(bare_hosts))
    removals = sorted(name.split("-", 1)[1] for name in copies if "before-remove" in name)
    assert set("before-remove-%s.db" % host for host in retired) <= set(removals), removals
    # a snapshot before every join and every removal since create: the controller keeps the newest five, private
    assert len(copies) == 5 and not [name for name in copies if name.endswith("before-join-cp-2.db")], copies
    assert all(stat.S_IMODE(os.stat(path).st_mode) == 0o600 for path in snapshot_copies(bare_hosts).values())
    assert all(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700 for path in snapshot_copies(bare_hosts).values())
    assert kubectl(bare_hosts, "get configmap written-before-scale-down -o jsonpath={.data.k}") == "v"
    # status reads etcd itself: one voting member a machine, no stray, the control plane Ready
    table = status_table(bare_hosts, 3)
    assert table[0] == "next step: none (the control plane is as declared)" and table[1] == "control plane: Ready", table
    rows = [line.split() for line in table[3:]]
    assert sorted(row[0] for row in rows) == sorted(nodes) and sorted(row[3] for row in rows) == ["leader", "voter", "voter"]


def test_a_join_killed_half_way_is_undone_and_done_again_by_the_next_run(bare_hosts):
    nodes = control_plane_nodes(bare_hosts)
    via = sorted(nodes)[0]
    host = sorted(set(bare_hosts.hosts()) - set(nodes))[0]
    # what a run killed inside kubeadm join leaves: the host record at joining, the etcd member added and started,
    # the kubelet registered, the Node not yet marked a control plane Node
    uploaded = bare_hosts.ssh(via, "kubeadm init phase upload-certs --upload-certs").stdout
    printed = bare_hosts.ssh(via, "kubeadm token create --print-join-command").stdout
    join = walk.with_certificate_key(printed, walk.certificate_key(uploaded))
    bare_hosts.ssh(host, "%s --skip-phases control-plane-join,wait-control-plane" % join, timeout=300)
    bare_hosts.ssh(host, "umask 077 && echo '%s' > /etc/kubernetes/control-plane-machine.json"
                   % json.dumps({"name": host, "created": "2026-11-26T10:00:00Z", "bootstrap": "join", "step": "joining"}))
    assert host not in control_plane_nodes(bare_hosts)
    done = flow(bare_hosts, SCALE, 3)
    assert "machine %s was started and not finished: finish it first" % host in done.stdout
    # the half-done join's member went by the flow's own removal (an etcd snapshot first, quorum checked), not by
    # kubeadm reset, which is kept off the cluster
    assert any(name.endswith("before-remove-%s.db" % host) for name in snapshot_copies(bare_hosts))
    assert "next step: none (the control plane is as declared)" in done.stdout
    after = control_plane_nodes(bare_hosts)
    assert sorted(zone for zone, _annotations in after.values()) == ["fd-1", "fd-2", "fd-3"], after
    # one voting etcd member a machine: the half-done join's member did not stay behind
    table = status_table(bare_hosts, 3)
    assert table[1] == "control plane: Ready", table
    assert sorted(line.split()[3] for line in table[3:]) == ["leader", "voter", "voter"], table


def etcd_ready(sandbox, host):
    pod = json.loads(kubectl(sandbox, "-n kube-system get pod etcd-%s -o json" % host))
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def test_scale_down_is_refused_while_another_etcd_member_is_down_and_changes_nothing(bare_hosts):
    nodes = control_plane_nodes(bare_hosts)
    # the scale down would remove the fd-1 machine (rules.md FD5/FD6): stop the etcd member of another one
    [down] = [name for name, (zone, _annotations) in nodes.items() if zone == "fd-3"]
    bare_hosts.fault("etcd-stop", down)
    try:
        refused = bare_hosts.playbook(SCALE, flow_vars(bare_hosts, 1), timeout=600)
        assert refused.returncode != 0
        assert "the plan waits" in refused.stdout and down in refused.stdout.split("the plan waits", 1)[1][:2000]
        after = control_plane_nodes(bare_hosts)
        assert sorted(after) == sorted(nodes)
        assert not any("control-plane.kubeadm.io/deleting" in annotations for _zone, annotations in after.values())
    finally:
        bare_hosts.fault("etcd-start", down)
    deadline = time.monotonic() + 180
    while not etcd_ready(bare_hosts, down):
        assert time.monotonic() < deadline, "etcd on %s did not come back" % down
        time.sleep(2)


def test_delete_is_refused_while_a_worker_node_remains(bare_hosts):
    worker = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}
    kubectl(bare_hosts, "create -f - <<'EOF'\n%s\nEOF" % json.dumps(worker))
    try:
        refused = bare_hosts.playbook(DELETE, flow_vars(bare_hosts, 3), timeout=600)
        assert refused.returncode != 0
        assert "worker Nodes remain: worker-1" in refused.stdout
        assert len(control_plane_nodes(bare_hosts)) == 3
        # the refused run gave the lock back: another run need not wait for it to expire
        assert "control-plane-kubeadm-io" not in kubectl(bare_hosts, "-n kube-system get leases -o name"), (
            "the refused run left the cluster lock held:\n" + refused.stdout[-6000:])
        # and showed where the control plane stands before failing with the reason
        assert "Show where the control plane stands" in refused.stdout.split("worker Nodes remain", 1)[1]
        assert "failed on" in refused.stdout.split("Fail with the reason the run stopped", 1)[1]
    finally:
        kubectl(bare_hosts, "delete node worker-1")


def test_delete_tears_the_control_plane_down_and_returns_every_host_to_the_pool(bare_hosts):
    kubectl(bare_hosts, "create configmap written-before-delete --from-literal=k=v")
    # status while a machine is half way through kubeadm reset (pki/ gone, admin.conf still there) reads through
    # another machine: the one the inventory lists first is taken apart that way for the time of one status run
    first = sorted(control_plane_nodes(bare_hosts))[0]
    bare_hosts.ssh(first, "mv /etc/kubernetes/pki/etcd/ca.crt /root/etcd-ca.crt.aside")
    try:
        table = status_table(bare_hosts, 3)
    finally:
        bare_hosts.ssh(first, "mv /root/etcd-ca.crt.aside /etc/kubernetes/pki/etcd/ca.crt")
    assert sum(1 for line in table if re.match(r"cp-\d ", line)) == 3, table
    check = flow(bare_hosts, DELETE, 3, check=True)
    assert "would remove" in check.stdout and len(control_plane_nodes(bare_hosts)) == 3
    done = flow(bare_hosts, DELETE, 3)
    assert re.search(r"reset cp-\d, the last machine", " ".join(done.stdout.split())), done.stdout[-6000:]
    assert all(nothing_on(bare_hosts, host) for host in bare_hosts.hosts())
    # the state from just before the cluster went: a last etcd snapshot, holding what the cluster held
    [last] = [name for name in snapshot_copies(bare_hosts) if name.endswith("before-delete.db")]
    with open(snapshot_copies(bare_hosts)[last], "rb") as snapshot:
        assert b"written-before-delete" in snapshot.read()
    again = flow(bare_hosts, DELETE, 3)
    assert "no control plane machine is left: nothing to delete" in again.stdout
    assert all(counts["changed"] == 0 for counts in recap(again.stdout).values()), again.stdout[-6000:]


def test_delete_refuses_while_the_last_machine_does_not_answer_and_finishes_once_it_is_back(bare_hosts):
    flow(bare_hosts, CREATE, 1)
    [last] = control_plane_nodes(bare_hosts)
    saved = set(snapshot_copies(bare_hosts))
    bare_hosts.fault("power-off", last)
    try:
        refused = bare_hosts.playbook(DELETE, flow_vars(bare_hosts, 1), timeout=600)
        assert refused.returncode != 0
        # its API server was the cluster's only one: the observation finds no machine, and says why it stops
        assert ("no control plane machine was found, but %s did not answer and may hold one. Nothing was changed. Bring the "
                "host back and run delete again" % last) in " ".join(refused.stdout.split()), refused.stdout[-6000:]
        assert "nothing to delete" not in refused.stdout
    finally:
        bare_hosts.fault("power-on", last)
    assert set(snapshot_copies(bare_hosts)) == saved
    # power-on gives back SSH; the kubelet, etcd and the API server come up after it
    e2e_support.wait_control_plane_ready(bare_hosts, [last])
    assert bare_hosts.ssh(last, "test -e /etc/kubernetes/manifests/kube-apiserver.yaml", check=False).returncode == 0
    done = flow(bare_hosts, DELETE, 1)
    assert "reset %s, the last machine" % last in " ".join(done.stdout.split()), done.stdout[-6000:]
    # this second cluster named flows keeps its snapshots apart from the first one's: a directory of its own identity
    deletes = [path for name, path in snapshot_copies(bare_hosts).items() if name.endswith("before-delete.db")]
    assert len(deletes) == 2 and len({os.path.dirname(path) for path in deletes}) == 2, deletes
    assert all(nothing_on(bare_hosts, host) for host in bare_hosts.hosts())
