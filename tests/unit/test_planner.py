# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planner: pass order, scaling, rollout sequences, the four remediation scenarios of the KCP proposal,
etcd member clean-up and finishing interrupted deletions."""

import copy

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kubeadm_config
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import ACTIONS, plan

from ansible_collections.kubeadm.control_plane.tests.unit.builders import HASHES, NEXT, NOW, VERSION, at, machine, member, snapshot, spec, upgrade, worker

FDS = [{"name": n, "control_plane": True} for n in ("fd-a", "fd-b", "fd-c")]
HEALTHY = {"unhealthy": [], "remediation_allowed": True, "reason": "all healthy"}


def flag(*names):
    """A health check verdict flagging `names` for remediation."""
    return {"unhealthy": list(names), "remediation_allowed": True, "reason": "flagged by the test"}


def cluster(n=3, **overrides):
    """cp-1..cp-n spread over fd-a, fd-b, fd-c, cp-1 oldest; `overrides` maps cp_2 to machine() arguments."""
    return [
        machine("cp-%d" % i, fd=FDS[(i - 1) % 3]["name"], created=1000 - i, **overrides.get("cp_%d" % i, {}))
        for i in range(1, n + 1)
    ]


def members(n=3, **overrides):
    return [member("cp-%d" % i, leader=(i == 1), **overrides.get("cp_%d" % i, {})) for i in range(1, n + 1)]


def decide(the_spec, snap, health=None):
    return plan(the_spec, snap, desired_hashes=HASHES, health=health or HEALTHY)


def short(result):
    """(action, step, target) of a plan, the target being the machine, member or failure domain."""
    target = result["machine"] or (result["member"] or {}).get("name") or result["failure_domain"]
    return result["action"], result["step"], target


# (spec, snapshot, health verdict, expected (action, step, target))
ORDER = [
    (
        "an interrupted deletion is finished before anything else",
        spec(version=NEXT),
        snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS, members=members(3) + [member("cp-9")]),
        flag("cp-1"),
        ("finish_delete", None, "cp-3"),
    ),
    (
        "a stray etcd member is removed before remediation",
        spec(version=NEXT),
        snapshot(cluster(3), failure_domains=FDS, members=members(3) + [member("cp-9")]),
        flag("cp-1"),
        ("remove_etcd_member", None, "cp-9"),
    ),
    (
        "remediation goes before rollout",
        spec(version=NEXT),
        snapshot(cluster(3), failure_domains=FDS),
        flag("cp-2"),
        ("remediate", None, "cp-2"),
    ),
    (
        "rollout goes before plain scaling",
        spec(version=NEXT, replicas=1),
        snapshot(cluster(3), failure_domains=FDS),
        HEALTHY,
        ("rollout", "scale_down", "cp-1"),
    ),
    (
        "a held-back remediation lets the rollout go on",
        spec(version=NEXT, remediation={"max_retry": 1, "retry_period": 0.0, "min_healthy_period": 3600.0}),
        snapshot(cluster(3, cp_2={"retries": 1, "last_remediation": NOW}), failure_domains=FDS,
                 kubeadm_config={"kubernetes_version": NEXT}),
        flag("cp-2"),
        ("rollout", "scale_up", "fd-a"),
    ),
    (
        "plain scaling runs when nothing is outdated",
        spec(replicas=5),
        snapshot(cluster(3), failure_domains=FDS),
        HEALTHY,
        ("scale_up", "scale_up", "fd-a"),
    ),
    ("nothing happens when the control plane is as declared", spec(), snapshot(cluster(3), failure_domains=FDS), HEALTHY, ("none", None, None)),
]


@pytest.mark.parametrize("the_spec,snap,health,expected", [c[1:] for c in ORDER], ids=[c[0] for c in ORDER])
def test_pass_order(the_spec, snap, health, expected):
    result = decide(the_spec, snap, health)
    assert short(result) == expected, result["reason"]
    assert result["blocked_by"] == []


def test_one_pass_returns_one_operation_with_one_target():
    snap = snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS, members=members(3) + [member("cp-9")])
    result = decide(spec(version=NEXT, replicas=5), snap, flag("cp-1"))
    assert result["action"] in ACTIONS
    assert (result["machine"], result["member"], result["failure_domain"], result["machines"]) == ("cp-3", None, None, [])


# (spec, snapshot, expected (action, step, target), expected blocked_by rules)
SCALING = [
    (
        "an empty control plane starts with kubeadm init in the first failure domain",
        spec(),
        snapshot([], failure_domains=FDS, initialized=False, endpoint_ready=False),
        ("scale_up", None, "fd-a"),
        [],
    ),
    (
        "fewer machines than replicas scale up into the emptiest domain",
        spec(),
        snapshot(cluster(2), failure_domains=FDS),
        ("scale_up", "scale_up", "fd-c"),
        [],
    ),
    (
        "scaling up waits for a machine still without a node",
        spec(replicas=5),
        snapshot(cluster(3, cp_3={"has_node": False}), failure_domains=FDS),
        ("wait", "scale_up", "fd-a"),
        ["machines_without_node", "etcd_cluster"],
    ),
    (
        "scaling up waits for an unhealthy control plane pod",
        spec(replicas=5),
        snapshot(cluster(3, cp_2={"components": {"api_server": "unhealthy"}}), failure_domains=FDS),
        ("wait", "scale_up", "fd-a"),
        ["components_not_healthy"],
    ),
    (
        "more machines than replicas remove the oldest in the fullest domain",
        spec(),
        snapshot(cluster(5), failure_domains=FDS),
        ("scale_down", "scale_down", "cp-1"),
        [],
    ),
    (
        "scaling down ignores the health of the machine it removes",
        spec(),
        snapshot(cluster(5, cp_1={"components": {"api_server": "unhealthy"}}), failure_domains=FDS),
        ("scale_down", "scale_down", "cp-1"),
        [],
    ),
    (
        "scaling down waits for another unhealthy machine",
        spec(),
        snapshot(cluster(5, cp_4={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS),
        ("wait", "scale_down", "cp-1"),
        ["components_not_healthy"],
    ),
    (
        "scaling down removes the machine the user marked",
        spec(),
        snapshot(cluster(5, cp_5={"delete_requested": True}), failure_domains=FDS),
        ("scale_down", "scale_down", "cp-5"),
        [],
    ),
    (
        "an unanswering API endpoint holds scaling back",
        spec(replicas=5),
        snapshot(cluster(3), failure_domains=FDS, endpoint_ready=False),
        ("wait", "scale_up", "fd-a"),
        ["endpoint_not_ready"],
    ),
    (
        "a converged control plane with a sick pod reports it but has nothing to do",
        spec(),
        snapshot(cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS),
        ("none", None, None),
        ["components_not_healthy"],
    ),
]


@pytest.mark.parametrize("the_spec,snap,expected,blocked", [c[1:] for c in SCALING], ids=[c[0] for c in SCALING])
def test_scaling(the_spec, snap, expected, blocked):
    result = decide(the_spec, snap)
    assert short(result) == expected, result["reason"]
    assert [b["rule"] for b in result["blocked_by"]] == blocked


def test_the_first_machine_is_created_with_init_and_no_preflight():
    result = decide(spec(), snapshot([], failure_domains=FDS, initialized=False, endpoint_ready=False))
    assert result["init"] is True and result["quorum"] is None


def test_a_scale_down_names_the_leader_candidate_and_the_quorum_behind_it():
    result = decide(spec(), snapshot(cluster(5), failure_domains=FDS))
    assert result["leader_candidate"] == "cp-5"
    assert result["quorum"]["ok"] and result["quorum"]["voters_after"] == 4
    assert result["preflight"]["excluded"] == ["cp-1"]
    assert "SD1 priority 5" in result["details"][0]


# --- a small world that applies each planned operation, to follow a whole rollout or remediation ---------


class World:
    """Machines and members as the planner's steps leave them: every new machine is healthy and up to date."""

    def __init__(self, machines, health_of=None, workers=()):
        self.machines = machines
        self.workers = list(workers)
        self.in_progress = None
        self.created = 0
        self.initialized = bool(machines)
        self.config_version = VERSION
        self.health_of = health_of or (lambda snap: HEALTHY)

    def snapshot(self):
        return snapshot(
            copy.deepcopy(self.machines),
            failure_domains=FDS,
            remediation_in_progress=self.in_progress,
            workers=copy.deepcopy(self.workers),
            initialized=self.initialized,
            endpoint_ready=self.initialized,
            kubeadm_config={"kubernetes_version": self.config_version},
        )

    def apply(self, result, version):
        kind = result["step"] if result["action"] == "rollout" else result["action"]
        if kind == "scale_up":
            self.created += 1
            name = "new-%d" % self.created
            self.machines.append(machine(name, fd=result["failure_domain"], created=100 - self.created, version=version))
            self.in_progress = None
            self.initialized = True
        elif kind in ("scale_down", "remediate", "finish_delete"):
            self.machines = [m for m in self.machines if m["name"] != result["machine"]]
            if kind == "remediate":
                self.in_progress = {"machine": result["machine"], "timestamp": NOW, "retry_count": result["retry_count"]}
        elif kind == "update_kubeadm_config":
            self.config_version = version
        elif kind == "upgrade_in_place":
            next(m for m in self.machines if m["name"] == result["machine"])["version"] = version
        elif kind == "upgrade_workers":
            for name in result["workers"]:
                next(w for w in self.workers if w["name"] == name)["version"] = version
        else:
            raise AssertionError("the world cannot apply %s: %s" % (result["action"], result["reason"]))

    def converge(self, the_spec, limit=20):
        """Plan and apply until the planner says none; the list of (action, step, target) taken."""
        taken = []
        for attempt in range(limit):
            snap = self.snapshot()
            result = plan(the_spec, snap, desired_hashes=HASHES, health=self.health_of(snap))
            if result["action"] == "none":
                return taken
            assert result["blocked_by"] == [], result["reason"]
            taken.append(short(result))
            self.apply(result, the_spec["version"])
        raise AssertionError("no convergence after %d steps: %s" % (limit, taken))


def surge(value):
    return {"strategy": "RollingUpdate", "max_surge": value, "after": None, "before": {"certificates_expiry_days": None}}


def test_a_rollout_with_max_surge_1_adds_then_removes_each_machine():
    world = World(cluster(3))
    taken = world.converge(spec(version=NEXT, rollout=surge(1)))
    assert taken == [
        ("update_kubeadm_config", None, None),
        ("rollout", "scale_up", "fd-a"),
        ("rollout", "scale_down", "cp-1"),
        ("rollout", "scale_up", "fd-b"),
        ("rollout", "scale_down", "cp-2"),
        ("rollout", "scale_up", "fd-c"),
        ("rollout", "scale_down", "cp-3"),
    ]
    assert sorted((m["name"], m["failure_domain"], m["version"]) for m in world.machines) == [
        ("new-1", "fd-a", NEXT),
        ("new-2", "fd-b", NEXT),
        ("new-3", "fd-c", NEXT),
    ]


def test_a_rollout_with_max_surge_0_removes_then_adds_each_machine():
    world = World(cluster(3))
    taken = world.converge(spec(version=NEXT, rollout=surge(0)))
    assert taken == [
        ("rollout", "scale_down", "cp-1"),
        ("update_kubeadm_config", None, None),
        ("rollout", "scale_up", "fd-a"),
        ("rollout", "scale_down", "cp-2"),
        ("rollout", "scale_up", "fd-b"),
        ("rollout", "scale_down", "cp-3"),
        ("scale_up", "scale_up", "fd-c"),
    ]


