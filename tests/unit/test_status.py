# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane's status as KCP conditions (docs/status.md): per machine, per control plane, aggregated."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hash
from ansible_collections.kubeadm.control_plane.plugins.module_utils.status import aggregate, condition, control_plane_status, status_table

from ansible_collections.kubeadm.control_plane.tests.unit.builders import at, health_check, machine, member, snapshot, spec, worker

CURRENT = spec_hash(spec(), "join")


def cp(name, **kwargs):
    """A healthy machine built from the current spec."""
    kwargs.setdefault("spec_hash", CURRENT)
    return machine(name, **kwargs)


def node_gone(machines, index):
    """`machines` with the one at `index` provisioned once and its Node gone since."""
    machines[index]["node"], machines[index]["provisioned"] = None, True
    return machines


def three(**overrides):
    return [cp("cp-%d" % i, created=1000 - i, **overrides.get("cp_%d" % i, {})) for i in (1, 2, 3)]


def status_of(snap, the_spec=None):
    return control_plane_status(the_spec or spec(), snap)


def of(conditions, type_):
    (found,) = [c for c in conditions if c["type"] == type_]
    return found


def brief(c):
    return (c["status"], c["reason"], c["severity"])


def test_a_healthy_control_plane_is_ready_with_every_condition_true():
    result = status_of(snapshot(three()))
    assert [c["type"] for c in result["conditions"]] == [
        "Available", "MachinesReady", "MachinesUpToDate", "RollingOut", "Resized", "ScalingUp", "ScalingDown",
        "ControlPlaneComponentsHealthy", "EtcdClusterHealthy", "CertificatesNotExpiring", "RemediationAllowed",
        "Remediating", "Deleting", "Ready"]
    assert {c["type"]: c["status"] for c in result["conditions"]} == dict(
        Available="True", MachinesReady="True", MachinesUpToDate="True", RollingOut="False", Resized="True", ScalingUp="False",
        ScalingDown="False", ControlPlaneComponentsHealthy="True", EtcdClusterHealthy="True",
        CertificatesNotExpiring="True", RemediationAllowed="True", Remediating="False", Deleting="False", Ready="True")
    assert [c["type"] for c in result["machines"]["cp-1"]] == [
        "NodeHealthy", "APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy", "EtcdPodHealthy",
        "EtcdMemberHealthy", "Ready"]
    assert all(c["status"] == "True" and c["severity"] is None for c in result["machines"]["cp-2"])


def f(severity, reason="R", message="m"):
    return condition("X", "false", reason, message, severity)


T, U = condition("X", "true"), condition("X", "unknown", "Unknown", "no answer")

AGGREGATES = [
    ("an error wins over a warning, info, true and unknown", [T, U, f("Info"), f("Warning"), f("Error", "E")],
     ("False", "E", "Error")),
    ("a warning wins over info", [f("Info"), f("Warning", "W"), T], ("False", "W", "Warning")),
    ("info wins over true", [T, f("Info", "I")], ("False", "I", "Info")),
    ("one true wins over unknowns", [U, T, U], ("True", "", None)),
    ("only unknowns give unknown", [U, U], ("Unknown", "Unknown", None)),
    ("nothing to aggregate is unknown", [], ("Unknown", "NothingToReport", None)),
]


@pytest.mark.parametrize("conditions,expected", [c[1:] for c in AGGREGATES], ids=[c[0] for c in AGGREGATES])
def test_conditions_aggregate_as_kcp_merges_them(conditions, expected):
    assert brief(aggregate("Y", conditions)) == expected


def test_an_aggregate_message_names_each_condition_that_made_it():
    merged = aggregate("Y", [dict(f("Error", message="pod failed"), source="cp-2/APIServerPodHealthy"), f("Error", message="x")])
    assert merged["message"] == "cp-2/APIServerPodHealthy: pod failed; X: x"


def test_a_true_condition_carries_no_severity():
    assert condition("X", "true", severity="Error")["severity"] is None


