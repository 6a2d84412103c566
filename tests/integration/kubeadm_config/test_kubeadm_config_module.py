# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm_config through ansible-core: the file is written 0600 with the secrets, the result and the diff never
carry them, an invalid spec writes nothing, and absent removes the file."""

import os
import re
import stat

import pytest
import yaml

from ansible_run import run

pytestmark = pytest.mark.ansible
SPEC = {"cluster_name": "prod", "replicas": 3, "version": "v1.37.1", "endpoint": {"host": "10.0.0.100"}}
MACHINE = {"name": "cp-1", "address": "10.0.0.11", "failure_domain": "fd-a"}
TOKEN, KEY = "abcdef.0123456789abcdef", "c" * 64


def args(path, **extra):
    base = {"spec": SPEC, "machine": MACHINE, "bootstrap": "init", "token": TOKEN, "certificate_key": KEY,
            "path": str(path)}
    base.update(extra)
    return base


def test_the_file_holds_the_secrets_with_mode_0600_and_the_output_does_not(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    done = run("kubeadm_config", args(path), extra=["--diff"])
    assert done.outcome == "CHANGED" and done.result["kinds"] == ["InitConfiguration", "ClusterConfiguration"]
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o600
    init = next(yaml.safe_load_all(path.read_text()))
    assert init["bootstrapTokens"][0]["token"] == TOKEN and init["certificateKey"] == KEY
    assert TOKEN not in done.output and KEY not in done.output
    assert "certificateKey: <redacted>" in done.output


def test_init_without_secrets_makes_them_on_the_machine_returns_only_the_token_id_and_keeps_them_on_a_rewrite(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    made = dict(args(path))
    del made["token"], made["certificate_key"]
    done = run("kubeadm_config", made, extra=["--diff"])
    assert done.outcome == "CHANGED" and stat.S_IMODE(os.stat(str(path)).st_mode) == 0o600
    init = next(yaml.safe_load_all(path.read_text()))
    token, key = init["bootstrapTokens"][0]["token"], init["certificateKey"]
    assert re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", token) and re.fullmatch(r"[a-f0-9]{64}", key)
    # the Secrets to delete once kubeadm ran: the token's ID is its public part, its secret never leaves the file
    assert done.result["cluster_secrets"] == ["bootstrap-token-" + token.split(".")[0], "kubeadm-certs"]
    assert token.split(".")[1] not in done.output and key not in done.output
    # a second write (a run resumed before kubeadm ran) keeps them: nothing changes
    assert run("kubeadm_config", made).outcome == "SUCCESS"
    assert path.read_text().count(token) == 1 and key in path.read_text()
    # another configuration's are made anew
    other = tmp_path / "other.yaml"
    run("kubeadm_config", dict(made, path=str(other)))
    assert token not in other.read_text()


def test_init_given_one_secret_but_not_the_other_is_refused(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    done = run("kubeadm_config", dict(args(path), certificate_key=None))
    assert done.outcome == "FAILED!" and done.result["msg"].startswith("token, certificate_key:")
    assert not path.exists()


def test_the_same_configuration_again_is_no_change(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    run("kubeadm_config", args(path))
    assert run("kubeadm_config", args(path)).outcome == "SUCCESS"


def test_an_invalid_spec_writes_nothing_and_names_the_field(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    done = run("kubeadm_config", args(path, spec=dict(SPEC, replicas=2)))
    assert done.outcome == "FAILED!" and "replicas" in done.result["msg"]
    assert not path.exists()


def test_a_join_that_pins_no_ca_is_refused(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    done = run("kubeadm_config", args(path, bootstrap="join"))
    assert done.outcome == "FAILED!" and done.result["msg"].startswith("ca_cert_hashes:")
    assert not path.exists()


def test_absent_removes_the_file_and_check_mode_leaves_it(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    run("kubeadm_config", args(path))
    assert run("kubeadm_config", {"state": "absent", "path": str(path)}, check=True).outcome == "CHANGED"
    assert path.exists()
    removed = run("kubeadm_config", {"state": "absent", "path": str(path)})
    assert removed.outcome == "CHANGED" and not path.exists()
    # what the secrets of the file gave the cluster, for the caller to delete; never the secrets themselves
    assert removed.result["cluster_secrets"] == ["bootstrap-token-abcdef", "kubeadm-certs"]
    assert TOKEN not in removed.output and KEY not in removed.output
    again = run("kubeadm_config", {"state": "absent", "path": str(path)})
    assert again.outcome == "SUCCESS" and again.result["cluster_secrets"] == []


def test_absent_also_removes_what_a_write_killed_half_way_left(tmp_path):
    partial = tmp_path / ".kubeadm.yaml.x1y2z3"
    partial.write_text("token: abcdef.0123456789abcdef")
    (tmp_path / "other.yaml").write_text("kept")
    assert run("kubeadm_config", {"state": "absent", "path": str(tmp_path / "kubeadm.yaml")}, check=True).outcome == "CHANGED"
    assert partial.exists()
    assert run("kubeadm_config", {"state": "absent", "path": str(tmp_path / "kubeadm.yaml")}).outcome == "CHANGED"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.yaml"]


def test_a_worker_needs_no_certificate_key_and_its_token_stays_in_the_file(tmp_path):
    path = tmp_path / "kubeadm.yaml"
    worker = {"name": "worker-1", "address": "10.0.0.21", "worker_group": "md-0"}
    done = run("kubeadm_config", {"spec": SPEC, "machine": worker, "bootstrap": "worker", "token": TOKEN,
                                  "ca_cert_hashes": ["sha256:" + "e" * 64], "path": str(path)}, extra=["--diff"])
    assert done.outcome == "CHANGED" and done.result["kinds"] == ["JoinConfiguration"]
    (join,) = yaml.safe_load_all(path.read_text())
    assert "controlPlane" not in join and join["discovery"]["bootstrapToken"]["token"] == TOKEN
    assert join["nodeRegistration"]["kubeletExtraArgs"] == [{"name": "node-labels", "value": "control-plane.kubeadm.io/worker-group=md-0"}]
    assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o600
    assert TOKEN not in done.output


@pytest.mark.parametrize("machine, configuration, field", [
    ({"worker_group": "GPU pool"}, {}, "machine.worker_group: must be a worker group name"),
    ({"worker_group": "md-0"}, {"controlPlane": {}}, "join_configuration: a worker's JoinConfiguration has no controlPlane"),
], ids=["a group name that is no label value", "a worker document with a controlPlane section"])
def test_a_bad_worker_is_refused_naming_the_field_and_writes_nothing(tmp_path, machine, configuration, field):
    path = tmp_path / "kubeadm.yaml"
    done = run("kubeadm_config", {"spec": SPEC, "machine": dict({"name": "worker-1", "address": "10.0.0.21"}, **machine),
                                  "bootstrap": "worker", "token": TOKEN, "ca_cert_hashes": ["sha256:" + "e" * 64],
                                  "join_configuration": configuration, "path": str(path)})
    assert done.outcome == "FAILED!" and done.result["msg"].startswith(field), done.result
    assert not path.exists()
