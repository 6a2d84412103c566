# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The observed snapshot as docs/snapshot.md states it: required parts, types, defaults, every error at once."""

import copy

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_snapshot
from ansible_collections.kubeadm.control_plane.tests.unit.builders import NOW, ODD_VALUES, at, machine, member, snapshot, with_field, without_field, worker

BASE = snapshot(
    [machine("cp-1", fd="fd-a", created=300), machine("cp-2", fd="fd-b", created=200), machine("cp-3", has_node=False)],
    remediation_in_progress={"machine": "cp-4", "timestamp": at(10), "retry_count": 1},
    workers=[worker("w-1", group="md-0"), worker("w-2", ready=False, unschedulable=True)],
)
MEMBER_DEFAULTS = {"cluster_id": None, "version": None, "db_size": None, "raft_term": None, "raft_index": None}


def test_a_built_snapshot_passes_and_only_gains_the_optional_fields():
    normalized, errors = normalize_snapshot(BASE)
    assert errors == []
    expected = copy.deepcopy(BASE)
    for m in expected["etcd"]["members"]:
        m.update(MEMBER_DEFAULTS)
    for record in expected["machines"] + expected["workers"]:
        record.setdefault("upgrade", None)
    expected["worker_rollout_in_progress"] = None
    for record in expected["machines"]:
        record.update(certificate_authorities_expire=None, kubelet_certificate_expire=None, kubelet_certificate_rotates=None,
                      certificate_renewal=None)
        record.setdefault("components_since", dict.fromkeys(("api_server", "controller_manager", "scheduler", "etcd")))
    expected["kubeadm_config"]["cluster_configuration"] = None
    assert normalized == expected


def test_a_machine_s_etcd_image_tag_is_kept_as_observed():
    normalized, errors = normalize_snapshot(with_field(BASE, "machines[0].etcd_image_tag", "3.6.8-0"))
    assert errors == [] and normalized["machines"][0]["etcd_image_tag"] == "3.6.8-0"


def test_the_stored_cluster_configuration_is_kept_as_given_and_must_be_a_mapping():
    stored = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration", "kubernetesVersion": "v1.36.4",
              "apiServer": {"extraArgs": [{"name": "audit-log-maxage", "value": "30"}]}}
    normalized, errors = normalize_snapshot(with_field(BASE, "kubeadm_config.cluster_configuration", stored))
    assert errors == [] and normalized["kubeadm_config"]["cluster_configuration"] == stored
    errors = normalize_snapshot(with_field(BASE, "kubeadm_config.cluster_configuration", "kubernetesVersion: v1.36.4"))[1]
    assert [(e["path"], e["rule"]) for e in errors] == [("kubeadm_config.cluster_configuration", "must be a mapping")]


def test_a_minimal_snapshot_gets_every_documented_default():
    normalized, errors = normalize_snapshot({"now": NOW, "machines": [{"name": "cp-1", "created": at(60)}]})
    assert errors == []
    assert normalized == {
        "now": NOW,
        "initialized": False,
        "kubeadm_config": None,
        "endpoint_ready": False,
        "failure_domains": [],
        "remediation_in_progress": None,
        "worker_remediation_in_progress": None,
        "worker_rollout_in_progress": None,
        "machines": [
            {
                "name": "cp-1",
                "host": None,
                "failure_domain": None,
                "created": at(60),
                "version": None,
                "etcd_image_tag": None,
                "spec_hash": None,
                "bootstrap": None,
                "provisioned": False,
                "deleting": False,
                "delete_requested": False,
                "failure": None,
                "remediation": {"requested": False, "retries": 0, "last": None},
                "external_remediation": {"attempts": 0, "last": None},
                "node": None,
                "components": {"api_server": "unknown", "controller_manager": "unknown", "scheduler": "unknown",
                               "etcd": "unknown"},
                "components_since": {"api_server": None, "controller_manager": None, "scheduler": None, "etcd": None},
                "certificates_expire": None,
                "certificate_authorities_expire": None,
                "kubelet_certificate_expire": None,
                "kubelet_certificate_rotates": None,
                "certificate_renewal": None,
                "upgrade": None,
            }
        ],
        "workers": [],
        "etcd": {"external": False, "members": []},
    }


