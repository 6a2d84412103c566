# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole plan: the sequences the projection walks (create, scale down, rollouts, remediation, waits, the
limit), the seam with the planner (each entry is what it says for the projected snapshot, and every projected
snapshot is one the snapshot contract accepts), and the kcp_plan option that returns it."""

import copy
import itertools

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_projection import (
    STOPPED,
    after_step,
    creates_machine,
    free_placeholders,
    project,
    summary,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes

from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module
from ansible_collections.kubeadm.control_plane.tests.unit.builders import (
    FAILURE_DOMAINS, NOW, VERSION, at, control_plane, machine, member, snapshot, spec, upgrade, worker)

OLD = "v1.35.8"
FDS = FAILURE_DOMAINS
SPEC = spec()
JOIN_HASH = spec_hashes(SPEC)["join"]
SURGE_0 = spec(rollout={"strategy": "RollingUpdate", "max_surge": 0, "after": None, "before": {"certificates_expiry_days": None}})
IN_PLACE = spec(upgrade=upgrade("in_place"))
RETRIES = spec(remediation={"max_retry": 3, "retry_period": 0.0, "min_healthy_period": 3600.0})
NO_MORE_RETRIES = spec(remediation={"max_retry": 1, "retry_period": 0.0, "min_healthy_period": 3600.0})
POWER_CYCLE = {"attempts": 3, "timeout": 600.0, "escalate": False}
EXTERNAL_REMEDIATION = spec(remediation=dict(SPEC["remediation"], external=POWER_CYCLE))
ESCALATING = spec(remediation=dict(SPEC["remediation"], external=dict(POWER_CYCLE, escalate=True)))
# etcd moved to the release etcd 3.7 needs first (3.6.11), the Kubernetes version kept: an in-place upgrade of etcd alone
ETCD_FLOOR = dict(SPEC["kubeadm"], cluster_configuration={"etcd": {"local": {"imageTag": "3.6.11-0"}}})
STORED_ETCD_DEFAULT = {"kubernetes_version": VERSION, "cluster_configuration": {"kubernetesVersion": VERSION, "etcd": {"local": {}}}}
EXTERNAL = spec(
    kubeadm={
        "api_version": "kubeadm.k8s.io/v1beta4",
        "cluster_configuration": {"etcd": {"external": {"endpoints": ["https://10.0.9.1:2379"]}}},
        "init_configuration": {},
        "join_configuration": {},
    }
)


def cluster(n, **overrides):
    """cp-1..cp-n built from SPEC's join part, spread over fd-a..fd-c, cp-1 oldest."""
    return control_plane(n, JOIN_HASH, **overrides)


def outdated(n):
    """cp-1..cp-n at OLD, with a kubeadm-config that says OLD too."""
    return snapshot(cluster(n, **{"cp_%d" % i: {"version": OLD} for i in range(1, n + 1)}), failure_domains=FDS,
                    kubeadm_config={"kubernetes_version": OLD})


def nothing_yet(**extra):
    """Before kubeadm init: no machine, no etcd member, no kubeadm-config, no endpoint."""
    fields = dict(failure_domains=FDS, initialized=False, kubeadm_config=None, endpoint_ready=False)
    fields.update(extra)
    return snapshot([], **fields)


def short(step):
    """(action, rollout step, the machine / member name / failure domain it concerns) of a projected step."""
    target = step["machine"] or (step["member"] or {}).get("name") or step["failure_domain"] or ",".join(step["workers"]) or None
    return step["action"], step["step"], target


INIT = ("scale_up", None, "fd-a")
CONFIG = ("update_kubeadm_config", None, None)
NONE = ("none", None, None)

