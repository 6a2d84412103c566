# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's controller-side API code against a live API server (the sandbox's, over TLS with the admin
client certificate). The cluster lock: a run acts only while the lock still names it (``state: held``), and its
keeper keeps the lock alive for as long as the run's process runs, however much longer than the lock's duration
that is, and stops when the run is gone or the lock no longer names it (docs/flows.md "The cluster lock").
cluster_object: what it reads, patches, creates and deletes is what the API server then holds."""

import os
import subprocess
import tempfile
import threading
import time
from datetime import datetime, timezone

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, cluster_object_answer, credential_files, kube_api, lock_lease
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import lock_keeper

pytestmark = pytest.mark.etcd
CLUSTER_BLOCK = 8
ME, OTHER = "alice@laptop pid 4242 controller 3f9a0c1d2e4b", "awx-kubeadm-control-plane-scale"
DURATION = 3


@pytest.fixture
def kubeconfig(cluster):
    path = cluster.kubeconfig("admin", cluster.ip(4))
    yield path
    lease = read(path)
    if lease:
        with_api(path, lambda api: lock_lease.delete_lease(api, lease, 5))


@pytest.fixture
def run_process():
    """A process standing for the run's ansible-playbook, stopped by its PID."""
    process = subprocess.Popen(["sleep", "120"])
    yield process
    process.kill()
    process.wait()


def with_api(kubeconfig, call):
    with kube_api.connected(kubeconfig) as api:
        return call(api)


def read(kubeconfig):
    return with_api(kubeconfig, lambda api: lock_lease.read_lease(api, 5))


def acquire_decision(kubeconfig, holder):
    return cluster_lock.decide_acquire(read(kubeconfig), holder, datetime.now(timezone.utc))[0]


def lock(kubeconfig, holder, state, duration=DURATION):
    return lock_lease.apply(kubeconfig, holder, "scale", state, duration, 5, False)


def test_held_renews_only_the_lock_this_run_holds_and_never_takes_a_free_one(kubeconfig):
    with pytest.raises(lock_lease.LockFailed, match="it was released, and nobody holds it now") as refused:
        lock(kubeconfig, ME, "held")
    assert refused.value.refused and read(kubeconfig) is None
    assert lock(kubeconfig, ME, "present")["decision"] == cluster_lock.TAKE
    renewed = read(kubeconfig)["spec"]["renewTime"]
    time.sleep(1.1)
    assert lock(kubeconfig, ME, "held")["decision"] == cluster_lock.RENEW
    assert read(kubeconfig)["spec"]["renewTime"] != renewed
    # taken over by another run once it expired: this run's next check refuses, naming that run, and writes nothing
    time.sleep(DURATION + 0.5)
    assert lock(kubeconfig, OTHER, "present")["decision"] == cluster_lock.TAKE_OVER
    with pytest.raises(lock_lease.LockFailed, match="no longer holds the cluster lock: %s holds it, running scale" % OTHER):
        lock(kubeconfig, ME, "held")
    assert read(kubeconfig)["spec"]["holderIdentity"] == OTHER


