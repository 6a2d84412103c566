# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The snapshot put together from raw API objects and host records (docs/state.md): which source wins, what an
adopted machine looks like, and that every snapshot it makes is one the decisions accept."""

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.filter.observation_sources import observation_sources
from ansible_collections.kubeadm.control_plane.plugins.module_utils import observation
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_snapshot
from ansible_collections.kubeadm.control_plane.plugins.modules import kcp_plan

NOW = "2026-11-26T12:00:00Z"
READY = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-26T10:00:00Z"}
RUNNING = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


def node(name, zone=None, annotations=None, ready="default", ip="10.0.0.1", control_plane=True, version="v1.37.1"):
    ready = READY if ready == "default" else ready
    labels = {observation.CONTROL_PLANE_LABEL: ""} if control_plane else {}
    if zone:
        labels[observation.ZONE_LABEL] = zone
    return {
        "metadata": {"name": name, "labels": labels, "annotations": annotations or {},
                     "creationTimestamp": "2026-11-26T09:00:00Z"},
        "status": {"conditions": [ready] if ready else [], "nodeInfo": {"kubeletVersion": version},
                   "addresses": [{"type": "InternalIP", "address": ip}]},
    }


def mirror_pods(node_name):
    return [{"metadata": {"name": "%s-%s" % (prefix, node_name), "annotations": {}}, "status": RUNNING}
            for prefix in observation.MIRROR_PODS.values()]


def host(name, fd="fd-1", record=None, address="10.0.0.1"):
    return {"name": name, "address": address, "failure_domain": fd, "record": record}


def test_a_machine_built_by_the_collection_reads_its_facts_from_the_node():
    annotations = {observation.CREATED: "2026-11-26T08:00:00Z", observation.SPEC_HASH: "abc",
                   observation.BOOTSTRAP: "init", observation.DELETE_MACHINE: "",
                   observation.REMEDIATION: json.dumps({"retries": 2, "last": "2026-11-25T00:00:00Z"})}
    record = {"created": "2026-01-01T00:00:00Z", "bootstrap": "join"}
    snap = observation.assemble(NOW, [host("cp-1", fd="fd-inventory", record=record)],
                                ["fd-1"], nodes=[node("cp-1", zone="fd-1", annotations=annotations)],
                                pods=mirror_pods("cp-1"), kubeadm_config={"kubernetes_version": "v1.37.1"})
    [machine] = snap["machines"]
    # the Node wins over the host record and the inventory for everything it carries
    assert (machine["failure_domain"], machine["created"], machine["bootstrap"]) == ("fd-1", "2026-11-26T08:00:00Z", "init")
    assert machine["spec_hash"] == "abc" and machine["delete_requested"] is True and machine["deleting"] is False
    assert machine["remediation"] == {"requested": False, "retries": 2, "last": "2026-11-25T00:00:00Z"}
    assert machine["components"] == dict.fromkeys(observation.MIRROR_PODS, "healthy")
    assert machine["version"] == "v1.37.1" and machine["provisioned"] is True and snap["initialized"] is True
    normalize_snapshot(snap)


def test_an_adopted_machine_takes_the_inventory_zone_and_the_node_creation_time_and_no_hash():
    snap = observation.assemble(NOW, [host("cp-1", fd="fd-2")], ["fd-2"], nodes=[node("cp-1")], pods=mirror_pods("cp-1"),
                                kubeadm_config={"kubernetes_version": "v1.36.4"})
    [machine] = snap["machines"]
    assert (machine["failure_domain"], machine["created"]) == ("fd-2", "2026-11-26T09:00:00Z")
    assert machine["spec_hash"] is None and machine["bootstrap"] is None
    normalize_snapshot(snap)


def test_only_control_plane_nodes_are_machines_and_free_hosts_are_not():
    snap = observation.assemble(NOW, [host("cp-1"), host("spare", fd="fd-2")], ["fd-1", "fd-2"],
                                nodes=[node("cp-1"), node("worker-1", control_plane=False)], pods=mirror_pods("cp-1"),
                                kubeadm_config={"kubernetes_version": "v1.37.1"})
    assert [m["name"] for m in snap["machines"]] == ["cp-1"]
    assert snap["failure_domains"] == [{"name": "fd-1", "control_plane": True}, {"name": "fd-2", "control_plane": True}]


def test_a_missing_pod_and_a_stale_node_read_as_the_decision_core_says():
    pods = [p for p in mirror_pods("cp-1") if not p["metadata"]["name"].startswith("kube-scheduler")]
    stale = dict(READY, status="Unknown")
    snap = observation.assemble(NOW, [], [], nodes=[node("cp-1"), node("cp-2", ready=stale)],
                                pods=pods + mirror_pods("cp-2"), kubeadm_config={"kubernetes_version": "v1.37.1"})
    first, second = snap["machines"]
    assert first["components"]["scheduler"] == "missing" and first["components"]["api_server"] == "healthy"
    assert set(second["components"].values()) == {"unknown"}
    normalize_snapshot(snap)


def test_a_machine_known_only_by_its_host_record():
    joining = {"created": "2026-11-26T11:00:00Z", "bootstrap": "join", "step": "joining", "failure_domain": "fd-3"}
    lost = {"created": "2026-11-20T11:00:00Z", "bootstrap": "join", "step": "joined", "joined": "2026-11-20T11:05:00Z"}
    retiring = {"created": "2026-11-20T11:00:00Z", "bootstrap": "join", "step": "deleting", "joined": "2026-11-20T11:05:00Z"}
    snap = observation.assemble(NOW, [host("cp-2", record=joining), host("cp-3", record=lost), host("cp-4", record=retiring)],
                                ["fd-1", "fd-3"], kubeadm_config={"kubernetes_version": "v1.37.1"})
    by_name = {m["name"]: m for m in snap["machines"]}
    assert by_name["cp-2"]["provisioned"] is False and by_name["cp-2"]["failure_domain"] == "fd-3"
    # a machine that joined and has no Node has lost it: provisioned, node gone
    assert by_name["cp-3"]["provisioned"] is True and by_name["cp-3"]["node"] is None
    assert by_name["cp-4"]["deleting"] is True
    normalize_snapshot(snap)


def test_before_kubeadm_init_there_is_no_cluster_and_no_etcd():
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"])
    assert (snap["initialized"], snap["kubeadm_config"], snap["machines"]) == (False, None, [])
    assert snap["etcd"] == {"external": False, "members": []}
    normalize_snapshot(snap)


def test_remediation_in_progress_comes_from_the_state_config_map_and_nonsense_reads_as_none():
    record = {"machine": "cp-2", "timestamp": "2026-11-26T11:00:00Z", "retry_count": 1}
    snap = observation.assemble(NOW, [], [], kubeadm_config={}, state_config_map={"remediation": json.dumps(record)})
    assert snap["remediation_in_progress"] == record
    assert observation.assemble(NOW, [], [], state_config_map={"remediation": "{not json"})["remediation_in_progress"] is None


def test_unrecorded_names_control_plane_nodes_without_this_collections_record_and_what_to_write():
    nodes = [node("cp-1", zone="fd-1"), node("cp-2"), node("cp-3", annotations={observation.CREATED: "2026-11-26T10:00:00Z"}),
             node("worker-1", control_plane=False)]
    hosts = [host("cp-1", fd="fd-9"), host("cp-2", fd="fd-2"), host("cp-3", fd="fd-3")]
    assert observation.unrecorded(nodes, hosts) == [
        {"name": "cp-1", "created": "2026-11-26T09:00:00Z", "failure_domain": None},  # the zone label stands
        {"name": "cp-2", "created": "2026-11-26T09:00:00Z", "failure_domain": "fd-2"},
    ]
    assert observation.unrecorded([node("cp-4")], []) == [{"name": "cp-4", "created": "2026-11-26T09:00:00Z", "failure_domain": None}]


def test_an_api_timestamp_the_python_client_wrote_with_an_offset_reads_as_the_snapshots_form():
    written = node("cp-1")
    written["metadata"]["creationTimestamp"] = "2026-11-26T09:00:00+00:00"
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[written], kubeadm_config={})
    assert snap["machines"][0]["created"] == "2026-11-26T09:00:00Z"
    assert observation.unrecorded([written], [])[0]["created"] == "2026-11-26T09:00:00Z"


def test_a_replacement_carries_its_remediation_from_the_host_record_until_its_node_holds_it():
    carried = {"retries": 2, "last": "2026-11-26T11:00:00Z"}
    record = {"name": "cp-2", "created": "2026-11-26T11:01:00Z", "bootstrap": "join", "step": "joining", "remediation": carried}
    joining = observation.assemble(NOW, [host("cp-2", record=record)], ["fd-1"], kubeadm_config={})
    assert joining["machines"][0]["remediation"] == {"requested": False, "retries": 2, "last": "2026-11-26T11:00:00Z"}
    annotated = node("cp-2", annotations={observation.REMEDIATION: json.dumps({"retries": 3, "last": "2026-11-26T11:30:00Z"})})
    joined = observation.assemble(NOW, [host("cp-2", record=dict(record, step="joined"))], ["fd-1"], nodes=[annotated],
                                  pods=mirror_pods("cp-2"), kubeadm_config={})
    assert joined["machines"][0]["remediation"] == {"requested": False, "retries": 3, "last": "2026-11-26T11:30:00Z"}
    normalize_snapshot(joining)
    normalize_snapshot(joined)


def external_remediation_of(annotation):
    """The external_remediation a Node with this annotation value (None: without it) reads as."""
    annotations = {} if annotation is None else {observation.EXTERNAL_REMEDIATION: annotation}
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[node("cp-1", annotations=annotations)],
                                pods=mirror_pods("cp-1"), kubeadm_config={})
    assert normalize_snapshot(snap)[1] == []
    return snap["machines"][0]["external_remediation"]


@pytest.mark.parametrize(
    "annotation,expected",
    [
        (None, {"attempts": 0, "last": None}),
        (json.dumps({"attempts": 2, "last": "2026-11-26T11:50:00Z"}), {"attempts": 2, "last": "2026-11-26T11:50:00Z"}),
        ("{not json", {"attempts": 0, "last": None}),
        (json.dumps([2, "2026-11-26T11:50:00Z"]), {"attempts": 0, "last": None}),
        (json.dumps({"attempts": "2", "last": "2026-11-26T11:50:00Z"}), {"attempts": 2, "last": "2026-11-26T11:50:00Z"}),
        (json.dumps({"attempts": "two", "last": "2026-11-26T11:50:00Z"}), {"attempts": 0, "last": "2026-11-26T11:50:00Z"}),
        (json.dumps({"attempts": -1, "last": None}), {"attempts": 0, "last": None}),
        (json.dumps({"attempts": True}), {"attempts": 0, "last": None}),
        (json.dumps({"attempts": 1, "last": "a minute ago"}), {"attempts": 1, "last": None}),
    ],
    ids=[
        "a Node without the annotation has made no attempt",
        "the annotation's attempts and time are read as the flow wrote them",
        "an annotation that is not JSON reads as no attempt",
        "an annotation that is not a JSON object reads as no attempt",
        "a count a template rendered as a string of digits still counts",
        "a count that is not a number reads as none",
        "a negative count reads as none",
        "a count written as a boolean reads as none",
        "a time that is not RFC 3339 reads as none",
    ],
)
def test_the_external_remediation_request_comes_from_its_node_annotation(annotation, expected):
    assert external_remediation_of(annotation) == expected


def test_the_external_remediation_annotation_is_the_one_docs_state_md_names():
    # the remediate flow writes it under this name: renaming it would forget every attempt already counted
    assert observation.EXTERNAL_REMEDIATION == "control-plane.kubeadm.io/external-remediation"


def test_a_machine_without_a_node_carries_no_external_remediation_request():
    record = {"created": "2026-11-26T11:00:00Z", "bootstrap": "join", "step": "joining"}
    snap = observation.assemble(NOW, [host("cp-2", record=record)], ["fd-1"], kubeadm_config={})
    assert snap["machines"][0]["external_remediation"] == {"attempts": 0, "last": None}


def test_worker_nodes_are_the_snapshots_workers_with_their_group_version_readiness_and_cordon():
    cordoned = node("w-2", control_plane=False, ready=dict(READY, status="False"), version="v1.36.4")
    cordoned["spec"] = {"unschedulable": True}
    cordoned["metadata"].setdefault("annotations", {})["control-plane.kubeadm.io/upgrade"] = json.dumps(
        {"version": "v1.37.1", "command": "node", "step": "kubeadm-upgrade", "at": "2026-11-26T09:10:00Z",
         "failed": {"step": "drain", "error": "the drain of w-2 did not finish", "at": "2026-11-26T09:15:00Z"}})
    labelled = node("w-1", control_plane=False)
    labelled["metadata"]["labels"][observation.WORKER_GROUP_LABEL] = "md-0"
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[node("cp-1"), cordoned, labelled], pods=mirror_pods("cp-1"),
                                kubeadm_config={})
    assert snap["workers"] == [
        {"name": "w-1", "group": "md-0", "created": "2026-11-26T09:00:00Z", "version": "v1.37.1", "ready": True, "unschedulable": False,
         "upgrade": None},
        {"name": "w-2", "group": None, "created": "2026-11-26T09:00:00Z", "version": "v1.36.4", "ready": False, "unschedulable": True,
         "upgrade": {"version": "v1.37.1", "step": "kubeadm-upgrade", "failed_step": "drain", "error": "the drain of w-2 did not finish"}},
    ]
    assert normalize_snapshot(snap)[1] == []


def test_the_worker_group_label_is_the_one_docs_snapshot_md_names():
    # the worker join sets it from the inventory's worker_group: renaming it would put every worker in the unnamed group
    assert observation.WORKER_GROUP_LABEL == "control-plane.kubeadm.io/worker-group"


def test_what_observation_assembles_from_api_objects_plans_the_workers_after_the_control_plane():
    """The seam: raw Nodes as the API returns them, assembled as kcp_observe does, planned as kcp_plan does."""
    members = [{"name": n, "id": "%016x" % (i + 1), "responsive": True, "leader": i == 0, "version": "3.6.11",
                "member_ids_seen": ["%016x" % (j + 1) for j in range(3)]} for i, n in enumerate(("cp-1", "cp-2", "cp-3"))]
    control_plane = [node(n, version="v1.37.1") for n in ("cp-1", "cp-2", "cp-3")]
    workers = [node("w-%d" % i, control_plane=False, version="v1.36.4") for i in (1, 2, 3)]
    for i, worker in enumerate(workers):
        worker["metadata"]["creationTimestamp"] = "2026-11-26T09:0%d:00Z" % (3 - i)
        worker["metadata"]["labels"][observation.WORKER_GROUP_LABEL] = "md-0" if i < 2 else "md-1"
    pods = [p for n in ("cp-1", "cp-2", "cp-3") for p in mirror_pods(n)]
    raw_spec = {"cluster_name": "demo", "replicas": 3, "version": "v1.37.1", "endpoint": {"host": "10.0.0.100"},
                "upgrade": {"strategy": "in_place", "workers": {"groups": {"md-0": {"max_unavailable": 2}}}}}

    def planned(nodes):
        snap = observation.assemble(NOW, [host(n) for n in ("cp-1", "cp-2", "cp-3")], ["fd-1"], nodes=nodes, pods=pods,
                                    kubeadm_config={"kubernetes_version": "v1.37.1", "cluster_configuration": None},
                                    etcd={"external": False, "members": members}, endpoint_ready=True)
        result, errors = kcp_plan.plan_from_raw(raw_spec, snap, projection=True)
        assert errors == []
        return result

    result = planned(control_plane + workers)
    assert (result["action"], result["worker_group"], result["workers"]) == ("upgrade_workers", "md-0", ["w-2", "w-1"])
    assert [(s["action"], s["workers"]) for s in result["projection"]] == [
        ("upgrade_workers", ["w-2", "w-1"]), ("upgrade_workers", ["w-3"]), ("none", [])]
    behind = [node("cp-1", version="v1.36.4")] + control_plane[1:]
    result = planned(behind + workers)
    assert (result["action"], result["machine"], result["workers"]) == ("upgrade_in_place", "cp-1", [])


def with_images(pods, etcd_image):
    """The mirror pods with the container image kubeadm's manifests name; the etcd pod's is ``etcd_image``."""
    for pod in pods:
        component = pod["metadata"]["name"].rpartition("-cp-")[0]
        image = etcd_image if component == "etcd" else "registry.k8s.io/%s:v1.37.1" % component
        pod["spec"] = {"containers": [{"name": component, "image": image}]}
    return pods


@pytest.mark.parametrize("image,tag", [
    ("registry.k8s.io/etcd:3.6.8-0", "3.6.8-0"),
    ("mirror.local:5000/etcd:3.6.11-0", "3.6.11-0"),
    ("mirror.local:5000/etcd", None),
    ("registry.k8s.io/etcd@sha256:0123abcd", None),
], ids=["a registry image", "a registry with a port", "no tag", "a digest"])
def test_a_machine_s_etcd_image_tag_is_its_etcd_mirror_pod_s(image, tag):
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[node("cp-1")], pods=with_images(mirror_pods("cp-1"), image),
                                kubeadm_config={"kubernetes_version": "v1.37.1"})
    assert snap["machines"][0]["etcd_image_tag"] == tag
    assert normalize_snapshot(snap)[1] == []


def test_without_an_etcd_pod_or_a_node_the_etcd_image_tag_is_not_known():
    pods = [p for p in with_images(mirror_pods("cp-1"), "registry.k8s.io/etcd:3.6.8-0") if not p["metadata"]["name"].startswith("etcd-")]
    joining = {"created": "2026-11-26T11:00:00Z", "bootstrap": "join", "step": "joining"}
    snap = observation.assemble(NOW, [host("cp-1"), host("cp-2", record=joining)], ["fd-1"], nodes=[node("cp-1")], pods=pods,
                                kubeadm_config={"kubernetes_version": "v1.37.1"})
    assert [m["etcd_image_tag"] for m in snap["machines"]] == [None, None]


def test_what_observation_assembles_upgrades_an_older_etcd_in_place_at_the_same_version():
    """The seam for etcd: the etcd mirror pods' image tags, assembled as kcp_observe does, planned as kcp_plan does."""
    names = ("cp-1", "cp-2", "cp-3")
    members = [{"name": n, "id": "%016x" % (i + 1), "responsive": True, "leader": i == 0, "version": "3.6.8",
                "member_ids_seen": ["%016x" % (j + 1) for j in range(3)]} for i, n in enumerate(names)]
    raw_spec = {"cluster_name": "demo", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "10.0.0.100"},
                "upgrade": {"strategy": "in_place"},
                "kubeadm": {"cluster_configuration": {"etcd": {"local": {"imageTag": "3.6.11-0"}}}}}

    def planned(etcd_images):
        pods = [p for n, image in zip(names, etcd_images) for p in with_images(mirror_pods(n), image)]
        snap = observation.assemble(NOW, [host(n) for n in names], ["fd-1"], nodes=[node(n, version="v1.36.4") for n in names],
                                    pods=pods, kubeadm_config={"kubernetes_version": "v1.36.4", "cluster_configuration": None},
                                    etcd={"external": False, "members": members}, endpoint_ready=True)
        result, errors = kcp_plan.plan_from_raw(raw_spec, snap, projection=True)
        assert errors == []
        return result

    result = planned(["registry.k8s.io/etcd:3.6.8-0"] * 3)
    assert (result["action"], result["machine"], result["upgrade"]) == (
        "upgrade_in_place", "cp-1", {"command": "apply", "addons": False, "etcd_image_tag": "3.6.11-0"})
    assert result["outdated"]["cp-2"] == ["runs etcd 3.6.8-0, the spec wants 3.6.11-0"]
    assert [(s["action"], s["machine"]) for s in result["projection"]] == [
        ("upgrade_in_place", "cp-1"), ("upgrade_in_place", "cp-2"), ("upgrade_in_place", "cp-3"), ("none", None)]
    # a machine already at the tag, or newer, is not upgraded again: kubeadm does not downgrade etcd
    result = planned(["registry.k8s.io/etcd:3.6.11-0", "registry.k8s.io/etcd:3.6.12-0", "registry.k8s.io/etcd:3.6.8-0"])
    assert (result["action"], result["machine"], result["upgrade"]["command"]) == ("upgrade_in_place", "cp-3", "node")