# (spec, observed snapshot, the projected steps as short())
SEQUENCES = [
    (
        "create from nothing: kubeadm init, two joins, then nothing",
        SPEC,
        nothing_yet(),
        [INIT, ("scale_up", "scale_up", "fd-b"), ("scale_up", "scale_up", "fd-c"), NONE],
    ),
    (
        "create with external etcd: the same three machines, and no etcd member is projected",
        EXTERNAL,
        nothing_yet(failure_domains=[], external=True, members=[member("etcd-1")]),
        [("scale_up", None, None), ("scale_up", "scale_up", None), ("scale_up", "scale_up", None), NONE],
    ),
    (
        "scale 5 to 3: the machines the planner picks, the fullest failure domain's oldest first",
        SPEC,
        snapshot(cluster(5), failure_domains=FDS),
        [("scale_down", "scale_down", "cp-1"), ("scale_down", "scale_down", "cp-2"), NONE],
    ),
    (
        "rollout of 3 with max_surge 1: the kubeadm-config first, then add and remove in turn",
        SPEC,
        outdated(3),
        [
            CONFIG,
            ("rollout", "scale_up", "fd-a"),
            ("rollout", "scale_down", "cp-1"),
            ("rollout", "scale_up", "fd-b"),
            ("rollout", "scale_down", "cp-2"),
            ("rollout", "scale_up", "fd-c"),
            ("rollout", "scale_down", "cp-3"),
            NONE,
        ],
    ),
    (
        "rollout of 3 with max_surge 0: a removal first, the kubeadm-config before the first join, a plain scale up last",
        SURGE_0,
        outdated(3),
        [
            ("rollout", "scale_down", "cp-1"),
            CONFIG,
            ("rollout", "scale_up", "fd-a"),
            ("rollout", "scale_down", "cp-2"),
            ("rollout", "scale_up", "fd-b"),
            ("rollout", "scale_down", "cp-3"),
            ("scale_up", "scale_up", "fd-c"),
            NONE,
        ],
    ),
    (
        "a spec hash change needs no kubeadm-config update",
        SPEC,
        snapshot(cluster(3, cp_2={"spec_hash": "older-hash"}), failure_domains=FDS),
        [("rollout", "scale_up", "fd-b"), ("rollout", "scale_down", "cp-2"), NONE],
    ),
    (
        "in-place upgrade: the kubeadm-config, upgrade apply on the oldest, then upgrade node on each other",
        IN_PLACE,
        outdated(3),
        [CONFIG, ("upgrade_in_place", None, "cp-1"), ("upgrade_in_place", None, "cp-2"), ("upgrade_in_place", None, "cp-3"), NONE],
    ),
    (
        "in place, etcd alone: the kubeadm-config's etcd tag, upgrade apply at the same version on the oldest, upgrade node "
        "on each other",
        spec(upgrade=upgrade("in_place"), kubeadm=ETCD_FLOOR),
        snapshot(cluster(3, **{"cp_%d" % i: {"etcd_image_tag": "3.6.8-0"} for i in (1, 2, 3)}), failure_domains=FDS,
                 kubeadm_config=STORED_ETCD_DEFAULT),
        [CONFIG, ("upgrade_in_place", None, "cp-1"), ("upgrade_in_place", None, "cp-2"), ("upgrade_in_place", None, "cp-3"), NONE],
    ),
    (
        "rolling, etcd alone: the kubeadm-config's etcd tag, then each machine replaced, a new one running the tag",
        spec(kubeadm=ETCD_FLOOR),
        snapshot(cluster(3, **{"cp_%d" % i: {"etcd_image_tag": "3.6.8-0"} for i in (1, 2, 3)}), failure_domains=FDS,
                 kubeadm_config=STORED_ETCD_DEFAULT),
        [CONFIG, ("rollout", "scale_up", "fd-a"), ("rollout", "scale_down", "cp-1"), ("rollout", "scale_up", "fd-b"),
         ("rollout", "scale_down", "cp-2"), ("rollout", "scale_up", "fd-c"), ("rollout", "scale_down", "cp-3"), NONE],
    ),
    (
        "in-place upgrade with workers: the control plane first, then each group's workers, two at a time in md-a",
        spec(upgrade=upgrade("in_place", groups={"md-a": 2})),
        snapshot(outdated(3)["machines"], failure_domains=FDS, kubeadm_config={"kubernetes_version": OLD},
                 workers=[worker("w-1", group="md-a", version=OLD, created=30), worker("w-2", group="md-a", version=OLD, created=20),
                          worker("w-3", group="md-a", version=OLD, created=10), worker("w-4", version=OLD, ready=False)]),
        [CONFIG, ("upgrade_in_place", None, "cp-1"), ("upgrade_in_place", None, "cp-2"), ("upgrade_in_place", None, "cp-3"),
         ("upgrade_workers", None, "w-1,w-2"), ("upgrade_workers", None, "w-3"), ("upgrade_workers", None, "w-4"), NONE],
    ),
    (
        "in place or stop: a spec change is refused before anything is touched",
        IN_PLACE,
        snapshot(outdated(3)["machines"][:2] + [dict(outdated(3)["machines"][2], spec_hash="older-hash")], failure_domains=FDS,
                 kubeadm_config={"kubernetes_version": OLD}),
        [("wait", None, None)],
    ),
    (
        "a flagged machine is remediated, then replaced by a scale up",
        SPEC,
        snapshot(cluster(3, cp_2={"node_ready": "False"}), failure_domains=FDS),
        [("remediate", None, "cp-2"), ("scale_up", "scale_up", "fd-b"), NONE],
    ),
    (
        "an unhealthy machine goes to the external remediation tasks, which the projection assumes heal it, then its request is cleared",
        EXTERNAL_REMEDIATION,
        snapshot(cluster(3, cp_2={"node_ready": "False"}), failure_domains=FDS),
        [("remediate_external", None, "cp-2"), ("clear_external_remediation", None, "cp-2"), NONE],
    ),
    (
        "the leader goes to the external remediation tasks: leadership moves, and comes back to nothing more",
        EXTERNAL_REMEDIATION,
        snapshot(cluster(3, cp_1={"node_ready": "Unknown", "external_attempts": 1}), failure_domains=FDS),
        [("remediate_external", None, "cp-1"), ("clear_external_remediation", None, "cp-1"), NONE],
    ),
    (
        "used up attempts with escalate: deleted, then replaced by a scale up",
        ESCALATING,
        snapshot(cluster(3, cp_2={"node_ready": "False", "external_attempts": 3}), failure_domains=FDS),
        [("remediate", None, "cp-2"), ("scale_up", "scale_up", "fd-b"), NONE],
    ),
    (
        "an interrupted deletion is finished, then the machine replaced",
        SPEC,
        snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS),
        [("finish_delete", None, "cp-3"), ("scale_up", "scale_up", "fd-c"), NONE],
    ),
    (
        "a stray etcd member is removed, then nothing",
        SPEC,
        snapshot(cluster(3), failure_domains=FDS, members=[member("cp-%d" % i, leader=(i == 1)) for i in (1, 2, 3)] + [member("cp-9")]),
        [("remove_etcd_member", None, "cp-9"), NONE],
    ),
]


