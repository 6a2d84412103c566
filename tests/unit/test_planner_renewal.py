# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planner's renew_certificates step (docs/certificates.md "Renewal in place"): which machine, behind what, and
what it leaves to the other steps."""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import ACTIONS, plan

from ansible_collections.kubeadm.control_plane.tests.unit.builders import HASHES, NEXT, at, machine, member, snapshot, spec, upgrade, with_field

FDS = [{"name": n, "control_plane": True} for n in ("fd-a", "fd-b", "fd-c")]
HEALTHY = {"unhealthy": [], "remediation_allowed": True, "reason": "all healthy"}
IN_3_DAYS, IN_2_DAYS, IN_A_YEAR = at(-60 * 24 * 3), at(-60 * 24 * 2), at(-60 * 24 * 364)
RENEWING = {"started": at(5), "step": "renew", "failed_step": None, "error": None}


def in_place(**fields):
    the_spec = with_field(spec(**fields), "rollout.before.certificates_expiry_days", 7)
    return with_field(the_spec, "certificates.renewal", "in_place")


def cluster(**overrides):
    return [machine("cp-%d" % i, fd=FDS[i - 1]["name"], created=1000 - i, **dict({"certificates_expire": IN_A_YEAR}, **overrides.get("cp_%d" % i, {})))
            for i in (1, 2, 3)]


def decide(the_spec, machines, health=None, **extra):
    return plan(the_spec, snapshot(machines, failure_domains=FDS, **extra), desired_hashes=HASHES, health=health or HEALTHY)


def test_renew_certificates_is_an_action():
    assert "renew_certificates" in ACTIONS


def test_the_machine_whose_certificates_expire_first_is_renewed_first_behind_preflight_and_quorum():
    result = decide(in_place(), cluster(cp_2={"certificates_expire": IN_3_DAYS}, cp_3={"certificates_expire": IN_2_DAYS}))
    assert (result["action"], result["machine"], result["machines"]) == ("renew_certificates", "cp-3", ["cp-2", "cp-3"])
    assert result["reason"] == "renew the certificates of cp-3 in place: certificates expire at %s, within 7 days" % IN_2_DAYS
    assert result["preflight"]["ok"]


def test_with_the_default_renewal_the_machine_is_replaced():
    the_spec = with_field(spec(), "rollout.before.certificates_expiry_days", 7)
    result = decide(the_spec, cluster(cp_2={"certificates_expire": IN_3_DAYS}))
    assert (result["action"], result["step"]) == ("rollout", "scale_up")


def test_a_renewal_waits_for_preflight():
    result = decide(in_place(), cluster(cp_1={"components": {"scheduler": "unhealthy"}}, cp_2={"certificates_expire": IN_3_DAYS}))
    assert (result["action"], result["machine"]) == ("wait", "cp-2")
    assert [b["rule"] for b in result["blocked_by"]] == ["components_not_healthy"]
    assert result["reason"].endswith(", once preflight passes")


def test_a_renewal_under_way_is_finished_first_and_left_out_of_preflight_whatever_the_spec_says():
    machines = cluster(cp_1={"certificates_expire": IN_2_DAYS},
                       cp_3={"certificate_renewal": RENEWING, "components": {"api_server": "missing"}})
    result = decide(in_place(), machines)
    assert (result["action"], result["machine"]) == ("renew_certificates", "cp-3")
    assert result["reason"].startswith("finish renewing the certificates of cp-3 in place: its certificate renewal in place stopped after step renew")
    assert result["preflight"]["ok"]
    # the default renewal (rollout) finishes it too: replacing a machine whose pods may be down is no shorter way back
    assert decide(spec(), machines)["action"] == "renew_certificates"


def test_a_flagged_machine_whose_renewal_is_under_way_is_finished_rather_than_remediated():
    machines = cluster(cp_3={"certificate_renewal": RENEWING, "components": {"api_server": "missing"}})
    flagged = {"unhealthy": ["cp-3"], "remediation_allowed": True, "reason": "flagged by the test"}
    result = decide(spec(), machines, health=flagged)
    assert (result["action"], result["machine"]) == ("renew_certificates", "cp-3")


def test_a_renewal_under_way_waits_for_the_other_members():
    machines = cluster(cp_2={"certificate_renewal": RENEWING})
    members = [member("cp-1", leader=True), member("cp-2", responsive=False), member("cp-3", responsive=False)]
    result = decide(in_place(), machines, members=members)
    assert (result["action"], result["machine"]) == ("wait", "cp-2")
    assert "etcd_members_not_healthy" in [b["rule"] for b in result["blocked_by"]]


def test_the_only_machine_is_renewed_without_a_quorum_projection():
    only = [machine("cp-1", fd="fd-a", certificates_expire=IN_3_DAYS)]
    result = decide(in_place(replicas=1), only)
    assert (result["action"], result["machine"]) == ("renew_certificates", "cp-1")


def test_the_in_place_upgrade_renews_the_certificates_of_the_machines_it_upgrades():
    the_spec = in_place(version=NEXT, upgrade=upgrade("in_place"))
    result = decide(the_spec, cluster(cp_2={"certificates_expire": IN_3_DAYS}), kubeadm_config={"kubernetes_version": NEXT})
    assert (result["action"], result["machine"]) == ("upgrade_in_place", "cp-1")
    assert result["machines"] == ["cp-1", "cp-2", "cp-3"]
