# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-machine component conditions and the etcd member view the quorum projection counts."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import (
    POD_REASONS,
    all_conditions,
    all_healthy,
    classify_pod,
    failing,
    machine_conditions,
    oldest_first,
    quorum_members,
)

from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, member, snapshot

STACKED = ["api_server", "controller_manager", "scheduler", "etcd_pod", "etcd_member"]
MEMBER_TRUE = {"status": "true", "reason": ""}


def node_gone(name):
    m = machine(name)
    m["node"] = None
    return m


def stale_node(name):
    m = machine(name, components={"api_server": "unhealthy"})
    m["node"]["conditions"][0]["status"] = "Unknown"
    return m


@pytest.mark.parametrize(
    "m,managed,member_entry,expected",
    [
        (machine("cp-1"), True, MEMBER_TRUE, dict.fromkeys(STACKED, "true")),
        (machine("cp-1"), False, None, dict.fromkeys(STACKED[:3], "true")),
        (
            machine("cp-1", components={"api_server": "unhealthy", "scheduler": "missing", "etcd": "unknown"}),
            True,
            MEMBER_TRUE,
            {"api_server": "false", "controller_manager": "true", "scheduler": "false", "etcd_pod": "unknown", "etcd_member": "true"},
        ),
        (machine("cp-1", has_node=False), True, None, dict.fromkeys(STACKED, "unknown")),
        (node_gone("cp-1"), True, None, dict.fromkeys(STACKED, "false")),
        (
            stale_node("cp-1"),
            True,
            {"status": "false", "reason": "member cp-1 has alarms: NOSPACE"},
            dict(dict.fromkeys(STACKED[:4], "unknown"), etcd_member="false"),
        ),
        (machine("cp-1"), True, None, dict(dict.fromkeys(STACKED[:4], "true"), etcd_member="unknown")),
    ],
    ids=[
        "a healthy machine with stacked etcd has five true conditions",
        "with external etcd only the three pod conditions exist",
        "unhealthy and missing pods are false and an unknown pod is unknown",
        "a machine with no node yet has every condition unknown",
        "a machine whose node is gone has every condition false",
        "a stale node makes the pods unknown but keeps the etcd member verdict",
        "an etcd member nobody evaluated is unknown",
    ],
)
def test_machine_conditions(m, managed, member_entry, expected):
    conditions = machine_conditions(m, managed, member_entry)
    assert {c: e["status"] for c, e in conditions.items()} == expected


def test_failing_lists_only_the_statuses_asked_for():
    conditions = machine_conditions(machine("cp-1", components={"api_server": "unhealthy", "etcd": "unknown"}), True, MEMBER_TRUE)
    assert failing(conditions) == ["api_server", "etcd_pod"]
    assert failing(conditions, statuses=("false",)) == ["api_server"]


def test_conditions_take_the_etcd_member_verdict_of_etcd_health():
    machines = [machine("cp-1"), machine("cp-2")]
    snap = snapshot(machines, members=[member("cp-1", leader=True), member("cp-2", alarms=["NOSPACE"])])
    health = etcd_health.evaluate(snap["etcd"], machines)
    conditions = all_conditions(machines, True, health["members_by_machine"])
    assert conditions["cp-1"]["etcd_member"]["status"] == "true"
    assert conditions["cp-2"]["etcd_member"]["status"] == "false"
    assert "NOSPACE" in conditions["cp-2"]["etcd_member"]["reason"]


@pytest.mark.parametrize(
    "members,expected",
    [
        ([member("cp-1"), member("cp-2")], {"cp-1": True, "cp-2": True}),
        ([member("cp-1"), member("cp-2", alarms=["NOSPACE"])], {"cp-1": True, "cp-2": False}),
        ([member("cp-1"), member("cp-2"), member("cp-9")], {"cp-1": True, "cp-2": True, "cp-9": False}),
        ([member("cp-1"), member("cp-2"), dict(member("x", learner=True), name="")], {"cp-1": True, "cp-2": True, "": False}),
    ],
    ids=[
        "members of healthy machines are healthy",
        "a member whose machine's member condition is false is unhealthy",
        "a stray member with no machine is unhealthy",
        "a member still joining with an empty name is unhealthy",
    ],
)
def test_quorum_members_count_only_members_of_machines_whose_member_is_true(members, expected):
    machines = [machine("cp-1"), machine("cp-2")]
    snap = snapshot(machines, members=members)
    health = etcd_health.evaluate(snap["etcd"], machines)
    out = quorum_members(snap["etcd"]["members"], machines, health["members_by_machine"])
    assert {m.name: m.healthy for m in out} == expected


