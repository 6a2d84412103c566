# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for a machine's control plane pods: when they count as running and ready, and what the failure says when
they do not (pod_readiness, pods_ready_answer)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api, pod_readiness, pods_ready_answer
from ansible_collections.kubeadm.control_plane.tests.unit.builders import serve_api


def pod(name, phase="Running", ready="True", reason=None, containers=()):
    conditions = [] if ready is None else [dict(type="Ready", status=ready, reason=reason)]
    return dict(metadata=dict(name=name, namespace="kube-system"),
                status=dict(phase=phase, conditions=conditions, containerStatuses=list(containers)))


CRASHING = dict(name="kube-apiserver", ready=False, restartCount=3,
                state=dict(waiting=dict(reason="CrashLoopBackOff", message="back-off 40s restarting failed container")),
                lastState=dict(terminated=dict(reason="Error", exitCode=1)))


def test_running_and_ready_pods_have_no_problem():
    assert pod_readiness.problems([pod("etcd-cp-1"), pod("kube-apiserver-cp-1")], 2) == []


def test_each_pod_not_ready_is_named_with_its_phase_condition_and_containers():
    crashing = pod("kube-apiserver-cp-1", ready="False", reason="ContainersNotReady", containers=[CRASHING])
    found = pod_readiness.problems([crashing, pod("etcd-cp-1", phase="Pending", ready=None)], 2)
    assert found == [
        "etcd-cp-1: Pending, no Ready condition yet",
        "kube-apiserver-cp-1: Running, Ready False (ContainersNotReady), container kube-apiserver waiting: "
        "CrashLoopBackOff - back-off 40s restarting failed container; restarted 3 times, last ended Error (exit code 1)",
    ]


def test_fewer_pods_than_expected_is_a_problem_naming_the_ones_there():
    assert pod_readiness.problems([pod("etcd-cp-1")], 4) == ["1 of the 4 pods expected are there yet (etcd-cp-1)"]
    assert pod_readiness.problems([], 1) == ["0 of the 1 pods expected are there yet (none)"]


def test_after_a_restore_only_a_ready_status_posted_since_counts():
    restored = pod("etcd-cp-1")
    restored["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-29T03:00:00Z"
    posted = pod("kube-apiserver-cp-1")
    posted["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-29T05:00:07Z"
    assert pod_readiness.problems([restored, posted], 2, ready_since="2026-11-29T05:00:00Z") == [
        "etcd-cp-1: Ready since 2026-11-29T03:00:00Z, before 2026-11-29T05:00:00Z: its kubelet has not posted its status since"]
    assert pod_readiness.problems([restored, posted], 2) == []
    # a Ready condition without its time is not known to be the kubelet's since
    assert pod_readiness.problems([pod("etcd-cp-1")], 1, ready_since="2026-11-29T05:00:00Z")[0].startswith(
        "etcd-cp-1: Ready since an unknown time")


class FakeCluster:
    """The API server's answers to the two requests the wait makes (its Node's pods, a pod's log), from a script of
    readings."""

    def __init__(self, readings, log="line 1\nline 2\n"):
        self.readings, self.log, self.asked = list(readings), log, []

    def request(self, _api, method, path, _timeout, query=None, body=None):
        assert (method, body) == ("GET", None)
        if path.endswith("/log"):
            return self.log
        self.asked.append((path, query))
        reading = self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]
        if isinstance(reading, Exception):
            raise reading
        return dict(items=reading)


@pytest.fixture
def cluster(monkeypatch):
    return serve_api(monkeypatch, FakeCluster([[]]))


def params(**overrides):
    base = dict(kubeconfig="admin.conf", admin_kubeconfig_on_host=None, node="cp-2", namespace="kube-system",
                selector="tier=control-plane", count=2, timeout=5, log_lines=5, ready_since=None)
    base.update(overrides)
    return base


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_it_waits_through_a_restarting_api_server_until_the_pods_are_ready(cluster):
    cluster.readings = [[pod("etcd-cp-2")], kube_api.ClusterUnreadable("did not answer"),
                        [pod("etcd-cp-2"), pod("kube-apiserver-cp-2")]]
    clock = Clock()
    done = pods_ready_answer.wait(params(), False, sleep=clock.sleep, clock=clock)
    assert done["ready"] and done["waited"] == 2.0 and [p["name"] for p in done["pods"]] == ["etcd-cp-2", "kube-apiserver-cp-2"]
    assert cluster.asked[0] == ("/api/v1/namespaces/kube-system/pods", {"labelSelector": "tier=control-plane", "fieldSelector": "spec.nodeName=cp-2"})


def test_when_the_time_is_up_it_names_each_pod_not_ready_with_its_last_log_lines(cluster):
    cluster.readings = [[pod("etcd-cp-2"), pod("kube-apiserver-cp-2", ready="False", containers=[CRASHING])]]
    clock = Clock()
    with pytest.raises(pods_ready_answer.NotReady) as failed:
        pods_ready_answer.wait(params(), False, sleep=clock.sleep, clock=clock)
    message = str(failed.value)
    assert message.startswith("the pods of Node cp-2 (tier=control-plane in kube-system) are not all running and ready after 5 s: "
                              "kube-apiserver-cp-2: Running, Ready False")
    assert "kube-apiserver-cp-2, last 5 lines of its log:\nline 1\nline 2" in message and "etcd-cp-2," not in message
    assert clock.now == 5.0


def test_an_api_server_that_never_answers_is_not_taken_for_pods_not_ready(cluster):
    cluster.readings = [kube_api.ClusterUnreadable("the API server at https://10.0.0.100:6443 did not answer")]
    clock = Clock()
    with pytest.raises(pods_ready_answer.NotReady, match="did not answer the last reading"):
        pods_ready_answer.wait(params(), False, sleep=clock.sleep, clock=clock)


def test_check_mode_reads_once_and_reports_without_failing(cluster):
    cluster.readings = [[pod("etcd-cp-2")]]
    done = pods_ready_answer.wait(params(), True, sleep=pytest.fail, clock=Clock())
    assert done["ready"] is False and done["problems"] == ["1 of the 2 pods expected are there yet (etcd-cp-2)"]


def test_arguments_that_cannot_work_are_named():
    assert pods_ready_answer.argument_problems(params(kubeconfig=None, node=" ", count=-1)) == [
        "kubeconfig: required (or admin_kubeconfig_on_host)", "node: must name a Node", "count: must not be negative"]