def test_a_rollout_reports_why_each_machine_is_outdated():
    result = decide(spec(version=NEXT), snapshot(cluster(3, cp_2={"spec_hash": "old"}), failure_domains=FDS))
    assert set(result["outdated"]) == {"cp-1", "cp-2", "cp-3"}
    assert len(result["outdated"]["cp-2"]) == 2


def test_the_in_place_strategy_upgrades_machines_that_differ_only_in_version():
    snap = snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT})
    result = decide(spec(version=NEXT, upgrade=upgrade("in_place")), snap)
    assert (result["action"], result["machine"], result["machines"]) == ("upgrade_in_place", "cp-1", ["cp-1", "cp-2", "cp-3"])
    assert result["upgrade"] == {"command": "apply", "addons": False, "etcd_image_tag": "3.7.0-0"}


def test_the_in_place_strategy_upgrades_an_older_etcd_at_the_same_version_behind_the_kubeadm_config():
    floor = {"etcd": {"local": {"imageTag": "3.6.11-0"}}}
    the_spec = spec(upgrade=upgrade("in_place"), kubeadm=dict(spec()["kubeadm"], cluster_configuration=floor))
    machines = [machine("cp-%d" % i, fd=FDS[i - 1]["name"], created=1000 - i, etcd_image_tag="3.6.8-0") for i in (1, 2, 3)]
    stored = {"kubernetesVersion": VERSION, "etcd": {"local": {"imageTag": "3.6.8-0"}}}
    result = decide(the_spec, snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": stored}))
    assert result["action"] == "update_kubeadm_config" and "etcd.local.imageTag" in result["reason"]
    assert result["outdated"]["cp-1"] == ["runs etcd 3.6.8-0, the spec wants 3.6.11-0"]
    stored["etcd"]["local"]["imageTag"] = "3.6.11-0"
    result = decide(the_spec, snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": stored}))
    assert (result["action"], result["machine"], result["machines"]) == ("upgrade_in_place", "cp-1", ["cp-1", "cp-2", "cp-3"])
    assert result["upgrade"] == {"command": "apply", "addons": False, "etcd_image_tag": "3.6.11-0"}


def test_an_in_place_upgrade_waits_for_preflight():
    snap = snapshot(cluster(3, cp_3={"components": {"etcd": "unhealthy"}}), failure_domains=FDS,
                    kubeadm_config={"kubernetes_version": NEXT})
    result = decide(spec(version=NEXT, upgrade=upgrade("in_place")), snap)
    assert result["action"] == "wait" and [b["rule"] for b in result["blocked_by"]] == ["components_not_healthy"]
    assert (result["machine"], result["upgrade"]) == ("cp-1", {"command": "apply", "addons": False, "etcd_image_tag": "3.7.0-0"})
    assert result["reason"].endswith(", once preflight passes")


# --- the four remediation scenarios of the KCP proposal (kcp-proposal-2021.txt), through the real health check


def not_ready(name, minutes=10):
    """A machine whose node has been Ready False for `minutes` (the default rule flags it after 5)."""
    m = machine(name, fd=FDS[int(name[-1]) - 1]["name"], created=1000 - int(name[-1]))
    m["node"]["conditions"][0].update(status="False", last_transition=snapshot_time(minutes))
    return m


def snapshot_time(minutes):
    from ansible_collections.kubeadm.control_plane.tests.unit.builders import at

    return at(minutes)


def real_plan(the_spec, snap):
    return plan(the_spec, snap, desired_hashes=HASHES)


def test_scenario_1_three_replicas_one_machine_marked_is_replaced():
    machines = [machine("cp-1", fd="fd-a", created=999), not_ready("cp-2"), machine("cp-3", fd="fd-c", created=997)]
    result = real_plan(spec(), snapshot(machines, failure_domains=FDS))
    assert short(result) == ("remediate", None, "cp-2")
    assert result["leader_candidate"] == "cp-3" and result["retry_count"] == 0
    after = snapshot([machines[0], machines[2]], failure_domains=FDS, remediation_in_progress={"machine": "cp-2", "timestamp": NOW, "retry_count": 0})
    replace = real_plan(spec(), after)
    assert short(replace) == ("scale_up", "scale_up", "fd-b")
    assert replace["remediation_for"] == {"machine": "cp-2", "timestamp": NOW, "retry_count": 0}


def test_a_remediation_record_whose_machine_still_runs_is_not_handed_to_a_scale_up():
    # the run that wrote the record was stopped before the delete began, and the machine has healed since
    machines = [machine("cp-1", fd="fd-a", created=999), machine("cp-2", fd="fd-b", created=998)]
    stale = snapshot(machines, failure_domains=FDS, remediation_in_progress={"machine": "cp-2", "timestamp": NOW, "retry_count": 1})
    result = real_plan(spec(), stale)
    assert short(result) == ("scale_up", "scale_up", "fd-c")
    assert result["remediation_for"] is None


def test_scenario_1_the_only_silent_etcd_member_may_be_the_one_remediated():
    machines = [machine("cp-1", fd="fd-a", created=999), not_ready("cp-2"), machine("cp-3", fd="fd-c", created=997)]
    snap = snapshot(machines, failure_domains=FDS, members=members(3, cp_2={"responsive": False}))
    assert short(real_plan(spec(), snap)) == ("remediate", None, "cp-2")


def test_scenario_2_two_machines_marked_are_replaced_one_at_a_time():
    machines = [not_ready("cp-1"), not_ready("cp-2"), machine("cp-3", fd="fd-c", created=997)]

    def health_of(snap):
        unhealthy = [m["name"] for m in snap["machines"] if m["node"]["conditions"][0]["status"] == "False"]
        return flag(*unhealthy)

    world = World(machines, health_of)
    assert world.converge(spec()) == [
        ("remediate", None, "cp-1"),
        ("scale_up", "scale_up", "fd-a"),
        ("remediate", None, "cp-2"),
        ("scale_up", "scale_up", "fd-b"),
    ]


def test_scenario_2_no_remediation_when_a_second_etcd_member_is_unhealthy():
    machines = [not_ready("cp-1"), not_ready("cp-2"), machine("cp-3", fd="fd-c", created=997)]
    snap = snapshot(machines, failure_domains=FDS, members=members(3, cp_1={"responsive": False}, cp_2={"responsive": False}))
    result = real_plan(spec(), snap)
    assert result["action"] == "wait"
    assert result["remediation"]["rule"] == "etcd_quorum"
    assert [b["rule"] for b in result["blocked_by"]] == ["etcd_quorum"]


def test_scenario_3_an_unresponsive_member_on_another_machine_blocks_remediation():
    machines = [not_ready("cp-1"), machine("cp-2", fd="fd-b", created=998), machine("cp-3", fd="fd-c", created=997)]
    snap = snapshot(machines, failure_domains=FDS, members=members(3, cp_3={"responsive": False}))
    result = real_plan(spec(), snap)
    assert (result["action"], result["remediation"]["machine"], result["remediation"]["rule"]) == ("wait", "cp-1", "etcd_quorum")
    assert "lose etcd quorum" in result["reason"]


def test_scenario_4_unhealthy_machines_are_replaced_first_then_the_rollout_completes():
    machines = [not_ready("cp-1"), machine("cp-2", fd="fd-b", created=998), machine("cp-3", fd="fd-c", created=997)]

    def health_of(snap):
        return flag(*[m["name"] for m in snap["machines"] if m["node"]["conditions"][0]["status"] == "False"])

    world = World(machines, health_of)
    taken = world.converge(spec(version=NEXT))
    assert taken == [
        ("remediate", None, "cp-1"),
        ("update_kubeadm_config", None, None),
        ("rollout", "scale_up", "fd-a"),
        ("rollout", "scale_up", "fd-b"),
        ("rollout", "scale_down", "cp-2"),
        ("rollout", "scale_up", "fd-c"),
        ("rollout", "scale_down", "cp-3"),
    ]
    assert all(m["version"] == NEXT for m in world.machines) and len(world.machines) == 3


def test_a_held_back_remediation_with_nothing_else_to_do_is_a_wait_naming_its_rule():
    snap = snapshot(cluster(3, cp_2={"retries": 1, "last_remediation": NOW}), failure_domains=FDS)
    the_spec = spec(remediation={"max_retry": 1, "retry_period": 0.0, "min_healthy_period": 3600.0})
    result = decide(the_spec, snap, flag("cp-2"))
    assert (result["action"], result["blocked_by"][0]["rule"], result["blocked_by"][0]["machines"]) == ("wait", "max_retries", ["cp-2"])


def test_unhealthy_machines_beyond_the_budget_are_a_wait_not_a_remediation():
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS), {"unhealthy": ["cp-1", "cp-2"], "remediation_allowed": False, "reason": "too many"})
    assert (result["action"], result["flagged"], result["blocked_by"][0]["rule"]) == ("wait", [], "remediation_not_allowed")


# --- external remediation (RX1-RX6) ----------------------------------------------------------------------------


def external(**settings):
    """A spec whose remediation hands unhealthy machines to the user's tasks first (3 attempts of 10m, no escalation)."""
    return spec(remediation=dict(spec()["remediation"], external=dict({"attempts": 3, "timeout": 600.0, "escalate": False}, **settings)))


def test_an_unhealthy_machine_goes_to_the_external_remediation_tasks_first():
    result = decide(external(), snapshot(cluster(3, cp_2={"external_attempts": 1}), failure_domains=FDS), flag("cp-2"))
    assert (result["action"], result["machine"], result["attempt"], result["timeout_seconds"]) == ("remediate_external", "cp-2", 2, 600.0)
    assert result["reason"] == "cp-2 is unhealthy: external remediation, attempt 2 of 3"
    assert (result["retry_count"], result["leader_candidate"], result["quorum"]["ok"]) == (None, "cp-3", True)
    assert (result["remediation"]["status"], result["blocked_by"], result["retry_after_seconds"]) == ("remediate_external", [], None)
    assert result["details"] == ["RM4: cp-2 selected among flagged cp-2"]


def test_used_up_attempts_with_escalate_delete_and_recreate():
    snap = snapshot(cluster(3, cp_2={"external_attempts": 3}), failure_domains=FDS)
    result = decide(external(escalate=True), snap, flag("cp-2"))
    assert (result["action"], result["machine"], result["retry_count"], result["attempt"]) == ("remediate", "cp-2", 0, None)
    assert "after 3 external remediation attempts: escalate to delete and recreate" in result["reason"]


def test_used_up_attempts_without_escalate_are_a_wait_for_a_person():
    snap = snapshot(cluster(3, cp_2={"external_attempts": 3}), failure_domains=FDS)
    result = decide(external(), snap, flag("cp-2"))
    assert (result["action"], [b["rule"] for b in result["blocked_by"]], result["blocked_by"][0]["machines"]) == (
        "wait", ["external_remediation_exhausted"], ["cp-2"])
    assert result["reason"].startswith("manual intervention needed (external_remediation_exhausted): cp-2 is still unhealthy after 3")
    assert result["retry_after_seconds"] is None


def test_an_attempt_within_its_timeout_is_a_wait_that_looks_again_when_it_runs_out():
    from ansible_collections.kubeadm.control_plane.tests.unit.builders import seconds_ago

    snap = snapshot(cluster(3, cp_2={"external_attempts": 1, "external_last": seconds_ago(240)}), failure_domains=FDS)
    result = decide(external(), snap, flag("cp-2"))
    assert (result["action"], result["remediation"]["rule"], result["retry_after_seconds"]) == ("wait", "external_remediation_in_progress", 360.0)
    assert result["reason"].startswith("remediation waits: cp-2: external remediation attempt 1 of 3 began at ")