@pytest.mark.parametrize("the_spec,observed,expected", [case[1:] for case in SEQUENCES], ids=[case[0] for case in SEQUENCES])
def test_the_projection_walks_the_sequence_the_flows_take(the_spec, observed, expected):
    steps = project(the_spec, observed)
    assert [short(s) for s in steps] == expected
    assert all(set(s) == {"action", "step", "machine", "workers", "failure_domain", "init", "member", "reason", "blocked_by"} for s in steps)
    assert [s["init"] for s in steps] == [i == 0 and not observed["machines"] for i in range(len(steps))]


def projected_snapshots(the_spec, observed, limit=16):
    """(snapshots, plans): the snapshots the projection passes through, built here from the public pieces, and the
    planner's result for each, up to the first none or wait (or limit + 1 of them)."""
    placeholders = free_placeholders(observed)
    snapshots, results = [observed], [plan(the_spec, observed)]
    while results[-1]["action"] not in ("none", "wait") and len(results) <= limit:
        result = results[-1]
        snapshots.append(after_step(the_spec, snapshots[-1], result, next(placeholders) if creates_machine(result) else None))
        results.append(plan(the_spec, snapshots[-1]))
    return snapshots, results


@pytest.mark.parametrize("the_spec,observed", [case[1:3] for case in SEQUENCES], ids=[case[0] for case in SEQUENCES])
def test_each_projected_step_is_what_the_planner_says_for_a_snapshot_the_contract_accepts(the_spec, observed):
    observed, errors = normalize_snapshot(observed)  # as kcp_plan reads it, so that every field is there
    assert errors == []
    snapshots, results = projected_snapshots(the_spec, observed)
    assert project(the_spec, observed) == [summary(result) for result in results]
    for current, result in zip(snapshots, results):
        normalized, errors = normalize_snapshot(current)
        assert errors == []
        assert normalized == current, "a projected machine or member lacks a field an observed one has"
        assert plan(the_spec, normalized) == result


