# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Component flags (kcpsim.flags, read as pflag reads them) and the kube-apiserver entry point's refusals."""

import subprocess

import pytest

import apiserver_harness as harness
from kcpsim import component_flags, flags

SPEC = {"secure-port": ("int", 6443), "etcd-servers": ("list", []), "leader-elect": ("bool", True),
        "request-timeout": ("duration", 60.0), "advertise-address": ("str", "")}
REFUSE = flags.no_arguments("kube-apiserver")


@pytest.mark.parametrize("argv, expected", [
    ([], {"secure-port": 6443, "etcd-servers": [], "leader-elect": True}),
    (["--secure-port=7443", "--etcd-servers=https://a:2379,https://b:2379"],
     {"secure-port": 7443, "etcd-servers": ["https://a:2379", "https://b:2379"]}),
    (["--secure-port", "7443"], {"secure-port": 7443}),
    (["--leader-elect"], {"leader-elect": True}),
    (["--leader-elect=false"], {"leader-elect": False}),
    (["--request-timeout=1m30s"], {"request-timeout": 90.0}),
    (["-advertise-address=10.0.0.1"], {"advertise-address": "10.0.0.1"}),
    (["--leader-elect=F", "--secure-port=1", "--secure-port=2"], {"leader-elect": False, "secure-port": 2}),
    (["--etcd-servers=https://a:2379", "--etcd-servers", "https://b:2379,https://c:2379"],
     {"etcd-servers": ["https://a:2379", "https://b:2379", "https://c:2379"]}),
    (["", "--secure-port=7443", ""], {"secure-port": 7443}),
], ids=["defaults", "name=value as kubeadm renders them", "name value", "a bare boolean", "a false boolean",
        "a Go duration", "a single dash", "Go's boolean spellings, and the last of a repeated flag",
        "a repeated list flag adds to the list", "empty words are skipped"])
def test_flags_are_read_like_pflag(argv, expected):
    values = flags.parse(argv, SPEC, REFUSE)[0]
    assert {key: values[key] for key in expected} == expected


def test_flags_the_emulation_does_not_model_are_accepted_and_reported():
    argv = ["--authorization-mode=Node,RBAC", "--allow-privileged", "true", "--secure-port=1"]
    ignored = flags.parse(argv, SPEC, REFUSE)[1]
    assert ignored == ["authorization-mode", "allow-privileged"]


KNOWN = frozenset(SPEC) | {"authorization-mode", "allow-privileged"}


def test_a_flag_the_real_component_does_not_have_is_refused_in_pflags_words():
    with pytest.raises(flags.FlagError) as caught:
        flags.parse(["--authorization-mode=RBAC", "--no-such-flag=1", "--secure-port=1", "--nope"], SPEC, REFUSE, KNOWN)
    assert str(caught.value) == "unknown flag: --no-such-flag; unknown flag: --nope"


def test_a_modelled_flag_the_real_component_lost_is_refused_too():
    with pytest.raises(flags.FlagError) as caught:
        flags.parse(["--leader-elect=false"], SPEC, REFUSE, KNOWN - {"leader-elect"})
    assert str(caught.value) == "unknown flag: --leader-elect"


def test_an_underscore_reads_as_a_dash_as_the_components_normalize_it():
    values, ignored = flags.parse(["--secure_port=7443", "--allow_privileged=true"], SPEC, REFUSE, KNOWN)
    assert values["secure-port"] == 7443 and ignored == ["allow-privileged"]


@pytest.mark.parametrize("component, minor, name, has", [
    ("kubelet", 34, "pod-infra-container-image", True),
    ("kubelet", 35, "pod-infra-container-image", False),
    ("kubelet", 37, "pod-infra-container-image", False),
    ("kube-apiserver", 34, "min-compatibility-version", False),
    ("kube-scheduler", 35, "min-compatibility-version", True),
    ("kube-controller-manager", 36, "tls-curve-preferences", True),
    ("kube-scheduler", 37, "no-such-flag", False),
    ("kube-apiserver", 33, "etcd-request-timeout", False),
], ids=["the 1.34 kubelet still has --pod-infra-container-image", "the 1.35 kubelet has not (kubernetes#133779)",
        "nor any later one", "--min-compatibility-version came with 1.35", "to every control plane component",
        "--tls-curve-preferences with 1.36", "a made-up flag is nobody's", "the apiserver has no etcd request timeout flag"])