# (id, machines, etcd members or None, condition type, (status, reason, severity))
CLUSTER = [
    ("a crashed API server pod is an error of the components",
     three(cp_2={"components": {"api_server": "unhealthy"}}), None, "ControlPlaneComponentsHealthy",
     ("False", "PodFailed", "Error")),
    ("a missing scheduler pod is an error", three(cp_3={"components": {"scheduler": "missing"}}), None,
     "ControlPlaneComponentsHealthy", ("False", "PodMissing", "Error")),
    ("a pod still starting is info", three(cp_1={"components": {"controller_manager": "provisioning"}}), None,
     "ControlPlaneComponentsHealthy", ("False", "PodProvisioning", "Info")),
    ("an etcd pod that cannot be inspected leaves the others' true standing", three(cp_1={"components": {"etcd": "unknown"}}),
     None, "ControlPlaneComponentsHealthy", ("True", "", None)),
    ("a machine whose node is stale is unknown and the healthy ones make the components true",
     three(cp_2={"node_ready": "Unknown"}), None, "ControlPlaneComponentsHealthy", ("True", "", None)),
    ("when no etcd member answers, etcd's health is unknown, never false or true",
     three(), [member("cp-%d" % i, responsive=False) for i in (1, 2, 3)], "EtcdClusterHealthy",
     ("Unknown", "EtcdMemberInspectionFailed", None)),
    ("a member with alarms is an error of the etcd cluster", three(),
     [member("cp-1"), member("cp-2", alarms=["NOSPACE"]), member("cp-3")], "EtcdClusterHealthy",
     ("False", "EtcdMemberUnhealthy", "Error")),
    ("a member that belongs to no machine is an error of the etcd cluster", three(),
     [member("cp-1"), member("cp-2"), member("cp-3"), member("old-cp")], "EtcdClusterHealthy",
     ("False", "EtcdClusterUnhealthy", "Error")),
    ("a machine without its member is an error", three(), [member("cp-1"), member("cp-2")], "EtcdClusterHealthy",
     ("False", "EtcdMemberUnhealthy", "Error")),
    ("a machine being deleted has a member that is info, not an error", three(cp_3={"deleting": True}), None,
     "EtcdClusterHealthy", ("False", "EtcdMemberUnhealthy", "Info")),
    ("a machine whose node is gone makes its machine not ready, as an error",
     node_gone(three(), 1), None, "MachinesReady", ("False", "NodeNotFound", "Error")),
    ("a machine still waiting for its node makes the machines not ready, as info",
     three(cp_2={"has_node": False}), None, "MachinesReady", ("False", "NodeProvisioning", "Info")),
    ("a missing machine means scaling up", three()[:2], None, "Resized", ("False", "ScalingUp", "Warning")),
    ("a missing machine sets ScalingUp", three()[:2], None, "ScalingUp", ("True", "ScalingUp", None)),
    ("an extra machine means scaling down", three() + [cp("cp-4")], None, "Resized", ("False", "ScalingDown", "Warning")),
    ("an extra machine sets ScalingDown", three() + [cp("cp-4")], None, "ScalingDown", ("True", "ScalingDown", None)),
    ("a machine being deleted does not count towards the size", three() + [cp("cp-4", deleting=True)], None, "Resized",
     ("True", "", None)),
    ("an outdated machine is not up to date (Cluster API v1.11 setMachinesUpToDateCondition)",
     three(cp_2={"version": "v1.35.8"}), None, "MachinesUpToDate", ("False", "NotUpToDate", "Warning")),
    ("up-to-date machines", three(), None, "MachinesUpToDate", ("True", "UpToDate", None)),
    ("an outdated machine is being rolled out (Cluster API v1.11 setRollingOutCondition)",
     three(cp_2={"version": "v1.35.8"}), None, "RollingOut", ("True", "RollingOut", None)),
    ("no outdated machine, no roll-out", three(), None, "RollingOut", ("False", "NotRollingOut", "Info")),
    ("an outdated machine being deleted rolls nothing out", three() + [cp("cp-4", version="v1.35.8", deleting=True)], None,
     "RollingOut", ("False", "NotRollingOut", "Info")),
    ("a machine being deleted is a deletion under way", three() + [cp("cp-4", deleting=True)], None, "Deleting",
     ("True", "WaitingForMachineDeletion", None)),
    ("no machine being deleted", three(), None, "Deleting", ("False", "NotDeleting", "Info")),
    ("a machine flagged for remediation within the budget is being remediated (Cluster API v1.9 setRemediatingCondition)",
     three(cp_1={"remediation_requested": True}), None, "Remediating", ("True", "Remediating", None)),
    ("nothing flagged, nothing remediated", three(), None, "Remediating", ("False", "NotRemediating", "Info")),
    ("certificates expiring within a week are a warning", three(cp_1={"certificates_expire": at(-60 * 24 * 6)}), None,
     "CertificatesNotExpiring", ("False", "CertificatesExpiring", "Warning")),
    ("certificates expiring in more than a week are fine", three(cp_1={"certificates_expire": at(-60 * 24 * 8)}), None,
     "CertificatesNotExpiring", ("True", "", None)),
    ("certificates whose expiry was not observed are unknown", three(cp_1={"certificates_expire": None}), None,
     "CertificatesNotExpiring", ("Unknown", "CertificatesExpiryUnknown", None)),
    ("an unhealthy machine flagged within the budget leaves remediation allowed",
     three(cp_1={"remediation_requested": True}), None, "RemediationAllowed", ("True", "", None)),
]


@pytest.mark.parametrize("machines,members,type_,expected", [c[1:] for c in CLUSTER], ids=[c[0] for c in CLUSTER])
def test_control_plane_conditions(machines, members, type_, expected):
    assert brief(of(status_of(snapshot(machines, members=members))["conditions"], type_)) == expected