def test_the_observed_snapshot_is_left_as_it_was():
    observed = outdated(3)
    before = copy.deepcopy(observed)
    project(SPEC, observed)
    assert observed == before


def test_a_new_machine_is_the_newest_healthy_machine_built_from_the_spec():
    observed = snapshot(cluster(2), failure_domains=FDS)
    result = plan(SPEC, observed)
    after = after_step(SPEC, observed, result, "new-1")
    new = after["machines"][-1]
    assert (new["name"], new["host"], new["failure_domain"], new["version"], new["bootstrap"]) == ("new-1", None, "fd-c", VERSION, "join")
    assert new["spec_hash"] == result["spec_hashes"]["join"] == JOIN_HASH
    assert (new["created"], new["certificates_expire"]) == ("2026-11-22T10:00:01Z", "2027-11-22T10:00:01Z")
    assert set(new["components"].values()) == {"healthy"}
    joined = after["etcd"]["members"][-1]
    ids = sorted(m["id"] for m in after["etcd"]["members"])
    assert (joined["name"], joined["learner"], joined["leader"], joined["member_ids_seen"]) == ("new-1", False, False, ids)
    assert all(m["member_ids_seen"] == ids for m in after["etcd"]["members"]), "the members already there list the new one"


def test_kubeadm_init_initializes_the_cluster_and_its_member_leads():
    observed = nothing_yet()
    after = after_step(SPEC, observed, plan(SPEC, observed), "new-1")
    assert (after["initialized"], after["endpoint_ready"]) == (True, True)
    assert after["kubeadm_config"] == {"kubernetes_version": VERSION, "cluster_configuration": None}
    assert after["machines"][0]["bootstrap"] == "init" and after["machines"][0]["spec_hash"] == spec_hashes(SPEC)["init"]
    assert [(m["name"], m["leader"]) for m in after["etcd"]["members"]] == [("new-1", True)]


def test_the_certificates_of_a_new_machine_run_for_the_spec_validity_period():
    one_month = spec(kubeadm=dict(SPEC["kubeadm"], cluster_configuration={"certificateValidityPeriod": "720h0m0s"}))
    observed = nothing_yet()
    after = after_step(one_month, observed, plan(one_month, observed), "new-1")
    assert after["machines"][0]["certificates_expire"] == "2026-12-22T10:00:01Z"


def test_a_removed_leader_hands_leadership_to_the_leader_candidate():
    observed = snapshot(cluster(5), failure_domains=FDS)
    result = plan(SPEC, observed)
    assert (result["machine"], result["leader_candidate"]) == ("cp-1", "cp-5")
    after = after_step(SPEC, observed, result)
    assert [(m["name"], m["leader"]) for m in after["etcd"]["members"]] == [("cp-2", False), ("cp-3", False), ("cp-4", False), ("cp-5", True)]
    gone = observed["etcd"]["members"][0]["id"]
    assert all(gone not in m["member_ids_seen"] for m in after["etcd"]["members"])