def test_a_quorum_refusal_holds_an_external_attempt_back():
    snap = snapshot(cluster(3), failure_domains=FDS, members=members(3, cp_3={"responsive": False}))
    result = decide(external(), snap, flag("cp-2"))
    assert (result["action"], result["remediation"]["rule"], result["attempt"]) == ("wait", "etcd_quorum", None)


def test_a_machine_healthy_again_has_its_request_cleared_with_no_preflight():
    snap = snapshot(cluster(3, cp_2={"external_attempts": 2}, cp_3={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS)
    result = decide(external(), snap)
    assert (result["action"], result["machine"], result["blocked_by"]) == ("clear_external_remediation", "cp-2", [])
    assert result["reason"] == "cp-2 is healthy again after 2 external remediation attempts: clear its request"
    assert (result["attempt"], result["timeout_seconds"], result["quorum"]) == (None, None, None)


def test_a_machine_still_unhealthy_keeps_its_attempts():
    snap = snapshot(cluster(3, cp_2={"external_attempts": 1}), failure_domains=FDS)
    assert decide(external(), snap, flag("cp-2"))["action"] == "remediate_external"
    beyond_budget = {"unhealthy": ["cp-2"], "remediation_allowed": False, "reason": "too many"}
    assert decide(external(), snap, beyond_budget)["action"] == "wait"


def test_a_request_is_cleared_after_an_interrupted_deletion_and_a_stray_member_and_before_a_remediation():
    snap = snapshot(cluster(3, cp_1={"external_attempts": 1}), failure_domains=FDS, members=members(3) + [member("cp-9")])
    assert short(decide(external(), snap, flag("cp-2"))) == ("remove_etcd_member", None, "cp-9")
    snap = snapshot(cluster(3, cp_1={"external_attempts": 1}, cp_3={"deleting": True}), failure_domains=FDS)
    assert short(decide(external(), snap, flag("cp-2"))) == ("finish_delete", None, "cp-3")
    snap = snapshot(cluster(3, cp_1={"external_attempts": 1}), failure_domains=FDS)
    assert short(decide(external(), snap, flag("cp-2"))) == ("clear_external_remediation", None, "cp-1")


def test_the_health_check_decides_when_a_power_cycled_machine_is_healthy_again():
    from ansible_collections.kubeadm.control_plane.tests.unit.builders import seconds_ago

    rebooted = machine("cp-2", fd="fd-b", created=998, external_attempts=1, external_last=seconds_ago(120))
    rebooted["node"]["conditions"][0]["last_transition"] = seconds_ago(30)
    machines = [machine("cp-1", fd="fd-a", created=999), rebooted, machine("cp-3", fd="fd-c", created=997)]
    assert short(real_plan(external(), snapshot(machines, failure_domains=FDS))) == ("clear_external_remediation", None, "cp-2")
    rebooted["node"]["conditions"][0]["status"] = "Unknown"  # back down within the health check's 5m: pending
    result = real_plan(external(), snapshot(machines, failure_domains=FDS))
    assert (result["action"], result["health_check"]["unhealthy"]) == ("none", [])


# --- etcd member clean-up (EH11) and interrupted deletions ------------------------------------------------


EXTERNAL_ETCD = spec(kubeadm=dict(spec()["kubeadm"], cluster_configuration={"etcd": {"external": {"endpoints": ["https://e:2379"]}}}))

# (snapshot, expected (action, step, target), blocked_by rules)
CLEAN_UP = [
    (
        "a member that belongs to no machine is removed",
        snapshot(cluster(3), failure_domains=FDS, members=members(3) + [member("cp-9")]),
        ("remove_etcd_member", None, "cp-9"),
        [],
    ),
    (
        "a stray is left alone while a machine has no node",
        snapshot(cluster(3, cp_3={"has_node": False}), failure_domains=FDS, members=members(2) + [member("cp-9")]),
        ("none", None, None),
        ["machines_without_node", "etcd_cluster"],
    ),
    (
        # Cluster API v1.14 (reconcileEtcdMembers, #13685): a join that died before its etcd started left it; as a
        # learner it would refuse every later join (etcd admits one learner at a time)
        "a member added and never started is removed once no machine is provisioning",
        snapshot(cluster(3), failure_domains=FDS, members=members(3) + [dict(member("joining", learner=True), name="")]),
        ("remove_etcd_member", None, None),
        [],
    ),
    (
        "a member added and never started is left alone while a machine has no node",
        snapshot(cluster(3, cp_3={"has_node": False}), failure_domains=FDS, members=members(2) + [dict(member("joining", learner=True), name="")]),
        ("none", None, None),
        ["machines_without_node", "etcd_cluster"],
    ),
    (
        "with external etcd members are not the control plane's to remove",
        snapshot(cluster(3), failure_domains=FDS, external=True, members=[member("ext-1"), member("ext-2")]),
        ("none", None, None),
        [],
    ),
    (
        "a stray is not removed while etcd has no quorum",
        snapshot(cluster(2), failure_domains=FDS, members=members(2) + [member("cp-8"), member("cp-9")]),
        ("wait", None, None),
        ["etcd_quorum"],
    ),
    (
        "a stray is not removed through a single node",
        snapshot(cluster(1), failure_domains=FDS, members=members(1) + [member("cp-9")]),
        ("wait", None, None),
        ["too_few_machines"],
    ),
    (
        "a deletion whose member is already gone is finished",
        snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS, members=members(2)),
        ("finish_delete", None, "cp-3"),
        [],
    ),
    (
        "a deletion that would lose quorum waits",
        snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS, members=members(3, cp_2={"responsive": False})),
        ("wait", None, "cp-3"),
        ["etcd_quorum"],
    ),
]


@pytest.mark.parametrize("snap,expected,blocked", [c[1:] for c in CLEAN_UP], ids=[c[0] for c in CLEAN_UP])
def test_clean_up(snap, expected, blocked):
    result = decide(EXTERNAL_ETCD if snap["etcd"]["external"] else spec(), snap)
    assert short(result) == expected, result["reason"]
    assert [b["rule"] for b in result["blocked_by"]] == blocked


def test_an_endpoint_listed_without_an_id_is_no_member_never_started():
    # an endpoint tried that did not answer is listed nameless, with no id: nothing etcd could remove
    silent = dict(member("cp-9", responsive=False), name="", id="")
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS, members=members(3) + [silent]))
    assert result["action"] != "remove_etcd_member" and "never started" not in result["reason"], result["reason"]


def test_a_member_never_started_is_removed_by_its_peer_urls_and_said_to_be_so():
    unstarted = dict(member("joining", learner=True), name="")
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS, members=members(3) + [member("cp-9"), unstarted]))
    assert result["member"] == {"name": "", "id": unstarted["id"], "peer_urls": ["https://joining:2380"]}
    assert result["reason"] == "etcd member %s (added, never started, peer URLs https://joining:2380) belongs to no machine: remove it" % unstarted["id"]


def test_finishing_a_deletion_hands_leadership_to_the_newest_healthy_machine():
    snap = snapshot(cluster(4, cp_1={"deleting": True}), failure_domains=FDS)
    result = decide(spec(), snap)
    assert (result["action"], result["machine"], result["leader_candidate"]) == ("finish_delete", "cp-1", "cp-4")


# --- the shape and the purity of a plan --------------------------------------------------------------------


SHAPES = [
    (spec(), snapshot([], failure_domains=FDS, initialized=False), HEALTHY),
    (external(), snapshot(cluster(3), failure_domains=FDS), flag("cp-2")),
    (external(), snapshot(cluster(3, cp_2={"external_attempts": 1}), failure_domains=FDS), HEALTHY),
    (spec(), snapshot(cluster(5), failure_domains=FDS), HEALTHY),
    (spec(version=NEXT), snapshot(cluster(3), failure_domains=FDS), flag("cp-1")),
    (spec(), snapshot(cluster(3), failure_domains=FDS, members=members(3) + [member("cp-9")]), HEALTHY),
    (spec(), snapshot(cluster(3, cp_2={"has_node": False}), failure_domains=FDS), HEALTHY),
]


@pytest.mark.parametrize(
    "the_spec,snap,health",
    SHAPES,
    ids=["a first machine", "an external remediation", "a cleared request", "a scale down", "a remediation", "a member clean-up",
         "a wait"],
)
def test_every_plan_has_every_key_and_leaves_its_inputs_alone(the_spec, snap, health):
    before = copy.deepcopy((the_spec, snap, health))
    first = decide(the_spec, snap, health)
    assert copy.deepcopy((the_spec, snap, health)) == before
    assert decide(the_spec, snap, health) == first
    assert set(first) == set(decide(spec(), snapshot(cluster(3), failure_domains=FDS)))
    assert first["action"] in ACTIONS and first["reason"]


def test_without_seams_the_planner_hashes_the_spec_and_runs_the_health_check():
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes

    the_spec = spec()
    hashes = spec_hashes(the_spec)
    machines = [machine(n, fd=fd["name"], spec_hash=hashes[part], bootstrap=part)
                for n, fd, part in zip(("cp-1", "cp-2", "cp-3"), FDS, ("init", "join", "join"))]
    result = plan(the_spec, snapshot(machines, failure_domains=FDS))
    assert (result["action"], result["spec_hashes"], result["outdated"]) == ("none", hashes, {})
    assert result["health_check"]["remediation_allowed"] is True


# --- growing from one machine: a join is a learner, promoted once it has caught up ------------------------


def test_a_one_machine_control_plane_grows_by_a_learner_that_will_vote():
    result = decide(spec(), snapshot(cluster(1), failure_domains=FDS))
    assert short(result) == ("scale_up", "scale_up", "fd-b"), result["reason"]
    assert result["quorum"] == {
        "ok": True,
        "voters_before": 1,
        "healthy_before": 1,
        "voters_after": 2,
        "healthy_after": 2,
        "quorum_after": 2,
        "failures_tolerated_after": 0,
        "reasons": [],
    }


def test_a_control_plane_grows_step_by_step_from_nothing_to_one_two_three_and_five_machines():
    world = World([])
    sizes = []
    for replicas in (1, 2, 3, 5):
        taken = world.converge(spec(replicas=replicas))
        assert taken and all(step[0] == "scale_up" for step in taken), taken
        sizes.append(len(world.machines))
    assert sizes == [1, 2, 3, 5]
    assert sorted(m["failure_domain"] for m in world.machines) == ["fd-a", "fd-a", "fd-b", "fd-b", "fd-c"]


def test_the_first_step_of_growth_is_kubeadm_init_and_only_the_first():
    world = World([])
    first = plan(spec(replicas=2), world.snapshot(), desired_hashes=HASHES, health=HEALTHY)
    world.apply(first, spec()["version"])
    second = plan(spec(replicas=2), world.snapshot(), desired_hashes=HASHES, health=HEALTHY)
    assert (first["init"], second["init"]) == (True, False)


def test_a_one_replica_rolling_update_with_max_surge_1_adds_the_new_machine_then_removes_the_old():
    world = World(cluster(1))
    taken = world.converge(spec(version=NEXT, replicas=1, rollout=surge(1)))
    assert taken == [("update_kubeadm_config", None, None), ("rollout", "scale_up", "fd-b"), ("rollout", "scale_down", "cp-1")]
    assert [(m["name"], m["version"]) for m in world.machines] == [("new-1", NEXT)]