def machine_info(admin=True, etcd=True, step="joined"):
    return {"admin_kubeconfig": admin, "etcd_client_credentials": etcd, "record": {"name": "x", "step": step} if step else None}


def test_the_observation_reads_through_a_machine_that_stays_and_holds_the_etcd_credentials():
    names = ["cp-1", "cp-2", "cp-3", "cp-4", "cp-5"]
    answers = [machine_info(etcd=False),  # half way through kubeadm reset: admin.conf still there, pki/ gone
               machine_info(step="deleting"),  # marked for removal, not torn down yet
               machine_info(admin=False, step=None),  # a free host
               {"unreachable": True, "msg": "no route"},  # a host that did not answer
               machine_info(step=None)]  # adopted: no record
    assert observation.read_sources(names, answers) == ["cp-5", "cp-2", "cp-1"]
    # among equals the inventory's order decides
    assert observation.read_sources(["b", "a"], [machine_info(), machine_info()]) == ["b", "a"]
    assert observation.read_sources([], []) == []


def test_the_filter_refuses_answers_that_do_not_match_the_names():
    assert observation_sources(["cp-1"], [machine_info()]) == ["cp-1"]
    with pytest.raises(AnsibleFilterError, match="one for each name"):
        observation_sources(["cp-1", "cp-2"], [machine_info()])


