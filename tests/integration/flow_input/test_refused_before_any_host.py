# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A flow given what it cannot use fails before it touches any host, naming the inventory variable and the rule,
and never ends with success for having run on nothing (docs/flows.md "What a run refuses, and where"). The
inventory's hosts are loopback addresses on which nothing listens: a flow that tried to reach one would print it
UNREACHABLE."""

import json
import os
import subprocess

import pytest

from ansible_run import BIN, ROOT, ansible_env

CREATE = os.path.join(ROOT, "playbooks", "create.yml")
DELETE = os.path.join(ROOT, "playbooks", "delete.yml")
WORKERS = os.path.join(ROOT, "playbooks", "workers.yml")
WORKERS_REMOVE = os.path.join(ROOT, "playbooks", "workers_remove.yml")
SPEC = {"cluster_name": "refused", "replicas": 3, "version": "v1.36.4", "endpoint": {"host": "127.0.0.1"}}


def inventory(tmp_path, hosts, workers=None):
    """An inventory of control plane candidates and workers, each {name: vars}, reached over SSH on a port nothing
    listens on."""
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"all": {"vars": {"ansible_port": 9, "ansible_connection": "ssh"},
                                        "children": {"control_plane_candidates": {"hosts": hosts},
                                                     "workers": {"hosts": workers or {}}}}}))
    return str(path)


POOL = {"cp-1": {"ansible_host": "127.0.0.2", "failure_domain": "fd-1"},
        "cp-2": {"ansible_host": "127.0.0.3", "failure_domain": "fd-2"},
        "cp-3": {"ansible_host": "127.0.0.4", "failure_domain": "fd-3"}}


def flow(tmp_path, playbook, hosts, workers=None, **extra):
    bundle = tmp_path / "bundle"
    bundle.mkdir(exist_ok=True)
    extra_vars = dict({"kcp": SPEC, "kcp_bundle_dir": str(bundle)}, **extra)
    done = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", inventory(tmp_path, hosts, workers), playbook,
                           "-e", json.dumps(extra_vars)], cwd=ROOT, env=ansible_env(), capture_output=True, text=True,
                          timeout=120, check=False)
    return done.returncode, " ".join((done.stdout + done.stderr).split())


@pytest.mark.ansible
@pytest.mark.parametrize(
    "playbook,hosts,extra,said",
    [
        (CREATE, dict(POOL, **{"--all": {"ansible_host": "127.0.0.5"}}), {},
         "--all: an inventory host of the group names its Node: must be a DNS-1123 subdomain"),
        (CREATE, dict(POOL, **{"cp-4": {"ansible_host": "127.0.0.5", "failure_domain": "fd-1,node-role.kubernetes.io/control-plane="}}),
         {}, "cp-4.failure_domain: must be a failure domain's name"),
        (CREATE, dict(POOL, **{"cp-4": {"ansible_host": "127.0.0.2", "failure_domain": "fd-1"}}), {},
         "cp-4.ansible_host: is also the address of cp-1"),
        (CREATE, POOL, {"kcp_provider": "cloud"}, "kcp_provider: must be static"),
        (CREATE, POOL, {"kcp_bundle_dir": "/nowhere/bundle"}, "kcp_bundle_dir: must name the node software bundle's directory"),
        (CREATE, POOL, {"kcp": dict(SPEC, replicas=5)}, "replicas: the static pool (inventory group control_plane_candidates) has 3 hosts"),
        (DELETE, POOL, {"kcp_provider": "hook", "kcp_provider_create_tasks": "create.yml"},
         "kcp_provider_create_tasks: must be the absolute path of the hook provider's task file that creates a host: "
         "create.yml is not an absolute path"),
        (CREATE, POOL, {"flow_group": "no_such_group"}, "flow_group: the inventory group no_such_group has no host"),
        (CREATE, {}, {}, "flow_group: the inventory group control_plane_candidates has no host"),
        (CREATE, POOL, {"kcp_max_steps": 0}, "kcp_max_steps: must be a whole number from 1 to 30"),
    ],
    ids=["a host named like a flag", "a comma in a failure domain", "two hosts at one address", "an unknown provider",
         "a bundle that is not there", "more replicas than the pool holds", "a hook task file by a relative path",
         "an unknown group", "an empty group",
         "a run of no steps"],
)
def test_the_flow_fails_naming_the_variable_and_reaches_no_host(tmp_path, playbook, hosts, extra, said):
    code, output = flow(tmp_path, playbook, hosts, **extra)
    assert code != 0 and said in output, output[-3000:]
    assert "UNREACHABLE" not in output and "PLAY [Pass 1" not in output and "Observe" not in output, output[-3000:]


@pytest.mark.ansible
@pytest.mark.parametrize("playbook", [CREATE, DELETE], ids=["create", "delete"])
def test_a_flow_on_candidates_of_which_none_answers_fails_saying_so(tmp_path, playbook):
    code, output = flow(tmp_path, playbook, POOL)
    assert code != 0, output[-3000:]
    assert "no host of the inventory group control_plane_candidates answered" in output, output[-3000:]
    # the first pass stops the run: the passes after it try no host
    assert output.count("UNREACHABLE") <= 2 * len(POOL), output[-3000:]


WORKER_POOL = {"worker-1": {"ansible_host": "127.0.0.6", "worker_group": "md-0"}}


@pytest.mark.ansible
@pytest.mark.parametrize(
    "playbook,workers,extra,said",
    [
        (WORKERS, WORKER_POOL, {"flow_holder": ""}, "flow_holder: must name this run for the cluster lock"),
        (WORKERS_REMOVE, WORKER_POOL, {"flow_holder": " ", "kcp_workers_remove": ["worker-1"]}, "flow_holder: must name this run for the cluster lock"),
        (WORKERS, dict(WORKER_POOL, **{"--all": {"ansible_host": "127.0.0.7"}}), {},
         "--all: an inventory host of the group names its Node: must be a DNS-1123 subdomain"),
    ],
    ids=["join with an empty lock holder", "removal with a blank lock holder", "a worker named like a flag"],
)
def test_a_worker_run_fails_naming_the_variable_and_reaches_no_host(tmp_path, playbook, workers, extra, said):
    code, output = flow(tmp_path, playbook, POOL, workers, **extra)
    assert code != 0 and said in output, output[-3000:]
    assert "UNREACHABLE" not in output and "Observe" not in output, output[-3000:]
