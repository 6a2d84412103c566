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
from ansible_collections.kubeadm.control_plane.plugins.module_utils import plan_answer

NOW = "2026-11-26T12:00:00Z"
READY = {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-26T10:00:00Z"}
RUNNING_SINCE = "2026-11-26T10:01:00Z"
RUNNING = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": RUNNING_SINCE}]}


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


def test_the_etcd_topology_is_the_clusters_stored_word_not_the_specs():
    read = {"external": True, "members": [{"name": "etcd-1", "healthy": True}]}
    stored_local = {"kubernetes_version": "v1.36.4", "cluster_configuration": {"etcd": {"local": {"dataDir": "/var/lib/etcd"}}}}
    stored_external = {"kubernetes_version": "v1.36.4", "cluster_configuration": {"etcd": {"external": {"endpoints": ["https://e:2379"]}}}}
    # a spec that declares external etcd over a cluster kubeadm made with stacked etcd: the snapshot says stacked
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], kubeadm_config=stored_local, etcd=read, external_etcd=True)
    assert snap["etcd"]["external"] is False and snap["etcd"]["members"] == read["members"]
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], kubeadm_config=stored_external, etcd=dict(read, external=False))
    assert snap["etcd"]["external"] is True
    # before the cluster exists, the spec's
    assert observation.assemble(NOW, [host("cp-1")], ["fd-1"], external_etcd=True)["etcd"] == {"external": True, "members": []}
    assert read["external"] is True  # the section read is not changed in place


def test_remediation_in_progress_comes_from_the_state_config_map_and_nonsense_reads_as_none():
    record = {"machine": "cp-2", "timestamp": "2026-11-26T11:00:00Z", "retry_count": 1}
    snap = observation.assemble(NOW, [], [], kubeadm_config={}, state_config_map={"remediation": json.dumps(record)})
    assert snap["remediation_in_progress"] == record
    assert observation.assemble(NOW, [], [], state_config_map={"remediation": "{not json"})["remediation_in_progress"] is None


def test_a_worker_remediation_under_way_comes_from_the_state_config_map_under_its_own_key():
    record = {"worker": "w-2", "group": "md-0", "timestamp": "2026-11-26T11:00:00Z"}
    snap = observation.assemble(NOW, [], [], kubeadm_config={}, state_config_map={"worker-remediation": json.dumps(record)})
    assert (snap["worker_remediation_in_progress"], snap["remediation_in_progress"]) == (record, None)
    assert normalize_snapshot(snap)[1] == []
    assert observation.assemble(NOW, [], [], state_config_map={"worker-remediation": "[]"})["worker_remediation_in_progress"] is None


def test_a_worker_replacement_under_way_comes_from_the_state_config_map_under_its_own_key():
    record = {"worker": "w-2", "uid": "uid-w-2", "group": "md-0", "replacement": "w-9", "surge": True, "timestamp": "2026-11-26T11:00:00Z"}
    snap = observation.assemble(NOW, [], [], kubeadm_config={}, state_config_map={"worker-rollout": json.dumps(record)})
    assert (snap["worker_rollout_in_progress"], snap["worker_remediation_in_progress"]) == (record, None)
    assert normalize_snapshot(snap)[1] == []
    assert observation.assemble(NOW, [], [], state_config_map={"worker-rollout": "{"})["worker_rollout_in_progress"] is None


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
    labelled = node("w-1", control_plane=False, annotations={observation.REPLACE_MACHINE: ""})
    labelled["metadata"]["labels"][observation.WORKER_GROUP_LABEL] = "md-0"
    labelled["metadata"]["uid"] = "5f0c1b2e-uid-w-1"
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[node("cp-1"), cordoned, labelled], pods=mirror_pods("cp-1"),
                                kubeadm_config={})
    cordoned["metadata"]["annotations"]["control-plane.kubeadm.io/remediate-machine"] = ""
    assert snap["workers"] == [
        {"name": "w-1", "group": "md-0", "created": "2026-11-26T09:00:00Z", "version": "v1.37.1", "ready": True, "unschedulable": False,
         "upgrade": None, "remediation": {"requested": False, "retries": 0, "last": None},
         "node": {"name": "w-1", "conditions": [{"type": "Ready", "status": "True", "last_transition": "2026-11-26T10:00:00Z"}]},
         "external_remediation": {"attempts": 0, "last": None}, "uid": "5f0c1b2e-uid-w-1", "replace_requested": True},
        {"name": "w-2", "group": None, "created": "2026-11-26T09:00:00Z", "version": "v1.36.4", "ready": False, "unschedulable": True,
         "upgrade": {"version": "v1.37.1", "step": "kubeadm-upgrade", "failed_step": "drain", "error": "the drain of w-2 did not finish"},
         "remediation": {"requested": False, "retries": 0, "last": None},
         "node": {"name": "w-2", "conditions": [{"type": "Ready", "status": "False", "last_transition": "2026-11-26T10:00:00Z"}]},
         "external_remediation": {"attempts": 0, "last": None}, "uid": None, "replace_requested": False},
    ]
    # the remediate-machine annotation asks for a worker's remediation too, as for a control plane machine
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[node("cp-1"), cordoned], pods=mirror_pods("cp-1"), kubeadm_config={})
    assert snap["workers"][0]["remediation"]["requested"] is True
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
        result, errors = plan_answer.plan_from_raw(raw_spec, snap, projection=True)
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
        result, errors = plan_answer.plan_from_raw(raw_spec, snap, projection=True)
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


