# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_validate, kcp_plan, kcp_status, machine_health_check and node_bundle_info answer in the controller's process
(plugins/plugin_utils/controller_module.py): through ansible (the action plugin) and run as the module itself, the same
arguments give the same answer, on good input and on bad. The other module tests of these five go through ansible,
so through the action plugin."""

import hashlib
import json
import os
import subprocess
import sys

import pytest
from ansible_collections.kubeadm.control_plane.tests.ansible_run import BIN, COLLECTIONS, ROOT, ansible_env, run
from ansible_collections.kubeadm.control_plane.tests.unit.builders import machine, snapshot, spec

pytestmark = pytest.mark.ansible

MODULES = os.path.join(ROOT, "plugins", "modules")
SPEC = spec()
OBSERVED = snapshot([machine("cp-1", created=1003), machine("cp-2", created=1002), machine("cp-3", created=1001)])
# (module, arguments, whether it fails)
CASES = [
    ("kcp_validate", {"spec": SPEC}, False),
    ("kcp_validate", {"spec": dict(SPEC, replicas=4)}, True),
    ("kcp_plan", {"spec": dict(SPEC, replicas=5), "observed": OBSERVED, "projection": True}, False),
    ("kcp_plan", {"spec": SPEC, "observed": dict(OBSERVED, machines="none")}, True),
    ("kcp_status", {"spec": SPEC, "observed": OBSERVED}, False),
    ("kcp_status", {"spec": dict(SPEC, version="1.2"), "observed": OBSERVED}, True),
    ("machine_health_check", {"health_check": {"max_unhealthy": "40%"}, "observed": OBSERVED}, False),
    ("machine_health_check", {"health_check": {"max_unhealthy": "forty"}, "observed": OBSERVED}, True),
]


def as_the_module(name, args, tmp_path):
    """The module's own result, run as a script with its arguments in a file, as ansible runs a module."""
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    done = subprocess.run([sys.executable, os.path.join(MODULES, name + ".py"), str(path)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=COLLECTIONS), timeout=60, check=False)
    return json.loads(done.stdout)


def assert_answered_alike(name, args, fails, tmp_path):
    """Through ansible and as the module itself: the same outcome (``fails``) and the same result."""
    through_ansible = run(name, args)
    module = as_the_module(name, args, tmp_path)
    assert (through_ansible.outcome == "FAILED!") == bool(module.get("failed")) == fails, (through_ansible, module)
    # ansible's output leaves out `failed` (the outcome says it) and adds `changed: false` to a failure
    for result in (through_ansible.result, module):
        for key in ("invocation", "failed", "changed"):
            result.pop(key, None)
    assert through_ansible.result == module


@pytest.mark.parametrize("name,args,fails", CASES, ids=["%s-%d" % (case[0], index) for index, case in enumerate(CASES)])
def test_the_action_answers_as_the_module_does(name, args, fails, tmp_path):
    assert_answered_alike(name, args, fails, tmp_path)


@pytest.mark.parametrize("tampered", [False, True])
def test_node_bundle_info_answers_as_the_module_does(tampered, tmp_path):
    # a bundle of one version whose every file is its own name; the kubelet replaced after SHA256SUMS was written
    files = ["bin/linux/amd64/kubeadm", "bin/linux/amd64/kubelet", "bin/linux/amd64/kubectl", "containerd-2.1.4-linux-amd64.tar.gz",
             "cni-plugins-linux-amd64-v1.7.1.tgz", "systemd/kubelet.service", "systemd/kubelet.service.d/10-kubeadm.conf",
             "systemd/containerd.service", "cni/10-bridge.conflist"]
    directory = tmp_path / "bundle" / SPEC["version"]
    for name in files:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(name)
    (directory / "SHA256SUMS").write_text("".join("%s  %s\n" % (hashlib.sha256(name.encode()).hexdigest(), name) for name in files))
    if tampered:
        (directory / "bin/linux/amd64/kubelet").write_text("tampered")
    assert_answered_alike("node_bundle_info", {"path": str(tmp_path / "bundle"), "version": SPEC["version"]}, tampered, tmp_path)


def test_unknown_arguments_are_refused_by_the_action_too():
    done = run("kcp_plan", {"spec": SPEC, "observed": OBSERVED, "explain": True})
    assert done.outcome == "FAILED!" and "explain" in done.result["msg"], done.result


def test_a_yaml_timestamp_arrives_as_a_module_receives_it(tmp_path):
    # an unquoted timestamp in YAML is a datetime; ansible sends it to a module as its ISO 8601 string
    playbook = tmp_path / "validate.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - kubeadm.control_plane.kcp_validate:\n        spec: \"{{ kcp }}\"\n      register: validated\n"
        "    - ansible.builtin.copy:\n        content: \"{{ validated.spec | to_json }}\"\n        dest: %s\n        mode: \"0600\"\n"
        "  vars:\n    kcp:\n      cluster_name: demo\n      replicas: 3\n      version: %s\n      endpoint: {host: 10.0.0.100}\n"
        "      rollout: {after: 2026-11-26T10:00:00Z}\n" % (tmp_path / "spec.json", SPEC["version"]))
    done = subprocess.run([os.path.join(BIN, "ansible-playbook"), str(playbook)], cwd=ROOT, env=ansible_env(), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    through_ansible = json.loads((tmp_path / "spec.json").read_text())
    assert through_ansible["rollout"]["after"] == "2026-11-26T10:00:00+00:00"
    raw = {"cluster_name": "demo", "replicas": 3, "version": SPEC["version"], "endpoint": {"host": "10.0.0.100"},
           "rollout": {"after": "2026-11-26T10:00:00+00:00"}}
    assert as_the_module("kcp_validate", {"spec": raw}, tmp_path)["spec"] == through_ansible