def test_a_learner_stays_a_learner_for_the_projection():
    machines = [machine("cp-1"), machine("cp-2")]
    snap = snapshot(machines, members=[member("cp-1"), member("cp-2", learner=True)])
    health = etcd_health.evaluate(snap["etcd"], machines)
    out = quorum_members(snap["etcd"]["members"], machines, health["members_by_machine"])
    assert [m.learner for m in out] == [False, True]


def test_oldest_first_orders_by_creation_then_name():
    machines = [machine("cp-3", created=10), machine("cp-2", created=20), machine("cp-1", created=10)]
    assert [m["name"] for m in oldest_first(machines)] == ["cp-2", "cp-1", "cp-3"]


def running(ready=True, containers=()):
    """A Running pod's raw status; `containers` are containerStatuses."""
    return {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"},
                                               {"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": list(containers)}


def container(state, last_exit=None, name="kube-apiserver"):
    status = {"name": name, "ready": False, "state": state}
    if last_exit is not None:
        status["lastState"] = {"terminated": {"exitCode": last_exit, "reason": "Error"}}
    return status


# (id, raw pod status, node Ready status, state, fragment of the message)
PODS = [
    ("a running ready pod is healthy", running(), "True", "healthy", "running and ready"),
    ("a pod on a node whose Ready is Unknown is unknown, not judged", running(ready=False), "Unknown", "unknown", "stale"),
    ("a pod on a node never read is unknown", running(), None, "unknown", "stale"),
    ("a pod that is not found is missing", None, "True", "missing", "not found"),
    ("a pod not scheduled yet is provisioning", {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
     "True", "provisioning", "scheduled"),
    ("a pod running init containers is provisioning",
     {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "False"}]},
     "True", "provisioning", "init containers"),
    ("a pending pod names the waiting reason",
     {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"}],
      "containerStatuses": [container({"waiting": {"reason": "ContainerCreating"}})]},
     "True", "provisioning", "kube-apiserver waiting (ContainerCreating)"),
    ("a crash-looping container whose last run failed is unhealthy",
     running(False, [container({"waiting": {"reason": "CrashLoopBackOff"}}, last_exit=1)]), "True", "unhealthy",
     "exited with an error: kube-apiserver waiting (CrashLoopBackOff)"),
    ("an image that cannot be pulled keeps the pod provisioning, naming ImagePullBackOff",
     running(False, [container({"waiting": {"reason": "ImagePullBackOff"}})]), "True", "provisioning", "ImagePullBackOff"),
    ("a waiting container whose last run exited cleanly is provisioning",
     running(False, [container({"waiting": {"reason": "PodInitializing"}}, last_exit=0)]), "True", "provisioning", "starting"),
    ("a terminated container is unhealthy", running(False, [container({"terminated": {"exitCode": 137}})]), "True",
     "unhealthy", "kube-apiserver terminated"),
    ("a running pod not ready yet is waiting for its probes", running(False, [container({"running": {}})]), "True",
     "provisioning", "probes"),
    ("a failed pod is unhealthy", {"phase": "Failed"}, "True", "unhealthy", "phase Failed"),
    ("a succeeded pod is unhealthy", {"phase": "Succeeded"}, "False", "unhealthy", "phase Succeeded"),
    ("a pod in phase Unknown is unknown", {"phase": "Unknown"}, "True", "unknown", "phase is Unknown"),
    ("a pod with no phase is unknown", {}, "True", "unknown", "not reported"),
]


@pytest.mark.parametrize("pod,node_ready,state,fragment", [c[1:] for c in PODS], ids=[c[0] for c in PODS])
def test_a_control_plane_pod_is_classified_from_its_raw_status(pod, node_ready, state, fragment):
    got, message = classify_pod(pod, node_ready)
    assert got == state
    assert fragment in message


def test_a_provisioning_pod_makes_its_component_false():
    conditions = machine_conditions(machine("cp-1", components={"scheduler": "provisioning"}), False)
    assert conditions["scheduler"] == {"status": "false", "reason": "pod provisioning", "since": None}