def test_the_replacement_of_a_remediated_machine_carries_the_remediation_record():
    observed = snapshot(cluster(3, cp_2={"node_ready": "False", "retries": 1, "last_remediation": at(30)}), failure_domains=FDS)
    snapshots, results = projected_snapshots(RETRIES, observed)
    assert [result["action"] for result in results] == ["remediate", "scale_up", "none"]
    assert snapshots[1]["remediation_in_progress"] == {"machine": "cp-2", "timestamp": NOW, "retry_count": 2}
    assert results[1]["remediation_for"] == {"machine": "cp-2", "timestamp": NOW, "retry_count": 2}
    settled = snapshots[2]
    assert settled["remediation_in_progress"] is None
    assert settled["machines"][-1]["remediation"] == {"requested": False, "retries": 2, "last": NOW}


def test_an_external_attempt_is_recorded_and_the_machine_assumed_healed_until_its_request_is_cleared():
    observed = snapshot(cluster(3, cp_1={"node_ready": "False", "external_attempts": 1, "failure": "kubelet stopped",
                                         "remediation_requested": True}),
                        failure_domains=FDS, members=[member("cp-1", leader=True, responsive=False), member("cp-2"), member("cp-3")])
    snapshots, results = projected_snapshots(EXTERNAL_REMEDIATION, observed)
    assert [(r["action"], r["attempt"]) for r in results] == [("remediate_external", 2), ("clear_external_remediation", None), ("none", None)]
    healed = snapshots[1]["machines"][0]
    assert healed["external_remediation"] == {"attempts": 2, "last": NOW}
    assert (healed["failure"], healed["remediation"]["requested"], healed["node"]["conditions"]) == (
        None, False, [{"type": "Ready", "status": "True", "last_transition": NOW}])
    members = snapshots[1]["etcd"]["members"]
    assert [(m["name"], m["leader"], m["responsive"]) for m in members] == [("cp-1", False, True), ("cp-2", False, True), ("cp-3", True, True)]
    assert members[0]["member_ids_seen"] == sorted(m["id"] for m in members)
    assert snapshots[2]["machines"][0]["external_remediation"] == {"attempts": 0, "last": None}


def test_a_first_attempt_is_counted_and_leadership_stays_where_it_was_when_the_machine_did_not_lead():
    observed = snapshot(cluster(3, cp_2={"node_ready": "False"}), failure_domains=FDS)
    snapshots, results = projected_snapshots(EXTERNAL_REMEDIATION, observed)
    assert (results[0]["action"], results[0]["leader_candidate"]) == ("remediate_external", "cp-3")
    assert snapshots[1]["machines"][1]["external_remediation"] == {"attempts": 1, "last": NOW}
    assert [m["leader"] for m in snapshots[1]["etcd"]["members"]] == [True, False, False]


def test_a_healed_learner_still_serves_no_member_list():
    observed = snapshot(cluster(3, cp_3={"node_ready": "False"}), failure_domains=FDS,
                        members=[member("cp-1", leader=True), member("cp-2"), member("cp-3", learner=True, responsive=False)])
    step = {"action": "remediate_external", "machine": "cp-3", "leader_candidate": None}
    healed = after_step(EXTERNAL_REMEDIATION, observed, step)["etcd"]["members"][2]
    assert (healed["responsive"], healed["learner"], healed["member_ids_seen"]) == (True, True, [])