def test_a_one_replica_rolling_update_hands_leadership_to_the_new_machine():
    snap = snapshot([machine("cp-1", fd="fd-a", created=100), machine("new-1", fd="fd-b", created=10, version=NEXT)],
                    failure_domains=FDS)
    result = decide(spec(version=NEXT, replicas=1, rollout=surge(1)), snap)
    assert (short(result), result["leader_candidate"]) == (("rollout", "scale_down", "cp-1"), "new-1")
    assert (result["quorum"]["voters_after"], result["quorum"]["healthy_after"]) == (1, 1)


def test_growing_waits_while_an_earlier_learner_is_not_promoted():
    snap = snapshot(cluster(2), failure_domains=FDS, members=members(1) + [member("cp-2", learner=True)])
    result = decide(spec(), snap)
    assert result["action"] == "wait" and "etcd_members_not_healthy" in [b["rule"] for b in result["blocked_by"]]


# --- no machine observed is not a cluster to create ----------------------------------------------------------


NO_MACHINE = [
    ("a running cluster with no observed machine is not initialized again",
     snapshot([], failure_domains=FDS, members=members(3), initialized=True), "wait"),
    ("an initialized cluster whose etcd was not observed is not initialized again",
     snapshot([], failure_domains=FDS, members=[], initialized=True), "wait"),
    ("etcd members left from an earlier cluster stop kubeadm init",
     snapshot([], failure_domains=FDS, members=[member("cp-1")], initialized=False), "wait"),
    ("nothing initialized and no etcd member means kubeadm init",
     snapshot([], failure_domains=FDS, members=[], initialized=False, endpoint_ready=False), "scale_up"),
]


@pytest.mark.parametrize("snap,action", [c[1:] for c in NO_MACHINE], ids=[c[0] for c in NO_MACHINE])
def test_no_observed_machine_is_init_only_for_a_cluster_that_does_not_exist(snap, action):
    result = decide(spec(), snap)
    assert result["action"] == action, result["reason"]
    assert result["init"] is (action == "scale_up")
    if action == "wait":
        assert [b["rule"] for b in result["blocked_by"]] == ["no_machine_observed"]
        assert "found no control plane machine" in result["reason"]


def test_no_observed_machine_says_how_many_etcd_members_show_the_cluster_exists():
    one = decide(spec(), snapshot([], failure_domains=FDS, members=[member("cp-1")], initialized=False))
    three = decide(spec(), snapshot([], failure_domains=FDS, members=members(3), initialized=False))
    assert "(etcd has 1 member)" in one["reason"] and "(etcd has 3 members)" in three["reason"]


def test_with_external_etcd_its_members_do_not_stop_the_first_init():
    snap = snapshot([], failure_domains=FDS, external=True, members=[member("ext-1")], initialized=False)
    result = decide(EXTERNAL_ETCD, snap)
    assert (result["action"], result["init"]) == ("scale_up", True)


# --- etcd that does not answer at all -------------------------------------------------------------------------


def nameless(url, error="connection refused"):
    """The member etcd_info reports for an endpoint when no endpoint answers (docs/snapshot.md)."""
    return {"name": "", "id": "", "peer_urls": [], "client_urls": [url], "responsive": False, "error": error,
            "leader": False, "learner": False, "alarms": [], "member_ids_seen": []}


@pytest.mark.parametrize(
    "the_spec,health",
    [(spec(), HEALTHY), (spec(replicas=5), HEALTHY), (spec(version=NEXT), flag("cp-2"))],
    ids=["with nothing to do", "with a scale up due", "with a rollout and a remediation due"],
)
def test_an_etcd_where_no_endpoint_answers_is_a_wait_naming_etcd(the_spec, health):
    gone = [nameless("https://10.0.0.%d:2379" % i) for i in (1, 2, 3)]
    result = decide(the_spec, snapshot(cluster(3), failure_domains=FDS, members=gone), health)
    assert result["action"] == "wait"
    assert [b["rule"] for b in result["blocked_by"]] == ["etcd_unreachable"]
    assert "https://10.0.0.2:2379: connection refused" in result["blocked_by"][0]["message"]


# --- leadership: one rule, never to a machine that cannot lead ------------------------------------------------


LEADERSHIP = [
    ("the newest other machine leads", {}, {}, HEALTHY, "cp-5"),
    ("not a deleting machine", {"cp_5": {"deleting": True}}, {}, HEALTHY, "cp-4"),
    ("not a machine flagged for remediation", {}, {}, flag("cp-5"), "cp-4"),
    ("not a machine whose member does not answer", {}, {"cp_5": {"responsive": False}}, HEALTHY, "cp-4"),
    ("not a machine whose member is a learner", {}, {"cp_5": {"learner": True}}, HEALTHY, "cp-4"),
]


@pytest.mark.parametrize("machines,member_overrides,health,candidate", [c[1:] for c in LEADERSHIP], ids=[c[0] for c in LEADERSHIP])
def test_finishing_a_deletion_never_hands_leadership_to_a_machine_that_cannot_lead(machines, member_overrides, health, candidate):
    overrides = dict(machines, cp_1={"deleting": True})
    snap = snapshot(cluster(5, **overrides), failure_domains=FDS, members=members(5, **member_overrides))
    result = decide(spec(), snap, health)
    assert (result["action"], result["machine"], result["leader_candidate"]) == ("finish_delete", "cp-1", candidate)


def test_the_leaving_machine_never_takes_the_leadership_it_gives_up():
    snap = snapshot(cluster(4, cp_4={"deleting": True}), failure_domains=FDS)
    result = decide(spec(), snap)
    assert (result["machine"], result["leader_candidate"]) == ("cp-4", "cp-3")


# --- what a removal projects, and a blocked rollout ----------------------------------------------------------


def test_a_removal_projects_the_member_of_the_machine_it_removes():
    snap = snapshot(cluster(4, cp_4={"delete_requested": True}), failure_domains=FDS, members=members(4, cp_4={"responsive": False}))
    result = decide(spec(), snap)
    assert short(result) == ("scale_down", "scale_down", "cp-4"), result["reason"]
    assert (result["quorum"]["voters_after"], result["quorum"]["healthy_after"]) == (3, 3)


def test_a_blocked_rollout_is_reported_as_a_wait_not_as_a_rollout():
    snap = snapshot(cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS,
                    kubeadm_config={"kubernetes_version": NEXT})
    result = decide(spec(version=NEXT), snap)
    assert (result["action"], result["step"]) == ("wait", "scale_up")
    assert [b["rule"] for b in result["blocked_by"]] == ["components_not_healthy"]


# --- when to look again --------------------------------------------------------------------------------------


def test_a_wait_blocked_only_by_the_cluster_has_no_time_to_look_again():
    snap = snapshot(cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS)
    assert decide(spec(replicas=5), snap)["retry_after_seconds"] is None


def test_a_wait_looks_again_at_the_soonest_timer_that_can_change_it():
    from ansible_collections.kubeadm.control_plane.tests.unit.builders import seconds_ago

    pending = machine("cp-3", fd="fd-c", created=997)
    pending["node"]["conditions"][0].update(status="False", last_transition=seconds_ago(200))  # unhealthy in 101 s
    held = {"retries": 1, "last_remediation": seconds_ago(100), "remediation_requested": True}  # 500 s of retry_period left
    the_spec = spec(remediation={"max_retry": None, "retry_period": 600.0, "min_healthy_period": 3600.0})
    snap = snapshot([machine("cp-1", fd="fd-a", created=999, **held), machine("cp-2", fd="fd-b", created=998), pending],
                    failure_domains=FDS)
    result = real_plan(the_spec, snap)
    assert (result["action"], result["remediation"]["rule"]) == ("wait", "retry_period"), result["reason"]
    assert result["retry_after_seconds"] == 101.0


def test_max_retries_looks_again_when_min_healthy_period_starts_a_new_sequence():
    from ansible_collections.kubeadm.control_plane.tests.unit.builders import seconds_ago

    held = {"retries": 1, "last_remediation": seconds_ago(600)}
    the_spec = spec(remediation={"max_retry": 1, "retry_period": 0.0, "min_healthy_period": 3600.0})
    snap = snapshot(cluster(3, cp_1=held), failure_domains=FDS)
    result = decide(the_spec, snap, flag("cp-1"))
    assert (result["action"], result["remediation"]["rule"], result["retry_after_seconds"]) == ("wait", "max_retries", 3000.0)


def test_a_settled_control_plane_looks_again_when_rollout_after_passes():
    from ansible_collections.kubeadm.control_plane.tests.unit.builders import at

    rollout = dict(surge(1), after=at(-60))
    result = decide(spec(rollout=rollout), snapshot(cluster(3), failure_domains=FDS))
    assert (result["action"], result["retry_after_seconds"]) == ("none", 3601.0)


def test_an_operation_carries_no_time_to_look_again():
    assert decide(spec(replicas=5), snapshot(cluster(3), failure_domains=FDS))["retry_after_seconds"] is None


# --- each machine against the part of the spec that built it -----------------------------------------------


def built_from(the_spec):
    """cp-1 made by kubeadm init, cp-2 and cp-3 by kubeadm join, each recording the hash of its part."""
    from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes

    hashes = spec_hashes(the_spec)
    parts = ("init", "join", "join")
    return [machine("cp-%d" % i, fd=FDS[i - 1]["name"], created=1000 - i, bootstrap=part, spec_hash=hashes[part])
            for i, part in zip((1, 2, 3), parts)]


@pytest.mark.parametrize(
    "part,outdated",
    [("init_configuration", ["cp-1"]), ("join_configuration", ["cp-2", "cp-3"]), ("cluster_configuration", ["cp-1", "cp-2", "cp-3"])],
    ids=[
        "an init configuration change rolls out only the machine that ran kubeadm init",
        "a join configuration change rolls out only the machines that joined",
        "a cluster configuration change rolls out every machine",
    ],
)
def test_a_kubeadm_configuration_change_rolls_out_the_machines_its_part_built(part, outdated):
    before = spec()
    after = spec(kubeadm=dict(before["kubeadm"], **{part: {"nodeRegistration": {"taints": []}}}))
    result = plan(after, snapshot(built_from(before), failure_domains=FDS), health=HEALTHY)
    assert sorted(result["outdated"]) == outdated
    assert result["action"] == "rollout"


# --- the cluster's kubeadm configuration says the new version before a machine of it joins ----------------


def test_a_rolling_version_upgrade_updates_the_kubeadm_config_before_the_first_new_machine_joins():
    world = World(cluster(3))
    taken = world.converge(spec(version=NEXT, rollout=surge(1)))
    assert taken[:2] == [("update_kubeadm_config", None, None), ("rollout", "scale_up", "fd-a")]
    assert taken.count(("update_kubeadm_config", None, None)) == 1 and world.config_version == NEXT


def test_with_max_surge_0_the_kubeadm_config_is_updated_after_the_first_removal_and_before_the_first_join():
    world = World(cluster(3))
    taken = world.converge(spec(version=NEXT, rollout=surge(0)))
    assert taken[:3] == [("rollout", "scale_down", "cp-1"), ("update_kubeadm_config", None, None), ("rollout", "scale_up", "fd-a")]


def test_the_kubeadm_config_update_waits_for_preflight():
    snap = snapshot(cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS)
    result = decide(spec(version=NEXT), snap)
    assert result["action"] == "wait" and "kubeadm configuration says %s" % VERSION in result["reason"]
    assert [b["rule"] for b in result["blocked_by"]] == ["components_not_healthy"]


def test_a_kubeadm_config_not_observed_is_a_wait_before_a_version_change():
    snap = snapshot(cluster(3), failure_domains=FDS, kubeadm_config=None)
    result = decide(spec(version=NEXT), snap)
    assert (result["action"], [b["rule"] for b in result["blocked_by"]]) == ("wait", ["kubeadm_config_not_observed"])