def test_a_join_kubeadm_finished_after_its_run_was_killed_is_unfinished_and_keeps_its_record():
    # the Node registered and labelled, none of the flow's annotations: the host record says the collection started it
    record = {"name": "cp-4", "created": "2026-11-26T10:00:00Z", "bootstrap": "join", "step": "joining", "spec_hash": "abc"}
    hosts = [host("cp-4", fd="fd-2", record=record)]
    snap = observation.assemble(NOW, hosts, ["fd-2"], nodes=[node("cp-4")], pods=mirror_pods("cp-4"), kubeadm_config={})
    [machine] = snap["machines"]
    assert machine["provisioned"] is False and machine["node"] is not None
    assert (machine["created"], machine["bootstrap"], machine["failure_domain"]) == ("2026-11-26T10:00:00Z", "join", "fd-2")
    # it is not taken for an adopted machine: nothing is recorded on it as found
    assert observation.unrecorded([node("cp-4")], hosts) == []
    normalize_snapshot(snap)
    # once the flow annotated it, the record at joining is stale (the run was killed before it wrote joined)
    done = node("cp-4", annotations={observation.CREATED: "2026-11-26T10:00:00Z"})
    assert observation.assemble(NOW, hosts, ["fd-2"], nodes=[done], kubeadm_config={})["machines"][0]["provisioned"] is True
    # a record of another name (a host reused under a new inventory name) says nothing about this Node
    other = [host("cp-4", record=dict(record, name="cp-9"))]
    assert observation.assemble(NOW, other, ["fd-1"], nodes=[node("cp-4")], kubeadm_config={})["machines"][0]["provisioned"] is True


def test_a_first_machine_whose_init_is_not_known_to_have_finished_is_no_source():
    started = {"name": "cp-1", "bootstrap": "init", "step": "joining"}
    assert observation.read_sources(["cp-1"], [{"admin_kubeconfig": True, "etcd_client_credentials": True, "record": started}]) == []
    finished = dict(started, initialized="2026-11-28T10:00:00Z")
    assert observation.read_sources(["cp-1"], [{"admin_kubeconfig": True, "etcd_client_credentials": True, "record": finished}]) == ["cp-1"]
    # a record from before the time of init was kept: a machine that joined is a finished one
    joined = dict(started, step="joined")
    assert observation.read_sources(["cp-1"], [{"admin_kubeconfig": True, "etcd_client_credentials": True, "record": joined}]) == ["cp-1"]
    assert not observation.init_unconfirmed({"name": "cp-2", "bootstrap": "join", "step": "joining"})
