# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-place request's checks (docs/rules.md IP2-IP4), each refusal with its rule and what it names."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils import upgrade_request
from ansible_collections.kubeadm.control_plane.plugins.module_utils.rollout import Reason
from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, member, snapshot, spec, upgrade, worker


def running(*versions):
    """Control plane machines cp-1, cp-2, ... running ``versions``."""
    return [machine("cp-%d" % (i + 1), version=v) for i, v in enumerate(versions)]


# (id, control plane versions, worker versions, target, [(rule, names)])
PATHS = [
    ("a patch upgrade goes ahead", ["v1.36.4"] * 3, ["v1.36.4"], "v1.36.5", []),
    ("the next minor goes ahead", ["v1.36.4"] * 3, ["v1.36.4"], "v1.37.1", []),
    ("half way through, the next minor still goes ahead", ["v1.37.1", "v1.36.4", "v1.36.4"], ["v1.36.4"], "v1.37.1", []),
    ("kubelet versions without their v read the same", ["1.36.4"], ["1.36.4"], "v1.37.1", []),
    ("a minor skipped from the lowest control plane machine is refused", ["v1.37.1", "v1.35.8", "v1.37.1"], [], "v1.37.1",
     [("in_place_minor_skip", ["cp-2"])]),
    ("two minors ahead is refused for every machine", ["v1.35.8", "v1.35.8"], [], "v1.37.1",
     [("in_place_minor_skip", ["cp-1", "cp-2"])]),
    ("a worker two minors behind is refused before the control plane moves", ["v1.36.4"], ["v1.35.8", "v1.36.4"], "v1.37.1",
     [("in_place_minor_skip", ["w-1"])]),
    ("a patch downgrade is refused", ["v1.36.4", "v1.36.4"], [], "v1.36.3", [("in_place_downgrade", ["cp-1", "cp-2"])]),
    ("a minor downgrade is refused", ["v1.37.1"], [], "v1.36.4", [("in_place_downgrade", ["cp-1"])]),
    ("a worker newer than the target is a downgrade", ["v1.36.4"], ["v1.37.1"], "v1.36.5", [("in_place_downgrade", ["w-1"])]),
    ("an unknown version cannot be checked", [None, "v1.36.4"], [None], "v1.37.1", [("in_place_version_unknown", ["cp-1", "w-1"])]),
    ("every refusal at once", ["v1.37.1", "v1.35.8", None], [], "v1.37.0",
     [("in_place_version_unknown", ["cp-3"]), ("in_place_downgrade", ["cp-1"]), ("in_place_minor_skip", ["cp-2"])]),
]


@pytest.mark.parametrize("control_plane,workers,target,expected", [c[1:] for c in PATHS], ids=[c[0] for c in PATHS])
def test_the_version_path(control_plane, workers, target, expected):
    found = upgrade_request.version_path(target, running(*control_plane), [worker("w-%d" % (i + 1), version=v) for i, v in enumerate(workers)])
    assert [(b["rule"], b["machines"]) for b in found] == expected
    assert all(b["message"].startswith("IP3: ") for b in found)


def test_a_minor_skip_says_which_minor_comes_first():
    [found] = upgrade_request.version_path("v1.37.1", running("v1.35.8"), [])
    assert "cp-1 (v1.35.8) would skip a minor to v1.37.1: upgrade it to v1.36 first" in found["message"]


# (id, member versions, target etcd image tag, expected problem fragments)
ETCD = [
    ("a patch of the same etcd minor goes ahead", ["3.6.8", "3.6.8"], "3.6.11-0", []),
    ("the next etcd minor from 3.6.11 goes ahead", ["3.6.11", "3.6.12"], "3.7.0-0", []),
    ("the next etcd minor from below 3.6.11 is refused", ["3.6.8", "3.6.11", "3.6.8"], "3.7.0-0",
     ["moves to v3.7 only from 3.6.11 or later", "cp-1 (3.6.8), cp-3 (3.6.8)"]),
    ("3.5 moves to 3.6 from 3.5.20", ["3.5.21"], "3.6.5-0", []),
    ("3.5 below 3.5.20 does not move to 3.6", ["3.5.16"], "3.6.5-0", ["moves to v3.6 only from 3.5.20 or later", "cp-1 (3.5.16)"]),
    ("an etcd minor skipped is refused", ["3.5.24"], "3.7.0-0", ["one minor at a time", "cp-1 (3.5.24)"]),
    ("an older target is no problem: kubeadm leaves a newer etcd as it is", ["3.7.0"], "3.6.8-0", []),
    ("a member that did not say its version is not judged", [None], "3.7.0-0", []),
    ("a tag that does not read as a version is not judged", ["3.6.8"], "latest", []),
]


@pytest.mark.parametrize("versions,tag,fragments", [c[1:] for c in ETCD], ids=[c[0] for c in ETCD])
def test_the_etcd_path(versions, tag, fragments):
    members = [dict(member("cp-%d" % (i + 1)), version=v) for i, v in enumerate(versions)]
    found = upgrade_request.etcd_path(tag, members)
    if not fragments:
        assert found == []
        return
    [refusal] = found
    assert refusal["rule"] == "in_place_etcd_path" and refusal["message"].startswith("IP4: the etcd of the new version is %s" % tag)
    assert all(f in refusal["message"] for f in fragments), refusal["message"]


