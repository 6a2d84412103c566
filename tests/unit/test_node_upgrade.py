# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's in-place upgrade (plugins/module_utils/node_upgrade.py): which steps remain after what a run did or
a killed run left, what is refused, when the node is drained and uncordoned."""

import json

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_upgrade as nu
from ansible_collections.kubeadm.control_plane.tests.ansible_run import run_module

OLD, NEW = "v1.36.4", "v1.37.1"
ALL_NODE = ["software", "kubeadm-upgrade", "drain", "kubelet", "uncordon", "ready"]


def host(kubeadm=OLD, kubelet=OLD, manifests=OLD, running=OLD, ready=True, control_plane=True, step=None, version=NEW):
    return {
        "control_plane": control_plane,
        "kubeadm": kubeadm,
        "kubelet": kubelet,
        "manifests": dict({c: manifests for c in nu.VERSIONED_COMPONENTS}, etcd="3.6.8-0") if control_plane else {},
        "node": {"name": "cp-1", "kubelet_version": running, "ready": ready, "unschedulable": False},
        "record": {"version": version, "command": "node", "step": step, "at": "2026-11-02T10:00:00Z"} if step else None,
    }


@pytest.mark.parametrize("observed, command, remaining", [
    # nothing done: every step; the first control plane node takes an etcd snapshot first
    (host(), "apply", ["etcd-snapshot"] + ALL_NODE),
    (host(), "node", ALL_NODE),
    (host(control_plane=False), "node", ALL_NODE),
    # a killed run resumes at the first step not done
    (host(step="etcd-snapshot"), "apply", ALL_NODE),
    (host(kubeadm=NEW, step="software"), "node", ALL_NODE[1:]),
    (host(kubeadm=NEW, manifests=NEW, step="kubeadm-upgrade"), "node", ["drain", "kubelet", "uncordon", "ready"]),
    (host(kubeadm=NEW, manifests=NEW, step="drain"), "node", ["kubelet", "uncordon", "ready"]),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, step="kubelet", ready=False), "node", ["uncordon", "ready"]),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, step="uncordon", ready=False), "node", ["ready"]),
    # a worker's kubeadm upgrade node leaves nothing to observe: the record says it
    (host(kubeadm=NEW, control_plane=False, step="kubeadm-upgrade"), "node", ["drain", "kubelet", "uncordon", "ready"]),
    # killed after kubeadm upgrade, before it was recorded: kubeadm upgrade is run again (it is idempotent)
    (host(kubeadm=NEW, manifests=NEW, step="software"), "node", ALL_NODE[1:]),
    # the record says done but the result is not there: done again, with everything after it
    (host(kubeadm=OLD, manifests=NEW, step="kubeadm-upgrade"), "node", ALL_NODE),
    (host(kubeadm=NEW, manifests=OLD, step="drain"), "node", ALL_NODE[1:]),
    (host(kubeadm=NEW, kubelet=OLD, manifests=NEW, step="uncordon"), "node", ["kubelet", "uncordon", "ready"]),
    # a record of another version's upgrade is no record of this one
    (host(step="ready", version="v1.36.4"), "node", ALL_NODE),
    # of the version already: nothing, unless this upgrade began (confirm it) or cordoned the node (undo that)
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW), "node", []),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW), "apply", []),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, step="ready"), "node", []),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, step="uncordon"), "node", ["ready"]),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, step="kubelet"), "node", ["uncordon", "ready"]),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, step="software"), "node", ["ready"]),
    # the kubelet runs the version but the Node is not Ready: the upgrade is not over
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, ready=False, step="kubelet"), "node", ["uncordon", "ready"]),
])
def test_the_steps_that_remain(observed, command, remaining):
    assert nu.remaining_steps(observed, NEW, command) == remaining


@pytest.mark.parametrize("command,etcd_snapshot", [("apply", True), ("node", True), ("apply", False)],
                         ids=["apply", "node", "apply on external etcd"])
def test_a_run_killed_after_any_step_leaves_every_step_not_done_to_the_next(command, etcd_snapshot):
    # killed once a step is done, before or after its record: the next run takes every step after it, in order (the
    # step whose record was lost again), the uncordon of the upgrade's own drain included
    steps = list(nu.steps_of(command, etcd_snapshot))
    for killed_after in range(len(steps)):
        done = steps[:killed_after + 1]
        for recorded in (done, done[:-1]):
            observed = host(kubeadm=NEW if "software" in done else OLD, manifests=NEW if "kubeadm-upgrade" in done else OLD,
                            kubelet=NEW if "kubelet" in done else OLD, running=NEW if "kubelet" in done else OLD,
                            step=recorded[-1] if recorded else None)
            remaining = nu.remaining_steps(observed, NEW, command, etcd_snapshot=etcd_snapshot)
            assert remaining == steps[len(steps) - len(remaining):], (done, recorded, remaining)
            assert set(steps[killed_after + 1:]) <= set(remaining), (done, recorded, remaining)


def test_the_kubelet_is_never_installed_before_kubeadm_upgrade_ran():
    # whatever a killed run left, the kubelet step comes after the kubeadm upgrade step whenever the latter remains
    for step in (None,) + nu.STEPS:
        for kubeadm in (OLD, NEW):
            for manifests in (OLD, NEW):
                remaining = nu.remaining_steps(host(kubeadm=kubeadm, manifests=manifests, step=step), NEW, "node")
                if "kubeadm-upgrade" in remaining:
                    assert remaining.index("kubeadm-upgrade") < remaining.index("kubelet"), (step, remaining)


@pytest.mark.parametrize("text, record", [
    (None, None),
    ("", None),
    ("not json", None),
    ("[1]", None),
    ('{"version": "v1.37.1", "step": "sideways"}', None),
    ('{"version": "1.37", "step": "drain"}', None),
    ('{"version": "v1.37.1", "step": "drain", "uncordon": true}', {"version": "v1.37.1", "step": "drain", "uncordon": True}),
])
def test_the_annotation_reads_as_a_record_or_as_none(text, record):
    assert nu.read_record(text) == record


def test_a_record_keeps_what_earlier_steps_of_the_same_upgrade_said():
    first = nu.record_step(None, NEW, "node", "software", "t1", uncordon=True)
    assert first == {"version": NEW, "etcd_image_tag": None, "command": "node", "step": "software", "at": "t1", "uncordon": True}
    drained = nu.record_step(first, NEW, "node", "drain", "t2", drain="skipped: a single-node cluster")
    assert drained == {"version": NEW, "etcd_image_tag": None, "command": "node", "step": "drain", "at": "t2", "uncordon": True,
                       "drain": "skipped: a single-node cluster"}
    assert nu.record_step(drained, "v1.38.0", "node", "software", "t3") == {"version": "v1.38.0", "etcd_image_tag": None,
                                                                            "command": "node", "step": "software", "at": "t3"}
    assert json.loads(json.dumps(drained)) == drained
    failed = dict(drained, failed={"step": "kubelet", "error": "boom", "at": "t3"})
    assert "failed" not in nu.record_step(failed, NEW, "node", "kubelet", "t4")


@pytest.mark.parametrize("text, progress", [
    (None, None),
    ("not json", None),
    ('{"step": "drain"}', None),
    ('{"version": "v1.37.1", "step": "drain", "uncordon": true}',
     {"version": "v1.37.1", "step": "drain", "failed_step": None, "error": None}),
    # the first step failed: nothing done yet, the failure shown
    ('{"version": "v1.37.1", "command": "apply", "failed": {"step": "etcd-snapshot", "error": "no space"}}',
     {"version": "v1.37.1", "step": None, "failed_step": "etcd-snapshot", "error": "no space"}),
    ('{"version": "v1.37.1", "step": "software", "failed": {"step": "sideways", "error": "x"}}',
     {"version": "v1.37.1", "step": "software", "failed_step": None, "error": None}),
])
def test_the_progress_the_status_shows_of_a_node_upgrade(text, progress):
    assert nu.progress(text) == progress


def test_a_record_of_the_same_version_and_another_etcd_tag_is_another_upgrade_s():
    earlier = nu.record_step(None, OLD, "apply", "ready", "t1", uncordon=False)
    now = nu.record_step(earlier, OLD, "apply", "etcd-snapshot", "t2", etcd_image_tag="3.6.11-0", uncordon=True)
    assert now == {"version": OLD, "etcd_image_tag": "3.6.11-0", "command": "apply", "step": "etcd-snapshot", "at": "t2", "uncordon": True}
    assert nu.record_step(now, OLD, "apply", "software", "t3", etcd_image_tag="3.6.11-0")["uncordon"] is True


# the control plane already at OLD, its etcd at 3.6.8, upgraded in place to etcd 3.6.11 at the same version
AT_OLD = dict(kubeadm=OLD, kubelet=OLD, manifests=OLD, running=OLD)
FLOOR = "3.6.11-0"


def at_old(etcd="3.6.8-0", step=None, record_etcd=None, control_plane=True):
    observed = host(control_plane=control_plane, step=step, version=OLD, **AT_OLD)
    if control_plane:
        observed["manifests"]["etcd"] = etcd
    if observed["record"] is not None:
        observed["record"]["etcd_image_tag"] = record_etcd
    return observed


@pytest.mark.parametrize("observed, remaining, upgraded", [
    # an etcd behind the target: the upgrade is not done, whatever the rest says
    (at_old(), ["etcd-snapshot"] + ALL_NODE, False),
    # an earlier upgrade to the same version, done to the end, is no record of this one
    (at_old(step="ready"), ["etcd-snapshot"] + ALL_NODE, False),
    # this upgrade's own record is resumed
    (at_old(step="software", record_etcd=FLOOR), ALL_NODE[1:], False),
    # its kubeadm upgrade recorded but the etcd manifest still behind: done again
    (at_old(step="drain", record_etcd=FLOOR), ALL_NODE[1:], False),
    # etcd at the target, or newer (kubeadm never downgrades it): nothing, unless this upgrade began
    (at_old(etcd=FLOOR), [], True),
    (at_old(etcd="3.6.12-0"), [], True),
    (at_old(etcd=FLOOR, step="kubelet", record_etcd=FLOOR), ["uncordon", "ready"], True),
    # no etcd manifest (external etcd) or a worker: the target says nothing about the host
    (dict(at_old(), manifests={c: OLD for c in nu.VERSIONED_COMPONENTS}), [], True),
    (at_old(control_plane=False), [], True),
])
def test_an_etcd_target_is_part_of_the_upgrade(observed, remaining, upgraded):
    assert nu.remaining_steps(observed, OLD, "apply", etcd_image_tag=FLOOR) == remaining
    assert nu.upgraded(observed, OLD, etcd_image_tag=FLOOR) is upgraded


def test_without_an_etcd_target_the_etcd_manifest_is_not_looked_at():
    assert nu.remaining_steps(at_old(), OLD, "apply") == []
    assert nu.upgraded(at_old(), OLD)


def test_a_tag_that_is_no_version_is_reached_only_when_it_is_the_manifest_s():
    assert nu.etcd_reached({"etcd": "custom"}, "custom") and not nu.etcd_reached({"etcd": "3.6.11-0"}, "custom")


@pytest.mark.parametrize("observed, version, command, refused", [
    (host(), "1.37.1", "node", "not a release version"),
    (host(), NEW, "upgrade", "neither apply nor node"),
    (dict(host(), node=None), NEW, "node", "the host has no Node"),
    (host(control_plane=False), NEW, "apply", "kubeadm upgrade apply runs on a control plane node"),
    (host(running="v1.38.0"), NEW, "node", "never downgrades"),
    (host(manifests="v1.35.9"), NEW, "apply", "reached through v1.36 first"),
])
def test_what_is_refused(observed, version, command, refused):
    found = nu.refusals(observed, version, command)
    assert len(found) == 1 and refused in found[0], found


@pytest.mark.parametrize("observed, command", [
    (host(), "apply"),
    (host(control_plane=False, running="v1.34.2"), "node"),  # a worker's kubelet may lag three minors
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW), "node"),
])
def test_what_is_not_refused(observed, command):
    assert nu.refusals(observed, NEW, command) == []


CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def node(name, ready=True, unschedulable=False, taints=()):
    return {"metadata": {"name": name}, "spec": {"unschedulable": unschedulable, "taints": list(taints)},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


@pytest.mark.parametrize("name, nodes, drain, reason", [
    ("cp-1", [node("cp-1", taints=[CP_TAINT])], False, "a single-node cluster"),
    ("cp-1", [node("cp-1", taints=[CP_TAINT]), node("cp-2", taints=[CP_TAINT])], True, "cp-2 can take the pods"),
    ("cp-1", [node("cp-1", taints=[CP_TAINT]), node("cp-2", ready=False, taints=[CP_TAINT])], False, "no other node can take"),
    ("cp-1", [node("cp-1", taints=[CP_TAINT]), node("cp-2", unschedulable=True)], False, "no other node can take"),
    # a worker's pods do not tolerate the control plane's taint: control plane nodes cannot take them
    ("w-1", [node("w-1"), node("cp-1", taints=[CP_TAINT])], False, "no other node can take"),
    ("w-1", [node("w-1"), node("cp-1", taints=[CP_TAINT]), node("w-2")], True, "w-2 can take the pods"),
    # a control plane node's pods tolerate its taint, so an untainted worker can take them (PreferNoSchedule keeps none away)
    ("cp-1", [node("cp-1", taints=[CP_TAINT]), node("w-1"), node("w-2", taints=[{"key": "gpu", "effect": "PreferNoSchedule"}])],
     True, "w-1, w-2 can take the pods"),
    ("cp-1", [node("cp-2")], False, "not there"),
])
def test_the_node_is_drained_only_when_another_can_take_its_pods(name, nodes, drain, reason):
    decided = nu.drain_decision(name, nodes)
    assert decided["drain"] is drain and reason in decided["reason"], decided


@pytest.mark.parametrize("record, unschedulable, uncordon", [
    (None, False, True),
    (None, True, False),  # someone else's cordon stays
    ({"version": NEW, "step": "drain", "uncordon": True}, True, True),  # the upgrade's own cordon (a killed drain)
    ({"version": NEW, "step": "software", "uncordon": False}, False, False),
    ({"version": OLD, "step": "ready", "uncordon": False}, False, True),
])
def test_the_node_is_uncordoned_unless_it_was_cordoned_before(record, unschedulable, uncordon):
    assert nu.uncordon_after(record, NEW, {"unschedulable": unschedulable}) is uncordon


def test_an_earlier_upgrade_to_the_same_version_does_not_say_whether_an_etcd_upgrade_uncordons():
    # the earlier upgrade found the node cordoned by someone; that cordon is gone: this upgrade uncordons what it cordons
    earlier = {"version": OLD, "step": "ready", "uncordon": False}
    assert nu.uncordon_after(earlier, OLD, {"unschedulable": False}, etcd_image_tag="3.6.11-0") is True
    this = dict(earlier, etcd_image_tag="3.6.11-0")
    assert nu.uncordon_after(this, OLD, {"unschedulable": False}, etcd_image_tag="3.6.11-0") is False


def test_the_module_reads_the_etcd_manifest_s_tag_and_tells_a_record_of_this_upgrade(tmp_path):
    for component, image in [(c, "registry.k8s.io/%s:%s" % (c, OLD)) for c in nu.VERSIONED_COMPONENTS] + [("etcd", "registry.k8s.io/etcd:3.6.8-0")]:
        (tmp_path / (component + ".yaml")).write_text("spec:\n  containers:\n  - command: [%s]\n    image: %s\n" % (component, image))
    earlier = {"version": OLD, "command": "apply", "step": "ready", "at": "t1", "uncordon": True}
    node = {"metadata": {"name": "cp-1", "annotations": {nu.ANNOTATION: json.dumps(earlier)}},
            "status": {"nodeInfo": {"kubeletVersion": OLD}, "conditions": [{"type": "Ready", "status": "True"}]}}
    args = {"version": OLD, "command": "apply", "node": node, "manifests_dir": str(tmp_path), "software_record_path": str(tmp_path / "none")}
    outcome, result = run_module("node_upgrade_info", dict(args, etcd_image_tag="3.6.11-0"))
    assert outcome == "SUCCESS", result
    assert result["manifests"] == dict({c: OLD for c in nu.VERSIONED_COMPONENTS}, etcd="3.6.8-0")
    assert result["record_of_this_upgrade"] is False and "kubeadm-upgrade" in result["remaining"]
    outcome, result = run_module("node_upgrade_info", args)
    assert outcome == "SUCCESS" and result["record_of_this_upgrade"] is True, result


@pytest.mark.parametrize("text, version", [
    ("v1.37.1", (1, 37, 1)),
    ("v10.0.12", (10, 0, 12)),
    ("1.37.1", None),
    ("v1.37", None),
    ("v1.37.1-rc.0", None),
    ("xv1.37.1", None),
    ("", None),
    (None, None),
], ids=["a release version", "numbers of several digits", "no leading v", "no patch", "a pre-release", "text before the v",
        "empty", "none"])
def test_only_a_release_version_parses(text, version):
    assert nu.parse_version(text) == version


def test_the_steps_each_command_takes_and_the_annotation_they_are_recorded_in():
    assert nu.steps_of("apply") == ("etcd-snapshot", "software", "kubeadm-upgrade", "drain", "kubelet", "uncordon", "ready")
    assert nu.steps_of("node") == ("software", "kubeadm-upgrade", "drain", "kubelet", "uncordon", "ready")
    # external etcd: no snapshot through the first node, its backups are its operator's
    assert nu.steps_of("apply", etcd_snapshot=False) == nu.steps_of("node") == nu.steps_of("node", etcd_snapshot=False)
    assert nu.ANNOTATION == "control-plane.kubeadm.io/upgrade"


@pytest.mark.parametrize("text, progress", [
    ("", None),
    ("[1]", None),
    ('{"version": "v1.37.1", "step": "drain", "failed": "boom"}', {"version": "v1.37.1", "step": "drain", "failed_step": None, "error": None}),
    ('{"version": "v1.37.1", "step": "drain", "failed": {"step": "kubelet", "error": 42}}',
     {"version": "v1.37.1", "step": "drain", "failed_step": "kubelet", "error": None}),
    ('{"version": "v1.37.1", "step": "sideways"}', {"version": "v1.37.1", "step": None, "failed_step": None, "error": None}),
], ids=["an empty annotation", "not an object", "a failure that is not an object reads as none",
        "an error that is not text reads as none", "a step that is no step reads as none"])
def test_the_progress_of_a_record_with_odd_fields(text, progress):
    assert nu.progress(text) == progress


@pytest.mark.parametrize("progress_record, unfinished", [
    (None, False),
    ({"version": NEW, "step": "ready", "failed_step": None, "error": None}, False),
    ({"version": NEW, "step": "kubelet", "failed_step": None, "error": None}, True),
    ({"version": NEW, "step": None, "failed_step": "etcd-snapshot", "error": "no space"}, True),
    ({"version": NEW, "step": "ready", "failed_step": "ready", "error": "not Ready in time"}, True),
], ids=["no record: no upgrade", "done to ready", "a step done short of ready", "the first step failed", "ready recorded, then failed"])
def test_an_upgrade_is_unfinished_while_short_of_ready_or_failed(progress_record, unfinished):
    assert nu.unfinished(progress_record) is unfinished


@pytest.mark.parametrize("record, version, tag, ours", [
    (None, NEW, None, False),
    ({}, NEW, None, False),
    ({"version": NEW, "step": "drain"}, NEW, None, True),
    ({"version": OLD, "step": "drain"}, NEW, None, False),
    ({"version": NEW, "step": "drain", "etcd_image_tag": "3.6.11-0"}, NEW, "3.6.11-0", True),
    ({"version": NEW, "step": "drain", "etcd_image_tag": "3.6.11-0"}, NEW, None, False),
], ids=["no record", "an empty record", "the same version, no etcd target", "another version",
        "the same version and etcd tag", "an etcd upgrade's record is not that of an upgrade without one"])
def test_a_record_is_of_this_upgrade_when_its_version_and_etcd_tag_are(record, version, tag, ours):
    assert nu.of_this_upgrade(record, version, tag) is ours


@pytest.mark.parametrize("observed, facts", [
    (host(), {"kubeadm": False, "manifests": False, "kubelet": False, "node": False}),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW), {"kubeadm": True, "manifests": True, "kubelet": True, "node": True}),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, ready=False),
     {"kubeadm": True, "manifests": True, "kubelet": True, "node": False}),
    (host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW, ready="True"),
     {"kubeadm": True, "manifests": True, "kubelet": True, "node": False}),
    (host(kubeadm=NEW, kubelet=NEW, running=NEW, control_plane=False), {"kubeadm": True, "manifests": False, "kubelet": True, "node": True}),
    (dict(host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW), manifests={"kube-apiserver": NEW, "kube-scheduler": NEW}),
     {"kubeadm": True, "manifests": False, "kubelet": True, "node": True}),
    (dict(host(kubeadm=NEW, kubelet=NEW, manifests=NEW, running=NEW), node=None, manifests=None),
     {"kubeadm": True, "manifests": False, "kubelet": True, "node": False}),
], ids=["nothing of the version", "everything of the version", "a Node not Ready", "a readiness that is not a boolean is not Ready",
        "a worker has no control plane manifests", "a control plane missing a component's manifest", "no Node and no manifests read"])
def test_what_the_host_and_the_node_say_is_of_the_version(observed, facts):
    assert nu.observed_facts(observed, NEW) == facts


def test_a_control_plane_node_with_an_old_manifest_is_not_upgraded_and_a_worker_needs_none():
    everything = dict(kubeadm=NEW, kubelet=NEW, running=NEW)
    assert nu.upgraded(host(manifests=NEW, **everything), NEW) is True
    assert nu.upgraded(host(manifests=OLD, **everything), NEW) is False
    assert nu.upgraded(host(manifests=OLD, control_plane=False, **everything), NEW) is True
    for missing in ("kubeadm", "kubelet"):
        assert nu.upgraded(host(manifests=NEW, **dict(everything, **{missing: OLD})), NEW) is False
    assert nu.upgraded(host(manifests=NEW, kubeadm=NEW, kubelet=NEW, running=OLD), NEW) is False


@pytest.mark.parametrize("observed, version, command, refused", [
    (host(), "1.37", "sideways", ["not a release version", "neither apply nor node"]),
    (host(control_plane=False, running="v1.38.0"), NEW, "apply", ["runs on a control plane node", "never downgrades"]),
    (host(manifests="v1.35.9"), "v2.0.0", "apply", ["reached through v1.36 first"]),
], ids=["a bad version and a bad command are both told", "every refusal of a Node is told", "a new major is past the next minor"])
def test_every_refusal_is_told(observed, version, command, refused):
    found = nu.refusals(observed, version, command)
    assert len(found) == len(refused) and all(r in f for r, f in zip(refused, found)), found


@pytest.mark.parametrize("observed, command", [
    (host(running=NEW), "node"),
    (host(running="v1.37.0"), "node"),
    (host(manifests="v1.36.0"), "apply"),
    (dict(host(), manifests={}), "apply"),
    (host(control_plane=False, manifests="v1.35.9"), "node"),
    (dict(host(), node={"name": "cp-1", "kubelet_version": "unknown", "ready": True}), "node"),
], ids=["a kubelet already of the version", "an older patch of the kubelet", "a control plane one minor behind",
        "a control plane whose API server version is not known", "a worker has no control plane to skip minors of",
        "a kubelet version that is no release version"])
def test_what_is_at_the_edge_and_not_refused(observed, command):
    assert nu.refusals(observed, NEW, command) == []


def test_the_refusals_say_the_versions():
    assert nu.refusals(host(running="v1.38.0"), NEW, "node") == [
        "the Node's kubelet is v1.38.0, newer than v1.37.1: an in-place upgrade never downgrades"]
    assert nu.refusals(host(manifests="v1.35.9"), NEW, "node") == [
        "the control plane runs v1.35.9: kubeadm upgrades a control plane one minor at a time, so v1.37.1 is reached through v1.36 first"]
    assert nu.refusals(host(), "v1.37", "node") == ["version: 'v1.37' is not a release version like v1.37.1"]
    assert nu.refusals(host(), NEW, "apply ") == ["command: 'apply ' is neither apply nor node"]


NO_EXECUTE = {"key": "maintenance", "effect": "NoExecute"}


@pytest.mark.parametrize("name, nodes, drain, reason", [
    ("w-1", [node("w-1"), node("w-2", taints=[NO_EXECUTE])], False, "no other node can take"),
    ("w-1", [node("w-1", taints=[NO_EXECUTE]), node("w-2", taints=[NO_EXECUTE])], True, "w-2 can take the pods"),
    ("w-1", [node("w-1", taints=[{"key": "maintenance", "effect": "NoSchedule"}]), node("w-2", taints=[NO_EXECUTE])], False,
     "no other node can take"),
    ("w-1", [node("w-1"), {"metadata": {"name": "w-2"}}], False, "no other node can take"),
    ("w-1", [node("w-1"), {"metadata": {"name": "w-2"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}], True,
     "w-2 can take the pods"),
    ("w-1", [node("w-1"), {"metadata": {"name": "w-2"}, "status": {"conditions": [{"type": "MemoryPressure", "status": "True"}]}}],
     False, "no other node can take"),
], ids=["a NoExecute taint keeps pods away", "a taint this node has too is tolerated",
        "the same key with another effect is not tolerated", "a node with no status is not Ready",
        "a Ready node with no spec is schedulable and untainted", "another condition True is not Ready"])
def test_which_other_nodes_can_take_the_pods(name, nodes, drain, reason):
    decided = nu.drain_decision(name, nodes)
    assert decided["drain"] is drain and reason in decided["reason"], decided


def test_the_reasons_not_to_drain_name_the_node():
    assert nu.drain_decision("cp-1", [node("cp-2")]) == {"drain": False, "reason": "the Node cp-1 is not there"}
    assert nu.drain_decision("cp-1", [node("cp-1")]) == {"drain": False, "reason": "a single-node cluster: the pods have nowhere to go"}
    assert nu.drain_decision("w-1", [node("w-1"), node("w-2", ready=False)]) == {
        "drain": False, "reason": "no other node can take the pods (none is Ready, schedulable and tainted no more than w-1)"}


@pytest.mark.parametrize("record, unschedulable, uncordon", [
    ({"version": NEW, "step": "drain", "uncordon": "yes"}, True, False),
    ({"version": NEW, "step": "drain"}, False, True),
    ({"version": NEW, "step": "drain", "uncordon": False}, True, False),
], ids=["a recorded answer that is not a boolean is no answer", "no recorded answer: the cordon now decides",
        "a recorded answer is kept"])
def test_the_uncordon_answer_recorded_must_be_a_boolean(record, unschedulable, uncordon):
    assert nu.uncordon_after(record, NEW, {"unschedulable": unschedulable}) is uncordon


@pytest.mark.parametrize("observed, remaining", [
    (host(kubeadm=OLD, step="software"), ALL_NODE),
    (host(kubeadm=NEW, manifests=OLD, step="kubeadm-upgrade"), ALL_NODE[1:]),
    (host(kubeadm=NEW, manifests=NEW, kubelet=OLD, step="kubelet"), ["kubelet", "uncordon", "ready"]),
], ids=["software recorded, kubeadm not of the version: the software again", "kubeadm upgrade recorded, the manifests old: again",
        "the kubelet recorded, the binary old: again"])
def test_the_step_recorded_last_is_done_again_when_its_result_is_not_there(observed, remaining):
    assert nu.remaining_steps(observed, NEW, "node") == remaining


def test_the_refusals_of_a_node_say_what_to_do_instead():
    assert nu.refusals(dict(host(), node=None), NEW, "node") == [
        "the host has no Node: an in-place upgrade upgrades a machine that runs (a machine without a Node is replaced, not upgraded)"]
    assert nu.refusals(host(control_plane=False), NEW, "apply") == [
        "kubeadm upgrade apply runs on a control plane node; this host has no static pod manifest of the API server "
        "(a worker is upgraded with kubeadm upgrade node)"]


@pytest.mark.parametrize("name, nodes, decided", [
    ("w-1", [node("w-1"), node("w-3"), node("w-2")], {"drain": True, "reason": "w-2, w-3 can take the pods"}),
    ("cp-1", [node("cp-1", taints=[CP_TAINT]), node("gpu-1", taints=[{"key": "gpu", "effect": "NoSchedule"}])],
     {"drain": False, "reason": "no other node can take the pods (none is Ready, schedulable and tainted no more than cp-1)"}),
], ids=["the nodes that can take the pods are named, in order", "a taint of another key is not tolerated"])
def test_the_drain_decision_and_its_reason(name, nodes, decided):
    assert nu.drain_decision(name, nodes) == decided
