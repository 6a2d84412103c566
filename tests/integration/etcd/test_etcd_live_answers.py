# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 9 on real etcd: nothing concluded without an answer, refusals that name the right thing, and what an
operator reads first (etcd_info's summary, etcd_member's new leader and diff)."""

import os
import socket
import time

import pytest
from cryptography.hazmat.primitives import serialization

import ansible_run
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_health
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdUnavailable
from ansible_collections.kubeadm.control_plane.plugins.modules.etcd_member import Refused, Unknown, run

pytestmark = pytest.mark.etcd

POLL_LIMIT = 15.0


def params(name, state="absent", peer_urls=None, learner=None, leader=False, force=False):
    return dict(name=name, state=state, peer_urls=peer_urls, learner=learner, leader=leader, force=force)


def poll(condition, what):
    deadline = time.monotonic() + POLL_LIMIT
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("%s not seen within %.0fs" % (what, POLL_LIMIT))
        time.sleep(0.1)


@pytest.fixture
def silent_port():
    """A TCP port that accepts connections and never says a word (listening, never read from)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield "https://127.0.0.1:%d" % listener.getsockname()[1]


@pytest.fixture
def learner_cluster(make_cluster):
    """A 3-member cluster with learner cp-4 added and started."""
    cluster = make_cluster(3)
    joining = cluster.new_member("cp-4")
    poll(lambda: _add_learner(cluster, joining.peer_url), "cp-4 added as a learner")
    cluster.start("cp-4", initial_cluster=cluster.initial_cluster_with("cp-4"), state="existing")
    poll(lambda: _answers(cluster, "cp-4"), "learner cp-4 answering")
    return cluster


def _add_learner(cluster, peer_url):
    try:
        cluster.call_any("cluster/member/add", {"peerURLs": [peer_url], "isLearner": True})
        return True
    except Exception:  # etcd refuses changes for a few seconds after a start ("unhealthy cluster")
        return False


def _answers(cluster, name):
    try:
        return cluster.status(name).get("isLearner", False)
    except Exception:
        return False


# -- 1, 2: absence is concluded only from a member list a quorum stands behind ---------------------------

@pytest.mark.parametrize(
    "endpoint_kind",
    ["nothing listens", "a silent port", "a host name that does not resolve", "a port that is not etcd's client port"],
)
def test_absent_fails_with_what_was_tried_when_no_voter_with_quorum_answers(endpoint_kind, healthy3, client_for, silent_port):
    endpoint = {
        "nothing listens": "https://%s:2379" % healthy3.block.ip(9),
        "a silent port": silent_port,
        "a host name that does not resolve": "https://no-such-etcd.invalid:2379",
        "a port that is not etcd's client port": healthy3.members["cp-1"].peer_url,
    }[endpoint_kind]
    with pytest.raises(Unknown) as unknown:
        run(client_for([endpoint], timeout=1.0), params("cp-2"), check_mode=False)
    message = str(unknown.value)
    assert message.startswith("cannot tell whether member cp-2 exists") and endpoint in message
    assert "voting members healthy" not in message


def test_absent_fails_when_every_member_hangs(make_cluster, client_for):
    cluster = make_cluster(1)
    cluster.pause("cp-1")
    with pytest.raises(Unknown) as unknown:
        run(client_for(cluster, timeout=1.0), params("cp-1"), check_mode=False)
    assert "no answer within 1.0s" in str(unknown.value)


def test_a_learner_alone_neither_removes_nor_promotes_itself_as_a_new_voter(learner_cluster, client_for):
    learner = learner_cluster.members["cp-4"]
    client = client_for([learner.client_url])
    for request in (params("cp-4"), params("cp-4", "present", [learner.peer_url], learner=False)):
        with pytest.raises(Unknown) as unknown:
            run(client, request, check_mode=False)
        assert "%s: learner " % learner.client_url in str(unknown.value)
        assert "which serves no member list" in str(unknown.value)
    assert len(learner_cluster.member_ids()) == 4


# -- 2: refusals name what was asked, and every member tried --------------------------------------------