def test_a_join_of_the_same_version_needs_no_kubeadm_config_update():
    result = decide(spec(replicas=5), snapshot(cluster(3), failure_domains=FDS))
    assert short(result) == ("scale_up", "scale_up", "fd-a")


# --- ... and agrees with the spec in every field the spec may change (a configuration rollout) -----------------

AUDIT_30 = [{"name": "audit-log-maxage", "value": "30"}]
AUDIT_90 = [{"name": "audit-log-maxage", "value": "90"}]


def configured(extra_args, **fields):
    """A normalized spec whose API server takes ``extra_args``."""
    the_spec = spec(**fields)
    the_spec["kubeadm"] = dict(the_spec["kubeadm"], cluster_configuration={"apiServer": {"extraArgs": extra_args}})
    return the_spec


def stored_from(the_spec):
    """The ClusterConfiguration kubeadm init stores for ``the_spec``: the spec's with kubeadm's defaults written in."""
    document = kubeadm_config.cluster_configuration(the_spec)
    document.update(imageRepository="registry.k8s.io", certificatesDir="/etc/kubernetes/pki", dns={},
                    networking={"dnsDomain": "cluster.local", "serviceSubnet": "10.96.0.0/12"},
                    etcd={"local": {"dataDir": "/var/lib/etcd"}})
    return document


class ConfiguredWorld(World):
    """A World whose kubeadm-config also holds a ClusterConfiguration, which update_kubeadm_config brings to the spec."""

    def __init__(self, machines, the_spec, stored):
        super().__init__(machines)
        self.spec, self.stored = the_spec, stored

    def snapshot(self):
        snap = super().snapshot()
        snap["kubeadm_config"]["cluster_configuration"] = copy.deepcopy(self.stored)
        return snap

    def apply(self, result, version):
        super().apply(result, version)
        if result["action"] == "update_kubeadm_config":
            self.stored = kubeadm_config.updated_cluster_configuration(self.spec, self.stored)


def test_a_changed_extra_arg_updates_the_kubeadm_config_before_the_rollouts_first_scale_up():
    before, after = configured(AUDIT_30), configured(AUDIT_90)
    world = ConfiguredWorld(cluster(3, cp_1={"spec_hash": "old"}, cp_2={"spec_hash": "old"}, cp_3={"spec_hash": "old"}),
                            after, stored_from(before))
    first = plan(after, world.snapshot(), desired_hashes=HASHES, health=HEALTHY)
    assert short(first) == ("update_kubeadm_config", None, None)
    assert "differs from the spec in apiServer.extraArgs" in first["reason"] and "says" not in first["reason"]
    taken = world.converge(after)
    assert taken[:2] == [("update_kubeadm_config", None, None), ("rollout", "scale_up", "fd-a")]
    assert taken.count(("update_kubeadm_config", None, None)) == 1
    assert world.stored["apiServer"] == {"extraArgs": AUDIT_90}


def test_a_kubeadm_config_equal_to_the_spec_needs_no_update():
    the_spec = configured(AUDIT_30, replicas=5)
    snap = snapshot(cluster(3), failure_domains=FDS,
                    kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": stored_from(the_spec)})
    assert short(decide(the_spec, snap)) == ("scale_up", "scale_up", "fd-a")
    outdated = snapshot(cluster(3, cp_1={"spec_hash": "old"}), failure_domains=FDS,
                        kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": stored_from(the_spec)})
    assert short(decide(configured(AUDIT_30), outdated)) == ("rollout", "scale_up", "fd-a")


def test_a_new_version_and_a_changed_field_are_one_update_whose_reason_names_both():
    stored = stored_from(configured(AUDIT_30))
    snap = snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": stored})
    result = decide(configured(AUDIT_90, version=NEXT), snap)
    assert short(result) == ("update_kubeadm_config", None, None)
    assert "kubeadm configuration says %s and differs from the spec in apiServer.extraArgs" % VERSION in result["reason"]


def test_without_the_stored_cluster_configuration_only_the_version_is_compared():
    snap = snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": None})
    assert short(decide(configured(AUDIT_90, replicas=5), snap)) == ("scale_up", "scale_up", "fd-a")


# --- in place: one machine per step, upgrade apply on the oldest, the last one upgrades the addons -------------


def test_an_in_place_upgrade_names_one_machine_per_step_apply_first_and_addons_last():
    world = World(cluster(3))
    steps = []
    the_spec = spec(version=NEXT, upgrade=upgrade("in_place"))
    for attempt in range(6):
        result = plan(the_spec, world.snapshot(), desired_hashes=HASHES, health=HEALTHY)
        if result["action"] == "none":
            break
        assert result["blocked_by"] == [] and result["preflight"]["ok"], result["reason"]
        steps.append((result["action"], result["machine"], result["upgrade"]))
        world.apply(result, the_spec["version"])
    assert steps == [
        ("update_kubeadm_config", None, None),
        ("upgrade_in_place", "cp-1", {"command": "apply", "addons": False, "etcd_image_tag": "3.7.0-0"}),
        ("upgrade_in_place", "cp-2", {"command": "node", "addons": False, "etcd_image_tag": "3.7.0-0"}),
        ("upgrade_in_place", "cp-3", {"command": "node", "addons": True, "etcd_image_tag": "3.7.0-0"}),
    ]


def test_a_one_machine_in_place_upgrade_is_upgrade_apply_which_upgrades_the_addons():
    snap = snapshot(cluster(1), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT})
    result = decide(spec(version=NEXT, replicas=1, upgrade=upgrade("in_place")), snap)
    assert (result["machine"], result["upgrade"]) == ("cp-1", {"command": "apply", "addons": True, "etcd_image_tag": "3.7.0-0"})


def test_the_oldest_machine_runs_upgrade_apply_even_when_it_is_not_first_in_the_list():
    machines = [machine("cp-b", fd="fd-a", created=10), machine("cp-a", fd="fd-b", created=900)]
    snap = snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT})
    result = decide(spec(version=NEXT, replicas=2, upgrade=upgrade("in_place")), snap)
    assert (result["machine"], result["upgrade"]["command"]) == ("cp-a", "apply")


@pytest.mark.parametrize("leads,candidate", [(True, "cp-3"), (False, None)],
                         ids=["a stray member that leads hands its leadership over", "a stray member that does not lead needs no hand-over"])
def test_a_stray_member_names_a_leader_candidate_only_when_it_leads(leads, candidate):
    stray = member("cp-9", leader=leads)
    followers = [member("cp-%d" % i) for i in (1, 2, 3)]
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS, members=followers + [stray]))
    assert (result["action"], result["leader_candidate"]) == ("remove_etcd_member", candidate)


def test_a_remediation_with_external_etcd_carries_no_quorum_projection():
    result = decide(EXTERNAL_ETCD, snapshot(cluster(3), failure_domains=FDS, external=True, members=[member("ext-1")]), flag("cp-2"))
    assert (result["action"], result["machine"], result["quorum"]) == ("remediate", "cp-2", None)


def test_the_plan_reports_the_health_checks_verdict_it_acted_on():
    result = decide(spec(version=NEXT), snapshot(cluster(3), failure_domains=FDS), flag("cp-2"))
    assert result["health_check"] == {"unhealthy": ["cp-2"], "remediation_allowed": True,
                                      "reason": "flagged by the test"}


def test_with_external_etcd_a_control_plane_grows_without_an_etcd_projection():
    the_spec = dict(EXTERNAL_ETCD, replicas=3)
    result = decide(the_spec, snapshot(cluster(2), failure_domains=FDS, external=True, members=[member("ext-1")]))
    assert short(result) == ("scale_up", "scale_up", "fd-c")


# --- in place: the request (IP2-IP4), and the workers after the control plane (IP6, IP7) ---------------------

IN_PLACE = spec(version=NEXT, upgrade=upgrade("in_place"))
AT_NEXT = {"kubernetes_version": NEXT}


def in_place_snapshot(machines, **extra):
    return snapshot(machines, failure_domains=FDS, kubeadm_config=AT_NEXT, **extra)


def rules(result):
    return [b["rule"] for b in result["blocked_by"]]


def test_in_place_or_stop_refuses_a_spec_change_and_touches_no_machine():
    snap = in_place_snapshot(cluster(3, cp_2={"spec_hash": "older-hash"}))
    result = decide(IN_PLACE, snap)
    assert (result["action"], rules(result)) == ("wait", ["in_place_other_changes"])
    assert result["blocked_by"][0]["machines"] == ["cp-2"] and result["retry_after_seconds"] is None
    assert result["reason"] == ("the in-place upgrade to %s is refused (IP2 in_place_other_changes); nothing is upgraded or replaced "
                                "until the spec or the cluster changes" % NEXT)


@pytest.mark.parametrize("surge", [0, 1], ids=["max_surge 0", "max_surge 1"])
def test_in_place_or_stop_never_falls_back_to_replacing_whatever_else_outdates_a_machine(surge):
    rollout = {"strategy": "RollingUpdate", "max_surge": surge, "after": at(5), "before": {"certificates_expiry_days": None}}
    the_spec = spec(version=NEXT, upgrade=upgrade("in_place"), rollout=rollout)
    result = decide(the_spec, in_place_snapshot(cluster(3)))
    assert (result["action"], rules(result)) == ("wait", ["in_place_other_changes"])
    assert result["blocked_by"][0]["machines"] == ["cp-1", "cp-2", "cp-3"]


def test_with_other_changes_rolling_the_other_change_is_rolled_out_then_the_rest_upgraded_in_place():
    world = World(cluster(3, cp_2={"spec_hash": "older-hash"}))
    world.config_version = NEXT
    taken = world.converge(spec(version=NEXT, upgrade=upgrade("in_place", other_changes="rolling")))
    assert taken == [
        ("rollout", "scale_up", "fd-a"),
        ("rollout", "scale_down", "cp-2"),
        ("upgrade_in_place", None, "cp-1"),
        ("upgrade_in_place", None, "cp-3"),
    ]


def test_the_rolling_strategy_is_not_refused_for_a_spec_change():
    result = decide(spec(version=NEXT), in_place_snapshot(cluster(3, cp_2={"spec_hash": "older-hash"})))
    assert result["action"] == "rollout"


@pytest.mark.parametrize(
    "versions,target,rule",
    [
        (("v1.35.8", "v1.35.8", "v1.35.8"), NEXT, "in_place_minor_skip"),
        (("v1.37.1", "v1.36.4", "v1.35.8"), NEXT, "in_place_minor_skip"),
        (("v1.36.4", "v1.36.4", "v1.36.5"), "v1.36.4", "in_place_downgrade"),
        (("v1.37.1", "v1.37.1", "v1.37.1"), "v1.36.4", "in_place_downgrade"),
    ],
    ids=["two minors at once", "from the lowest machine, half way through", "a patch down on one machine", "a minor down"],
)
def test_an_in_place_request_that_skips_a_minor_or_goes_down_is_refused(versions, target, rule):
    machines = [machine("cp-%d" % (i + 1), fd=FDS[i]["name"], created=1000 - i, version=v) for i, v in enumerate(versions)]
    snap = snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": target})
    result = decide(spec(version=target, upgrade=upgrade("in_place")), snap)
    assert (result["action"], rules(result)) == ("wait", [rule])


def test_an_etcd_below_the_release_its_next_minor_needs_refuses_the_upgrade():
    etcd = [dict(m, version="3.6.8") for m in members(3)]
    result = decide(IN_PLACE, in_place_snapshot(cluster(3), members=etcd))
    assert (result["action"], rules(result)) == ("wait", ["in_place_etcd_path"])
    assert decide(IN_PLACE, in_place_snapshot(cluster(3), members=[dict(m, version="3.6.11") for m in members(3)]))["action"] == "upgrade_in_place"