def test_with_external_etcd_a_healed_machine_has_no_etcd_pod():
    the_spec = dict(EXTERNAL, remediation=EXTERNAL_REMEDIATION["remediation"])
    built = {"spec_hash": spec_hashes(the_spec)["join"]}
    machines = cluster(3, cp_1=built, cp_2=dict(built, node_ready="False"), cp_3=built)
    observed = snapshot(machines, failure_domains=FDS, external=True, members=[member("etcd-1")])
    snapshots, results = projected_snapshots(the_spec, observed)
    assert [r["action"] for r in results] == ["remediate_external", "clear_external_remediation", "none"]
    assert snapshots[1]["machines"][1]["components"]["etcd"] == "missing"
    assert snapshots[1]["etcd"]["members"] == observed["etcd"]["members"]


# (spec, observed snapshot, the rule of each blocked_by entry of the single wait)
WAITS = [
    (
        "an etcd member down on another machine holds the scale up back",
        SPEC,
        snapshot(cluster(2), failure_domains=FDS, members=[member("cp-1", leader=True), member("cp-2", responsive=False)]),
        ["etcd_members_not_healthy", "etcd_cluster"],
    ),
    (
        "a remediation past max_retry is held back, and nothing else is needed",
        NO_MORE_RETRIES,
        snapshot(cluster(3, cp_2={"node_ready": "False", "retries": 1, "last_remediation": at(30)}), failure_domains=FDS),
        ["max_retries"],
    ),
    (
        "a kubeadm-config that was not observed holds a rollout back",
        SPEC,
        snapshot(cluster(3, cp_1={"version": OLD}), failure_domains=FDS, kubeadm_config=None),
        ["kubeadm_config_not_observed"],
    ),
    (
        "used up external remediation attempts without escalate wait for a person",
        EXTERNAL_REMEDIATION,
        snapshot(cluster(3, cp_2={"node_ready": "False", "external_attempts": 3}), failure_domains=FDS),
        ["external_remediation_exhausted"],
    ),
]


@pytest.mark.parametrize("the_spec,observed,rules", [case[1:] for case in WAITS], ids=[case[0] for case in WAITS])
def test_a_plan_that_waits_is_projected_as_that_wait_alone(the_spec, observed, rules):
    steps = project(the_spec, observed)
    assert [s["action"] for s in steps] == ["wait"]
    assert [b["rule"] for b in steps[0]["blocked_by"]] == rules
    assert steps[0]["reason"] == plan(the_spec, observed)["reason"]


def test_a_wait_after_some_steps_ends_the_projection():
    """A remediation past max_retry is held back, which lets scaling go on (G2); once nothing else is needed,
    the hold is what the projection ends on."""
    five = dict(NO_MORE_RETRIES, replicas=5)
    observed = snapshot(cluster(4, cp_2={"node_ready": "False", "retries": 1, "last_remediation": at(30)}), failure_domains=FDS)
    steps = project(five, observed)
    assert [short(s) for s in steps] == [("scale_up", "scale_up", "fd-b"), ("wait", None, None)]
    assert [b["rule"] for b in steps[-1]["blocked_by"]] == ["max_retries"]


@pytest.mark.parametrize(
    "limit,expected",
    [
        (0, ["stopped"]),
        (2, ["scale_up", "scale_up", "stopped"]),
        (3, ["scale_up", "scale_up", "scale_up", "none"]),
    ],
    ids=["limit 0 projects nothing", "limit 2 stops before the third machine", "a limit the plan fits in ends with none"],
)
def test_the_limit_bounds_the_acting_steps(limit, expected):
    steps = project(SPEC, nothing_yet(), limit=limit)
    assert [s["action"] for s in steps] == expected


def test_the_stopped_entry_names_the_step_that_would_come_next():
    last = project(SPEC, outdated(3), limit=2)[-1]
    assert last["action"] == STOPPED and last["blocked_by"] == [] and last["machine"] is None
    assert last["reason"] == "the projection stops after 2 steps; the next would be rollout scale_down: " \
                             "rolling out cp-1, cp-2, cp-3: remove an outdated machine: cp-1"


