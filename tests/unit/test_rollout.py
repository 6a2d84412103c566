# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which machines are outdated and why (RO1 mapped to the snapshot), and the next rollout step (RO3)."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.rollout import (
    next_step,
    outdated_machines,
    outdated_reasons,
    seconds_until_outdated,
    split_by_strategy,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

from ansible_collections.kubeadm.control_plane.tests.unit.builders import HASHES, NOW, VERSION, at, machine, spec, with_field

CERT_DAYS = 30
IN_29_DAYS = "2026-12-21T10:00:00Z"
IN_30_DAYS = "2026-12-22T10:00:00Z"
IN_31_DAYS = "2026-12-23T10:00:00Z"


STOPPED_AFTER_KUBELET = {"version": VERSION, "step": "kubelet", "failed_step": None, "error": None}
EXTERNAL_ETCD = {"external": {"endpoints": ["https://10.0.0.5:2379"], "caFile": "a", "certFile": "b", "keyFile": "c"}}


def etcd_spec(etcd):
    return with_field(spec(), "kubeadm.cluster_configuration.etcd", etcd)


def rollout_spec(after=None, days=None, **kw):
    return spec(rollout={"strategy": "RollingUpdate", "max_surge": 1, "after": after, "before": {"certificates_expiry_days": days}}, **kw)


# (spec, machine, expected reason kinds)
CASES = [
    ("a machine built from the current spec at the current version is up to date", spec(), machine("cp-1"), []),
    ("another version rolls a machine out", spec(version="v1.31.0"), machine("cp-1"), ["version"]),
    ("a version without its leading v is the same version", spec(version="v1.30.4"), machine("cp-1", version="1.30.4"), []),
    ("an unknown machine version counts as different", spec(), machine("cp-1", version=None), ["version"]),
    ("another spec hash rolls a machine out", spec(), machine("cp-1", spec_hash="older-hash"), ["spec"]),
    ("a machine with no recorded hash does not roll out for the spec", spec(), machine("cp-1", spec_hash=None), []),
    (
        "a machine with no recorded hash rolls out once rollout.after has passed",
        rollout_spec(after=at(10)),
        machine("cp-1", spec_hash=None, created=60),
        ["rollout_after"],
    ),
    ("rollout.after in the future rolls nothing out yet", rollout_spec(after=at(-10)), machine("cp-1", created=60), []),
    ("rollout.after exactly now rolls nothing out yet", rollout_spec(after=NOW), machine("cp-1", created=60), []),
    ("a machine created after rollout.after is up to date", rollout_spec(after=at(60)), machine("cp-1", created=10), []),
    ("a machine created exactly at rollout.after is up to date", rollout_spec(after=at(60)), machine("cp-1", created=60), []),
    (
        "certificates expiring within the days set roll a machine out",
        rollout_spec(days=CERT_DAYS),
        machine("cp-1", certificates_expire=IN_29_DAYS),
        ["certificates"],
    ),
    (
        "certificates expiring exactly at the limit do not",
        rollout_spec(days=CERT_DAYS),
        machine("cp-1", certificates_expire=IN_30_DAYS),
        [],
    ),
    (
        "certificates expiring after the limit do not",
        rollout_spec(days=CERT_DAYS),
        machine("cp-1", certificates_expire=IN_31_DAYS),
        [],
    ),
    ("an unknown certificate expiry is no reason", rollout_spec(days=CERT_DAYS), machine("cp-1", certificates_expire=None), []),
    ("without a certificate rule expiry is no reason", rollout_spec(), machine("cp-1", certificates_expire=IN_29_DAYS), []),
    (
        "every reason that holds is reported, in order",
        rollout_spec(after=at(10), days=CERT_DAYS, version="v1.31.0"),
        machine("cp-1", created=60, spec_hash="older-hash", certificates_expire=IN_29_DAYS),
        ["certificates", "rollout_after", "version", "spec"],
    ),
    ("a machine being deleted is never outdated", spec(version="v1.31.0"), machine("cp-1", deleting=True), []),
    ("an etcd older than the version's default rolls a machine out", spec(), machine("cp-1", etcd_image_tag="3.6.6-0"), ["etcd"]),
    ("an etcd at the version's default is up to date", spec(), machine("cp-1", etcd_image_tag="3.6.8-0"), []),
    ("an etcd older than etcd.local.imageTag rolls a machine out", etcd_spec({"local": {"imageTag": "3.6.11-0"}}),
     machine("cp-1", etcd_image_tag="3.6.8-0"), ["etcd"]),
    ("an etcd newer than the one wanted is up to date: kubeadm never downgrades etcd", spec(),
     machine("cp-1", etcd_image_tag="3.6.11-0"), []),
    ("an etcd tag not observed is no reason", etcd_spec({"local": {"imageTag": "3.6.11-0"}}), machine("cp-1", etcd_image_tag=None), []),
    ("a tag that is no version and differs rolls a machine out", etcd_spec({"local": {"imageTag": "custom-build"}}),
     machine("cp-1", etcd_image_tag="3.6.8-0"), ["etcd"]),
    ("the same tag that is no version is up to date", etcd_spec({"local": {"imageTag": "custom-build"}}),
     machine("cp-1", etcd_image_tag="custom-build"), []),
    ("with external etcd the etcd tag is no reason", etcd_spec(EXTERNAL_ETCD), machine("cp-1", etcd_image_tag="3.5.0-0"), []),
    ("the version and etcd are both reported", spec(version="v1.37.1"), machine("cp-1", etcd_image_tag="3.6.8-0"), ["version", "etcd"]),
    ("an in-place upgrade to the version stopped after its kubelet step is not done", spec(),
     machine("cp-1", upgrade=STOPPED_AFTER_KUBELET), ["upgrade"]),
    ("an in-place upgrade to the version that failed at a step is not done", spec(),
     machine("cp-1", upgrade=dict(STOPPED_AFTER_KUBELET, failed_step="uncordon", error="timed out")), ["upgrade"]),
    ("an in-place upgrade to the version done to its last step is done", spec(),
     machine("cp-1", upgrade=dict(STOPPED_AFTER_KUBELET, step="ready")), []),
    ("an unfinished in-place upgrade to another version is not this one", spec(version="v1.31.0"),
     machine("cp-1", upgrade=STOPPED_AFTER_KUBELET), ["version"]),
]


