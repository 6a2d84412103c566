# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a flow is given besides the spec is refused before any host is touched, every error at once, each named
by the inventory variable that gives it."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.run_inventory import (
    MACHINE_INFO_FIELDS, _host_errors, candidate_hosts, etcd_client_urls, inventory_errors, is_node_name, worker_host_errors)
from ansible_collections.kubeadm.control_plane.tests.unit.builders import spec

FILES = {"/srv/kcp/create.yml", "/srv/kcp/delete.yml", "/srv/kcp/power-cycle.yml"}
DIRS = {"/srv/kcp/bundle"}
POOL = [{"name": "cp-1", "address": "10.0.0.1", "failure_domain": "fd-1"},
        {"name": "cp-2", "address": "10.0.0.2", "failure_domain": "fd-2"},
        {"name": "cp-3.example.com", "address": "10.0.0.3", "failure_domain": None}]


def errors(spec_=None, **inventory):
    given = dict({"group": "control_plane_candidates", "hosts": POOL, "provider": "static", "bundle_dir": "/srv/kcp/bundle",
                  "actions": ["scale_up", "scale_down"]}, **inventory)
    return [(e["path"], e["rule"]) for e in inventory_errors(given, spec_ or spec(), FILES.__contains__, DIRS.__contains__)]


def paths(spec_=None, **inventory):
    return [path for path, _rule in errors(spec_, **inventory)]


def test_a_pool_of_node_names_with_their_failure_domains_is_accepted():
    assert errors() == []


@pytest.mark.parametrize(
    "host,path",
    [
        ({"name": "--all", "address": "10.0.0.9"}, "--all"),
        ({"name": "cp'4", "address": "10.0.0.9"}, "cp'4"),
        ({"name": "CP-4", "address": "10.0.0.9"}, "CP-4"),
        ({"name": "cp-4", "address": "10.0.0.9", "failure_domain": ["fd-1", "fd-2"]}, "cp-4.failure_domain"),
        ({"name": "cp-4", "address": "10.0.0.9", "failure_domain": ""}, "cp-4.failure_domain"),
        ({"name": "cp-4", "address": "10.0.0.9", "failure_domain": "fd-1,node-role.kubernetes.io/control-plane="},
         "cp-4.failure_domain"),
        ({"name": "cp-4", "address": "10.0.0.1", "failure_domain": "fd-1"}, "cp-4.ansible_host"),
    ],
    ids=["a name kubectl would read as a flag", "a quote", "upper case", "a list of failure domains", "an empty failure domain",
         "a comma that would add a label", "the address of another host"],
)
def test_a_host_the_flow_cannot_name_place_or_tell_apart_is_refused(host, path):
    assert paths(hosts=POOL + [host]) == [path]


def test_the_static_pool_must_hold_the_replicas_of_a_flow_that_builds_machines():
    assert paths(spec(replicas=5)) == ["replicas"]
    assert errors(spec(replicas=5))[0][1].startswith("the static pool (inventory group control_plane_candidates) has 3 hosts")
    assert paths(spec(replicas=5), actions=["scale_down", "finish_delete"]) == []  # the delete flow builds nothing
    assert paths(spec(replicas=5), provider="hook", provider_create_tasks="/srv/kcp/create.yml",
                 provider_delete_tasks="/srv/kcp/delete.yml") == []


@pytest.mark.parametrize(
    "inventory,expected",
    [
        ({"provider": "cloud"}, ["kcp_provider"]),
        ({"provider": "hook"}, ["kcp_provider_create_tasks", "kcp_provider_delete_tasks"]),
        ({"provider": "hook", "provider_create_tasks": "create.yml", "provider_delete_tasks": "/srv/kcp/gone.yml"},
         ["kcp_provider_create_tasks", "kcp_provider_delete_tasks"]),
        ({"bundle_dir": None}, ["kcp_bundle_dir"]),
        ({"bundle_dir": "/srv/kcp/create.yml"}, ["kcp_bundle_dir"]),
        ({"bundle_dir": None, "actions": ["scale_down", "finish_delete"]}, []),
    ],
    ids=["an unknown provider", "a hook without its task files", "a relative task file and a missing one",
         "no bundle", "a bundle that is no directory", "no bundle for a flow that builds nothing"],
)
def test_the_provider_and_the_bundle_the_flow_needs(inventory, expected):
    assert paths(**inventory) == expected