def test_a_worker_with_only_a_name_and_a_creation_time_is_not_ready_and_in_no_group():
    raw = {"now": NOW, "machines": [], "workers": [{"name": "w-1", "created": at(60)}]}
    normalized, errors = normalize_snapshot(raw)
    assert errors == []
    assert normalized["workers"] == [{"name": "w-1", "group": None, "created": at(60), "version": None, "ready": False,
                                      "unschedulable": False, "upgrade": None, "node": None,
                                      "remediation": {"requested": False, "retries": 0, "last": None},
                                      "external_remediation": {"attempts": 0, "last": None}, "uid": None, "replace_requested": False}]


def test_a_machine_with_a_node_counts_as_provisioned_and_its_node_is_named_after_it():
    raw = {"now": NOW, "machines": [{"name": "cp-1", "created": at(60), "node": {"conditions": []}}]}
    normalized = normalize_snapshot(raw)[0]
    assert normalized["machines"][0]["provisioned"] is True
    assert normalized["machines"][0]["node"] == {"name": "cp-1", "conditions": []}


def test_an_explicit_provisioned_flag_wins_over_the_node():
    raw = {"now": NOW, "machines": [{"name": "cp-1", "created": at(60), "node": {}, "provisioned": False}]}
    assert normalize_snapshot(raw)[0]["machines"][0]["provisioned"] is False


def test_a_member_with_only_an_id_gets_the_member_defaults():
    normalized, errors = normalize_snapshot(with_field(BASE, "etcd.members", [{"id": "8E9E05C52164694D"}]))
    assert errors == []
    assert normalized["etcd"]["members"] == [dict(
        {"name": "", "id": "8e9e05c52164694d", "peer_urls": [], "client_urls": [], "responsive": False, "error": None,
         "leader": False, "learner": False, "alarms": [], "member_ids_seen": []}, **MEMBER_DEFAULTS)]


def test_member_ids_seen_come_back_sorted_in_lower_case():
    normalized = normalize_snapshot(with_field(BASE, "etcd.members[0].member_ids_seen", ["B2", "a1", "0c"]))[0]
    assert normalized["etcd"]["members"][0]["member_ids_seen"] == ["0c", "a1", "b2"]


def test_a_timestamp_read_from_yaml_as_a_datetime_becomes_its_utc_string():
    from datetime import datetime, timezone

    normalized, errors = normalize_snapshot(with_field(BASE, "now", datetime(2026, 11, 22, 10, 0, tzinfo=timezone.utc)))
    assert errors == [] and normalized["now"] == NOW


def test_normalizing_leaves_the_input_untouched():
    before = copy.deepcopy(BASE)
    normalize_snapshot(BASE)
    assert BASE == before


M0, M1, MEMBER0, W0 = "machines[0]", "machines[1]", "etcd.members[0]", "workers[0]"
CONDITION = M0 + ".node.conditions[0]"