def test_the_spec_threshold_decides_when_certificates_are_expiring():
    the_spec = spec(rollout={"strategy": "RollingUpdate", "max_surge": 1, "after": None, "before": {"certificates_expiry_days": 30}})
    machines = three(cp_1={"certificates_expire": at(-60 * 24 * 20)})
    got = of(status_of(snapshot(machines), the_spec)["conditions"], "CertificatesNotExpiring")
    assert brief(got) == ("False", "CertificatesExpiring", "Warning") and "within 30 days" in got["message"]


def test_remediation_beyond_the_budget_is_not_allowed_and_nothing_is_being_remediated():
    the_spec = spec()
    the_spec["health_check"] = dict(the_spec["health_check"], max_unhealthy=0)
    conditions = status_of(snapshot(three(cp_1={"remediation_requested": True})), the_spec)["conditions"]
    got = of(conditions, "RemediationAllowed")
    assert brief(got) == ("False", "TooManyUnhealthy", "Warning") and "blocked" in got["message"]
    assert brief(of(conditions, "Remediating")) == ("False", "NotRemediating", "Info")


def test_a_remediation_waiting_for_its_replacement_is_under_way():
    snap = snapshot(three()[1:])
    snap["remediation_in_progress"] = {"machine": "cp-1", "timestamp": snap["now"], "retry_count": 0}
    got = of(status_of(snap)["conditions"], "Remediating")
    assert brief(got) == ("True", "Remediating", None) and got["message"] == "cp-1 removed, its replacement still to create"


def test_a_stale_remediation_record_is_no_remediation():
    snap = snapshot(three())
    snap["remediation_in_progress"] = {"machine": "cp-1", "timestamp": snap["now"], "retry_count": 0}
    assert brief(of(status_of(snap)["conditions"], "Remediating")) == ("False", "NotRemediating", "Info")


def test_the_roll_out_names_its_reasons_version_first_and_each_machine_why():
    the_spec = spec(rollout={"strategy": "RollingUpdate", "max_surge": 1, "after": None, "before": {"certificates_expiry_days": 30}})
    machines = three(cp_1={"spec_hash": "0" * 64}, cp_3={"version": "v1.35.8", "certificates_expire": at(-60 * 24 * 20)})
    conditions = status_of(snapshot(machines), the_spec)["conditions"]
    assert of(conditions, "RollingOut")["message"] == (
        "rolling out 2 not up-to-date machines: version (cp-3), spec (cp-1), certificates (cp-3)")
    assert of(conditions, "MachinesUpToDate")["message"].startswith("cp-1: built from spec 000000000000")
    assert "; cp-3: certificates expire at" in of(conditions, "MachinesUpToDate")["message"]


def test_work_under_way_neither_makes_the_control_plane_unready_nor_shows_in_the_table():
    snap = snapshot(three(cp_2={"version": "v1.35.8"}) + [cp("cp-4", deleting=True)])
    status = status_of(snap)
    assert {c["type"] for c in status["conditions"] if c["status"] == "True"} >= {"RollingOut", "Deleting"}
    assert of(status["conditions"], "Ready")["reason"] == "NotUpToDate"
    assert status_table(snap, status)[0] == ("control plane: MachinesReady=False (EtcdMemberUnhealthy), "
                                             "MachinesUpToDate=False (NotUpToDate), EtcdClusterHealthy=False (EtcdMemberUnhealthy)")


@pytest.mark.parametrize("extra,expected", [
    ({"initialized": False}, ("False", "WaitingForKubeadmInit", "Info")),
    ({"endpoint_ready": False}, ("False", "EndpointNotReady", "Error")),
], ids=["a cluster before kubeadm init is not available yet", "an endpoint that does not answer makes it unavailable"])
def test_availability(extra, expected):
    snap = snapshot(three())
    snap.update(extra)
    assert brief(of(status_of(snap)["conditions"], "Available")) == expected


def down(*names):
    return [member("cp-%d" % i, leader=(i == 1), responsive=("cp-%d" % i) not in names) for i in (1, 2, 3)]


# Cluster API v1.9+ (v1beta2 Available, status.go): a quorum of healthy voting members and a machine with every
# component healthy, besides kubeadm init done (and, here, the endpoint answering)
@pytest.mark.parametrize("machines,members,expected", [
    (three(), down("cp-3"), ("True", "", None)),
    (three(), down("cp-2", "cp-3"), ("False", "EtcdQuorumLost", "Error")),
    (three(), down("cp-2", "cp-3") + [member("cp-4", learner=True)], ("False", "EtcdQuorumLost", "Error")),
    (three(cp_1={"components": {"scheduler": "unhealthy"}}, cp_2={"components": {"api_server": "provisioning"}},
           cp_3={"node_ready": "Unknown"}), None, ("False", "NoHealthyMachine", "Error")),
    (three(cp_1={"components": {"scheduler": "unhealthy"}}, cp_2={"components": {"api_server": "provisioning"}}), None,
     ("True", "", None)),
], ids=["one member down of three keeps it available", "two members down lose the quorum",
        "a learner is no voter", "no machine with every component healthy", "one machine with every component healthy is enough"])