CERTIFICATES = {"certificates_expire": "2027-11-20T09:00:00Z", "certificate_authorities_expire": "2035-11-20T09:00:00Z",
                "kubelet_certificate_expire": "2027-11-21T09:00:00Z", "kubelet_certificate_rotates": True,
                "certificate_renewal": {"started": "2026-11-26T11:00:00Z", "step": "renew", "failed_step": None, "error": None}}


def test_a_machine_with_a_node_is_the_node_s_facts_filled_in_by_its_host_record_and_the_inventory():
    upgrade = {"version": "v1.37.1", "command": "apply", "step": "kubelet", "at": "2026-11-26T11:00:00Z"}
    annotations = {observation.CREATED: "2026-11-26T08:00:00Z", observation.SPEC_HASH: "abc", observation.REMEDIATE_MACHINE: "",
                   "control-plane.kubeadm.io/upgrade": json.dumps(upgrade)}
    cp = node("cp-1", zone="fd-1", annotations=annotations, ip="10.0.0.7")
    cp["status"]["conditions"] = [READY, {"type": "MemoryPressure", "status": "False"},
                                  {"type": "DiskPressure", "status": "Sideways"}, {"status": "True"}]
    record = {"name": "cp-1", "created": "2026-01-01T00:00:00Z", "bootstrap": "join", "step": "joined", "failure": "the disk is full",
              "remediation": {"retries": 1, "last": "2026-11-20T00:00:00Z"}}
    hosts = [dict(host("cp-1", fd="fd-9", record=record, address=None), **CERTIFICATES)]
    pods = with_images(mirror_pods("cp-1"), "registry.k8s.io/etcd:3.6.8-0")
    snap = observation.assemble(NOW, hosts, ["fd-1"], nodes=[cp], pods=pods, kubeadm_config={"kubernetes_version": "v1.37.1"})
    assert snap["machines"] == [dict({
        "name": "cp-1",
        "host": "10.0.0.7",  # no inventory address: the Node's InternalIP
        "failure_domain": "fd-1",
        "created": "2026-11-26T08:00:00Z",
        "version": "v1.37.1",
        "etcd_image_tag": "3.6.8-0",
        "spec_hash": "abc",
        "bootstrap": "join",  # the Node has none: the record fills it in
        "provisioned": True,
        "deleting": False,
        "delete_requested": False,
        "failure": "the disk is full",
        "remediation": {"requested": True, "retries": 1, "last": "2026-11-20T00:00:00Z"},
        "external_remediation": {"attempts": 0, "last": None},
        "node": {"name": "cp-1", "conditions": [{"type": "Ready", "status": "True", "last_transition": "2026-11-26T10:00:00Z"},
                                                {"type": "MemoryPressure", "status": "False"}]},
        "components": dict.fromkeys(observation.MIRROR_PODS, "healthy"),
        "components_since": dict.fromkeys(observation.MIRROR_PODS, RUNNING_SINCE),
        "upgrade": {"version": "v1.37.1", "step": "kubelet", "failed_step": None, "error": None},
    }, **CERTIFICATES)]
    assert normalize_snapshot(snap)[1] == []