# (id, raw snapshot, path of the one error, fragment of its rule)
REFUSED = [
    ("a snapshot that is not a mapping is refused", "now", "", "must be a mapping"),
    ("a snapshot without now is refused", without_field(BASE, "now"), "now", "is required"),
    ("now in words is refused", with_field(BASE, "now", "yesterday"), "now", "RFC 3339"),
    ("now without a time zone is refused", with_field(BASE, "now", "2026-11-22T10:00:00"), "now", "RFC 3339"),
    ("now as epoch seconds is refused", with_field(BASE, "now", 1795000000), "now", "RFC 3339"),
    ("a snapshot without machines is refused", without_field(BASE, "machines"), "machines", "is required"),
    ("machines as a mapping are refused", with_field(BASE, "machines", {"cp-1": {}}), "machines", "must be a list"),
    ("an unknown top-level key is refused", with_field(BASE, "cluster", "demo"), "cluster", "unknown field"),
    ("initialized as a string is refused", with_field(BASE, "initialized", "yes"), "initialized", "true or false"),
    ("endpoint_ready as a number is refused", with_field(BASE, "endpoint_ready", 1), "endpoint_ready", "true or false"),
    ("a failure domain without a name is refused", with_field(BASE, "failure_domains", [{"control_plane": True}]),
     "failure_domains[0].name", "is required"),
    ("a failure domain flag as a string is refused", with_field(BASE, "failure_domains[0].control_plane", "true"),
     "failure_domains[0].control_plane", "true or false"),
    ("two failure domains with one name are refused", with_field(BASE, "failure_domains[1].name", "fd-a"),
     "failure_domains[1].name", "must be unique"),
    ("an unknown failure domain key is refused", with_field(BASE, "failure_domains[0].zone", "z1"),
     "failure_domains[0].zone", "unknown field"),
    ("a remediation in progress without its machine is refused", without_field(BASE, "remediation_in_progress.machine"),
     "remediation_in_progress.machine", "is required"),
    ("a remediation in progress with a bad timestamp is refused",
     with_field(BASE, "remediation_in_progress.timestamp", "now"), "remediation_in_progress.timestamp", "RFC 3339"),
    ("a negative remediation retry count is refused", with_field(BASE, "remediation_in_progress.retry_count", -1),
     "remediation_in_progress.retry_count", ">= 0"),
    ("a machine without a name is refused", without_field(BASE, M0 + ".name"), M0 + ".name", "is required"),
    ("a machine with an empty name is refused", with_field(BASE, M0 + ".name", ""), M0 + ".name", "must not be empty"),
    ("a machine without a creation time is refused", without_field(BASE, M1 + ".created"), M1 + ".created", "is required"),
    ("a creation time without seconds is refused", with_field(BASE, M1 + ".created", "2026-11-22T10:00Z"), M1 + ".created",
     "RFC 3339"),
    ("two machines with one name are refused", with_field(BASE, M1 + ".name", "cp-1"), M1 + ".name", "must be unique"),
    ("a machine that is not a mapping is refused", with_field(BASE, "machines[2]", "cp-3"), "machines[2]",
     "must be a mapping"),
    ("an unknown machine key is refused", with_field(BASE, M0 + ".annotations", {}), M0 + ".annotations", "unknown field"),
    ("provisioned as a string is refused", with_field(BASE, M0 + ".provisioned", "true"), M0 + ".provisioned",
     "true or false"),
    ("deleting as a string is refused", with_field(BASE, M0 + ".deleting", "no"), M0 + ".deleting", "true or false"),
    ("delete_requested as a number is refused", with_field(BASE, M0 + ".delete_requested", 0), M0 + ".delete_requested",
     "true or false"),
    ("a machine host as a number is refused", with_field(BASE, M0 + ".host", 10), M0 + ".host", "must be a string"),
    ("an empty failure domain name is refused", with_field(BASE, M0 + ".failure_domain", ""), M0 + ".failure_domain",
     "must not be empty"),
    ("a machine version YAML read as a number is refused", with_field(BASE, M0 + ".version", 1.3), M0 + ".version",
     "must be a string"),
    ("an etcd image tag YAML read as a number is refused", with_field(BASE, M0 + ".etcd_image_tag", 3.6), M0 + ".etcd_image_tag",
     "must be a string"),
    ("a failure that is not text is refused", with_field(BASE, M0 + ".failure", {"reason": "x"}), M0 + ".failure",
     "must be a string"),
    ("a negative remediation retry record is refused", with_field(BASE, M0 + ".remediation.retries", -1),
     M0 + ".remediation.retries", ">= 0"),
    ("a remediation retry record as a string is refused", with_field(BASE, M0 + ".remediation.retries", "1"),
     M0 + ".remediation.retries", "must be an integer"),
    ("a last remediation time in words is refused", with_field(BASE, M0 + ".remediation.last", "later"),
     M0 + ".remediation.last", "RFC 3339"),
    ("an unknown remediation record key is refused", with_field(BASE, M0 + ".remediation.count", 1),
     M0 + ".remediation.count", "unknown field"),
    ("a negative external remediation attempt count is refused", with_field(BASE, M0 + ".external_remediation.attempts", -1),
     M0 + ".external_remediation.attempts", ">= 0"),
    ("an external remediation attempt count as a string is refused",
     with_field(BASE, M0 + ".external_remediation.attempts", "2"), M0 + ".external_remediation.attempts", "must be an integer"),
    ("a last external remediation time in words is refused", with_field(BASE, M0 + ".external_remediation.last", "earlier"),
     M0 + ".external_remediation.last", "RFC 3339"),
    ("an unknown external remediation key is refused", with_field(BASE, M0 + ".external_remediation.timeout", "5m"),
     M0 + ".external_remediation.timeout", "unknown field"),
    ("a node condition status outside True False Unknown is refused", with_field(BASE, CONDITION + ".status", "Healthy"),
     CONDITION + ".status", "must be one of True, False, Unknown"),
    ("a node condition status YAML read as a boolean is refused", with_field(BASE, CONDITION + ".status", True),
     CONDITION + ".status", "must be one of"),
    ("a node condition with a bad transition time is refused", with_field(BASE, CONDITION + ".last_transition", "x"),
     CONDITION + ".last_transition", "RFC 3339"),
    ("a node condition without a type is refused", without_field(BASE, CONDITION + ".type"), CONDITION + ".type",
     "is required"),
    ("node conditions as a mapping are refused", with_field(BASE, M0 + ".node.conditions", {"Ready": "True"}),
     M0 + ".node.conditions", "must be a list"),
    ("an unknown node key is refused", with_field(BASE, M0 + ".node.labels", {}), M0 + ".node.labels", "unknown field"),
    ("a component state outside the documented five is refused", with_field(BASE, M0 + ".components.api_server", "ok"),
     M0 + ".components.api_server", "healthy, provisioning, unhealthy, missing, unknown"),
    ("an unknown component is refused", with_field(BASE, M0 + ".components.kubelet", "healthy"), M0 + ".components.kubelet",
     "unknown field"),
    ("a certificate expiry in words is refused", with_field(BASE, M0 + ".certificates_expire", "never"),
     M0 + ".certificates_expire", "RFC 3339"),
    ("an etcd external flag as a string is refused", with_field(BASE, "etcd.external", "false"), "etcd.external",
     "true or false"),
    ("etcd members as a mapping are refused", with_field(BASE, "etcd.members", {"cp-1": {}}), "etcd.members",
     "must be a list"),
    ("a member without an id is refused", without_field(BASE, MEMBER0 + ".id"), MEMBER0 + ".id", "is required"),
    ("a member id that is not hex is refused", with_field(BASE, MEMBER0 + ".id", "xyz"), MEMBER0 + ".id", "hex digits"),
    ("a member id as a number is refused", with_field(BASE, MEMBER0 + ".id", 123), MEMBER0 + ".id", "must be a string"),
    ("two members with one id are refused",
     with_field(BASE, "etcd.members[1].id", BASE["etcd"]["members"][0]["id"].upper()), "etcd.members[1].id",
     "must be unique"),
    ("an alarm other than NOSPACE or CORRUPT is refused", with_field(BASE, MEMBER0 + ".alarms", ["NONE"]),
     MEMBER0 + ".alarms[0]", "NOSPACE, CORRUPT"),
    ("a member id seen that is not hex is refused", with_field(BASE, MEMBER0 + ".member_ids_seen", ["cp-2"]),
     MEMBER0 + ".member_ids_seen[0]", "hex digits"),
    ("responsive as a string is refused", with_field(BASE, MEMBER0 + ".responsive", "yes"), MEMBER0 + ".responsive",
     "true or false"),
    ("a negative database size is refused", with_field(BASE, MEMBER0 + ".db_size", -1), MEMBER0 + ".db_size", ">= 0"),
    ("a raft term as a string is refused", with_field(BASE, MEMBER0 + ".raft_term", "4"), MEMBER0 + ".raft_term",
     "must be an integer"),
    ("peer URLs as one string are refused", with_field(BASE, MEMBER0 + ".peer_urls", "https://cp-1:2380"),
     MEMBER0 + ".peer_urls", "must be a list"),
    ("an unknown member key is refused", with_field(BASE, MEMBER0 + ".status", "started"), MEMBER0 + ".status",
     "unknown field"),
    ("a member name as a number is refused", with_field(BASE, MEMBER0 + ".name", 5), MEMBER0 + ".name", "must be a string"),
    ("a worker without a name is refused", without_field(BASE, W0 + ".name"), W0 + ".name", "is required"),
    ("a worker without a creation time is refused", without_field(BASE, W0 + ".created"), W0 + ".created", "is required"),
    ("two workers with one name are refused", with_field(BASE, "workers[1].name", "w-1"), "workers[1].name", "must be unique"),
    ("a worker group as a number is refused", with_field(BASE, W0 + ".group", 0), W0 + ".group", "must be a string"),
    ("a worker's ready as a string is refused", with_field(BASE, W0 + ".ready", "True"), W0 + ".ready", "true or false"),
    ("a worker's unschedulable as a number is refused", with_field(BASE, W0 + ".unschedulable", 1), W0 + ".unschedulable",
     "true or false"),
    ("an unknown worker key is refused", with_field(BASE, W0 + ".labels", {}), W0 + ".labels", "unknown field"),
    ("workers as a mapping are refused", with_field(BASE, "workers", {"w-1": {}}), "workers", "must be a list"),
]


