# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX job templates (awx/, docs/awx.md) run through ansible-runner, the job runner AWX itself uses, on one bare
sandbox host: a private data directory laid out as AWX lays out a job's (project/ with the wrapper playbooks,
inventory/, env/extravars holding the template's extra vars and its survey's answers as AWX merges them, the
survey's textarea answered with text), the collection found on ANSIBLE_COLLECTIONS_PATH as an execution
environment has it installed. The status job ends successful with the status and the plan in its artifacts
(set_stats); a create job with a spec the plan refuses ends failed with the reason in its events, the host
untouched. No cluster is created here (the other e2e tests do that)."""

import json
import os
import shutil
import sys

import ansible_runner
import pytest
import yaml

from e2e_support import ROOT, newest

pytestmark = pytest.mark.sandbox
SANDBOX = ("t-awx", "172.31.246.0/24", 1)
BIN = os.path.dirname(sys.executable)


def job_template(flow):
    with open(os.path.join(ROOT, "awx", "job_templates", flow + ".json"), encoding="utf-8") as template:
        return json.load(template)


def launch_vars(template, answers):
    """The extra vars AWX gives a job of ``template``: the template's extra_vars, then each survey question's
    answer (``answers`` by variable), else its default; a question answered with nothing is left out."""
    extra_vars = dict(template["extra_vars"])
    for item in template["survey_spec"]["spec"]:
        value = answers.get(item["variable"], item["default"])
        assert not item["required"] or value not in ("", None), "the survey requires %s" % item["variable"]
        if value not in ("", None):
            extra_vars[item["variable"]] = value
    unknown = set(answers) - {item["variable"] for item in template["survey_spec"]["spec"]}
    assert not unknown, "not in the survey: %s" % unknown
    return extra_vars


def spec_text(sandbox, replicas, etcd="stacked"):
    """The spec as an operator types it into the survey's textarea: YAML text."""
    spec = {"cluster_name": "awx", "replicas": replicas, "version": newest(sandbox.mirror_dir),
            "endpoint": {"host": "172.31.246.100", "port": 6443},
            "kubeadm": {"cluster_configuration": {"networking": {"podSubnet": "10.244.0.0/16"}}}}
    if etcd != "stacked":
        spec["etcd"] = etcd
    return yaml.safe_dump(spec, sort_keys=False)


def run_job(sandbox, tmp_path, flow, answers):
    """ansible_runner.run on a private data directory as AWX prepares a job of ``flow``'s template."""
    template = job_template(flow)
    private = tmp_path / flow
    shutil.copytree(os.path.join(ROOT, "awx"), private / "project" / "awx")
    (private / "inventory").mkdir(parents=True)
    shutil.copy(sandbox.inventory, private / "inventory" / "hosts")
    (private / "env").mkdir()
    (private / "env" / "extravars").write_text(yaml.safe_dump(launch_vars(template, answers)))
    (private / "env" / "envvars").write_text(yaml.safe_dump({
        "ANSIBLE_COLLECTIONS_PATH": os.path.join(ROOT, ".collections"), "ANSIBLE_FORCE_COLOR": "0",
        "PATH": BIN + os.pathsep + os.environ["PATH"]}))
    (private / "env" / "settings").write_text(yaml.safe_dump({"job_timeout": 900, "suppress_ansible_output": True}))
    # ansible-playbook is found on the PATH given in env/envvars, as in an execution environment
    runner = ansible_runner.run(private_data_dir=str(private), playbook=template["playbook"], ident=flow, quiet=True)
    return runner, list(runner.events)


def test_the_status_job_puts_the_status_and_the_plan_in_its_artifacts(bare_hosts, tmp_path):
    runner, events = run_job(bare_hosts, tmp_path, "status", {"kcp_survey_kcp": spec_text(bare_hosts, 1)})
    assert runner.status == "successful", runner.stdout.read()[-6000:]
    assert runner.rc == 0
    # set_stats data arrives as the playbook_on_stats event's artifact_data, which AWX keeps as the job's artifacts
    stats = [event for event in events if event["event"] == "playbook_on_stats"]
    assert len(stats) == 1
    status = stats[0]["event_data"]["artifact_data"]["kcp_status"]
    assert status["next_step"] == "scale_up" and status["ready"] is False
    assert status["reason"] == "no control plane machine exists: create the first one with kubeadm init"
    assert status["machines"] == {} and {c["type"]: c["status"] for c in status["conditions"]}["Available"] == "False"
    # and in the artifacts directory, in the event file ansible-runner wrote for it
    events_dir = os.path.join(runner.config.artifact_dir, "job_events")
    written = []
    for name in os.listdir(events_dir):
        with open(os.path.join(events_dir, name), encoding="utf-8") as event_file:
            event = json.load(event_file)
        if event.get("event") == "playbook_on_stats":
            written.append(event["event_data"]["artifact_data"])
    assert written == [stats[0]["event_data"]["artifact_data"]]


def test_a_refused_create_job_fails_with_the_reason_in_its_events_and_changes_nothing(bare_hosts, tmp_path):
    answers = {"kcp_survey_kcp": spec_text(bare_hosts, 2), "kcp_bundle_dir": bare_hosts.mirror_dir,
               "kcp_etcd_snapshot_dir": str(tmp_path / "snapshots")}
    runner, events = run_job(bare_hosts, tmp_path, "create", answers)
    assert runner.status == "failed" and runner.rc != 0
    failed = [event for event in events if event["event"] == "runner_on_failed"]
    assert failed, runner.stdout.read()[-6000:]
    reasons = " ".join(str(event["event_data"]["res"].get("msg", "")) for event in failed)
    assert "replicas" in reasons and "must be odd with stacked etcd" in reasons, reasons
    for host in bare_hosts.hosts():
        assert bare_hosts.ssh(host, "test -e /usr/local/bin/kubeadm || test -e /etc/kubernetes/control-plane-machine.json",
                              check=False).returncode == 1