def test_availability_needs_a_quorum_and_a_healthy_machine(machines, members, expected):
    assert brief(of(status_of(snapshot(machines, members=members))["conditions"], "Available")) == expected


def test_availability_is_unknown_while_etcd_reports_no_member():
    got = of(status_of(snapshot(three(), members=[]))["conditions"], "Available")
    assert (got["status"], got["reason"]) == ("Unknown", "EtcdMembersUnknown")


EXTERNAL_SPEC = spec(kubeadm={"api_version": "kubeadm.k8s.io/v1beta4", "init_configuration": {}, "join_configuration": {},
                              "cluster_configuration": {"etcd": {"external": {
                                  "endpoints": ["https://10.0.0.5:2379"], "caFile": "/a", "certFile": "/b", "keyFile": "/c"}}}})
EXTERNAL_MEMBERS = ("etcd-1", "etcd-2", "etcd-3")


def external(**overrides):
    """The external cluster etcd-1..etcd-3, etcd-1 leading; `overrides` maps a name to member() keyword arguments."""
    return [member(n, leader=(n == "etcd-1"), **overrides.get(n.replace("-", "_"), {})) for n in EXTERNAL_MEMBERS]


# (id, external members, EtcdClusterHealthy as (status, reason, severity), a word of its message)
EXTERNAL_HEALTH = [
    ("every member answering", external(), ("True", "", None), "every member answered"),
    ("one member down of three", external(etcd_2={"responsive": False}), ("False", "ExternalEtcdDegraded", "Warning"),
     "keeps its quorum, but member etcd-2 did not answer"),
    ("two members down of three", external(etcd_2={"responsive": False}, etcd_3={"responsive": False}),
     ("False", "ExternalEtcdUnhealthy", "Error"), "no quorum: 1 of its 3 voting members"),
    ("an alarm", external(etcd_3={"alarms": ["NOSPACE"]}), ("False", "ExternalEtcdUnhealthy", "Error"), "member etcd-3 has alarms: NOSPACE"),
    ("nothing answering", external(etcd_1={"responsive": False}, etcd_2={"responsive": False}, etcd_3={"responsive": False}),
     ("Unknown", "ExternalEtcdConnectionDown", None), "no etcd endpoint answered"),
]


@pytest.mark.parametrize("members,expected,words", [c[1:] for c in EXTERNAL_HEALTH], ids=[c[0] for c in EXTERNAL_HEALTH])
def test_with_external_etcd_the_cluster_health_is_the_external_clusters_and_machines_have_no_etcd_conditions(members, expected, words):
    result = status_of(snapshot(three(), external=True, members=members), EXTERNAL_SPEC)
    got = of(result["conditions"], "EtcdClusterHealthy")
    assert brief(got) == expected and words in got["message"], got
    assert "EtcdMemberHealthy" not in [c["type"] for c in result["machines"]["cp-1"]]


def test_the_status_table_names_the_external_etcd_members_as_the_run_found_them():
    snap = snapshot(three(), external=True, members=external(etcd_2={"responsive": False}, etcd_3={"alarms": ["NOSPACE"]}))
    table = status_table(snap, status_of(snap, EXTERNAL_SPEC))
    assert table[1] == "external etcd: 2 of 3 members answer: etcd-1 (leader); etcd-2 (not answering); etcd-3 (voter, NOSPACE)"
    assert table[2].split() == ["MACHINE", "FAILURE", "DOMAIN", "VERSION", "ETCD", "CERTIFICATES", "CONDITIONS"]


# (id, machine, condition type, (status, reason, severity))
MACHINE = [
    ("a ready node is healthy", cp("cp-1"), "NodeHealthy", ("True", "", None)),
    ("a node that is not ready is a warning", cp("cp-1", node_ready="False"), "NodeHealthy",
     ("False", "NodeConditionsFailed", "Warning")),
    ("a node whose Ready is unknown is unknown", cp("cp-1", node_ready="Unknown"), "NodeHealthy",
     ("Unknown", "NodeConditionsUnknown", None)),
    ("pods on a stale node are unknown", cp("cp-1", node_ready="Unknown"), "APIServerPodHealthy",
     ("Unknown", "NodeStatusStale", None)),
    ("a machine that never had a node is still provisioning", cp("cp-1", has_node=False), "NodeHealthy",
     ("False", "NodeProvisioning", "Info")),
    ("a machine that never had a node has its pods unknown", cp("cp-1", has_node=False), "SchedulerPodHealthy",
     ("Unknown", "NodeProvisioning", None)),
    ("a crash-looping scheduler is an error", cp("cp-1", components={"scheduler": "unhealthy"}), "SchedulerPodHealthy",
     ("False", "PodFailed", "Error")),
    ("a pod that could not be inspected is unknown", cp("cp-1", components={"api_server": "unknown"}), "APIServerPodHealthy",
     ("Unknown", "PodInspectionFailed", None)),
    ("a machine's readiness summarizes its conditions", cp("cp-1", components={"etcd": "provisioning"}), "Ready",
     ("False", "PodProvisioning", "Info")),
]