@pytest.mark.parametrize("raw,path,rule", [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_a_malformed_snapshot_is_refused_naming_the_field_and_the_rule(raw, path, rule):
    normalized, errors = normalize_snapshot(raw)
    assert normalized is None
    assert [e["path"] for e in errors] == [path]
    assert rule in errors[0]["rule"]


def test_every_snapshot_error_is_reported_at_once():
    raw = without_field(BASE, "now")
    raw = without_field(raw, M1 + ".created")
    raw = with_field(raw, "machines[2].components.etcd", "broken")
    raw = with_field(raw, "etcd.members[1].alarms", ["LOW"])
    errors = normalize_snapshot(raw)[1]
    assert sorted(e["path"] for e in errors) == [
        "etcd.members[1].alarms[0]", M1 + ".created", "machines[2].components.etcd", "now"]


FIELDS = [
    "now", "initialized", "failure_domains", "failure_domains[0]", "remediation_in_progress", "machines", "machines[0]",
    M0 + ".name", M0 + ".created", M0 + ".etcd_image_tag", M0 + ".remediation", M0 + ".external_remediation", M0 + ".node",
    M0 + ".node.name", M0 + ".node.conditions",
    CONDITION, M0 + ".components", "etcd", "etcd.members", MEMBER0, MEMBER0 + ".id", MEMBER0 + ".member_ids_seen",
    MEMBER0 + ".alarms", "workers", W0, W0 + ".version",
]


@pytest.mark.parametrize("path", FIELDS)
def test_no_value_of_any_type_makes_snapshot_validation_crash(path):
    for value in ODD_VALUES:
        normalized, errors = normalize_snapshot(with_field(BASE, path, value))
        assert (normalized is None) == bool(errors)


def test_an_external_remediation_record_is_kept_and_a_partial_one_gets_its_defaults():
    recorded = normalize_snapshot(with_field(BASE, M0 + ".external_remediation", {"attempts": 2, "last": at(5)}))[0]
    assert recorded["machines"][0]["external_remediation"] == {"attempts": 2, "last": at(5)}
    partial = normalize_snapshot(with_field(BASE, M0 + ".external_remediation", {"last": at(5)}))[0]
    assert partial["machines"][0]["external_remediation"] == {"attempts": 0, "last": at(5)}


def test_builders_member_shape_is_accepted_as_is():
    raw = snapshot([machine("cp-1")], members=[member("cp-1", leader=True, alarms=["NOSPACE"])])
    normalized, errors = normalize_snapshot(raw)
    assert errors == [] and normalized["etcd"]["members"][0]["alarms"] == ["NOSPACE"]


def unanswered(url):
    """What etcd_info reports for an endpoint when no endpoint answers: a nameless member without an id."""
    return {"name": "", "id": "", "client_urls": [url], "responsive": False, "error": "connection refused"}


def test_the_nameless_unresponsive_members_etcd_info_reports_when_nothing_answers_are_accepted():
    raw = dict(BASE, etcd={"external": False, "members": [unanswered("https://10.0.0.1:2379"), unanswered("https://10.0.0.2:2379")]})
    normalized, errors = normalize_snapshot(raw)
    assert errors == []
    assert [m["id"] for m in normalized["etcd"]["members"]] == ["", ""]


@pytest.mark.parametrize(
    "fields",
    [{"name": "cp-1"}, {"responsive": True, "error": None}],
    ids=["a named member without an id is refused", "an answering member without an id is refused"],
)
def test_only_a_nameless_member_that_did_not_answer_may_lack_an_id(fields):
    raw = dict(BASE, etcd={"external": False, "members": [dict(unanswered("https://10.0.0.1:2379"), **fields)]})
    normalized, errors = normalize_snapshot(raw)
    assert normalized is None
    assert [(e["path"], e["rule"]) for e in errors] == [
        ("etcd.members[0].id", "must not be empty: only a nameless member that did not answer has no id")
    ]


@pytest.mark.parametrize(
    "path,value,rule",
    [
        (M0 + ".bootstrap", "kubeadm", "must be one of init, join"),
        ("kubeadm_config.kubernetes_version", 1.31, "must be a string"),
        ("kubeadm_config.image_repository", "registry.k8s.io", "unknown field"),
    ],
    ids=["a machine is built by init or join, nothing else", "the kubeadm-config version is text",
         "the kubeadm-config record holds only documented fields"],
)
def test_the_bootstrap_part_and_the_kubeadm_config_version_are_checked(path, value, rule):
    normalized, errors = normalize_snapshot(with_field(BASE, path, value))
    assert normalized is None
    assert [e["path"] for e in errors] == [path] and rule in errors[0]["rule"]


def test_an_upgrade_record_names_known_steps_and_its_version():
    upgrade = {"version": "v1.37.1", "step": "kubelet", "failed_step": "uncordon", "error": "the API server did not answer"}
    raw = {"now": NOW, "machines": [{"name": "cp-1", "created": at(60), "upgrade": upgrade}],
           "workers": [{"name": "w-1", "created": at(60), "upgrade": {"version": "v1.37.1", "step": "sideways"}}]}
    normalized, errors = normalize_snapshot(raw)
    assert normalized is None or normalized["machines"][0]["upgrade"] == upgrade
    assert [e["path"] for e in errors] == ["workers[0].upgrade.step"], errors
    errors = normalize_snapshot({"now": NOW, "machines": [{"name": "cp-1", "created": at(60), "upgrade": {"step": "kubelet"}}]})[1]
    assert [e["path"] for e in errors] == ["machines[0].upgrade.version"], errors
