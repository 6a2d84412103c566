# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A machine's certificate renewal in place (plugins/module_utils/certificate_renewal.py): the steps its host record
leaves, what the snapshot and the rollout reasons say of it, and which machine is renewed next."""

from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_renewal import left, machine_to_renew, progress, remaining

from ansible_collections.kubeadm.control_plane.tests.unit.builders import at, machine

FDS = ("fd-a", "fd-b", "fd-c")
IN_3_DAYS, IN_2_DAYS = at(-60 * 24 * 3), at(-60 * 24 * 2)
RENEWING = {"started": at(5), "step": "renew", "failed_step": None, "error": None}


def cluster(**overrides):
    return [machine("cp-%d" % i, fd=FDS[i - 1], created=1000 - i, **overrides.get("cp_%d" % i, {})) for i in (1, 2, 3)]


def test_machine_to_renew_prefers_a_renewal_under_way_then_the_earliest_expiry_then_the_oldest():
    machines = cluster(cp_1={"certificates_expire": IN_3_DAYS}, cp_2={"certificates_expire": IN_3_DAYS}, cp_3={"certificates_expire": IN_2_DAYS})
    assert machine_to_renew(machines, {"cp-1", "cp-2"}) == "cp-1"
    assert machine_to_renew(machines, {"cp-1", "cp-2", "cp-3"}) == "cp-3"
    machines[1]["certificate_renewal"] = RENEWING
    assert machine_to_renew(machines, {"cp-1", "cp-2", "cp-3"}) == "cp-2"


def test_the_steps_left_follow_the_record_and_the_pods_the_host_runs():
    every = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]
    assert remaining(None, every) == ["renew"] + every + ["ready"]
    assert remaining({"step": None}, every) == ["renew"] + every + ["ready"]
    assert remaining({"step": "renew"}, every) == every + ["ready"]
    assert remaining({"step": "kube-apiserver"}, every) == ["kube-controller-manager", "kube-scheduler", "ready"]
    assert remaining({"step": "kube-scheduler"}, every) == ["ready"]
    assert remaining({"step": "ready"}, every) == []
    # external etcd: no etcd pod to restart
    assert remaining({"step": "renew"}, every[1:]) == every[1:] + ["ready"]


def test_progress_reads_a_host_record():
    assert progress(None) is None
    record = {"started": "2026-11-22T10:00:00Z", "step": "etcd", "failed": {"step": "kube-apiserver", "error": "no answer", "at": "x"}}
    assert progress(record) == {"started": "2026-11-22T10:00:00Z", "step": "etcd", "failed_step": "kube-apiserver", "error": "no answer",
                                "expired": False}
    assert progress({"started": "2026-11-22T10:00:00Z", "step": "other", "failed": "text", "expired": True}) == {
        "started": "2026-11-22T10:00:00Z", "step": None, "failed_step": None, "error": None, "expired": True}


def test_where_a_renewal_stopped_is_said_with_its_failure_if_any():
    assert left({"step": None, "failed_step": None}) == "its certificate renewal in place stopped after step (none)"
    assert left({"step": "etcd", "failed_step": None}) == "its certificate renewal in place stopped after step etcd"
    assert left({"step": "etcd", "failed_step": "kube-apiserver", "error": None}) == \
        "its certificate renewal in place failed at step kube-apiserver: no error recorded"
    assert left({"step": "etcd", "failed_step": "kube-apiserver", "error": "no answer"}) == \
        "its certificate renewal in place failed at step kube-apiserver: no answer"


def test_a_machine_whose_expiry_is_not_known_comes_after_the_dated_ones():
    machines = cluster(cp_1={"certificates_expire": None, "certificate_renewal": None}, cp_2={"certificates_expire": IN_3_DAYS})
    assert machine_to_renew(machines, {"cp-1", "cp-2"}) == "cp-2"
    machines = cluster(cp_1={"certificates_expire": None}, cp_2={"certificates_expire": None})
    assert machine_to_renew(machines, {"cp-2", "cp-1"}) == "cp-1"