@pytest.mark.parametrize("m,type_,expected", [c[1:] for c in MACHINE], ids=[c[0] for c in MACHINE])
def test_machine_conditions(m, type_, expected):
    machines = [m, cp("cp-2"), cp("cp-3")]
    members = [member(x["name"]) for x in machines if x["node"] is not None]
    assert brief(of(status_of(snapshot(machines, members=members))["machines"]["cp-1"], type_)) == expected


def test_a_node_gone_makes_every_pod_condition_an_error():
    conds = status_of(snapshot(node_gone(three(), 0)))["machines"]["cp-1"]
    assert {c["type"]: brief(c) for c in conds if c["type"].endswith("PodHealthy")} == dict.fromkeys(
        ["APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy", "EtcdPodHealthy"],
        ("False", "NodeNotFound", "Error"))


def test_a_single_unknown_part_gives_its_reason():
    assert brief(aggregate("Y", [U])) == ("Unknown", "Unknown", None)


def test_a_machine_whose_node_is_gone_is_not_node_healthy_as_an_error():
    conds = status_of(snapshot(node_gone(three(), 0)))["machines"]["cp-1"]
    assert brief(of(conds, "NodeHealthy")) == ("False", "NodeNotFound", "Error")


@pytest.mark.parametrize("machines,expected", [
    (three(), {"ScalingUp": ("False", "NotScalingUp", "Info"), "ScalingDown": ("False", "NotScalingDown", "Info")}),
    (three()[:2], {"ScalingUp": ("True", "ScalingUp", None), "ScalingDown": ("False", "NotScalingDown", "Info")}),
    (three() + [cp("cp-4")], {"ScalingUp": ("False", "NotScalingUp", "Info"), "ScalingDown": ("True", "ScalingDown", None)}),
], ids=["at size neither scales", "too few scale up only", "too many scale down only"])
def test_scaling_up_and_down_say_which_way_the_control_plane_is_moving(machines, expected):
    conditions = status_of(snapshot(machines))["conditions"]
    assert {t: brief(of(conditions, t)) for t in expected} == expected


def test_an_unhealthy_etcd_member_leaves_the_components_healthy_and_an_unhealthy_etcd_pod_does_not():
    members = [member("cp-1"), member("cp-2", alarms=["CORRUPT"]), member("cp-3")]
    assert brief(of(status_of(snapshot(three(), members=members))["conditions"], "ControlPlaneComponentsHealthy")) == (
        "True", "", None)
    crashed = three(cp_3={"components": {"etcd": "unhealthy"}})
    got = of(status_of(snapshot(crashed))["conditions"], "ControlPlaneComponentsHealthy")
    assert brief(got) == ("False", "PodFailed", "Error") and got["message"].startswith("cp-3/EtcdPodHealthy")


def test_machines_ready_names_the_machine_summaries_that_made_it():
    got = of(status_of(snapshot(three(cp_2={"components": {"scheduler": "missing"}})))["conditions"], "MachinesReady")
    assert brief(got) == ("False", "PodMissing", "Error") and got["message"].startswith("cp-2/Ready: SchedulerPodHealthy")


def test_certificates_expiring_exactly_at_the_threshold_are_expiring():
    got = of(status_of(snapshot(three(cp_2={"certificates_expire": at(-60 * 24 * 7)})))["conditions"], "CertificatesNotExpiring")
    assert brief(got) == ("False", "CertificatesExpiring", "Warning")


def test_the_status_table_has_a_line_a_machine_with_what_is_not_true():
    machines = three()
    machines[0]["failure_domain"] = "fd-1"
    machines[1]["components"]["scheduler"] = "unhealthy"
    snap = snapshot(machines)
    assert status_table(snap, status_of(snap)) == [
        "control plane: MachinesReady=False (PodFailed), ControlPlaneComponentsHealthy=False (PodFailed)",
        "MACHINE  FAILURE DOMAIN  VERSION  ETCD    CERTIFICATES  CONDITIONS",
        "cp-1     fd-1            v1.36.4  leader  2027-11-20    Ready",
        "cp-2     -               v1.36.4  voter   2027-11-20    SchedulerPodHealthy=False (PodFailed)",
        "cp-3     -               v1.36.4  voter   2027-11-20    Ready",
    ]
    healthy = snapshot(three())
    assert status_table(healthy, status_of(healthy))[0] == "control plane: Ready"