def test_refusals_name_the_removal_asked_for_and_every_member_tried(make_cluster, client_for):
    cluster = make_cluster(3)
    leader = cluster.leader_name()
    followers = [n for n in cluster.members if n != leader]
    cluster.kill(followers[0])
    client = client_for(cluster, timeout=1.0, retry_timeout=1.0)
    poll(lambda: not next(m for m in client.gather()["members"] if m["name"] == followers[0])["responsive"], "a dead follower")

    with pytest.raises(Refused) as refusal:
        run(client, params(leader), check_mode=False)
    assert refusal.value.args[0] == "remove" and refusal.value.args[2] == []

    cluster.kill(followers[1])
    with pytest.raises(EtcdUnavailable) as failure:
        run(client, params(followers[1], force=True), check_mode=False)
    # the live member that never answered is named, not only the dead one the change was for
    assert cluster.members[leader].client_url in failure.value.message
    assert "not accepted by any member" in failure.value.message
    summary = etcd_health.summary(client.gather())
    assert summary["quorum"] is False and summary["leader"] is None and summary["healthy_voters"] == 0


# -- 3, 6: the same host twice, and requests that would do nothing ---------------------------------------

def test_a_second_member_for_a_host_is_refused_by_name_or_peer_url(make_cluster, client_for):
    cluster = make_cluster(3)
    joining = cluster.new_member("cp-4")
    client = client_for(cluster)
    assert run(client, params("cp-4", "present", [joining.peer_url]), check_mode=False)["actions"] == ["add_learner"]

    other_port = joining.peer_url.replace(":2380", ":2390")
    cp1_host = cluster.members["cp-1"].peer_url.replace(":2380", ":2390")
    for name, peer_url, holder in (("cp-4", other_port, "added, not started yet"), ("cp-5", cp1_host, "cp-1")):
        with pytest.raises(ValueError) as refusal:
            run(client, params(name, "present", [peer_url], learner=False), check_mode=False)
        assert "already has member" in str(refusal.value) and holder in str(refusal.value)

    with pytest.raises(ValueError) as by_name_only:
        run(client, params("cp-4"), check_mode=False)
    assert "give its peer_urls to remove it" in str(by_name_only.value)
    assert len(cluster.member_ids()) == 4


@pytest.mark.parametrize(
    "request_args,expected",
    [
        (dict(name="cp-9"), "no member is named cp-9 (the members are cp-1, cp-2, cp-3): nothing to remove"),
        (dict(name="cp-1", state="present", learner=True), "learner: member cp-1 is a voting member"),
    ],
    ids=["a typo in the name on absent warns", "learner true for a voter warns"],
)
def test_requests_that_change_nothing_warn(request_args, expected, healthy3, client_for):
    request_args = dict(request_args)
    if request_args.get("state") == "present":
        request_args["peer_urls"] = [healthy3.members[request_args["name"]].peer_url]
    result = run(client_for(healthy3), params(**request_args), check_mode=False)
    assert result["changed"] is False and any(expected in w for w in result["warnings"])


@pytest.mark.parametrize(
    "learner,expected",
    [(None, "a learner cannot lead"), (False, "does not exist yet")],
    ids=["leader true for a new learner is refused", "leader true for a voter not added yet is refused"],
)
def test_leadership_for_a_member_that_cannot_lead_is_refused(learner, expected, healthy3, client_for):
    with pytest.raises(ValueError) as refusal:
        run(client_for(healthy3), params("cp-9", "present", ["https://127.0.0.1:12380"], learner=learner, leader=True), check_mode=False)
    assert expected in str(refusal.value)


# -- 4: key and certificate problems name the file --------------------------------------------------------

def _write_encrypted_key(etcd_pki, path):
    with open(etcd_pki.client_key, "rb") as handle:
        key = serialization.load_pem_private_key(handle.read(), None)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"secret")
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(encrypted)
    return path