def test_placeholders_skip_the_names_of_observed_machines():
    observed = snapshot(cluster(1) + [machine("new-1", fd="fd-b", spec_hash=JOIN_HASH)], failure_domains=FDS)
    snapshots, results = projected_snapshots(SPEC, observed)
    assert [result["action"] for result in results] == ["scale_up", "none"]
    assert [m["name"] for m in snapshots[-1]["machines"]] == ["cp-1", "new-1", "new-2"]


def test_a_step_that_changes_nothing_has_no_effect_to_project():
    observed = snapshot(cluster(3), failure_domains=FDS)
    with pytest.raises(ValueError, match="none changes nothing"):
        after_step(SPEC, observed, plan(SPEC, observed))


@pytest.mark.ansible
def test_kcp_plan_returns_the_projection_only_when_asked():
    raw_spec = {"cluster_name": "demo", "replicas": 3, "version": VERSION, "endpoint": {"host": "10.0.0.100"}}
    observed = nothing_yet()
    outcome, plain = run_module("kcp_plan", {"spec": raw_spec, "observed": observed})
    assert outcome == "SUCCESS" and "projection" not in plain
    outcome, result = run_module("kcp_plan", {"spec": raw_spec, "observed": observed, "projection": True}, check=True)
    assert outcome == "SUCCESS" and result["action"] == "scale_up" and result["init"] is True
    assert [(s["action"], s["init"]) for s in result["projection"]] == [("scale_up", True), ("scale_up", False), ("scale_up", False), ("none", False)]


def test_a_new_joining_machine_is_built_in_full_from_the_spec_with_nothing_yet_to_remedy():
    observed = snapshot(cluster(2), failure_domains=FDS)
    new = after_step(SPEC, observed, plan(SPEC, observed), "new-1")["machines"][-1]
    created = "2026-11-22T10:00:01Z"
    assert new == {
        "name": "new-1",
        "host": None,
        "failure_domain": "fd-c",
        "created": created,
        "version": VERSION,
        "etcd_image_tag": "3.6.8-0",
        "spec_hash": JOIN_HASH,
        "bootstrap": "join",
        "provisioned": True,
        "deleting": False,
        "delete_requested": False,
        "failure": None,
        "remediation": {"requested": False, "retries": 0, "last": None},
        "external_remediation": {"attempts": 0, "last": None},
        "node": {"name": "new-1", "conditions": [{"type": "Ready", "status": "True", "last_transition": created}]},
        "components": {"api_server": "healthy", "controller_manager": "healthy", "scheduler": "healthy", "etcd": "healthy"},
        "components_since": dict.fromkeys(("api_server", "controller_manager", "scheduler", "etcd"), created),
        "certificates_expire": "2027-11-22T10:00:01Z",
        "certificate_authorities_expire": None,
        "kubelet_certificate_expire": None,
        "kubelet_certificate_rotates": None,
        "certificate_renewal": None,
        "upgrade": None,
    }


def test_a_new_member_joins_the_cluster_its_peers_report():
    peers = [dict(member("cp-1", leader=True), cluster_id="c0ffee"), dict(member("cp-2"), cluster_id="c0ffee")]
    observed = snapshot(cluster(2), failure_domains=FDS, members=peers)
    joined = after_step(SPEC, observed, plan(SPEC, observed), "new-1")["etcd"]["members"][-1]
    assert (joined["name"], joined["cluster_id"]) == ("new-1", "c0ffee")


def test_a_new_member_never_takes_an_id_already_in_the_cluster():
    observed = snapshot(cluster(2), failure_domains=FDS)
    result = plan(SPEC, observed)
    usual = after_step(SPEC, observed, result, "new-1")["etcd"]["members"][-1]["id"]
    assert after_step(SPEC, observed, result, "new-1")["etcd"]["members"][-1]["id"] == usual, "the placeholder's id is stable"
    taken = snapshot(cluster(2), failure_domains=FDS, members=[member("cp-1", leader=True), member("cp-2", member_id=usual)])
    ids = [m["id"] for m in after_step(SPEC, taken, plan(SPEC, taken), "new-1")["etcd"]["members"]]
    assert ids[1] == usual and ids[2] != usual and len(set(ids)) == 3


