# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Component flags (kcpsim.apiserver.flags) and the kube-apiserver entry point's refusals."""

import subprocess

import pytest

import apiserver_harness as harness
from kcpsim.apiserver import flags

SPEC = {"secure-port": ("int", 6443), "etcd-servers": ("list", []), "leader-elect": ("bool", True),
        "request-timeout": ("duration", 60.0), "advertise-address": ("str", "")}


@pytest.mark.parametrize("argv, expected", [
    ([], {"secure-port": 6443, "etcd-servers": [], "leader-elect": True}),
    (["--secure-port=7443", "--etcd-servers=https://a:2379,https://b:2379"],
     {"secure-port": 7443, "etcd-servers": ["https://a:2379", "https://b:2379"]}),
    (["--secure-port", "7443"], {"secure-port": 7443}),
    (["--leader-elect"], {"leader-elect": True}),
    (["--leader-elect=false"], {"leader-elect": False}),
    (["--request-timeout=1m30s"], {"request-timeout": 90.0}),
    (["-advertise-address=10.0.0.1"], {"advertise-address": "10.0.0.1"}),
], ids=["defaults", "name=value as kubeadm renders them", "name value", "a bare boolean", "a false boolean",
        "a Go duration", "a single dash"])
def test_flags_are_read_like_pflag(argv, expected):
    values = flags.parse(argv, SPEC)[0]
    assert {key: values[key] for key in expected} == expected


def test_unknown_flags_are_accepted_and_reported():
    argv = ["--authorization-mode=Node,RBAC", "--allow-privileged", "true", "--secure-port=1"]
    ignored = flags.parse(argv, SPEC)[1]
    assert ignored == ["authorization-mode", "allow-privileged"]


def test_every_bad_value_is_reported_at_once():
    with pytest.raises(flags.FlagError) as caught:
        flags.parse(["--secure-port=x", "--leader-elect=perhaps", "--request-timeout=soon", "stray"], SPEC)
    message = str(caught.value)
    for part in ("--secure-port: 'x' is not an integer", "--leader-elect: 'perhaps' is not a boolean",
                 "--request-timeout:", "unexpected argument 'stray'"):
        assert part in message


@pytest.mark.parametrize("argv, messages", [
    ([], ["--etcd-servers must be specified", "--tls-cert-file and --tls-private-key-file are required",
          "service-account-issuer is a required flag"]),
    (["--etcd-servers=https://127.0.0.1:2379", "--etcd-cafile=/nonexistent/ca.crt", "--tls-cert-file=/x",
      "--tls-private-key-file=/y", "--service-account-issuer=https://k", "--service-account-signing-key-file=/z"],
     ["--etcd-cafile: cannot read /nonexistent/ca.crt", "--tls-cert-file: cannot read /x"]),
    (["--secure-port=abc"], ["--secure-port: 'abc' is not an integer"]),
], ids=["missing required flags", "unreadable files", "a malformed port"])
def test_the_apiserver_refuses_to_start_and_names_every_problem(argv, messages):
    result = subprocess.run([harness.HOST_PYTHON, "-m", "kcpsim.apiserver"] + argv, capture_output=True, text=True,
                            timeout=30, env={"PYTHONPATH": harness.SANDBOX, "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 1
    for message in messages:
        assert message in result.stderr
    assert "Traceback" not in result.stderr