def test_the_upgrade_progress_names_who_runs_the_version_and_where_each_unfinished_upgrade_stands():
    machines = three()
    machines[0]["upgrade"] = {"version": "v1.37.1", "step": "ready", "failed_step": None, "error": None}
    machines[0]["version"] = "v1.37.1"
    machines[1]["upgrade"] = {"version": "v1.37.1", "step": "kubeadm-upgrade", "failed_step": "drain", "error": "the drain\nof cp-2 did not finish"}
    workers = [worker("w-1", group="md-0"), worker("w-2", group="md-0", unschedulable=True)]
    workers[1]["upgrade"] = {"version": "v1.37.1", "step": "drain", "failed_step": None, "error": None}
    snap = snapshot(machines, workers=workers)
    progress = status_of(snap, spec(version="v1.37.1"))["upgrade"]
    assert progress == {
        "version": "v1.37.1",
        "control_plane": {"upgraded": ["cp-1"], "to_upgrade": ["cp-2", "cp-3"]},
        "workers": {"upgraded": [], "to_upgrade": ["w-1", "w-2"]},
        "nodes": {"cp-2": machines[1]["upgrade"], "w-2": workers[1]["upgrade"]},
    }
    table = status_table(snap, status_of(snap, spec(version="v1.37.1")))
    assert table[1:] == [
        "MACHINE  FAILURE DOMAIN  VERSION  ETCD    CERTIFICATES  CONDITIONS  UPGRADE",
        "cp-1     -               v1.37.1  leader  2027-11-20    Ready       -",
        "cp-2     -               v1.36.4  voter   2027-11-20    Ready       v1.37.1: kubeadm-upgrade done, drain failed: the drain of cp-2 did not finish",
        "cp-3     -               v1.36.4  voter   2027-11-20    Ready       -",
        "workers: 2, 0 of them at v1.37.1",
        "WORKER  GROUP  VERSION  STATE            HEALTH  UPGRADE",
        "w-1     md-0   v1.36.4  Ready            -       -",
        "w-2     md-0   v1.36.4  Ready, cordoned  -       v1.37.1: drain done",
    ], table


def _gone(index):
    return node_gone(three(), index)


# (id, snapshot, where: ("machine", name, type) or ("cluster", type), (status, reason, message))
MESSAGES = [
    ("a Node gone", snapshot(_gone(0)), ("machine", "cp-1", "NodeHealthy"),
     ("False", "NodeNotFound", "the machine's Node no longer exists")),
    ("no Node yet", snapshot(three(cp_1={"has_node": False})), ("machine", "cp-1", "NodeHealthy"),
     ("False", "NodeProvisioning", "the machine has no Node yet")),
    ("a Node not Ready", snapshot(three(cp_1={"node_ready": "False"})), ("machine", "cp-1", "NodeHealthy"),
     ("False", "NodeConditionsFailed", "Node cp-1 is not Ready")),
    ("a silent kubelet", snapshot(three(cp_1={"node_ready": "Unknown"})), ("machine", "cp-1", "NodeHealthy"),
     ("Unknown", "NodeConditionsUnknown", "Node cp-1 reports no Ready status (its kubelet is not reporting)")),
    ("before kubeadm init", snapshot(three(), initialized=False), ("cluster", "Available"),
     ("False", "WaitingForKubeadmInit", "kubeadm init has not completed")),
    ("an endpoint not answering", snapshot(three(), endpoint_ready=False), ("cluster", "Available"),
     ("False", "EndpointNotReady", "the API endpoint does not answer /readyz")),
    ("a lost quorum", snapshot(three(), members=down("cp-2", "cp-3")), ("cluster", "Available"),
     ("False", "EtcdQuorumLost", "1 of 3 voting etcd members are healthy, a quorum is 2")),
    ("no member reported", snapshot(three(), members=[]), ("cluster", "Available"),
     ("Unknown", "EtcdMembersUnknown", "etcd did not report its members")),
    ("no machine all healthy", snapshot(three(cp_1={"components": {"scheduler": "unhealthy"}}, cp_2={"node_ready": "Unknown"},
                                              cp_3={"components": {"api_server": "provisioning"}})), ("cluster", "Available"),
     ("False", "NoHealthyMachine", "no control plane machine has every component healthy")),
    ("too few machines", snapshot(three()[:2]), ("cluster", "Resized"), ("False", "ScalingUp", "2 of 3 machines; scaling up")),
    ("too many machines", snapshot(three() + [cp("cp-4")]), ("cluster", "ScalingDown"),
     ("True", "ScalingDown", "4 machines, 3 wanted; scaling down")),
    ("no machine", snapshot([]), ("cluster", "MachinesUpToDate"), ("True", "NoReplicas", "")),
    ("no machine rolls nothing out", snapshot([]), ("cluster", "RollingOut"), ("False", "NotRollingOut", "")),
    ("certificates expiring", snapshot(three(cp_1={"certificates_expire": at(-60 * 24 * 6)}, cp_2={"certificates_expire": at(-60 * 24 * 5)})),
     ("cluster", "CertificatesNotExpiring"),
     ("False", "CertificatesExpiring", "cp-1: expire at 2026-11-28T10:00:00Z; cp-2: expire at 2026-11-27T10:00:00Z (within 7 days)")),
    ("certificate expiry unseen", snapshot(three(cp_1={"certificates_expire": None}, cp_2={"certificates_expire": None})),
     ("cluster", "CertificatesNotExpiring"), ("Unknown", "CertificatesExpiryUnknown", "certificate expiry not observed on cp-1, cp-2")),
    ("a stray member", snapshot(three(), members=[member("cp-1"), member("cp-2"), member("cp-3"), member("old-cp", member_id="abc")]),
     ("cluster", "EtcdClusterHealthy"),
     ("False", "EtcdClusterUnhealthy", "EtcdClusterHealthy: etcd member old-cp (abc) belongs to no machine")),
    ("two machines to remediate", snapshot(three(cp_1={"remediation_requested": True}, cp_2={"remediation_requested": True})),
     ("cluster", "Remediating"), ("True", "Remediating", "cp-1, cp-2 to remediate")),
    ("two removals under way", snapshot(three(cp_1={"deleting": True}, cp_2={"deleting": True})), ("cluster", "Deleting"),
     ("True", "WaitingForMachineDeletion", "removal of cp-1, cp-2 under way")),
]


