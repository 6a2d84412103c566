# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd_info and etcd_member run through Ansible (`ansible localhost -m …`) against live etcd clusters."""

import pytest

pytestmark = [pytest.mark.etcd, pytest.mark.ansible]


def key_body(path):
    """The base64 lines of a PEM private key: what must never show up in any output."""
    with open(path) as handle:
        return [line for line in handle.read().splitlines() if line and not line.startswith("-----")]


def assert_no_secret(output, etcd_pki):
    for line in key_body(etcd_pki.client_key):
        assert line not in output
    assert "Traceback" not in output


def test_etcd_info_reports_a_healthy_cluster_and_its_preflight(connection_args, healthy3, etcd_pki, run_module):
    args = connection_args(healthy3, expected_members=["cp-1", "cp-2", "cp-3"])
    rc, result, output = run_module("etcd_info", args)

    assert rc == 0, output
    assert result["changed"] is False
    assert [m["name"] for m in result["etcd"]["members"]] == ["cp-1", "cp-2", "cp-3"]
    assert result["preflight"]["ok"] and result["preflight"]["problems"] == []
    assert result["preflight"]["members"]["cp-2"] == {"status": "true", "reason": ""}
    assert_no_secret(output, etcd_pki)


def test_etcd_info_names_every_bad_argument_before_connecting(etcd_pki, run_module, tmp_path):
    args = {"endpoints": ["http://127.0.0.1:2379", "https://127.0.0.1:2379"], "ca_file": str(tmp_path / "none.crt"),
            "cert_file": etcd_pki.client_cert, "key_file": etcd_pki.client_key, "timeout": 0}
    rc, result, output = run_module("etcd_info", args)

    assert rc != 0 and result["msg"].startswith("invalid arguments: ")
    assert result["errors"] == [
        "endpoints[0]: 'http://127.0.0.1:2379' must be an https:// URL such as https://10.0.0.11:2379",
        "ca_file: %s is not a file" % (tmp_path / "none.crt"),
        "timeout: must be a positive number of seconds",
    ]
    assert_no_secret(output, etcd_pki)


def test_etcd_info_fails_with_a_clear_message_on_a_wrong_ca(connection_args, healthy3, etcd_pki, run_module):
    args = connection_args(healthy3, ca_file=etcd_pki.foreign_ca_file())
    rc, result, output = run_module("etcd_info", args)

    assert rc != 0
    assert result["msg"].startswith("cannot talk to etcd:") and "not trusted with the given CA file" in result["msg"]
    assert_no_secret(output, etcd_pki)


def test_etcd_member_check_mode_reports_the_plan_and_changes_nothing(connection_args, healthy3, etcd_pki, run_module):
    before = healthy3.member_ids()
    args = connection_args(healthy3, name="cp-2", state="absent")
    rc, result, output = run_module("etcd_member", args, check=True)

    assert rc == 0, output
    assert result["changed"] is True and result["actions"][-1] == "remove"
    assert result["verdict"]["ok"] and result["verdict"]["voters_after"] == 2
    assert result["id"] == "%x" % int(before["cp-2"])
    assert healthy3.member_ids() == before
    assert_no_secret(output, etcd_pki)


def test_etcd_member_refuses_a_removal_that_would_lose_quorum(connection_args, make_cluster, etcd_pki, run_module):
    cluster = make_cluster(3)
    cluster.kill("cp-3")
    args = connection_args(cluster, name="cp-2", state="absent")
    rc, result, output = run_module("etcd_member", args)

    assert rc != 0 and result["changed"] is False
    assert "refused to" in result["msg"] and "force: true overrides" in result["msg"]
    assert result["verdict"]["ok"] is False and result["verdict"]["failures_tolerated_after"] < 0
    assert len(cluster.member_ids()) == 3
    assert_no_secret(output, etcd_pki)


def test_etcd_member_adds_promotes_and_removes_a_learner_idempotently(connection_args, make_cluster, etcd_pki, run_module):
    cluster = make_cluster(3)
    joining = cluster.new_member("cp-4")
    present = connection_args(cluster, name="cp-4", peer_urls=[joining.peer_url], retry_timeout=30)

    steps = [
        ("add as a learner", present, ["add_learner"]),
        ("add again", present, []),
        ("start etcd on the new member", None, None),
        ("promote", dict(present, learner=False), ["promote"]),
        ("promote again", dict(present, learner=False), []),
        ("remove", dict(present, state="absent"), ["remove"]),
        ("remove again", dict(present, state="absent"), []),
    ]
    added_id = None
    for what, args, actions in steps:
        if args is None:
            cluster.start("cp-4", initial_cluster=cluster.initial_cluster_with("cp-4"), state="existing")
            continue
        rc, result, output = run_module("etcd_member", args)
        assert rc == 0, "%s: %s" % (what, output[-2000:])
        assert result["actions"] == actions, what
        assert result["changed"] is bool(actions), what
        added_id = added_id or result["id"]
        assert result["id"] in (added_id, None), what
        assert_no_secret(output, etcd_pki)
    assert sorted(cluster.member_ids()) == ["cp-1", "cp-2", "cp-3"]


def test_a_member_added_and_never_started_is_removed_as_the_plan_names_it(connection_args, make_cluster, client_for, etcd_pki,
                                                                          run_module):
    # the plan's remove_etcd_member step for such a member (EH11) gives an empty name and its peer URLs, as the flow
    # passes them on
    cluster = make_cluster(3)
    stranded = client_for(cluster).add_member([cluster.new_member("cp-4").peer_url], learner=True)
    args = connection_args(cluster, name="", peer_urls=stranded["peer_urls"], state="absent")
    rc, result, output = run_module("etcd_member", args)
    assert rc == 0 and result["actions"] == ["remove"] and result["id"] == stranded["id"], output[-2000:]
    assert sorted(cluster.member_ids()) == ["cp-1", "cp-2", "cp-3"]
    assert not [m for m in client_for(cluster).gather()["members"] if not m["name"]]
    assert_no_secret(output, etcd_pki)