@pytest.mark.parametrize("the_spec,the_machine,kinds", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_outdated_reasons(the_spec, the_machine, kinds):
    reasons = outdated_reasons(the_machine, the_spec, HASHES, parse_time(NOW))
    assert [r.kind for r in reasons] == kinds
    assert all(r.message for r in reasons)


def test_an_unfinished_upgrade_says_where_it_stopped_and_is_finished_in_place():
    stopped = machine("cp-1", upgrade=STOPPED_AFTER_KUBELET)
    (reason,) = outdated_reasons(stopped, spec(), HASHES, parse_time(NOW))
    assert reason.message == "its in-place upgrade to %s stopped after step kubelet" % VERSION
    failed = machine("cp-1", upgrade=dict(STOPPED_AFTER_KUBELET, failed_step="uncordon", error="timed out"))
    (reason,) = outdated_reasons(failed, spec(), HASHES, parse_time(NOW))
    assert reason.message == "its in-place upgrade to %s failed at step uncordon: timed out" % VERSION
    replace, upgrade, renew = split_by_strategy(outdated_machines([stopped], spec(), HASHES, parse_time(NOW)), "in_place")
    assert (list(replace), list(upgrade), list(renew)) == ([], ["cp-1"], [])


def test_outdated_machines_lists_only_outdated_ones():
    machines = [machine("cp-1"), machine("cp-2", version="v1.29.8")]
    out = outdated_machines(machines, spec(), HASHES, parse_time(NOW))
    assert list(out) == ["cp-2"]
    assert "v1.29.8" in out["cp-2"][0].message


EXPIRING = at(-60 * 24 * 3)  # in 3 days, within a 7-day window
RENEWING = {"started": at(5), "step": "renew", "failed_step": None, "error": None}


@pytest.mark.parametrize(
    "strategy,renewal,machine_kwargs,where",
    [
        ("rolling", "rollout", {"version": "v1.29.8"}, "replace"),
        ("in_place", "rollout", {"version": "v1.29.8"}, "in_place"),
        ("in_place", "rollout", {"version": "v1.29.8", "spec_hash": "older-hash"}, "replace"),
        ("in_place", "rollout", {"spec_hash": "older-hash"}, "replace"),
        ("rolling", "rollout", {"etcd_image_tag": "3.6.6-0"}, "replace"),
        ("in_place", "rollout", {"etcd_image_tag": "3.6.6-0"}, "in_place"),
        ("in_place", "rollout", {"version": "v1.29.8", "etcd_image_tag": "3.6.6-0"}, "in_place"),
        ("in_place", "rollout", {"etcd_image_tag": "3.6.6-0", "spec_hash": "older-hash"}, "replace"),
        ("rolling", "rollout", {"certificates_expire": EXPIRING}, "replace"),
        ("in_place", "rollout", {"certificates_expire": EXPIRING}, "replace"),
        ("rolling", "in_place", {"certificates_expire": EXPIRING}, "renew"),
        ("in_place", "in_place", {"certificates_expire": EXPIRING}, "renew"),
        ("in_place", "in_place", {"certificates_expire": EXPIRING, "version": "v1.29.8"}, "in_place"),
        ("rolling", "in_place", {"certificates_expire": EXPIRING, "version": "v1.29.8"}, "replace"),
        ("rolling", "in_place", {"certificates_expire": EXPIRING, "spec_hash": "older-hash"}, "replace"),
        ("rolling", "rollout", {"certificate_renewal": RENEWING}, "renew"),
        ("in_place", "rollout", {"certificate_renewal": RENEWING, "version": "v1.29.8"}, "in_place"),
        ("rolling", "rollout", {"certificate_renewal": RENEWING, "spec_hash": "older-hash"}, "replace"),
    ],
    ids=[
        "the rolling strategy replaces a machine of another version",
        "the in-place strategy upgrades a machine that differs only in version",
        "the in-place strategy replaces a machine that also differs in spec",
        "the in-place strategy replaces a machine built from another spec",
        "the rolling strategy replaces a machine of an older etcd, as a changed etcd imageTag did KCP's",
        "the in-place strategy upgrades a machine that differs only in etcd",
        "the in-place strategy upgrades a machine that differs in version and etcd",
        "the in-place strategy replaces a machine of an older etcd that also differs in spec",
        "certificates renewed by rollout replace the machine",
        "certificates renewed by rollout replace the machine with the in-place upgrade strategy too",
        "certificates renewed in place are renewed, whatever the upgrade strategy",
        "certificates renewed in place are renewed with the in-place upgrade strategy",
        "the in-place upgrade renews the certificates of a machine it upgrades",
        "a machine of another version is replaced with the rolling strategy, which renews its certificates too",
        "a machine built from another spec is replaced, which renews its certificates too",
        "a renewal under way is finished in place whatever the spec says",
        "a renewal under way is finished by the in-place upgrade of its machine",
        "a renewal under way is finished by the replacement of a machine built from another spec",
    ],
)
def test_split_by_strategy(strategy, renewal, machine_kwargs, where):
    days = with_field(spec(), "rollout.before.certificates_expiry_days", 7)
    out = outdated_machines([machine("cp-1", **machine_kwargs)], days, HASHES, parse_time(NOW))
    replace, upgrade, renew = split_by_strategy(out, strategy, renewal)
    assert {"replace": list(replace), "in_place": list(upgrade), "renew": list(renew)}[where] == ["cp-1"]
    assert len(replace) + len(upgrade) + len(renew) == 1


def test_a_renewal_under_way_says_where_it_stopped():
    failed = dict(RENEWING, failed_step="kube-apiserver", error="kube-apiserver did not answer its probe within 300 s")
    reasons = outdated_reasons(machine("cp-1", certificate_renewal=RENEWING), spec(), HASHES, parse_time(NOW))
    assert [(r.kind, r.message) for r in reasons] == [("renewal", "its certificate renewal in place stopped after step renew")]
    reasons = outdated_reasons(machine("cp-1", certificate_renewal=failed), spec(), HASHES, parse_time(NOW))
    assert [r.message for r in reasons] == [
        "its certificate renewal in place failed at step kube-apiserver: kube-apiserver did not answer its probe within 300 s"]


@pytest.mark.parametrize(
    "machines,replicas,surge,expected",
    [(3, 3, 1, "scale_up"), (4, 3, 1, "scale_down"), (3, 3, 0, "scale_down"), (2, 3, 0, "scale_up"), (5, 3, 1, "scale_down")],
    ids=[
        "max_surge 1 adds a machine first",
        "max_surge 1 removes once the surge machine exists",
        "max_surge 0 removes a machine first",
        "max_surge 0 adds once a machine was removed",
        "more machines than replicas plus surge scale down",
    ],
)
def test_next_step(machines, replicas, surge, expected):
    assert next_step(machines, replicas, surge) == expected


PARTS = {"init": "init-hash", "join": "join-hash"}
# (machine's bootstrap, recorded hash, outdated for the spec)
BY_PART = [
    ("the init machine built from the init part is up to date", "init", "init-hash", False),
    ("the init machine is outdated when the init part changed", "init", "join-hash", True),
    ("a joined machine built from the join part is up to date", "join", "join-hash", False),
    ("a joined machine is outdated when the join part changed", "join", "init-hash", True),
    ("a machine of unknown bootstrap is up to date with either part", None, "join-hash", False),
    ("a machine of unknown bootstrap is outdated when it matches neither part", None, "older-hash", True),
]


@pytest.mark.parametrize("bootstrap,recorded,outdated", [c[1:] for c in BY_PART], ids=[c[0] for c in BY_PART])
def test_each_machine_is_compared_with_the_part_of_the_spec_that_built_it(bootstrap, recorded, outdated):
    reasons = outdated_reasons(machine("cp-1", bootstrap=bootstrap, spec_hash=recorded), spec(), PARTS, parse_time(NOW))
    assert [r.kind for r in reasons] == (["spec"] if outdated else [])


def test_seconds_until_outdated_is_the_soonest_time_rule():
    the_spec = spec(rollout={"strategy": "RollingUpdate", "max_surge": 1, "after": at(-120),
                             "before": {"certificates_expiry_days": 30}})
    expiring = machine("cp-1", certificates_expire="2026-12-22T11:00:00Z")  # 30 days before: NOW + 1 h
    assert seconds_until_outdated([expiring, machine("cp-2")], the_spec, parse_time(NOW)) == 3601.0
    assert seconds_until_outdated([machine("cp-2", created=-200, certificates_expire=None)], the_spec, parse_time(NOW)) is None


def test_seconds_until_outdated_by_rollout_after_alone_and_its_boundaries():
    the_spec = spec(rollout={"strategy": "RollingUpdate", "max_surge": 1, "after": at(-120)})
    assert seconds_until_outdated([machine("cp-1", certificates_expire=None)], the_spec, parse_time(NOW)) == 7201.0
    # A machine created at rollout.after itself is not created before it: it never turns outdated by this rule.
    assert seconds_until_outdated([machine("cp-1", created=-120, certificates_expire=None)], the_spec,
                                  parse_time(NOW)) is None


def test_a_certificate_boundary_reached_right_now_is_one_margin_away():
    the_spec = spec(rollout={"strategy": "RollingUpdate", "max_surge": 1, "before": {"certificates_expiry_days": 30}})
    now_boundary = machine("cp-1", certificates_expire="2026-12-22T10:00:00Z")  # exactly 30 days after NOW
    assert seconds_until_outdated([now_boundary], the_spec, parse_time(NOW)) == 1.0


FULL_HASH = "0123456789abcdef0123456789abcdef"
# (spec, machine, the spec hash of each part, the reasons' messages in order)
MESSAGES = [
    ("expiring certificates name the expiry and the days set", rollout_spec(days=CERT_DAYS), machine("cp-1", certificates_expire=IN_29_DAYS),
     HASHES, ["certificates expire at 2026-12-21T10:00:00Z, within 30 days"]),
    ("rollout.after names its time", rollout_spec(after=at(10)), machine("cp-1", created=60), HASHES,
     ["created before rollout.after 2026-11-22T09:50:00Z"]),
    ("another version names both versions, the spec's with its v", spec(version="1.37.1"), machine("cp-1"), HASHES,
     ["runs %s, the spec wants v1.37.1" % VERSION]),
    ("an unknown version says so", spec(), machine("cp-1", version=None), HASHES, ["runs an unknown version, the spec wants %s" % VERSION]),
    ("an older etcd names both tags", spec(), machine("cp-1", etcd_image_tag="3.6.6-0"), HASHES, ["runs etcd 3.6.6-0, the spec wants 3.6.8-0"]),
    ("another spec hash shows the first twelve characters of each", spec(), machine("cp-1", spec_hash=FULL_HASH, bootstrap="join"),
     {"init": "init-hash", "join": "fedcba9876543210fedcba"}, ["built from spec 0123456789ab, the spec is now fedcba987654"]),
    ("a machine of unknown bootstrap is compared with either part", spec(), machine("cp-1", spec_hash=FULL_HASH),
     PARTS, ["built from spec 0123456789ab, the spec is now init-hash or join-hash"]),
    ("a failed upgrade step without an error says none was recorded", spec(),
     machine("cp-1", upgrade=dict(STOPPED_AFTER_KUBELET, failed_step="drain")), HASHES,
     ["its in-place upgrade to %s failed at step drain: no error recorded" % VERSION]),
    ("an upgrade recorded before any step says so", spec(), machine("cp-1", upgrade=dict(STOPPED_AFTER_KUBELET, step=None)), HASHES,
     ["its in-place upgrade to %s stopped after step (none)" % VERSION]),
]


@pytest.mark.parametrize("the_spec,the_machine,hashes,expected", [c[1:] for c in MESSAGES], ids=[c[0] for c in MESSAGES])
def test_each_outdated_reason_tells_what_differs(the_spec, the_machine, hashes, expected):
    assert [r.message for r in outdated_reasons(the_machine, the_spec, hashes, parse_time(NOW))] == expected


def test_a_machine_being_deleted_never_turns_outdated_by_time():
    the_spec = rollout_spec(after=at(-120), days=CERT_DAYS)
    leaving = machine("cp-1", deleting=True, certificates_expire=IN_31_DAYS)
    assert seconds_until_outdated([leaving], the_spec, parse_time(NOW)) is None


def test_an_empty_recorded_spec_hash_is_no_hash_and_rolls_nothing_out():
    """A spec-hash annotation present but empty records nothing, as a missing one: no `spec` reason."""
    assert outdated_reasons(machine("cp-1", spec_hash=""), spec(), HASHES, parse_time(NOW)) == []
