# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hosts' systemctl stand-in: how it reads unit files, drop-ins, environment and command lines, and
when it restarts a service. (Its behaviour inside hosts, driven by Ansible, is in test_infra_hosts.py.)"""

import os
import signal

import pytest

from kcpsandbox.hostfs import systemctl

KUBELET_UNIT = """\
[Unit]
Description=kubelet: The Kubernetes Node Agent
[Service]
ExecStart=/usr/local/bin/kubelet
Restart=always
RestartSec=10
[Install]
WantedBy=multi-user.target
"""
KUBEADM_DROPIN = """\
# comment
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf\\
 --kubeconfig=/etc/kubernetes/kubelet.conf"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
ExecStart=
ExecStart=/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_KUBEADM_ARGS
"""


def test_a_drop_in_with_an_empty_execstart_replaces_the_command():
    settings = systemctl.merge_settings([systemctl.parse_unit_text(KUBELET_UNIT),
                                         systemctl.parse_unit_text(KUBEADM_DROPIN)])
    assert settings["Service.ExecStart"] == [
        "/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_KUBEADM_ARGS"]
    assert settings["Service.Restart"] == "always"
    assert settings["Install.WantedBy"] == ["multi-user.target"]


def test_a_continuation_line_joins_the_next_with_one_space_as_systemd_does():
    settings = systemctl.merge_settings([systemctl.parse_unit_text(KUBEADM_DROPIN)])
    env = systemctl.parse_environment_assignments(settings["Service.Environment"])
    assert env["KUBELET_KUBECONFIG_ARGS"] == ("--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf "
                                              "--kubeconfig=/etc/kubernetes/kubelet.conf")


@pytest.mark.parametrize("line, env, argv", [
    ("/bin/kubelet $ARGS", {"ARGS": "--a=1 --b=2"}, ["/bin/kubelet", "--a=1", "--b=2"]),
    ("/bin/kubelet ${ARGS}", {"ARGS": "--a=1 --b=2"}, ["/bin/kubelet", "--a=1 --b=2"]),
    ("/bin/kubelet $UNSET --x", {}, ["/bin/kubelet", "--x"]),
    ("/bin/kubelet --opt=${ONE}-x", {"ONE": "1"}, ["/bin/kubelet", "--opt=1-x"]),
    ("/bin/sh -c 'echo $$HOME'", {}, ["/bin/sh", "-c", "echo $HOME"]),
    ('/bin/echo "two words" three', {}, ["/bin/echo", "two words", "three"]),
    ("-/bin/false", {}, ["/bin/false"]),
], ids=["a whole-word $VAR splits at whitespace", "${VAR} stays one argument", "an unset $VAR vanishes",
        "${VAR} inside a word", "$$ is a literal dollar", "double quotes group words",
        "the '-' prefix is not part of the command"])
def test_command_lines_expand_like_systemd(line, env, argv):
    assert systemctl.expand_command(line, env)[1] == argv


def test_the_minus_prefix_marks_a_command_whose_failure_is_ignored():
    assert systemctl.expand_command("-/bin/false", {})[0] is True
    assert systemctl.expand_command("/bin/false", {})[0] is False


def test_unit_name_specifiers_are_expanded():
    assert systemctl.expand_specifiers("/bin/run %n %N %p %i %H 100%%", "getty@tty1.service", "cp-1") == \
        "/bin/run getty@tty1.service getty@tty1 getty tty1 cp-1 100%"


def test_environment_files_read_quotes_and_skip_comments():
    text = '# comment\n; other comment\nKUBELET_KUBEADM_ARGS="--node-ip=10.0.0.1 --x"\nPLAIN=value with spaces\n' \
           "SINGLE='it is'\nESCAPED=\"a \\\"b\\\"\"\nnot a setting\n"
    assert systemctl.parse_environment_file(text) == {
        "KUBELET_KUBEADM_ARGS": "--node-ip=10.0.0.1 --x", "PLAIN": "value with spaces", "SINGLE": "it is",
        "ESCAPED": 'a "b"'}


@pytest.mark.parametrize("value, seconds", [
    ("10", 10.0), ("1s", 1.0), ("500ms", 0.5), ("1min 30s", 90.0), ("", 7.0), ("infinity", None),
], ids=["a bare number is seconds", "seconds", "milliseconds", "minutes and seconds", "empty takes the default",
        "infinity means no limit"])
def test_time_spans(value, seconds):
    assert systemctl.parse_timespan(value, 7.0) == seconds


@pytest.mark.parametrize("policy, code, status, restart", [
    ("always", "exited", 0, True),
    ("always", "killed", signal.SIGKILL, True),
    ("on-failure", "exited", 1, True),
    ("on-failure", "exited", 0, False),
    ("on-failure", "killed", signal.SIGKILL, True),
    ("on-failure", "killed", signal.SIGTERM, False),
    ("on-abnormal", "exited", 1, False),
    ("on-abnormal", "killed", signal.SIGKILL, True),
    ("on-success", "exited", 0, True),
    ("no", "killed", signal.SIGKILL, False),
], ids=["always restarts after a clean exit", "always restarts after SIGKILL", "on-failure restarts after exit 1",
        "on-failure leaves a clean exit alone", "on-failure restarts after SIGKILL",
        "on-failure counts SIGTERM as clean", "on-abnormal ignores exit codes", "on-abnormal restarts after SIGKILL",
        "on-success restarts after a clean exit", "no never restarts"])
def test_restart_policy(policy, code, status, restart):
    assert systemctl.should_restart(policy, code, status) is restart


@pytest.fixture()
def unit_dirs(tmp_path, monkeypatch):
    etc, lib = tmp_path / "etc", tmp_path / "lib"
    etc.mkdir()
    lib.mkdir()
    monkeypatch.setattr(systemctl, "UNIT_DIRS", (str(etc), str(lib)))
    monkeypatch.setattr(systemctl, "CONFIG_DIR", str(etc))
    return etc, lib


def test_a_unit_in_etc_overrides_the_vendor_unit_and_drop_ins_merge_from_all_dirs(unit_dirs):
    etc, lib = unit_dirs
    (lib / "kubelet.service").write_text(KUBELET_UNIT)
    (etc / "kubelet.service").write_text(KUBELET_UNIT.replace("RestartSec=10", "RestartSec=3"))
    (lib / "kubelet.service.d").mkdir()
    (lib / "kubelet.service.d" / "10-kubeadm.conf").write_text(KUBEADM_DROPIN)
    (lib / "kubelet.service.d" / "20-vendor.conf").write_text("[Service]\nRestartSec=5\n")
    (etc / "kubelet.service.d").mkdir()
    (etc / "kubelet.service.d" / "20-vendor.conf").write_text("[Service]\nRestartSec=7\n")
    unit = systemctl.Unit("kubelet.service")
    assert unit.fragment == str(etc / "kubelet.service")
    assert [os.path.basename(p) for p in unit.dropins] == ["10-kubeadm.conf", "20-vendor.conf"]
    assert unit.dropins[1] == str(etc / "kubelet.service.d" / "20-vendor.conf")
    assert unit.get("Service.RestartSec") == "7"
    assert unit.get("Service.ExecStart") == ["/usr/local/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_KUBEADM_ARGS"]


@pytest.mark.parametrize("files, state", [
    ({"x.service": KUBELET_UNIT}, "disabled"),
    ({"x.service": KUBELET_UNIT, "multi-user.target.wants/x.service": "link"}, "enabled"),
    ({"x.service": "[Service]\nExecStart=/bin/true\n"}, "static"),
    ({"x.service": "null"}, "masked"),
    ({}, None),
], ids=["a unit with an Install section is disabled until linked", "a wants link enables it",
        "no Install section makes it static", "a link to /dev/null masks it", "no unit file: no state"])
def test_unit_file_state(unit_dirs, files, state):
    etc = unit_dirs[0]
    for path, content in files.items():
        target = etc / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if content == "link":
            target.symlink_to(etc / "x.service")
        elif content == "null":
            target.symlink_to("/dev/null")
        else:
            target.write_text(content)
    assert systemctl.Unit("x.service").file_state() == state


def test_an_optional_environment_file_may_be_missing_but_a_required_one_may_not(unit_dirs, tmp_path):
    etc = unit_dirs[0]
    (etc / "x.service").write_text("[Service]\nEnvironmentFile=-%s/absent\nExecStart=/bin/true\n" % tmp_path)
    assert systemctl.Unit("x.service").environment()["PATH"] == systemctl.SERVICE_PATH
    (etc / "x.service").write_text("[Service]\nEnvironmentFile=%s/absent\nExecStart=/bin/true\n" % tmp_path)
    with pytest.raises(systemctl.UnitError, match="failed to load environment file"):
        systemctl.Unit("x.service").environment()


@pytest.mark.parametrize("argv, flags, values, words", [
    (["is-enabled", "kubelet", "-l"], {"-l"}, {"property": []}, ["is-enabled", "kubelet"]),
    (["show", "kubelet", "-p", "MainPID,ActiveState", "--value"], {"--value"},
     {"property": ["MainPID", "ActiveState"]}, ["show", "kubelet"]),
    (["kill", "--signal=SIGKILL", "etcd"], set(), {"property": [], "signal": "SIGKILL"}, ["kill", "etcd"]),
    (["--no-block", "start", "kubelet"], {"--no-block"}, {"property": []}, ["start", "kubelet"]),
], ids=["flags may follow the unit (as Ansible passes -l)", "properties may be comma separated",
        "--signal=VALUE", "options before the verb"])
def test_command_line_options(argv, flags, values, words):
    assert systemctl.parse_args(argv) == (flags, values, words)


def test_an_unknown_option_is_refused_like_systemctl_does():
    with pytest.raises(systemctl.UnitError, match="unrecognized option '--bogus'"):
        systemctl.parse_args(["start", "--bogus", "x"])