def test_a_machine_known_only_by_its_host_record_is_the_record_s_facts():
    record = {"name": "cp-2", "created": "2026-11-26T11:00:00Z", "bootstrap": "join", "step": "joining", "version": "v1.37.1",
              "spec_hash": "abc", "failure": "kubeadm join timed out", "remediation": {"retries": 2, "last": "2026-11-26T11:30:00Z"}}
    hosts = [dict(host("cp-2", fd="fd-2", record=record, address="10.0.0.8"), **CERTIFICATES)]
    snap = observation.assemble(NOW, hosts, ["fd-2"], kubeadm_config={})
    assert snap["machines"] == [dict({
        "name": "cp-2",
        "host": "10.0.0.8",
        "failure_domain": "fd-2",  # the record names none: the inventory's
        "created": "2026-11-26T11:00:00Z",
        "version": "v1.37.1",
        "etcd_image_tag": None,
        "spec_hash": "abc",
        "bootstrap": "join",
        "provisioned": False,
        "deleting": False,
        "failure": "kubeadm join timed out",
        "remediation": {"requested": False, "retries": 2, "last": "2026-11-26T11:30:00Z"},
        "external_remediation": {"attempts": 0, "last": None},
        "node": None,
    }, **CERTIFICATES)]


@pytest.mark.parametrize("step, joined, provisioned, deleting", [
    ("installing", None, False, False),
    ("joining", None, False, False),
    ("joined", "2026-11-20T11:05:00Z", True, False),
    ("joined", None, False, False),
    ("deleting", "2026-11-20T11:05:00Z", True, True),
    ("deleting", None, False, True),
], ids=[
    "a machine still installing is not provisioned",
    "a machine joining is not provisioned",
    "a machine that joined and lost its Node is provisioned",
    "a record at joined without the time it joined is not provisioned",
    "a machine being deleted that had joined is provisioned and deleting",
    "a machine being deleted that never joined is deleting, not provisioned",
])
def test_a_machine_without_a_node_is_provisioned_once_its_record_says_it_joined(step, joined, provisioned, deleting):
    record = {"name": "cp-2", "created": "2026-11-20T11:00:00Z", "bootstrap": "join", "step": step, "joined": joined}
    [machine] = observation.assemble(NOW, [host("cp-2", record=record)], ["fd-1"], kubeadm_config={})["machines"]
    assert (machine["provisioned"], machine["deleting"]) == (provisioned, deleting)


def test_a_host_without_a_record_or_a_node_is_no_machine_and_machines_without_a_node_come_by_name_after_those_with_one():
    records = {n: {"name": n, "created": "2026-11-26T11:00:00Z", "bootstrap": "join", "step": "joining"} for n in ("cp-5", "cp-3")}
    hosts = [host("cp-5", record=records["cp-5"]), host("cp-4"), host("cp-3", record=records["cp-3"]), host("cp-2"), host("cp-9")]
    snap = observation.assemble(NOW, hosts, ["fd-1"], nodes=[node("cp-9"), node("cp-2")], kubeadm_config={})
    assert [(m["name"], m["node"] is not None) for m in snap["machines"]] == [("cp-2", True), ("cp-9", True), ("cp-3", False), ("cp-5", False)]


@pytest.mark.parametrize("zone, record_fd, inventory_fd, expected", [
    ("fd-1", "fd-2", "fd-3", "fd-1"),
    (None, "fd-2", "fd-3", "fd-3"),
], ids=["the Node's zone label wins", "without the label the inventory's, never the record's"])
def test_a_machine_with_a_node_is_where_its_zone_label_says(zone, record_fd, inventory_fd, expected):
    record = {"name": "cp-1", "step": "joined", "failure_domain": record_fd}
    snap = observation.assemble(NOW, [host("cp-1", fd=inventory_fd, record=record)], ["fd-1"], nodes=[node("cp-1", zone=zone)],
                                kubeadm_config={})
    assert snap["machines"][0]["failure_domain"] == expected


@pytest.mark.parametrize("record_fd, expected", [("fd-2", "fd-2"), (None, "fd-3")],
                         ids=["a machine without a Node is where its record says", "else where the inventory says"])
def test_a_machine_without_a_node_is_where_its_record_says(record_fd, expected):
    record = {"name": "cp-1", "step": "joining", "failure_domain": record_fd}
    snap = observation.assemble(NOW, [host("cp-1", fd="fd-3", record=record)], ["fd-1"], kubeadm_config={})
    assert snap["machines"][0]["failure_domain"] == expected