def begun(step, failed_step=None):
    return {"upgrade": {"version": NEXT, "step": step, "failed_step": failed_step, "error": "boom" if failed_step else None}}


def test_a_machine_whose_upgrade_has_begun_is_finished_first_and_its_preflight_leaves_it_out():
    # cp-1 done; cp-3's upgrade was begun and killed after its kubeadm upgrade node: its scheduler restarts
    machines = cluster(3, cp_1=dict(begun("ready"), version=NEXT), cp_3=dict(begun("drain"), components={"scheduler": "provisioning"}))
    result = decide(IN_PLACE, in_place_snapshot(machines))
    assert (result["action"], result["machine"], result["upgrade"]["command"]) == ("upgrade_in_place", "cp-3", "node"), result
    assert result["reason"].startswith("finish the upgrade of cp-3 in place") and result["preflight"]["excluded"] == ["cp-3"]
    # the oldest machine's upgrade apply that failed at a step is taken again with apply
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, cp_1=begun("software", failed_step="kubeadm-upgrade"))))
    assert (result["action"], result["machine"], result["upgrade"]["command"]) == ("upgrade_in_place", "cp-1", "apply")
    # the others must still be healthy without it
    machines = cluster(3, cp_2=begun("drain"), cp_3={"components": {"etcd": "unhealthy"}})
    result = decide(IN_PLACE, in_place_snapshot(machines))
    assert (result["action"], result["machine"], rules(result)) == ("wait", "cp-2", ["components_not_healthy"])
    # a record of another version is no upgrade begun: the oldest goes first, behind the full preflight
    machines = cluster(3, cp_2={"upgrade": {"version": "v1.30.0", "step": "drain", "failed_step": None, "error": None}})
    result = decide(IN_PLACE, in_place_snapshot(machines))
    assert (result["machine"], result["preflight"]["excluded"]) == ("cp-1", [])


@pytest.mark.parametrize("step", ["kubelet", "uncordon"])
def test_a_machine_stopped_after_its_kubelet_step_is_finished_before_the_next_and_before_any_worker(step):
    # cp-2 runs the new kubelet already (its version is the spec's), cordoned and not yet seen Ready again: it is
    # not up to date until its upgrade's last step is done, and goes before cp-3 (IP5)
    stopped = dict(begun(step), version=NEXT, node_ready="False")
    machines = cluster(3, cp_1=dict(begun("ready"), version=NEXT), cp_2=stopped)
    result = decide(IN_PLACE, in_place_snapshot(machines, workers=[worker("w-1")]))
    assert (result["action"], result["machine"], result["upgrade"]["command"]) == ("upgrade_in_place", "cp-2", "node"), result
    assert result["reason"].startswith("finish the upgrade of cp-2 in place") and result["preflight"]["excluded"] == ["cp-2"]
    # the last control plane machine stopped the same way is finished before the workers start
    machines = cluster(3, cp_1=dict(begun("ready"), version=NEXT), cp_2=dict(begun("ready"), version=NEXT), cp_3=stopped)
    result = decide(IN_PLACE, in_place_snapshot(machines, workers=[worker("w-1")]))
    assert (result["action"], result["machine"], result["workers"]) == ("upgrade_in_place", "cp-3", []), result
    assert result["upgrade"]["addons"] is True
    # never "as declared" while one is half done
    assert decide(IN_PLACE, in_place_snapshot(machines))["action"] == "upgrade_in_place"


def test_a_worker_stopped_after_its_kubelet_step_is_finished_first_and_does_not_block_its_group():
    upgraded = {"cp_%d" % i: dict(begun("ready"), version=NEXT) for i in (1, 2, 3)}
    stopped = worker("w-1", version=NEXT, ready=True, unschedulable=True)
    stopped["upgrade"] = begun("kubelet")["upgrade"]
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, **upgraded), workers=[stopped, worker("w-2", created=10)]))
    assert (result["action"], result["workers"]) == ("upgrade_workers", ["w-1"]), result
    # the last worker of its group too: not "as declared" while it stays cordoned
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, **upgraded), workers=[stopped]))
    assert (result["action"], result["workers"]) == ("upgrade_workers", ["w-1"]), result


def test_a_machine_whose_kubelet_step_failed_is_upgraded_again_not_remediated():
    # cp-2's new kubelet never came Ready, past the health check's timeout: the pass takes its upgrade again
    # (RM12, IP5), and a remediation of it waits and says why
    failed = dict(begun("drain", failed_step="kubelet"), node_ready="False")
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, cp_1=dict(begun("ready"), version=NEXT), cp_2=failed)), health=flag("cp-2"))
    assert (result["action"], result["machine"]) == ("upgrade_in_place", "cp-2"), result
    assert (result["remediation"]["status"], result["remediation"]["rule"]) == ("skip", "upgrade_in_progress"), result["remediation"]


def test_workers_wait_for_every_control_plane_machine():
    workers = [worker("w-1"), worker("w-2")]
    snap = in_place_snapshot(cluster(3, cp_1={"version": NEXT}), workers=workers)
    result = decide(IN_PLACE, snap)
    assert (result["action"], result["machine"], result["workers"]) == ("upgrade_in_place", "cp-2", [])


def test_workers_are_refused_with_the_request_before_the_control_plane_moves():
    snap = in_place_snapshot(cluster(3), workers=[worker("w-1", version="v1.35.8")])
    result = decide(IN_PLACE, snap)
    assert (result["action"], rules(result)) == ("wait", ["in_place_minor_skip"])
    assert result["blocked_by"][0]["machines"] == ["w-1"]


def test_an_in_place_upgrade_takes_the_control_plane_then_each_worker_group_in_batches():
    workers = [worker("a-1", group="md-a", created=30), worker("a-2", group="md-a", created=20), worker("a-3", group="md-a", created=10),
               worker("b-1", group="md-b", created=40), worker("b-2", group="md-b", created=50), worker("x-1", created=60)]
    world = World(cluster(3), workers=workers)
    taken = []
    the_spec = spec(version=NEXT, upgrade=upgrade("in_place", groups={"md-a": 2}))
    for attempt in range(12):
        result = plan(the_spec, world.snapshot(), desired_hashes=HASHES, health=HEALTHY)
        if result["action"] == "none":
            break
        assert result["blocked_by"] == [], result["reason"]
        taken.append((result["action"], result["machine"] or result["worker_group"], result["workers"]))
        world.apply(result, NEXT)
    assert taken == [
        ("update_kubeadm_config", None, []),
        ("upgrade_in_place", "cp-1", []),
        ("upgrade_in_place", "cp-2", []),
        ("upgrade_in_place", "cp-3", []),
        ("upgrade_workers", "md-a", ["a-1", "a-2"]),
        ("upgrade_workers", "md-a", ["a-3"]),
        ("upgrade_workers", "md-b", ["b-2"]),
        ("upgrade_workers", "md-b", ["b-1"]),
        ("upgrade_workers", None, ["x-1"]),
    ]
    assert result["action"] == "none" and all(w["version"] == NEXT for w in world.workers)


def test_a_worker_step_reason_says_which_workers_of_which_group_and_how_many_at_a_time():
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, **{"cp_%d" % i: {"version": NEXT} for i in (1, 2, 3)}),
                                                workers=[worker("w-1", group="md-0"), worker("w-2", group="md-0", created=10)]))
    assert (result["action"], result["workers"], result["worker_group"]) == ("upgrade_workers", ["w-1"], "md-0")
    assert result["reason"] == ("upgrade w-1 of worker group md-0 in place to %s with kubeadm upgrade node (1 of its 2 outdated "
                                "workers, at most 1 at a time)" % NEXT)
    assert result["preflight"]["ok"] and result["machine"] is None


def test_a_worker_step_waits_for_preflight_and_for_the_workers_not_back():
    upgraded = {"cp_%d" % i: {"version": NEXT} for i in (1, 2, 3)}
    unhealthy = dict(upgraded, cp_2={"version": NEXT, "components": {"scheduler": "unhealthy"}})
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, **unhealthy), workers=[worker("w-1")]))
    assert (result["action"], rules(result), result["workers"]) == ("wait", ["components_not_healthy"], ["w-1"])
    result = decide(IN_PLACE, in_place_snapshot(cluster(3, **upgraded), workers=[worker("w-1"), worker("w-2", version=NEXT, ready=False)]))
    assert (result["action"], rules(result), result["workers"]) == ("wait", ["workers_unavailable"], [])


def test_a_worker_step_needs_the_kubeadm_config_first():
    upgraded = {"cp_%d" % i: {"version": NEXT} for i in (1, 2, 3)}
    snap = snapshot(cluster(3, **upgraded), failure_domains=FDS, kubeadm_config={"kubernetes_version": VERSION}, workers=[worker("w-1")])
    assert decide(IN_PLACE, snap)["action"] == "update_kubeadm_config"


def test_the_rolling_strategy_replaces_an_outdated_worker_once_the_control_plane_is_done_its_replacement_first():
    upgraded = {"cp_%d" % i: {"version": NEXT} for i in (1, 2, 3)}
    result = decide(spec(version=NEXT), in_place_snapshot(cluster(3, **upgraded), workers=[worker("w-1", group="md-0")]))
    assert (result["action"], result["step"], result["workers"], result["worker_group"]) == ("roll_workers", "join_worker", ["w-1"], "md-0")
    assert result["worker_rollout"] == {"worker": "w-1", "uid": "uid-w-1", "group": "md-0", "replacement": None, "surge": True,
                                        "timestamp": None, "remediation": False}
    assert result["timeout_seconds"] == 300.0
    # the control plane first: a machine still at the old version is replaced before any worker
    assert decide(spec(version=NEXT), in_place_snapshot(cluster(3, **dict(upgraded, cp_3={"version": VERSION})),
                                                        workers=[worker("w-1", group="md-0")]))["action"] == "rollout"


@pytest.mark.parametrize(
    "versions,config,target,rule",
    [
        (("v1.34.8", "v1.34.8", "v1.34.8"), "v1.34.8", "v1.36.4", "rollout_minor_skip"),
        (("v1.35.8", "v1.35.8", "v1.35.8"), "v1.34.8", "v1.36.4", "rollout_minor_skip"),
        (("v1.36.4", "v1.36.4", "v1.36.4"), "v1.36.4", "v1.34.8", "rollout_minor_downgrade"),
        (("v1.36.4", "v1.35.8", "v1.35.8"), "v1.35.8", "v1.35.9", "rollout_minor_downgrade"),
    ],
    ids=["two minors up", "two minors above the kubeadm-config's, one above the machines", "two minors down", "a minor down from one machine"],
)
def test_a_rolling_rollout_that_skips_a_minor_or_goes_back_one_is_refused_before_anything_changes(versions, config, target, rule):
    # RO6: refused as a wait, before the kubeadm-config update that would come first, and nothing is replaced
    machines = [machine("cp-%d" % (i + 1), fd=FDS[i]["name"], created=1000 - i, version=v) for i, v in enumerate(versions)]
    snap = snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": config})
    result = decide(spec(version=target), snap)
    assert (result["action"], rules(result)) == ("wait", [rule]), result
    assert result["reason"].startswith("the rollout to %s is refused (RO6 %s)" % (target, rule)), result["reason"]