def test_which_flags_a_component_has_in_a_minor(component, minor, name, has):
    assert (name in component_flags.known(component, minor)) is has


def test_every_flag_the_emulation_models_is_one_the_real_component_has():
    from kcpsim.apiserver import __main__ as apiserver
    from kcpsim.controllers import component, controller_manager, scheduler
    from kcpsim.kubelet import flags as kubelet_flags
    modelled = {"kube-apiserver": set(apiserver.FLAGS), "kube-scheduler": set(scheduler.FLAGS) | set(component.COMMON_FLAGS),
                "kube-controller-manager": set(controller_manager.FLAGS) | set(component.COMMON_FLAGS),
                "kubelet": set(kubelet_flags.SPEC) - {"pod-infra-container-image"}}
    for name, spec in modelled.items():
        for minor in range(component_flags.BASE_MINOR, component_flags.LAST_MINOR + 1):
            assert spec <= component_flags.known(name, minor), (name, minor, spec - component_flags.known(name, minor))


def test_the_controller_manager_marks_a_silent_node_unknown_after_kubernetes_defaults():
    """--node-monitor-grace-period: 50 s since Kubernetes 1.32 (40 s before), every minor the sandbox runs."""
    from kcpsim.controllers import component, controller_manager
    values = component.parse([], "kube-controller-manager", controller_manager.FLAGS)[0]
    assert (values["node-monitor-grace-period"], values["node-monitor-period"], values["node-startup-grace-period"]) == (50.0, 5.0, 60.0)
    assert component_flags.BASE_MINOR >= 32


def test_every_bad_value_is_reported_at_once_in_pflags_words():
    with pytest.raises(flags.FlagError) as caught:
        flags.parse(["--secure-port=x", "--leader-elect=perhaps", "--request-timeout=soon", "stray", "--", "--v=1",
                     "--advertise-address"], SPEC, REFUSE)
    assert str(caught.value).split("; ") == [
        'invalid argument "x" for "--secure-port" flag: strconv.ParseInt: parsing "x": invalid syntax',
        'invalid argument "perhaps" for "--leader-elect" flag: strconv.ParseBool: parsing "perhaps": invalid syntax',
        'invalid argument "soon" for "--request-timeout" flag: time: invalid duration "soon"',
        '"kube-apiserver" does not take any arguments, got ["stray" "--v=1" "--advertise-address"]',
    ]


@pytest.mark.parametrize("argv, message", [
    (["--advertise-address"], "flag needs an argument: --advertise-address"),
    (["--leader-elect", "false"], '"kube-apiserver" does not take any arguments, got ["false"]'),
], ids=["a value flag at the end needs its value", "a boolean takes no separate value, as in pflag"])
def test_malformed_command_lines(argv, message):
    with pytest.raises(flags.FlagError) as caught:
        flags.parse(argv, SPEC, REFUSE)
    assert str(caught.value) == message


@pytest.mark.parametrize("argv, messages", [
    ([], ["--etcd-servers must be specified", "--tls-cert-file and --tls-private-key-file are required",
          "service-account-issuer is a required flag"]),
    (["--etcd-servers=https://127.0.0.1:2379", "--etcd-cafile=/nonexistent/ca.crt", "--tls-cert-file=/x",
      "--tls-private-key-file=/y", "--service-account-issuer=https://k", "--service-account-signing-key-file=/z"],
     ["--etcd-cafile: cannot read /nonexistent/ca.crt", "--tls-cert-file: cannot read /x"]),
    (["--secure-port=abc"], ['invalid argument "abc" for "--secure-port" flag: strconv.ParseInt: parsing "abc": invalid syntax']),
    (["--etcd-request-timeout=2s"], ["unknown flag: --etcd-request-timeout"]),
], ids=["missing required flags", "unreadable files", "a malformed port", "a flag the real server does not have"])
def test_the_apiserver_refuses_to_start_and_names_every_problem(argv, messages):
    result = subprocess.run([harness.HOST_PYTHON, "-m", "kcpsim.apiserver"] + argv, capture_output=True, text=True,
                            timeout=30, env={"PYTHONPATH": harness.SANDBOX, "PATH": "/usr/bin:/bin"}, check=False)
    assert result.returncode == 1
    for message in messages:
        assert message in result.stderr
    assert "Traceback" not in result.stderr