def test_the_3_6_11_floor_says_how_to_get_there_in_this_collection():
    [refusal] = upgrade_request.etcd_path("3.7.0-0", [dict(member("cp-1"), version="3.6.8")])
    assert ("first set kubeadm.cluster_configuration.etcd.local.imageTag to 3.6.11-0 and keep version at the one the control "
            "plane runs (etcd alone is then upgraded in place), then set the new version; now at: cp-1 (3.6.8)") in refusal["message"]


def test_an_older_etcd_is_upgraded_in_place_with_the_version_and_is_no_other_change():
    replace = {"cp-1": [Reason("etcd", "runs etcd 3.6.8-0, the spec wants 3.6.11-0"), Reason("spec", "built from spec old, the spec is now new")]}
    refusal = upgrade_request.other_changes(replace, "refuse")
    assert "cp-1 built from spec old" in refusal["message"] and "runs etcd" not in refusal["message"]


def test_the_etcd_path_reads_the_spec_s_own_etcd_tag_and_skips_external_etcd():
    members = [dict(member("cp-1"), version="3.6.8")]
    snap = snapshot(running("v1.36.4"), members=members)
    custom = spec(version="v1.37.1", upgrade=upgrade("in_place"), kubeadm=dict(spec()["kubeadm"], cluster_configuration={
        "etcd": {"local": {"imageTag": "3.6.11-0"}}}))
    assert [b["rule"] for b in upgrade_request.check(spec(version="v1.37.1", upgrade=upgrade("in_place")), snap, {})] == ["in_place_etcd_path"]
    assert upgrade_request.check(custom, snap, {}) == []
    external = spec(version="v1.37.1", upgrade=upgrade("in_place"), kubeadm=dict(spec()["kubeadm"], cluster_configuration={
        "etcd": {"external": {"endpoints": ["https://10.0.0.5:2379"], "caFile": "a", "certFile": "b", "keyFile": "c"}}}))
    assert upgrade_request.check(external, snap, {}) == []


SPEC_CHANGE = {"cp-2": [Reason("version", "runs v1.36.4, the spec wants v1.37.1"), Reason("spec", "built from spec old, the spec is now new")],
               "cp-1": [Reason("certificates", "certificates expire at 2026-11-30T00:00:00Z, within 30 days")]}


def test_other_changes_are_refused_by_default_naming_each_machine_and_its_other_reasons():
    refusal = upgrade_request.other_changes(SPEC_CHANGE, "refuse")
    assert refusal["rule"] == "in_place_other_changes" and refusal["machines"] == ["cp-1", "cp-2"]
    assert refusal["message"].startswith("IP2: in place changes only the version")
    assert "cp-1 certificates expire at 2026-11-30T00:00:00Z, within 30 days; cp-2 built from spec old" in refusal["message"]
    assert "runs v1.36.4" not in refusal["message"]


@pytest.mark.parametrize("replace,setting", [(SPEC_CHANGE, "rolling"), ({}, "refuse")],
                         ids=["with other_changes rolling they are left to the rollout", "nothing else changes"])
def test_other_changes_are_not_refused(replace, setting):
    assert upgrade_request.other_changes(replace, setting) is None


def test_the_check_lists_every_refusal_in_rule_order():
    members = [dict(member("cp-1"), version="3.6.8")]
    snap = snapshot(running("v1.35.8"), members=members, workers=[worker("w-1", version="v1.38.0")])
    found = upgrade_request.check(spec(version="v1.37.1", upgrade=upgrade("in_place")), snap, SPEC_CHANGE)
    assert [b["rule"] for b in found] == ["in_place_downgrade", "in_place_minor_skip", "in_place_etcd_path", "in_place_other_changes"]
    assert {upgrade_request.RULE_IDS[b["rule"]] for b in found} == {"IP2", "IP3", "IP4"}


def test_a_machine_being_deleted_is_not_part_of_the_request():
    machines = running("v1.36.4") + [machine("cp-9", version="v1.35.0", deleting=True)]
    assert upgrade_request.check(spec(version="v1.37.1", upgrade=upgrade("in_place")), snapshot(machines), {}) == []


CONFIG = "the kubeadm-config ConfigMap"
# (id, control plane versions, kubeadm-config version, target, [(rule, names)])
ROLLING = [
    ("the next minor rolls out", ["v1.36.4", "v1.36.4"], "v1.36.4", "v1.37.1", []),
    ("a patch may go down to roll back a bad patch", ["v1.36.4", "v1.36.4"], "v1.36.4", "v1.36.3", []),
    ("versions not known are left out", [None, "v1.36.4"], None, "v1.37.1", []),
    ("a machine two minors behind is refused", ["v1.35.8", "v1.36.4"], "v1.36.4", "v1.37.1", [("rollout_minor_skip", ["cp-1"])]),
    ("a kubeadm-config two minors behind is refused, naming no machine", ["v1.36.4"], "v1.35.8", "v1.37.1",
     [("rollout_minor_skip", [])]),
    ("a minor downgrade is refused", ["v1.37.1", "v1.36.4"], "v1.36.4", "v1.36.5", [("rollout_minor_downgrade", ["cp-1"])]),
    ("a kubeadm-config a minor ahead is a downgrade, naming no machine", ["v1.36.4"], "v1.37.1", "v1.36.5",
     [("rollout_minor_downgrade", [])]),
    ("a new major skips every minor", ["v1.36.4"], "v1.36.4", "v2.0.0", [("rollout_minor_skip", ["cp-1"])]),
]