@pytest.mark.parametrize("snap,where,expected", [c[1:] for c in MESSAGES], ids=[c[0] for c in MESSAGES])
def test_each_condition_says_what_it_saw(snap, where, expected):
    status = status_of(snap)
    found = of(status["machines"][where[1]], where[2]) if where[0] == "machine" else of(status["conditions"], where[1])
    assert (found["status"], found["reason"], found["message"]) == expected


def test_a_remediation_under_way_and_one_to_come_are_both_named():
    snap = snapshot(three(cp_2={"remediation_requested": True})[1:])
    snap["remediation_in_progress"] = {"machine": "cp-1", "timestamp": snap["now"], "retry_count": 0}
    got = of(status_of(snap)["conditions"], "Remediating")
    assert got["message"] == "cp-1 removed, its replacement still to create; cp-2 to remediate"


def test_the_status_table_names_roles_removals_unknown_versions_and_workers_as_they_are():
    machines = three(cp_3={"version": None, "certificates_expire": None})
    machines.append(cp("cp-4", deleting=True, has_node=False))
    members = [member("cp-1", leader=True), member("cp-2", learner=True), member("cp-3")]
    workers = [worker("w-1", version=None, ready=False), worker("w-2", group="md-0")]
    snap = snapshot(machines, members=members, workers=workers)
    status = status_of(snap)
    status["upgrade"] = {}
    assert status_table(snap, status)[1:] == [
        "MACHINE          FAILURE DOMAIN  VERSION  ETCD     CERTIFICATES  CONDITIONS",
        "cp-1             -               v1.36.4  leader   2027-11-20    Ready",
        "cp-2             -               v1.36.4  learner  2027-11-20    EtcdMemberHealthy=False (EtcdMemberUnhealthy)",
        "cp-3             -               ?        voter    ?             Ready",
        "cp-4 (deleting)  -               v1.36.4  -        2027-11-20    NodeHealthy=False (NodeProvisioning), "
        "APIServerPodHealthy=Unknown (NodeProvisioning), ControllerManagerPodHealthy=Unknown (NodeProvisioning), "
        "SchedulerPodHealthy=Unknown (NodeProvisioning), EtcdPodHealthy=Unknown (NodeProvisioning), "
        "EtcdMemberHealthy=Unknown (NodeProvisioning)",
        "workers: 2, 0 of them at the spec's version",
        "WORKER  GROUP  VERSION  STATE     HEALTH  UPGRADE",
        "w-1     -      ?        NotReady  -       -",
        "w-2     md-0   v1.36.4  Ready     -       -",
    ]


def test_each_worker_group_s_health_check_is_reported_with_its_budget_when_a_worker_is_not_healthy():
    workers = [worker("free"), worker("g-1", group="gpu"), worker("w-1", group="md-0", node_ready="Unknown", changed=10, external_attempts=2),
               worker("w-2", group="md-0", node_ready="Unknown", changed=10), worker("w-3", group="md-0")]
    the_spec = spec(workers={"health_check": None, "groups": {"md-0": {"health_check": health_check(max_unhealthy=1)},
                                                              "gpu": {"health_check": health_check()}}})
    snap = snapshot(three(), workers=workers)
    status = status_of(snap, the_spec)
    assert [(g["group"], g["remediation_allowed"], sorted(g["workers"])) for g in status["workers_health"]] == [
        ("gpu", True, ["g-1"]), ("md-0", False, ["w-1", "w-2", "w-3"])]
    assert status["workers_health"][1]["workers"]["w-1"]["reason"].startswith("node condition Ready has been Unknown since ")
    table = status_table(snap, status)
    assert table[table.index("workers: 5, 5 of them at v1.36.4") + 1:] == [
        "worker group md-0: Remediation is blocked: 2 of 3 machines not healthy, more than the 1 that max_unhealthy 1 allows.",
        "WORKER  GROUP  VERSION  STATE     HEALTH                                      UPGRADE",
        "free    -      v1.36.4  Ready     -                                           -",
        "g-1     gpu    v1.36.4  Ready     healthy                                     -",
        "w-1     md-0   v1.36.4  NotReady  unhealthy, 2 external remediation attempts  -",
        "w-2     md-0   v1.36.4  NotReady  unhealthy                                   -",
        "w-3     md-0   v1.36.4  Ready     healthy                                     -",
    ], table