@pytest.mark.parametrize("address, addresses, expected", [
    ("10.0.0.9", [{"type": "InternalIP", "address": "10.0.0.7"}], "10.0.0.9"),
    (None, [{"type": "ExternalIP", "address": "203.0.113.7"}, {"type": "InternalIP", "address": "10.0.0.7"}], "10.0.0.7"),
    (None, [{"type": "ExternalIP", "address": "203.0.113.7"}], None),
    (None, [], None),
], ids=["the inventory's address wins", "else the Node's InternalIP, not another address",
        "a Node with no InternalIP has no host", "a Node with no address has no host"])
def test_a_machine_s_host_is_the_inventory_s_address_else_the_node_s_internal_ip(address, addresses, expected):
    cp = node("cp-1")
    cp["status"]["addresses"] = addresses
    snap = observation.assemble(NOW, [host("cp-1", address=address)], ["fd-1"], nodes=[cp], kubeadm_config={})
    assert snap["machines"][0]["host"] == expected


@pytest.mark.parametrize("annotations, step, deleting", [
    ({observation.DELETING: ""}, "joined", True),
    ({}, "deleting", True),
    ({}, "joined", False),
], ids=["the Node's deleting annotation", "a host record at deleting", "neither: not deleting"])
def test_a_machine_with_a_node_is_deleting_when_its_node_or_its_record_says_so(annotations, step, deleting):
    record = {"name": "cp-1", "step": step}
    snap = observation.assemble(NOW, [host("cp-1", record=record)], ["fd-1"], nodes=[node("cp-1", annotations=annotations)],
                                kubeadm_config={})
    assert snap["machines"][0]["deleting"] is deleting


def test_a_node_without_status_has_no_version_no_conditions_and_unknown_components():
    bare = {"metadata": {"name": "cp-1", "labels": {observation.CONTROL_PLANE_LABEL: ""}, "creationTimestamp": "2026-11-26T09:00:00Z"}}
    [machine] = observation.assemble(NOW, [], [], nodes=[bare], pods=mirror_pods("cp-1"), kubeadm_config={})["machines"]
    assert (machine["host"], machine["version"], machine["node"]) == (None, None, {"name": "cp-1", "conditions": []})
    assert machine["components"] == dict.fromkeys(observation.MIRROR_PODS, "unknown")
    assert machine["created"] == "2026-11-26T09:00:00Z" and machine["failure_domain"] is None


@pytest.mark.parametrize("kubeadm_config, initialized, expected", [
    ({"kubernetes_version": "v1.37.1"}, None, True),
    (None, None, False),
    ({}, None, False),
    (None, True, True),
    ({"kubernetes_version": "v1.37.1"}, False, False),
], ids=["kubeadm-config read: initialized", "kubeadm-config not read: not", "an empty kubeadm-config: not",
        "told initialized though kubeadm-config was not read", "told not initialized though kubeadm-config was read"])
def test_initialized_is_what_the_caller_says_else_whether_kubeadm_config_was_read(kubeadm_config, initialized, expected):
    assert observation.assemble(NOW, [], [], kubeadm_config=kubeadm_config, initialized=initialized)["initialized"] is expected


def test_the_snapshot_s_cluster_level_fields():
    members = [{"name": "cp-1", "id": "0000000000000001"}]
    snap = observation.assemble(NOW, [], ["fd-1"], kubeadm_config={}, etcd={"external": False, "members": members}, endpoint_ready=1)
    assert (snap["now"], snap["endpoint_ready"], snap["etcd"]) == (NOW, True, {"external": False, "members": members})
    assert (snap["remediation_in_progress"], snap["workers"]) == (None, [])
    assert observation.assemble(NOW, [], [], endpoint_ready=None)["endpoint_ready"] is False
    # before etcd is read, only whether it is external is known
    assert observation.assemble(NOW, [], [], external_etcd=True)["etcd"] == {"external": True, "members": []}


@pytest.mark.parametrize("data", [None, {}, {"remediation": ""}, {"remediation": "[1]"}, {"remediation": "{}"}],
                         ids=["no ConfigMap", "no remediation key", "an empty value", "not an object", "an empty object"])
def test_no_remediation_is_in_progress_without_a_record_of_one(data):
    assert observation.assemble(NOW, [], [], state_config_map=data)["remediation_in_progress"] is None