@pytest.mark.parametrize("control_plane,config,target,expected", [c[1:] for c in ROLLING], ids=[c[0] for c in ROLLING])
def test_the_rolling_version_path(control_plane, config, target, expected):
    found = upgrade_request.rolling_version_path(target, running(*control_plane), config)
    assert [(b["rule"], b["machines"]) for b in found] == expected


def test_a_rolling_minor_skip_names_everything_behind_and_the_minor_to_roll_out_first():
    [found] = upgrade_request.rolling_version_path("v1.37.1", running("v1.35.8", "v1.35.9", "v1.36.4"), "v1.35.8")
    assert found == {
        "rule": "rollout_minor_skip",
        "message": "RO6: API servers stay within one minor of each other, and cp-1 (v1.35.8), cp-2 (v1.35.9), %s (v1.35.8) would "
                   "skip a minor to v1.37.1: roll out to v1.36 first" % CONFIG,
        "machines": ["cp-1", "cp-2"],
    }


def test_a_rolling_minor_downgrade_names_everything_newer():
    [found] = upgrade_request.rolling_version_path("v1.36.5", running("v1.37.1", "v1.36.4"), "v1.37.0")
    assert found == {
        "rule": "rollout_minor_downgrade",
        "message": "RO6: Kubernetes does not go back a minor (the new API servers would read what newer ones wrote to etcd): "
                   "cp-1 (v1.37.1), %s (v1.37.0) newer than v1.36.5; a patch of the same minor may go down" % CONFIG,
        "machines": ["cp-1"],
    }


def test_in_place_refusals_name_every_machine_and_the_minor_to_upgrade_to_first():
    found = upgrade_request.version_path("v1.37.1", running("v1.35.8", "v1.35.9", None, "v1.37.2"), [worker("w-1", version=None)])
    assert [b["message"] for b in found] == [
        "IP3: the version cp-3, w-1 runs is not known, so the way to v1.37.1 cannot be checked",
        "IP3: an in-place upgrade never goes down: cp-4 (v1.37.2) newer than v1.37.1",
        "IP3: kubeadm upgrades one minor at a time, and cp-1 (v1.35.8), cp-2 (v1.35.9) would skip a minor to v1.37.1: "
        "upgrade them to v1.36 first",
    ]


def test_an_in_place_upgrade_to_a_new_major_skips_a_minor():
    assert [b["rule"] for b in upgrade_request.version_path("v2.0.0", running("v1.36.4"), [])] == ["in_place_minor_skip"]


def test_an_etcd_member_without_a_name_is_named_by_its_id():
    unnamed = dict(member("cp-1", member_id="8e9e05c52164694d"), name="", version="3.6.8")
    [refusal] = upgrade_request.etcd_path("3.7.0-0", [unnamed, dict(member("cp-2"), version="3.6.9")])
    assert refusal["message"].endswith("; now at: 8e9e05c52164694d (3.6.8), cp-2 (3.6.9)")


def test_other_changes_lists_every_other_reason_of_a_machine():
    replace = {"cp-1": [Reason("spec", "built from spec old, the spec is now new"),
                        Reason("certificates", "certificates expire at 2026-11-30T00:00:00Z, within 30 days")]}
    refusal = upgrade_request.other_changes(replace, "refuse")
    assert refusal["message"] == (
        "IP2: in place changes only the version and what comes with it, and upgrade.other_changes is refuse: cp-1 built from spec old, "
        "the spec is now new, certificates expire at 2026-11-30T00:00:00Z, within 30 days (set upgrade.other_changes to rolling to "
        "replace these machines, or undo the change)")


def test_each_refusal_is_reported_under_its_rule_of_docs_rules_md():
    assert upgrade_request.RULE_IDS == {
        "in_place_other_changes": "IP2", "in_place_version_unknown": "IP3", "in_place_downgrade": "IP3", "in_place_minor_skip": "IP3",
        "in_place_etcd_path": "IP4", "rollout_minor_skip": "RO6", "rollout_minor_downgrade": "RO6"}


def test_an_etcd_minor_skip_names_the_members_it_would_skip_from():
    [refusal] = upgrade_request.etcd_path("3.7.0-0", [dict(member("cp-1"), version="3.5.24")])
    assert refusal["message"] == "IP4: the etcd of the new version is 3.7.0-0, and etcd upgrades one minor at a time; it would skip one from: cp-1 (3.5.24)"