def test_external_remediation_needs_an_existing_task_file_where_the_flow_may_take_that_step():
    external = spec(remediation={"max_retry": None, "retry_period": 0.0, "min_healthy_period": 3600.0,
                                 "external": {"attempts": 3, "timeout": 600.0, "escalate": True}})
    remediating = ["remediate", "remediate_external", "scale_up"]
    assert paths(external, actions=remediating, remediation_tasks="/srv/kcp/power-cycle.yml") == []
    assert errors(external, actions=remediating, remediation_tasks="/srv/kcp/typo.yml") == [
        ("kcp_remediation_tasks", "must be the absolute path of the task file run for an unhealthy machine or worker, since "
                                  "remediation.external or a workers' external_remediation is set (docs/flows.md \"External "
                                  "remediation\"): there is no file at /srv/kcp/typo.yml")]
    assert paths(external, actions=remediating) == ["kcp_remediation_tasks"]
    assert paths(external, actions=["scale_up"]) == []
    assert paths(actions=remediating) == []  # no external remediation asked for
    # a worker group's asks for the task file too
    workers = spec(workers={"health_check": None, "drain_timeout": 300.0, "max_surge": 1, "max_unavailable": 0, "external_remediation": None,
                            "groups": {"md-0": {"external_remediation": {"attempts": 1, "timeout": 600.0, "escalate": False}}}})
    assert paths(workers, actions=remediating) == ["kcp_remediation_tasks"]


def test_every_error_at_once():
    bad = POOL + [{"name": "--all", "address": "10.0.0.2", "failure_domain": ""}]
    assert paths(spec(replicas=7), hosts=bad, provider="static", bundle_dir="/nowhere") == [
        "--all", "--all.failure_domain", "--all.ansible_host", "replicas", "kcp_bundle_dir"]


def test_a_node_name_is_at_most_253_characters():
    longest = ".".join(["a" * 63] * 4)[:253]
    assert is_node_name(longest) and not is_node_name(longest + "a") and not is_node_name(None)


def test_a_failure_domain_an_inventory_gives_as_a_number_is_its_label_value_and_a_boolean_is_not():
    assert paths(spec(replicas=1), hosts=[{"name": "cp-1", "address": "10.0.0.1", "failure_domain": 1}]) == []
    assert paths(spec(replicas=1), hosts=[{"name": "cp-1", "address": "10.0.0.1", "failure_domain": True}]) == ["cp-1.failure_domain"]


def test_each_refusal_says_what_was_given():
    assert errors(spec(replicas=3), hosts=POOL[:1])[0][1].startswith("the static pool (inventory group control_plane_candidates) has 1 host:")
    assert errors(bundle_dir="/nowhere")[0][1].endswith("(docs/node-software.md): there is none at /nowhere")
    assert errors(bundle_dir="")[0][1].endswith("(docs/node-software.md)")
    hook = errors(provider="hook", provider_create_tasks="create.yml", provider_delete_tasks="")
    assert hook[0][1].endswith(": create.yml is not an absolute path") and hook[1][1].endswith("deletes a host")


def test_a_worker_host_names_its_node():
    assert worker_host_errors({"w-1": "md-0", "gpu-1.example.com": None}) == []
    assert [e["path"] for e in worker_host_errors({"w-1": "md-0", "--all": "md-0", "W_2": None})] == ["--all", "W_2"]


@pytest.mark.parametrize("action", ["scale_up", "rollout", "upgrade_in_place", "upgrade_workers"])
def test_every_flow_step_that_builds_a_machine_needs_the_bundle(action):
    assert paths(bundle_dir=None, actions=[action]) == ["kcp_bundle_dir"]


NODE_NAME_RULE = ("an inventory host of the group names its Node: must be a DNS-1123 subdomain (at most 253 characters "
                  "a-z, 0-9, '-' and '.', each part starting and ending with a letter or digit)")