@pytest.mark.parametrize("annotation, record, expected", [
    (None, None, {"requested": False, "retries": 0, "last": None}),
    (json.dumps({"retries": None, "last": None}), None, {"requested": False, "retries": 0, "last": None}),
    (json.dumps({"retries": "3"}), None, {"requested": False, "retries": 3, "last": None}),
    ("{not json", {"retries": 2, "last": "2026-11-26T11:00:00Z"}, {"requested": False, "retries": 2, "last": "2026-11-26T11:00:00Z"}),
    (json.dumps({"retries": 4, "last": "2026-11-26T11:40:00Z"}), {"retries": 2}, {"requested": False, "retries": 4, "last": "2026-11-26T11:40:00Z"}),
], ids=["no remediation at all", "a null count reads as none", "a count written as a string counts",
        "an annotation that is not JSON gives way to the host record", "the Node's annotation wins over the host record"])
def test_a_machine_s_remediation_is_its_node_s_annotation_else_its_host_record_s(annotation, record, expected):
    annotations = {} if annotation is None else {observation.REMEDIATION: annotation}
    hosts = [host("cp-1", record={"name": "cp-1", "step": "joined", "remediation": record})]
    snap = observation.assemble(NOW, hosts, ["fd-1"], nodes=[node("cp-1", annotations=annotations)], kubeadm_config={})
    assert snap["machines"][0]["remediation"] == expected


@pytest.mark.parametrize("containers, tag", [
    ([], None),
    ([{"name": "etcd"}], None),
    ([{"name": "etcd", "image": "etcd:3.6.8-0"}, {"name": "sidecar", "image": "busybox:1.36"}], "3.6.8-0"),
    ([{"name": "etcd", "image": "mirror.local:5000/etcd@sha256:0123abcd"}], None),
    ([{"name": "etcd", "image": "etcd"}], None),
], ids=["a pod with no container", "a container with no image", "the first container's", "a digest behind a registry port",
        "an image named with no registry and no tag"])
def test_a_machine_s_etcd_image_tag_is_that_of_its_etcd_pod_s_first_container(containers, tag):
    pods = with_images(mirror_pods("cp-1"), "registry.k8s.io/etcd:3.6.11-0")
    next(p for p in pods if p["metadata"]["name"] == "etcd-cp-1")["spec"] = {"containers": containers}
    snap = observation.assemble(NOW, [host("cp-1")], ["fd-1"], nodes=[node("cp-1")], pods=pods, kubeadm_config={})
    assert snap["machines"][0]["etcd_image_tag"] == tag


def test_a_worker_with_an_empty_group_label_or_no_spec_or_status():
    bare = {"metadata": {"name": "w-1", "labels": {observation.WORKER_GROUP_LABEL: ""}, "creationTimestamp": "2026-11-26T09:00:00Z"}}
    assert observation.workers([bare]) == [{"name": "w-1", "group": None, "created": "2026-11-26T09:00:00Z", "version": None,
                                            "ready": False, "unschedulable": False, "upgrade": None,
                                            "node": {"name": "w-1", "conditions": []},
                                            "remediation": {"requested": False, "retries": 0, "last": None},
                                            "external_remediation": {"attempts": 0, "last": None}, "uid": None, "replace_requested": False}]


@pytest.mark.parametrize("conditions, ready", [
    ([{"type": "Ready", "status": "True"}], True),
    ([{"type": "Ready", "status": "Unknown"}], False),
    ([{"type": "MemoryPressure", "status": "True"}], False),
    ([{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}], True),
], ids=["Ready True", "Ready Unknown is not ready", "another condition True is not ready", "Ready True among others"])
def test_a_worker_is_ready_only_when_its_ready_condition_is_true(conditions, ready):
    worker = node("w-1", control_plane=False)
    worker["status"]["conditions"] = conditions
    assert observation.workers([worker])[0]["ready"] is ready


def test_workers_come_sorted_by_name():
    assert [w["name"] for w in observation.workers([node("w-2", control_plane=False), node("cp-1"), node("w-1", control_plane=False)])] == [
        "w-1", "w-2"]


@pytest.mark.parametrize("name, annotations, record, unfinished", [
    ("cp-1", {}, {"name": "cp-1", "step": "installing"}, True),
    ("cp-1", {}, {"name": "cp-1", "step": "joining"}, True),
    ("cp-1", {}, {"name": "cp-1", "step": "joined"}, False),
    ("cp-1", {}, {"name": "cp-1", "step": "deleting"}, False),
    ("cp-1", {observation.CREATED: "2026-11-26T10:00:00Z"}, {"name": "cp-1", "step": "joining"}, False),
    ("cp-1", {}, {"name": "cp-2", "step": "joining"}, False),
    ("cp-1", {}, None, False),
], ids=["a record at installing, no created annotation", "a record at joining, no created annotation", "a record at joined",
        "a record at deleting", "the flow wrote created: done", "a record of another name", "no record: adopted"])