def test_a_machine_being_deleted_neither_keeps_the_control_plane_available_nor_counts_in_the_upgrade():
    machines = three(cp_1={"components": {"scheduler": "unhealthy"}}, cp_2={"components": {"scheduler": "unhealthy"}},
                     cp_3={"deleting": True})
    status = status_of(snapshot(machines))
    assert brief(of(status["conditions"], "Available")) == ("False", "NoHealthyMachine", "Error")
    assert status["upgrade"]["control_plane"] == {"upgraded": ["cp-1", "cp-2"], "to_upgrade": []}


def with_certificates(machines, name, **fields):
    """``machines`` with ``fields`` (certificate_authorities_expire, kubelet_certificate_*) set on machine ``name``."""
    next(m for m in machines if m["name"] == name).update(fields)
    return machines


YEAR = 60 * 24 * 365

# (id, machines, (status, reason, severity), the message)
CERTIFICATES = [
    ("a CA within a year is an error, whatever the leaves",
     with_certificates(three(cp_2={"certificates_expire": at(-60 * 24 * 3)}), "cp-1", certificate_authorities_expire=at(-YEAR + 60)),
     ("False", "CertificateAuthorityExpiring", "Error"),
     "cp-1: a CA expires at 2027-11-22T09:00:00Z (within a year); cp-2: expire at 2026-11-25T10:00:00Z (within 7 days)"),
    ("a CA with more than a year left is fine", with_certificates(three(), "cp-1", certificate_authorities_expire=at(-YEAR - 60)),
     ("True", "", None), ""),
    ("a kubelet that does not renew its client certificate, close to expiry, is a warning",
     with_certificates(three(), "cp-3", kubelet_certificate_expire=at(-60 * 24 * 2), kubelet_certificate_rotates=False),
     ("False", "KubeletCertificateExpiring", "Warning"),
     "cp-3: the kubelet's client certificate expires at 2026-11-24T10:00:00Z and the kubelet does not renew it (rotateCertificates "
     "is off) (within 7 days)"),
    ("a kubelet that rotates its certificate and has not renewed it that close to expiry is a warning too",
     with_certificates(three(), "cp-3", kubelet_certificate_expire=at(-60 * 24 * 2), kubelet_certificate_rotates=True),
     ("False", "KubeletCertificateExpiring", "Warning"),
     "cp-3: the kubelet's client certificate expires at 2026-11-24T10:00:00Z and the kubelet has not renewed it: is its certificate "
     "signing request approved (kubectl get csr)? (within 7 days)"),
    ("a kubelet whose rotation is unknown is reported as such", with_certificates(three(), "cp-3", kubelet_certificate_expire=at(-60)),
     ("False", "KubeletCertificateExpiring", "Warning"),
     "cp-3: the kubelet's client certificate expires at 2026-11-22T11:00:00Z and whether the kubelet renews it is not known (within 7 days)"),
    ("a kubelet's certificate outside the window is fine",
     with_certificates(three(), "cp-3", kubelet_certificate_expire=at(-60 * 24 * 8), kubelet_certificate_rotates=False), ("True", "", None), ""),
]


@pytest.mark.parametrize("machines, expected, message", [c[1:] for c in CERTIFICATES], ids=[c[0] for c in CERTIFICATES])
def test_certificates_not_expiring_weighs_the_cas_the_leaves_and_the_kubelets(machines, expected, message):
    got = of(status_of(snapshot(machines))["conditions"], "CertificatesNotExpiring")
    assert (brief(got), got["message"]) == (expected, message)


def test_the_status_reports_each_machines_certificates():
    machines = with_certificates(three(), "cp-1", certificate_authorities_expire="2035-11-18T09:00:00Z",
                                 kubelet_certificate_expire="2027-11-20T09:01:00Z", kubelet_certificate_rotates=True)
    assert status_of(snapshot(machines))["certificates"]["cp-1"] == {
        "certificates_expire": "2027-11-20T09:00:00Z", "certificate_authorities_expire": "2035-11-18T09:00:00Z",
        "kubelet_certificate_expire": "2027-11-20T09:01:00Z", "kubelet_certificate_rotates": True, "certificate_renewal": None}


def test_a_certificate_renewal_under_way_is_reported_as_work_in_progress_with_its_step():
    renewing = {"started": at(5), "step": "etcd", "failed_step": "kube-apiserver", "error": "no answer"}
    machines = three()
    machines[1]["certificate_renewal"] = renewing
    report = status_of(snapshot(machines))
    assert of(report["conditions"], "RollingOut")["message"] == "rolling out 1 not up-to-date machine: renewal (cp-2)"
    assert of(report["conditions"], "MachinesUpToDate")["message"] == \
        "cp-2: its certificate renewal in place failed at step kube-apiserver: no answer"
    assert report["certificates"]["cp-2"]["certificate_renewal"] == renewing