@pytest.mark.parametrize(
    "versions,config,target",
    [
        (("v1.35.8", "v1.35.8", "v1.35.8"), "v1.35.8", "v1.36.4"),
        (("v1.36.4", "v1.36.4", "v1.36.4"), "v1.36.4", "v1.36.2"),
        (("v1.36.4", "v1.35.8", "v1.35.8"), "v1.36.4", "v1.36.4"),
    ],
    ids=["one minor up", "a patch down, to roll back a bad patch", "half way through one minor up"],
)
def test_a_rolling_rollout_one_minor_up_or_a_patch_down_goes_ahead(versions, config, target):
    machines = [machine("cp-%d" % (i + 1), fd=FDS[i]["name"], created=1000 - i, version=v) for i, v in enumerate(versions)]
    snap = snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": config})
    result = decide(spec(version=target), snap)
    assert result["action"] in ("rollout", "update_kubeadm_config"), result


# --- what each step says: the exact reason and blockers a person reads ---------------------------------------

EXTERNAL_TASKS = {"tasks": "heal.yml", "max_attempts": 3, "timeout": 600.0, "escalate": "delete"}


def silent(**fields):
    """cp-1..cp-3's members, none answering; `fields` maps cp_2 to member fields to replace (error, name, client_urls)."""
    return [dict(m, **fields.get(m["name"].replace("-", "_"), {})) for m in members(3, **{"cp_%d" % i: {"responsive": False} for i in (1, 2, 3)})]


def blocker(rule, message, machines=()):
    return {"rule": rule, "message": message, "machines": list(machines)}


UPGRADED = {"cp_%d" % i: {"version": NEXT} for i in (1, 2, 3)}
# a stored ClusterConfiguration at VERSION that differs from spec() in two fields the update manages
STORED_TWO_FIELDS = {"kubernetesVersion": VERSION, "apiServer": {"extraArgs": [{"name": "a", "value": "1"}]}, "featureGates": {"X": True}}


# (spec, snapshot, health verdict, expected action, its exact reason, its exact blocked_by)
REASONS = [
    (
        "an etcd where no member answers is a wait naming each member tried",
        spec(),
        snapshot(cluster(3), failure_domains=FDS, members=silent()),
        HEALTHY,
        "wait",
        "no etcd member answered, so nothing about the control plane can be decided",
        [blocker("etcd_unreachable", "no etcd endpoint answered (cp-1: no answer within 2.0s; cp-2: no answer within 2.0s; cp-3: no answer within 2.0s)")],
    ),
    (
        "a silent nameless endpoint is named by its URLs, one without URL or error by what is known",
        spec(),
        snapshot(cluster(3), failure_domains=FDS,
                 members=silent(cp_1={"error": None}, cp_2={"name": "", "client_urls": ["https://a:2379", "https://b:2379"]},
                                cp_3={"name": "", "client_urls": []})),
        HEALTHY,
        "wait",
        "no etcd member answered, so nothing about the control plane can be decided",
        [blocker("etcd_unreachable", "no etcd endpoint answered (cp-1: no answer; https://a:2379, https://b:2379: no answer within 2.0s; "
                 "?: no answer within 2.0s)")],
    ),
    (
        "the oldest of two deleting machines is finished first",
        spec(),
        snapshot(cluster(3, cp_2={"deleting": True}, cp_3={"deleting": True}), failure_domains=FDS),
        HEALTHY,
        "finish_delete",
        "cp-2 is being deleted: finish that first",
        [],
    ),
    (
        "finishing a deletion whose member removal would lose quorum waits",
        spec(),
        snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS, members=members(3, cp_2={"responsive": False})),
        HEALTHY,
        "wait",
        "cp-3 is being deleted: finish that first, but removing its etcd member would lose quorum",
        [blocker("etcd_quorum", "after the change 1 of 2 voting members would be healthy, 2 are needed for quorum", ["cp-3"])],
    ),
    (
        "a stray member next to a single machine waits for a second node",
        spec(replicas=1),
        snapshot(cluster(1), failure_domains=FDS, members=members(1) + [member("cp-9", member_id="00000000000000c9")]),
        HEALTHY,
        "wait",
        "etcd member cp-9 (00000000000000c9) belongs to no machine, but removing a member needs at least two control plane nodes",
        [blocker("too_few_machines", "a member is removed through the remaining nodes; only one exists")],
    ),
    (
        "a stray member whose removal would lose quorum waits",
        spec(),
        snapshot(cluster(2), failure_domains=FDS, members=members(2, cp_2={"responsive": False}) + [member("cp-9", member_id="00000000000000c9")]),
        HEALTHY,
        "wait",
        "etcd member cp-9 (00000000000000c9) belongs to no machine, but removing it would lose etcd quorum",
        [blocker("etcd_quorum", "etcd has no quorum now: 1 of 3 voting members healthy, 2 needed; after the change 1 of 2 voting members would be "
                 "healthy, 2 are needed for quorum")],
    ),
    (
        "a request cleared after one attempt says attempt in the singular",
        spec(remediation=dict(spec()["remediation"], external=EXTERNAL_TASKS)),
        snapshot(cluster(3, cp_2={"external_attempts": 1, "external_last": NOW}), failure_domains=FDS),
        HEALTHY,
        "clear_external_remediation",
        "cp-2 is healthy again after 1 external remediation attempt: clear its request",
        [],
    ),
    (
        "a request cleared after two attempts says attempts in the plural",
        spec(remediation=dict(spec()["remediation"], external=EXTERNAL_TASKS)),
        snapshot(cluster(3, cp_2={"external_attempts": 2, "external_last": NOW}), failure_domains=FDS),
        HEALTHY,
        "clear_external_remediation",
        "cp-2 is healthy again after 2 external remediation attempts: clear its request",
        [],
    ),
    (
        "an initialized cluster without an observed machine is a wait that says so",
        spec(),
        snapshot([], failure_domains=FDS),
        HEALTHY,
        "wait",
        "the observation found no control plane machine, but the cluster exists (it is initialized): check the inventory group and the "
        "kubeconfig the observation used",
        [blocker("no_machine_observed", "no machine observed for a cluster that exists: it is initialized")],
    ),
    (
        "one etcd member without an observed machine is counted in the singular",
        spec(),
        snapshot([], failure_domains=FDS, initialized=False, members=[member("cp-1")]),
        HEALTHY,
        "wait",
        "the observation found no control plane machine, but the cluster exists (etcd has 1 member): check the inventory group and the "
        "kubeconfig the observation used",
        [blocker("no_machine_observed", "no machine observed for a cluster that exists: etcd has 1 member")],
    ),
    (
        "two etcd members without an observed machine are counted in the plural",
        spec(),
        snapshot([], failure_domains=FDS, initialized=False, members=[member("cp-1"), member("cp-2")]),
        HEALTHY,
        "wait",
        "the observation found no control plane machine, but the cluster exists (etcd has 2 members): check the inventory group and the "
        "kubeconfig the observation used",
        [blocker("no_machine_observed", "no machine observed for a cluster that exists: etcd has 2 members")],
    ),
    (
        "the first machine is created with kubeadm init",
        spec(),
        snapshot([], failure_domains=FDS, initialized=False, endpoint_ready=False),
        HEALTHY,
        "scale_up",
        "no control plane machine exists: create the first one with kubeadm init",
        [],
    ),
    (
        "a scale up counts the machines and the replicas",
        spec(replicas=5),
        snapshot(cluster(3), failure_domains=FDS),
        HEALTHY,
        "scale_up",
        "3 of 5 machines: add one",
        [],
    ),
    (
        "a scale down counts the machines and the replicas and names the machine",
        spec(),
        snapshot(cluster(5), failure_domains=FDS),
        HEALTHY,
        "scale_down",
        "5 machines, 3 declared: remove one: cp-1",
        [],
    ),
    (
        "a scale down held back by preflight names the machine it would remove",
        spec(),
        snapshot(cluster(5, cp_4={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS),
        HEALTHY,
        "wait",
        "5 machines, 3 declared: remove one (cp-1), once preflight passes",
        [blocker("components_not_healthy", "cp-4: scheduler false (pod unhealthy)", ["cp-4"])],
    ),
    (
        "a scale up without an observed kubeadm-config version waits for it",
        spec(replicas=5),
        snapshot(cluster(3), failure_domains=FDS, kubeadm_config=None),
        HEALTHY,
        "wait",
        "3 of 5 machines: add one: the kubeadm-config ConfigMap's kubernetesVersion must say %s first, and it was not observed" % VERSION,
        [blocker("kubeadm_config_not_observed", "the snapshot has no kubeadm_config.kubernetes_version")],
    ),
    (
        "a kubeadm-config without a version is not observed either",
        spec(replicas=5),
        snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": None}),
        HEALTHY,
        "wait",
        "3 of 5 machines: add one: the kubeadm-config ConfigMap's kubernetesVersion must say %s first, and it was not observed" % VERSION,
        [blocker("kubeadm_config_not_observed", "the snapshot has no kubeadm_config.kubernetes_version")],
    ),
    (
        "a kubeadm-config of the old version is updated first",
        spec(version=NEXT),
        snapshot(cluster(3), failure_domains=FDS),
        HEALTHY,
        "update_kubeadm_config",
        "the cluster's kubeadm configuration says %s; before a machine of %s joins or is upgraded it must say %s" % (VERSION, NEXT, NEXT),
        [],
    ),
    (
        "a kubeadm-config update held back by preflight says so",
        spec(version=NEXT),
        snapshot(cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS),
        HEALTHY,
        "wait",
        "the cluster's kubeadm configuration says %s; before a machine of %s joins or is upgraded it must say %s, once preflight passes"
        % (VERSION, NEXT, NEXT),
        [blocker("components_not_healthy", "cp-2: scheduler false (pod unhealthy)", ["cp-2"])],
    ),
    (
        "a rollout step names the outdated machines",
        spec(version=NEXT),
        snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT}),
        HEALTHY,
        "rollout",
        "rolling out cp-1, cp-2, cp-3: add an up-to-date machine first",
        [],
    ),
    (
        "a rollout's removal names the outdated machines and the one removed",
        spec(version=NEXT),
        snapshot(cluster(4), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT}),
        HEALTHY,
        "rollout",
        "rolling out cp-1, cp-2, cp-3, cp-4: remove an outdated machine: cp-1",
        [],
    ),
    (
        "finishing a deletion when etcd has no quorum now tells both reasons",
        spec(),
        snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS, members=members(3, cp_1={"responsive": False}, cp_2={"responsive": False})),
        HEALTHY,
        "wait",
        "cp-3 is being deleted: finish that first, but removing its etcd member would lose quorum",
        [blocker("etcd_quorum", "etcd has no quorum now: 1 of 3 voting members healthy, 2 needed; after the change 0 of 2 voting members would be "
                 "healthy, 2 are needed for quorum", ["cp-3"])],
    ),
    (
        "a member never started is named by its id and every peer URL",
        spec(),
        snapshot(cluster(3), failure_domains=FDS,
                 members=members(3) + [dict(member("", member_id="00000000000000aa"), peer_urls=["https://10.0.0.9:2380", "https://10.0.0.19:2380"])]),
        HEALTHY,
        "remove_etcd_member",
        "etcd member 00000000000000aa (added, never started, peer URLs https://10.0.0.9:2380, https://10.0.0.19:2380) belongs to no machine: remove it",
        [],
    ),
    (
        "a scale up held back by preflight says so",
        spec(replicas=5),
        snapshot(cluster(3, cp_2={"components": {"scheduler": "unhealthy"}}), failure_domains=FDS),
        HEALTHY,
        "wait",
        "3 of 5 machines: add one, once preflight passes",
        [blocker("components_not_healthy", "cp-2: scheduler false (pod unhealthy)", ["cp-2"])],
    ),
    (
        "a remediation's replacement that etcd cannot take yet waits for etcd, though preflight leaves the flagged machine out",
        spec(),
        snapshot(cluster(2), failure_domains=FDS, members=members(2, cp_2={"responsive": False}),
                 remediation_in_progress={"machine": "cp-3", "timestamp": NOW, "retry_count": 0}),
        flag("cp-2"),
        "wait",
        "2 of 3 machines: add one, once etcd can take a member",
        [blocker("etcd_quorum", "etcd has no quorum now: 1 of 2 voting members healthy, 2 needed; after the change 1 of 2 voting members would be "
                 "healthy, 2 are needed for quorum")],
    ),
    (
        "a kubeadm-config of the old version that also differs in fields names both",
        spec(version=NEXT),
        snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": VERSION, "cluster_configuration": STORED_TWO_FIELDS}),
        HEALTHY,
        "update_kubeadm_config",
        "the cluster's kubeadm configuration says %s and differs from the spec in featureGates, apiServer.extraArgs; before a machine of %s "
        "joins or is upgraded it must say %s and match the spec" % (VERSION, NEXT, NEXT),
        [],
    ),
    (
        "a kubeadm-config of the spec's version that differs in fields names the fields",
        spec(version=NEXT),
        snapshot(cluster(3), failure_domains=FDS,
                 kubeadm_config={"kubernetes_version": NEXT, "cluster_configuration": dict(STORED_TWO_FIELDS, kubernetesVersion=NEXT)}),
        HEALTHY,
        "update_kubeadm_config",
        "the cluster's kubeadm configuration differs from the spec in featureGates, apiServer.extraArgs; before a machine joins or is upgraded "
        "it must match the spec (kubeadm builds the machine's control plane from it)",
        [],
    ),
    (
        "an in-place upgrade request refused for two rules names both",
        IN_PLACE,
        snapshot(cluster(3, cp_2={"spec_hash": "older", "version": "v1.35.8"}), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT}),
        HEALTHY,
        "wait",
        "the in-place upgrade to %s is refused (IP3 in_place_minor_skip, IP2 in_place_other_changes); nothing is upgraded or replaced until "
        "the spec or the cluster changes" % NEXT,
        [
            blocker("in_place_minor_skip", "IP3: kubeadm upgrades one minor at a time, and cp-2 (v1.35.8) would skip a minor to %s: upgrade it to "
                    "v1.36 first" % NEXT, ["cp-2"]),
            blocker("in_place_other_changes", "IP2: in place changes only the version and what comes with it, and upgrade.other_changes is "
                    "refuse: cp-2 built from spec older, the spec is now current-hash (set upgrade.other_changes to rolling to replace these "
                    "machines, or undo the change)", ["cp-2"]),
        ],
    ),
    (
        "a rolling rollout refused for two rules names both",
        spec(),
        snapshot([machine("cp-%d" % i, fd=FDS[i - 1]["name"], created=1000 - i, version=v) for i, v in ((1, "v1.38.1"), (2, "v1.34.8"), (3, VERSION))],
                 failure_domains=FDS),
        HEALTHY,
        "wait",
        "the rollout to %s is refused (RO6 rollout_minor_skip, RO6 rollout_minor_downgrade); nothing is replaced until the spec or the cluster "
        "changes" % VERSION,
        [
            blocker("rollout_minor_skip", "RO6: API servers stay within one minor of each other, and cp-2 (v1.34.8) would skip a minor to %s: "
                    "roll out to v1.35 first" % VERSION, ["cp-2"]),
            blocker("rollout_minor_downgrade", "RO6: Kubernetes does not go back a minor (the new API servers would read what newer ones wrote to "
                    "etcd): cp-1 (v1.38.1) newer than %s; a patch of the same minor may go down" % VERSION, ["cp-1"]),
        ],
    ),
    (
        "with nothing outdated a kubeadm-config two minors behind holds nothing back: only a rollout's version path is checked",
        spec(),
        snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": "v1.34.8"}),
        HEALTHY,
        "none",
        "the control plane is as declared",
        [],
    ),
    (
        "the first in-place step is upgrade apply on the oldest machine",
        IN_PLACE,
        snapshot(cluster(3), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT}),
        HEALTHY,
        "upgrade_in_place",
        "upgrade cp-1 in place to %s with kubeadm upgrade apply" % NEXT,
        [],
    ),
    (
        "the last in-place step says it upgrades the addons",
        IN_PLACE,
        snapshot(cluster(3, cp_1={"version": NEXT}, cp_2={"version": NEXT}), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT}),
        HEALTHY,
        "upgrade_in_place",
        "upgrade cp-3 in place to %s with kubeadm upgrade node, the last one: it upgrades the addons" % NEXT,
        [],
    ),
    (
        "a worker group waits for its workers not back",
        IN_PLACE,
        snapshot(cluster(3, **UPGRADED), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT},
                 workers=[worker("w-1", group="md-0"), worker("w-2", group="md-0", version=NEXT, ready=False)]),
        HEALTHY,
        "wait",
        "upgrade worker group md-0 in place to %s, once its workers are back" % NEXT,
        [blocker("workers_unavailable", "IP7: worker group md-0 may have 1 worker down at once, and w-2, at %s already, is not Ready or cordoned"
                 % NEXT, ["w-2"])],
    ),
    (
        "a batch of two workers names both",
        spec(version=NEXT, upgrade=upgrade("in_place", groups={"md-0": 2})),
        snapshot(cluster(3, **UPGRADED), failure_domains=FDS, kubeadm_config={"kubernetes_version": NEXT},
                 workers=[worker("w-1", group="md-0"), worker("w-2", group="md-0", created=10)]),
        HEALTHY,
        "upgrade_workers",
        "upgrade w-1, w-2 of worker group md-0 in place to %s with kubeadm upgrade node (2 of its 2 outdated workers, at most 2 at a time)" % NEXT,
        [],
    ),
    (
        "a worker step held back by preflight says so",
        IN_PLACE,
        snapshot(cluster(3, **dict(UPGRADED, cp_2={"version": NEXT, "components": {"scheduler": "unhealthy"}})), failure_domains=FDS,
                 kubeadm_config={"kubernetes_version": NEXT}, workers=[worker("w-1")]),
        HEALTHY,
        "wait",
        "upgrade w-1 of the unnamed worker group in place to %s with kubeadm upgrade node (1 of its 1 outdated workers, at most 1 at a time), "
        "once preflight passes" % NEXT,
        [blocker("components_not_healthy", "cp-2: scheduler false (pod unhealthy)", ["cp-2"])],
    ),
    (
        "a settled control plane says it is as declared",
        spec(),
        snapshot(cluster(3), failure_domains=FDS),
        HEALTHY,
        "none",
        "the control plane is as declared",
        [],
    ),
]