@pytest.mark.parametrize(
    "fault,field,expected",
    [
        ("an encrypted key", "key_file", "is encrypted with a passphrase"),
        ("another certificate's key", "key_file", "KEY_VALUES_MISMATCH"),
        ("a certificate that is not PEM", "cert_file", "is not a valid PEM certificate"),
    ],
    ids=["an encrypted key is named", "a key of another certificate is named", "a broken certificate is named"],
)
def test_key_and_certificate_problems_name_the_file(fault, field, expected, connection_args, healthy3, etcd_pki, run_module, tmp_path):
    broken = tmp_path / "broken.crt"
    broken.write_text("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
    path = {
        "an encrypted key": lambda: _write_encrypted_key(etcd_pki, str(tmp_path / "encrypted.key")),
        "another certificate's key": lambda: etcd_pki.apiserver_key,
        "a certificate that is not PEM": lambda: str(broken),
    }[fault]()
    rc, result, output = run_module("etcd_info", connection_args(healthy3, **{field: path}))
    assert rc != 0 and "Traceback" not in output
    assert len(result["errors"]) == 1 and result["errors"][0].startswith("%s: %s " % (field, path))
    assert expected in result["msg"]


# -- 5, 7, 9: etcd_info says what answered ------------------------------------------------------------------

def test_etcd_info_says_plainly_that_nothing_answered_and_can_fail_on_it(connection_args, healthy3, run_module):
    args = connection_args(healthy3, endpoints=["https://%s:2379" % healthy3.block.ip(9)])
    rc, result, output = run_module("etcd_info", args)
    assert rc == 0, output
    assert result["summary"]["answered"] is False and result["summary"]["quorum"] is None
    [problem] = result["preflight"]["problems"]
    assert problem.startswith("no etcd endpoint answered") and problem in " ".join(output.split())
    assert result["etcd"]["members"][0]["responsive"] is False

    rc, result, output = run_module("etcd_info", dict(args, fail_when_no_answer=True))
    assert rc != 0 and result["msg"].startswith("no etcd endpoint answered")
    assert result["etcd"]["members"][0]["error"]


def test_etcd_info_summary_and_an_endpoint_that_is_not_etcd(connection_args, healthy3, run_module):
    not_etcd = healthy3.members["cp-1"].peer_url
    rc, result, output = run_module("etcd_info", connection_args(healthy3, endpoints=healthy3.endpoints + [not_etcd]))
    assert rc == 0, output
    summary = result["summary"]
    assert summary["leader"] == healthy3.leader_name()
    assert (summary["quorum"], summary["voters"], summary["healthy_voters"], summary["failures_tolerated"]) == (True, 3, 3, 1)
    assert summary["learners"] == [] and summary["alarms"] == [] and summary["cluster_version"] == "3.5.0"
    for member in summary["members"]:
        assert member["healthy"] and member["answer_seconds"] > 0
        assert member["raft_applied_index"] > 0 and 0 < member["db_size_in_use"] <= member["db_size"]
    stray = next(e for e in result["endpoints"] if e["url"] == not_etcd)
    assert stray["given"] and not stray["answered"] and stray["error"]
    assert "[WARNING]: endpoint %s did not answer" % not_etcd in " ".join(output.split())
    assert [m["name"] for m in result["etcd"]["members"]] == ["cp-1", "cp-2", "cp-3"]


# -- 8: etcd_member names the new leader, shows the diff, recovers from NOSPACE ----------------------------

def test_etcd_member_names_the_new_leader_and_shows_the_membership_diff_in_check_mode(connection_args, healthy3):
    leader = healthy3.leader_name()
    args = connection_args(healthy3, name=leader, state="absent")
    done = ansible_run.run("etcd_member", args, check=True, extra=["--diff"])
    assert done.rc == 0, done.output
    result = done.result
    assert result["actions"] == ["move_leader", "remove"]
    assert result["new_leader"] in set(healthy3.members) - {leader}
    diff = done.output.split("+++ after: etcd members", 1)[1].split(" => ", 1)[0].splitlines()
    removed = [line[1:] for line in diff if line.startswith("-")]
    added = [line[1:] for line in diff if line.startswith("+")]
    assert any(line.startswith(leader + " ") for line in removed) and not any(line.startswith(leader + " ") for line in added)
    assert added and all(line.startswith(result["new_leader"] + " ") and "voter, leader" in line for line in added)
    assert healthy3.leader_name() == leader


def test_a_dead_member_is_removed_under_nospace_without_force(make_cluster, client_for):
    cluster = make_cluster(3, extra_flags=["--quota-backend-bytes=%d" % (1024 * 1024)])
    cluster.fill_until_nospace()
    cluster.kill("cp-3")
    client = client_for(cluster)
    poll(lambda: all(m["alarms"] for m in client.gather()["members"] if m["responsive"]), "the NOSPACE alarm")

    with pytest.raises(Refused) as refusal:  # a member that answers still waits for the alarm to be cleared
        run(client, params("cp-2"), check_mode=False)
    assert any("NOSPACE" in reason for reason in refusal.value.args[1]["reasons"])
    result = run(client, params("cp-3"), check_mode=False)
    assert result["actions"] == ["remove"] and result["verdict"]["ok"]
    assert sorted(cluster.member_ids()) == ["cp-1", "cp-2"]