def test_a_check_and_the_keeper_renewing_at_the_same_moment_both_go_on(kubeconfig):
    """Two writers of the same holder's Lease (the run's keeper and its check before a membership change): the one
    that loses the race reads the Lease again, finds the run still holds it and renews; neither fails."""
    lock(kubeconfig, ME, "present", duration=60)
    failures, lost_races = [], []
    write_lease = lock_lease.write_lease

    def counted_write(*args, **kwargs):
        try:
            return write_lease(*args, **kwargs)
        except Exception as exc:
            lost_races.append(exc)
            raise

    def renew_often():
        for _time in range(25):
            try:
                lock(kubeconfig, ME, "held")
            except lock_lease.LockFailed as exc:
                failures.append(str(exc))

    lock_lease.write_lease = counted_write
    try:
        writers = [threading.Thread(target=renew_often) for _writer in range(2)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(60)
    finally:
        lock_lease.write_lease = write_lease
    assert failures == [] and read(kubeconfig)["spec"]["holderIdentity"] == ME
    assert lost_races, "the two writers never raced: the test proved nothing"


def test_the_keeper_keeps_the_lock_while_the_run_runs_and_stops_when_it_is_gone(kubeconfig, run_process):
    lock(kubeconfig, ME, "present")
    config = open(kubeconfig, "rb").read()
    path = lock_keeper.keeper_path(run_process.pid, ME, lock_keeper.server_of(config))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    stopped = []
    keeper = threading.Thread(target=lambda: stopped.append(
        lock_keeper.renew_while_running(config, ME, DURATION, 5, run_process.pid, path)))
    keeper.start()
    try:
        # three times the lock's duration, and no other run can take it
        for _second in range(3 * DURATION):
            time.sleep(1)
            assert acquire_decision(kubeconfig, OTHER) == cluster_lock.REFUSE
        # one keeper a run: a second one for the same run and server leaves at once
        assert lock_keeper.renew_while_running(config, ME, DURATION, 5, run_process.pid, path) == "another keeper keeps this lock"
    finally:
        run_process.kill()
        run_process.wait()
        keeper.join(10)
    assert stopped == ["the run ended"] and not os.path.exists(path)
    # the run is gone: nothing renews its lock, which expires and is taken over
    time.sleep(DURATION + 0.5)
    assert acquire_decision(kubeconfig, OTHER) == cluster_lock.TAKE_OVER


def test_the_keeper_stops_once_another_run_holds_the_lock_and_leaves_it_alone(kubeconfig, run_process):
    lock(kubeconfig, ME, "present")
    config = open(kubeconfig, "rb").read()
    path = lock_keeper.keeper_path(run_process.pid, ME, "")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    lease = read(kubeconfig)
    lease["spec"]["holderIdentity"] = OTHER
    with_api(kubeconfig, lambda api: kube_api.request(api, "PUT", lock_lease.LEASE, 5, body=lease))
    started = time.monotonic()
    assert "no longer holds the cluster lock: %s holds it" % OTHER in lock_keeper.renew_while_running(
        config, ME, DURATION, 5, run_process.pid, path)
    assert time.monotonic() - started < DURATION + 2
    assert read(kubeconfig)["spec"]["holderIdentity"] == OTHER and not os.path.exists(path)


def test_a_detached_keeper_outlives_the_task_that_started_it_and_leaves_nothing_behind(kubeconfig, run_process):
    lock(kubeconfig, ME, "present")
    tmp = tempfile.gettempdir()
    before = set(os.listdir(tmp))
    lock_keeper.keep(kubeconfig, ME, DURATION, 5, run_process.pid)
    path = lock_keeper.keeper_path(run_process.pid, ME, lock_keeper.server_of(open(kubeconfig, "rb").read()))
    deadline = time.monotonic() + 5
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert os.path.exists(path)
    keeper_dirs = [name for name in set(os.listdir(tmp)) - before if name.startswith(credential_files.PREFIX)]
    assert len(keeper_dirs) == 1 and os.stat(os.path.join(tmp, keeper_dirs[0])).st_mode & 0o777 == 0o700
    # the next pass asks again: the keeper that runs is found, and no second one is started
    assert lock_keeper.kept(path)
    lock_keeper.keep(kubeconfig, ME, DURATION, 5, run_process.pid)
    assert [name for name in set(os.listdir(tmp)) - before if name.startswith(credential_files.PREFIX)] == keeper_dirs
    time.sleep(2 * DURATION)
    assert acquire_decision(kubeconfig, OTHER) == cluster_lock.REFUSE
    run_process.kill()
    run_process.wait()
    deadline = time.monotonic() + 5
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(path) and not os.path.exists(os.path.join(tmp, keeper_dirs[0])) and not lock_keeper.kept(path)


def cluster_object(kubeconfig, check_mode=False, **args):
    params = dict(kubeconfig=kubeconfig, admin_kubeconfig_on_host=None, namespace=None, state="present", patch={}, create=False, timeout=5)
    params.update(args)
    assert cluster_object_answer.argument_problems(params) == []
    return cluster_object_answer.apply(params, check_mode, True)


def test_cluster_object_annotates_uncordons_and_deletes_a_node_only_where_that_changes_it(kubeconfig):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-object", "annotations": {"control-plane.kubeadm.io/external-remediation": "{}"}},
            "spec": {"unschedulable": True}}
    with_api(kubeconfig, lambda api: kube_api.request(api, "POST", "/api/v1/nodes", 5, body=node))
    deleting = {"metadata": {"annotations": {"control-plane.kubeadm.io/deleting": "2026-11-29T10:00:00Z",
                                             "control-plane.kubeadm.io/external-remediation": None}}, "spec": {"unschedulable": None}}
    planned = cluster_object(kubeconfig, True, kind="Node", name="cp-object", patch=deleting)
    assert planned["action"] == "patch" and planned["diff"]["after"]["metadata"]["annotations"] == {
        "control-plane.kubeadm.io/deleting": "2026-11-29T10:00:00Z"} and planned["diff"]["after"]["spec"] == {}
    assert with_api(kubeconfig, lambda api: kube_api.request(api, "GET", "/api/v1/nodes/cp-object", 5))["spec"] == {"unschedulable": True}
    assert cluster_object(kubeconfig, kind="Node", name="cp-object", patch=deleting)["changed"]
    stored = with_api(kubeconfig, lambda api: kube_api.request(api, "GET", "/api/v1/nodes/cp-object", 5))
    assert stored["metadata"]["annotations"] == {"control-plane.kubeadm.io/deleting": "2026-11-29T10:00:00Z"}
    assert not stored.get("spec", {}).get("unschedulable")
    assert cluster_object(kubeconfig, kind="Node", name="cp-object", patch=deleting)["action"] == "none"
    assert cluster_object(kubeconfig, kind="Node", name="cp-object", state="absent")["action"] == "delete"
    assert cluster_object(kubeconfig, kind="Node", name="cp-object", state="absent")["action"] == "none"


def test_cluster_object_creates_a_config_map_once_and_patches_it_after(kubeconfig):
    state = dict(kind="ConfigMap", namespace="kube-system", name="cluster-object-live", create=True)
    try:
        first = cluster_object(kubeconfig, patch={"data": {"remediation": '{"machine": "cp-1"}'}}, **state)
        assert (first["action"], first["existed"]) == ("create", False)
        cleared = cluster_object(kubeconfig, patch={"data": {"remediation": None, "other": "x"}}, **state)
        assert cleared["action"] == "patch" and cleared["diff"]["after"]["data"] == {"other": "x"}
        stored = with_api(kubeconfig, lambda api: kube_api.request(api, "GET", "/api/v1/namespaces/kube-system/configmaps/cluster-object-live", 5))
        assert stored["data"] == {"other": "x"}
    finally:
        cluster_object(kubeconfig, kind="ConfigMap", namespace="kube-system", name="cluster-object-live", state="absent")