@pytest.mark.parametrize(
    "taken,expected",
    [
        ([], ["new-1", "new-2", "new-3"]),
        (["new-2"], ["new-1", "new-3", "new-4"]),
    ],
    ids=["placeholders are numbered from 1", "a name an observed machine has is skipped"],
)
def test_placeholders_are_numbered_from_1_skipping_observed_names(taken, expected):
    observed = snapshot(cluster(1) + [machine(name, fd="fd-b", spec_hash=JOIN_HASH) for name in taken], failure_domains=FDS)
    placeholders = free_placeholders(observed)
    assert list(itertools.islice(placeholders, len(expected))) == expected


def test_the_kubeadm_config_update_leaves_the_spec_cluster_configuration_in_the_config_map():
    the_spec = spec(kubeadm=ETCD_FLOOR)
    observed = snapshot(cluster(3, **{"cp_%d" % i: {"etcd_image_tag": "3.6.8-0"} for i in (1, 2, 3)}), failure_domains=FDS,
                        kubeadm_config=STORED_ETCD_DEFAULT)
    result = plan(the_spec, observed)
    assert result["action"] == "update_kubeadm_config"
    config = after_step(the_spec, observed, result)["kubeadm_config"]
    assert config["kubernetes_version"] == VERSION
    assert (config["cluster_configuration"]["kubernetesVersion"], config["cluster_configuration"]["etcd"]) == (VERSION, {"local": {"imageTag": "3.6.11-0"}})


def test_removing_a_follower_leaves_the_leadership_where_it_is():
    observed = snapshot(cluster(5), failure_domains=FDS, members=[member("cp-%d" % i, leader=(i == 3)) for i in range(1, 6)])
    result = plan(SPEC, observed)
    assert (result["action"], result["machine"], result["leader_candidate"]) == ("scale_down", "cp-1", "cp-5")
    after = after_step(SPEC, observed, result)
    assert [(m["name"], m["leader"]) for m in after["etcd"]["members"]] == [("cp-2", False), ("cp-3", True), ("cp-4", False), ("cp-5", False)]


def test_with_external_etcd_a_removed_machine_leaves_the_etcd_members_alone_even_one_named_like_its_node():
    built = {"spec_hash": spec_hashes(EXTERNAL)["join"]}
    machines = cluster(5, **{"cp_%d" % i: built for i in range(1, 6)})
    etcd = [member("cp-1", leader=True), member("cp-2"), member("cp-3")]  # an external etcd on the control plane hosts
    observed = snapshot(machines, failure_domains=FDS, external=True, members=etcd)
    result = plan(EXTERNAL, observed)
    assert (result["action"], result["machine"]) == ("scale_down", "cp-1")
    after = after_step(EXTERNAL, observed, result)
    assert [m["name"] for m in after["machines"]] == ["cp-2", "cp-3", "cp-4", "cp-5"]
    assert after["etcd"]["members"] == observed["etcd"]["members"]


def test_the_projection_stops_after_16_steps_unless_told_otherwise():
    steps = project(spec(replicas=18), nothing_yet())
    assert len(steps) == 17
    assert steps[-1] == {
        "action": STOPPED,
        "step": None,
        "machine": None,
        "workers": [],
        "failure_domain": None,
        "init": False,
        "member": None,
        "reason": "the projection stops after 16 steps; the next would be scale_up scale_up: 16 of 18 machines: add one",
        "blocked_by": [],
    }


@pytest.mark.parametrize("action", ["none", "wait"])
def test_a_step_that_changes_nothing_says_so(action):
    observed = snapshot(cluster(3), failure_domains=FDS)
    with pytest.raises(ValueError) as raised:
        after_step(SPEC, observed, dict(plan(SPEC, observed), action=action))
    assert str(raised.value) == "%s changes nothing in the cluster: there is no effect to project" % action