@pytest.mark.parametrize(
    "inventory,expected",
    [
        ({"hosts": POOL + [{"name": "CP-4", "address": "10.0.0.9"}]}, [("CP-4", NODE_NAME_RULE, "CP-4")]),
        ({"hosts": POOL + [{"name": "cp-4", "address": "10.0.0.9", "failure_domain": "fd 1"}]},
         [("cp-4.failure_domain", "must be a failure domain's name, the value of the Node's zone label: one string of at most 63 "
                                  "characters a-z, A-Z, 0-9, '-', '_' and '.', starting and ending with a letter or digit", "fd 1")]),
        ({"hosts": POOL + [{"name": "cp-4", "address": "10.0.0.2"}]},
         [("cp-4.ansible_host", "is also the address of cp-2: two machines would be one host", "10.0.0.2")]),
        ({"provider": "cloud"},
         [("kcp_provider", "must be static (a pool of inventory hosts) or hook (your own create and delete tasks; docs/providers.md)",
           "cloud")]),
        ({"provider": "hook", "provider_delete_tasks": "/srv/kcp/delete.yml"},
         [("kcp_provider_create_tasks", "must be the absolute path of the hook provider's task file that creates a host", None)]),
        ({"provider": "hook", "provider_create_tasks": "/srv/kcp/create.yml", "provider_delete_tasks": "/srv/kcp/gone.yml"},
         [("kcp_provider_delete_tasks", "must be the absolute path of the hook provider's task file that deletes a host: "
                                        "there is no file at /srv/kcp/gone.yml", "/srv/kcp/gone.yml")]),
    ],
    ids=["a host that cannot name its Node", "a failure domain that is no label value", "an address two hosts share",
         "an unknown provider", "a hook without its create task file", "a hook whose delete task file is missing"],
)
def test_each_refusal_names_the_variable_the_rule_and_the_value_given(inventory, expected):
    given = dict({"group": "control_plane_candidates", "hosts": POOL, "provider": "static", "bundle_dir": "/srv/kcp/bundle",
                  "actions": ["scale_up"]}, **inventory)
    found = inventory_errors(given, spec(), FILES.__contains__, DIRS.__contains__)
    assert [(e["path"], e["rule"], e["value"]) for e in found] == expected


@pytest.mark.parametrize("max_steps", [None, 1, 30, "12"],
                         ids=["unset: as many as the plan needs", "one", "the ceiling", "a number given as an extra var on the command line"])
def test_the_most_steps_a_run_takes_is_a_whole_number_up_to_the_passes_a_run_has(max_steps):
    assert errors(max_steps=max_steps) == []


@pytest.mark.parametrize("max_steps", [0, 31, -1, True, 2.5, "many", "", " 12", "\u0661\u0662"])
def test_a_number_of_steps_no_run_can_take_is_refused(max_steps):
    rule = "must be a whole number from 1 to 30: the most steps one run takes (one pass a step, docs/flows.md \"One pass\")"
    assert errors(max_steps=max_steps) == [("kcp_max_steps", rule)]


def test_the_candidates_are_handed_on_with_their_address_and_failure_domain():
    host_vars = {"cp-1": {"ansible_host": "10.0.0.11", "failure_domain": "fd-1"}, "cp-2": {}}
    assert candidate_hosts(["cp-1", "cp-2"], host_vars) == [
        {"name": "cp-1", "address": "10.0.0.11", "failure_domain": "fd-1"}, {"name": "cp-2", "address": "cp-2", "failure_domain": None}]
    # what validate's inventory.hosts takes: the same rules apply to what the filter builds
    assert _host_errors(candidate_hosts(["cp-1", "cp-2"], host_vars)) == []


def test_with_machine_info_each_candidate_carries_what_it_read():
    info = {field: "value of %s" % field for field in MACHINE_INFO_FIELDS}
    hosts = candidate_hosts(["cp-1"], {"cp-1": {"ansible_host": "10.0.0.11", "observe_machine": dict(info, other="left out")}}, "observe_machine")
    assert hosts == [dict({"name": "cp-1", "address": "10.0.0.11", "failure_domain": None}, **info)]


def test_each_host_s_etcd_client_url_an_ipv6_address_bracketed():
    host_vars = {"cp-1": {"ansible_host": "10.0.0.11"}, "cp-2": {"ansible_host": "fd00::12"}, "cp-3": {"ansible_host": "[fd00::13]"}, "cp-4": {}}
    assert etcd_client_urls(["cp-1", "cp-2", "cp-3", "cp-4"], host_vars) == [
        "https://10.0.0.11:2379", "https://[fd00::12]:2379", "https://[fd00::13]:2379", "https://cp-4:2379"]