def test_a_control_plane_node_is_started_not_finished_only_by_its_own_record_and_before_created(name, annotations, record, unfinished):
    assert observation.started_not_finished(name, annotations, record) is unfinished


@pytest.mark.parametrize("record, unconfirmed", [
    ({"bootstrap": "init", "step": "installing"}, True),
    ({"bootstrap": "init", "step": "joining"}, True),
    ({"bootstrap": "init", "step": "joining", "initialized": "2026-11-28T10:00:00Z"}, False),
    ({"bootstrap": "init", "step": "joined"}, False),
    ({"bootstrap": "join", "step": "installing"}, False),
    (None, False),
], ids=["an init installing", "an init joining", "an init with its time recorded", "an init that joined", "a join", "no record"])
def test_an_init_is_unconfirmed_until_its_time_is_recorded(record, unconfirmed):
    assert observation.init_unconfirmed(record) is unconfirmed


def test_a_source_without_the_etcd_credentials_comes_after_one_being_deleted_with_them():
    answers = [machine_info(etcd=False, step="joined"), machine_info(etcd=True, step="deleting"), machine_info(etcd=False, step="deleting"),
               None, machine_info(admin=False)]
    assert observation.read_sources(["a", "b", "c", "d", "e"], answers) == ["b", "a", "c"]


def test_an_adopted_node_with_a_zone_label_keeps_it_and_one_without_takes_the_inventory_s():
    nodes = [node("cp-2", zone="fd-1"), node("cp-1"), node("w-1", control_plane=False)]
    joining = {"name": "cp-3", "step": "joining"}
    hosts = [host("cp-1", fd="fd-7"), host("cp-2", fd="fd-8"), host("cp-3", record=joining)]
    assert observation.unrecorded(nodes + [node("cp-3")], hosts) == [
        {"name": "cp-1", "created": "2026-11-26T09:00:00Z", "failure_domain": "fd-7"},
        {"name": "cp-2", "created": "2026-11-26T09:00:00Z", "failure_domain": None},
    ]


def test_the_annotations_and_labels_are_the_ones_docs_state_md_names():
    # the flows write these names on Nodes: renaming one would forget what every existing Node carries
    assert (observation.CREATED, observation.SPEC_HASH, observation.BOOTSTRAP) == (
        "control-plane.kubeadm.io/created", "control-plane.kubeadm.io/spec-hash", "control-plane.kubeadm.io/bootstrap")
    assert (observation.DELETE_MACHINE, observation.REMEDIATE_MACHINE, observation.REMEDIATION, observation.DELETING) == (
        "control-plane.kubeadm.io/delete-machine", "control-plane.kubeadm.io/remediate-machine",
        "control-plane.kubeadm.io/remediation", "control-plane.kubeadm.io/deleting")
    assert (observation.ZONE_LABEL, observation.CONTROL_PLANE_LABEL) == ("topology.kubernetes.io/zone", "node-role.kubernetes.io/control-plane")


def test_the_host_record_and_the_state_object_are_where_docs_state_md_puts_them():
    # hosts and clusters made by earlier runs keep them there: moving one would lose every record already written
    assert observation.HOST_RECORD_PATH == "/etc/kubernetes/control-plane-machine.json"
    assert observation.STATE_OBJECT == "control-plane-kubeadm-io"
    assert observation.HOST_STEPS == ("installing", "joining", "joined", "deleting")
    assert observation.MIRROR_PODS == {"api_server": "kube-apiserver", "controller_manager": "kube-controller-manager",
                                       "scheduler": "kube-scheduler", "etcd": "etcd"}


def test_the_endpoint_is_not_ready_unless_told_and_a_node_condition_of_unknown_status_is_kept():
    stale = dict(READY, status="Unknown")
    snap = observation.assemble(NOW, [], [], nodes=[node("cp-1", ready=stale)], kubeadm_config={})
    assert snap["endpoint_ready"] is False
    assert snap["machines"][0]["node"]["conditions"] == [{"type": "Ready", "status": "Unknown", "last_transition": "2026-11-26T10:00:00Z"}]