@pytest.mark.parametrize("the_spec,snap,health,action,reason,blocked", [c[1:] for c in REASONS], ids=[c[0] for c in REASONS])
def test_each_step_says_why(the_spec, snap, health, action, reason, blocked):
    result = decide(the_spec, snap, health)
    assert (result["action"], result["reason"], result["blocked_by"]) == (action, reason, blocked)


def test_a_scale_up_details_its_failure_domain_choice_and_a_removal_its_etcd_hand_over():
    result = decide(spec(replicas=5), snapshot(cluster(3), failure_domains=FDS))
    assert result["details"] == ["FD2: fewest up-to-date machines (fd-a: 1 up to date of 1, fd-b: 1 up to date of 1, fd-c: 1 up to date of 1)"]
    result = decide(spec(), snapshot(cluster(3, cp_3={"deleting": True}), failure_domains=FDS))
    assert (result["machine"], result["leader_candidate"]) == ("cp-3", "cp-2")
    assert result["details"] == ["etcd member cp-3 leaves; leadership goes to cp-2 if it leads"]


def test_a_remediation_details_the_machine_selected_among_the_flagged():
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS), flag("cp-3", "cp-2"))
    assert (result["action"], result["machine"], result["leader_candidate"]) == ("remediate", "cp-2", "cp-1")
    assert result["details"] == ["RM4: cp-2 selected among flagged cp-2, cp-3"]
    assert result["flagged"] == ["cp-2", "cp-3"]


def test_a_scale_down_with_external_etcd_details_its_choice_and_touches_no_member():
    result = decide(dict(EXTERNAL_ETCD, replicas=3), snapshot(cluster(4), failure_domains=FDS, external=True, members=[member("ext-1")]))
    assert (result["action"], result["machine"], result["leader_candidate"], result["quorum"]) == ("scale_down", "cp-1", None, None)
    assert result["details"] == ["SD1 priority 5 (any machine): cp-1, cp-2, cp-3, cp-4; FD5: fd-a holds the most eligible machines (2 of its 2); "
                                 "FD6: cp-1 is the oldest eligible there"]


def test_a_machine_outside_the_control_plane_failure_domains_is_removed_first():
    result = decide(spec(), snapshot(cluster(3) + [machine("cp-9", fd="fd-old", created=10)], failure_domains=FDS))
    assert (result["action"], result["machine"], result["failure_domain"]) == ("scale_down", "cp-9", "fd-old")


def test_the_first_machine_details_its_failure_domain_choice():
    result = decide(spec(), snapshot([], failure_domains=FDS, initialized=False, endpoint_ready=False))
    assert result["details"] == ["FD2: fewest up-to-date machines (fd-a: 0 up to date of 0, fd-b: 0 up to date of 0, fd-c: 0 up to date of 0)"]


def test_a_remediations_replacement_leaves_the_flagged_machines_out_of_preflight():
    snap = snapshot(cluster(2, cp_2={"components": {"api_server": "unhealthy"}}), failure_domains=FDS,
                    remediation_in_progress={"machine": "cp-3", "timestamp": NOW, "retry_count": 0})
    result = decide(spec(), snap, flag("cp-2"))
    assert (result["action"], result["failure_domain"], result["preflight"]["excluded"]) == ("scale_up", "fd-c", ["cp-2"])
    assert result["remediation_for"] == {"machine": "cp-3", "timestamp": NOW, "retry_count": 0}


def test_the_plan_reports_the_remediation_decision_and_the_etcd_verdict():
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS, members=members(3, cp_2={"alarms": ["NOSPACE"]})), flag("cp-2"))
    assert result["remediation"] == {"status": "remediate", "machine": "cp-2", "rule": None,
                                     "reason": "cp-2 is unhealthy and etcd keeps quorum without it", "retry_count": 0}
    assert result["etcd"] == {"ok": False, "problems": ["member cp-2 has alarms: NOSPACE"]}


def test_the_time_to_look_again_is_rounded_to_the_millisecond():
    result = decide(spec(), snapshot(cluster(3), failure_domains=FDS), dict(HEALTHY, next_check_seconds=12.34567))
    assert (result["action"], result["retry_after_seconds"]) == ("none", 12.346)


def test_the_machines_an_in_place_upgrade_replaces_are_held_to_the_rolling_version_path():
    """RO6 for the replacements of `upgrade.other_changes: rolling`: a kubeadm-config two minors below the spec refuses
    them as it refuses a rolling rollout, instead of updating the ConfigMap across a minor."""
    machines = [machine("cp-%d" % (i + 1), fd=FDS[i]["name"], created=1000 - i, version="v1.35.8") for i in range(3)]
    machines[0]["spec_hash"] = "0" * 64
    snap = snapshot(machines, failure_domains=FDS, kubeadm_config={"kubernetes_version": "v1.34.8"})
    result = decide(spec(version="v1.36.4", upgrade=upgrade("in_place", other_changes="rolling")), snap)
    assert (result["action"], rules(result)) == ("wait", ["rollout_minor_skip"]), result