def test_a_node_without_a_ready_condition_makes_its_pods_unknown():
    m = machine("cp-1")
    m["node"]["conditions"] = []
    assert set(failing(machine_conditions(m, False), ("unknown",))) == {"api_server", "controller_manager", "scheduler"}


# (id, raw pod status, node Ready status, the whole message)
POD_MESSAGES = [
    ("a pod on a stale node says the node's Ready status and that the pod cannot be trusted", running(), "Unknown",
     "the node's status is stale (Ready is Unknown): the pod's status cannot be trusted"),
    ("a pod on a node never read says Ready is None", running(), None,
     "the node's status is stale (Ready is None): the pod's status cannot be trusted"),
    ("a missing pod says it is not found", None, "True", "the pod is not found"),
    ("a pending pod not scheduled says it waits to be scheduled", {"phase": "Pending"}, "True", "the pod is waiting to be scheduled"),
    ("a pending pod not initialized says it runs its init containers",
     {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}, "True", "the pod is running its init containers"),
    ("a pending pod with nothing waiting says only that it is pending",
     {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"}]},
     "True", "the pod is pending"),
    ("a pending pod names every waiting container, and says when kubelet gave no reason",
     {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"}],
      "containerStatuses": [container({"waiting": {"reason": "ContainerCreating"}}), container({"running": {}}, name="sidecar"),
                            container({"waiting": {}}, name="etcd")]},
     "True", "the pod is pending: kube-apiserver waiting (ContainerCreating), etcd waiting (no reason given)"),
    ("a running ready pod says so", running(), "True", "the pod is running and ready"),
    ("a crash loop names every container whose last run failed, then the waiting ones",
     running(False, [container({"waiting": {"reason": "CrashLoopBackOff"}}, last_exit=1),
                     container({"running": {}}, last_exit=2, name="etcd")]), "True",
     "container kube-apiserver, etcd exited with an error: kube-apiserver waiting (CrashLoopBackOff)"),
    ("a starting pod names its waiting container",
     running(False, [container({"waiting": {"reason": "ImagePullBackOff"}})]), "True",
     "the pod is starting: kube-apiserver waiting (ImagePullBackOff)"),
    ("terminated containers are all named",
     running(False, [container({"terminated": {"exitCode": 137}}), container({"terminated": {"exitCode": 0}}, name="etcd")]), "True",
     "container kube-apiserver, etcd terminated"),
    ("a running pod with nothing waiting or terminated waits for its probes", running(False, [container({"running": {}})]), "True",
     "the pod is waiting for its startup or readiness probes"),
    ("a failed pod says it stopped in phase Failed", {"phase": "Failed"}, "True", "the pod has stopped (phase Failed)"),
    ("a succeeded pod says it stopped in phase Succeeded", {"phase": "Succeeded"}, "True", "the pod has stopped (phase Succeeded)"),
    ("a pod in phase Unknown names the phase", {"phase": "Unknown"}, "True", "the pod's phase is Unknown"),
    ("a pod without a phase says it is not reported", {}, "True", "the pod's phase is not reported"),
]


@pytest.mark.parametrize("pod,node_ready,message", [c[1:] for c in POD_MESSAGES], ids=[c[0] for c in POD_MESSAGES])
def test_a_classified_pod_comes_with_this_exact_message(pod, node_ready, message):
    assert classify_pod(pod, node_ready)[1] == message


@pytest.mark.parametrize(
    "state,reason_and_severity",
    [
        ("healthy", ("", None)),
        ("provisioning", ("PodProvisioning", "Info")),
        ("unhealthy", ("PodFailed", "Error")),
        ("missing", ("PodMissing", "Error")),
        ("unknown", ("PodInspectionFailed", None)),
    ],
    ids=[
        "a healthy pod's condition has no reason and no severity",
        "a provisioning pod is PodProvisioning with severity Info",
        "an unhealthy pod is PodFailed with severity Error",
        "a missing pod is PodMissing with severity Error",
        "a pod that cannot be inspected is PodInspectionFailed with no severity",
    ],
)
def test_each_pod_state_has_the_kcp_reason_and_severity_of_docs_status(state, reason_and_severity):
    assert POD_REASONS[state] == reason_and_severity


def no_scheduler(name):
    m = machine(name)
    del m["components"]["scheduler"]
    return m


@pytest.mark.parametrize(
    "m,managed,member_entry,component,expected",
    [
        (node_gone("cp-1"), False, None, "api_server", {"status": "false", "reason": "node is gone"}),
        (machine("cp-1", has_node=False), False, None, "scheduler", {"status": "unknown", "reason": "no node yet"}),
        (stale_node("cp-1"), False, None, "api_server",
         {"status": "unknown", "reason": "node status is stale (Ready is Unknown or not reported)"}),
        (machine("cp-1"), True, None, "etcd_member", {"status": "unknown", "reason": "etcd member health not observed"}),
        (machine("cp-1"), True, {"status": "true"}, "etcd_member", {"status": "true", "reason": ""}),
        (machine("cp-1", components={"etcd": "missing"}), True, MEMBER_TRUE, "etcd_pod", {"status": "false", "reason": "pod missing"}),
        (machine("cp-1"), False, None, "controller_manager", {"status": "true", "reason": ""}),
        (no_scheduler("cp-1"), False, None, "scheduler", {"status": "unknown", "reason": "pod unknown"}),
    ],
    ids=[
        "a gone node's components say the node is gone",
        "a machine without a node yet says there is no node yet",
        "a stale node's pods say the node status is stale",
        "an etcd member nobody evaluated says its health is not observed",
        "an etcd member verdict without a reason gets an empty one",
        "a missing etcd pod names its state",
        "a true component has an empty reason",
        "a component the snapshot does not report is an unknown pod",
    ],
)
def test_each_condition_says_why(m, managed, member_entry, component, expected):
    got = machine_conditions(m, managed, member_entry)[component]
    assert {"status": got["status"], "reason": got["reason"]} == expected


DOWN_SINCE = "2026-11-20T09:40:00Z"


def crash_looping_etcd(name, since=DOWN_SINCE):
    m = machine(name, components={"etcd": "unhealthy"})
    m["components_since"] = {"etcd": since, "api_server": "2026-11-20T09:01:00Z"}
    return m


@pytest.mark.parametrize(
    "m,member_entry,component,since",
    [
        (crash_looping_etcd("cp-1"), {"status": "false", "reason": "does not answer"}, "etcd_pod", DOWN_SINCE),
        (crash_looping_etcd("cp-1"), {"status": "unknown", "reason": "did not answer"}, "etcd_member", DOWN_SINCE),
        (crash_looping_etcd("cp-1"), MEMBER_TRUE, "etcd_member", None),
        (dict(crash_looping_etcd("cp-1"), components={"etcd": "healthy"}), {"status": "false", "reason": "alarm NOSPACE"},
         "etcd_member", None),
        (crash_looping_etcd("cp-1"), MEMBER_TRUE, "api_server", "2026-11-20T09:01:00Z"),
        (dict(crash_looping_etcd("cp-1"), components={"etcd": "missing"}), {"status": "false", "reason": "does not answer"},
         "etcd_pod", None),
        (dict(crash_looping_etcd("cp-1"), node=dict(stale_node("cp-1")["node"])), None, "etcd_pod", None),
        (node_gone("cp-1"), None, "etcd_member", None),
    ],
    ids=[
        "a pod condition is as old as its pod's Ready transition",
        "a member down with its pod has been down since the pod",
        "a member that answers has no time of its own",
        "a member false with its pod ready (an alarm) has no known start",
        "a ready pod's condition is as old as its Ready transition too",
        "a missing pod's condition has no known start",
        "a stale node's pods have no known start",
        "a gone node's conditions have no known start",
    ],
)
def test_a_condition_is_as_old_as_the_cluster_records_it(m, member_entry, component, since):
    assert machine_conditions(m, True, member_entry)[component]["since"] == since


@pytest.mark.parametrize(
    "components,expected",
    [
        ({}, True),
        ({"scheduler": "unhealthy"}, False),
        ({"etcd": "unknown"}, False),
    ],
    ids=[
        "a machine with every component true is all healthy",
        "one false component is not all healthy",
        "one unknown component is not all healthy",
    ],
)
def test_all_healthy_needs_every_condition_true(components, expected):
    assert all_healthy(machine_conditions(machine("cp-1", components=components), True, MEMBER_TRUE)) is expected


def test_a_machine_without_any_condition_is_not_all_healthy():
    assert all_healthy({}) is False
