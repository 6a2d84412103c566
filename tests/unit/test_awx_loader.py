# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""awx/load.yml and the job templates it loads, checked against what AWX takes (docs/awx.md "Loading it"):

- each awx.awx task's parameters against the argument spec of awx.awx's module (24.6.1, the collection's last
  release, which `make setup` installs), read by running the module's main() until it makes its module;
- each survey against the rules AWX's API applies when a survey is saved and when a job is launched, restated
  below (``survey_problems``, ``launch_problems``);
- the loader refusing incomplete input before it calls AWX.
"""

import importlib
import json
import os
import subprocess
import sys
from unittest import mock

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.kubeadm.control_plane.tests.ansible_run import COLLECTIONS
from ansible_collections.kubeadm.control_plane.tests.unit.test_awx_job_templates import ROOT, generate

LOADER = os.path.join(ROOT, "awx", "load.yml")
AWX_PLUGINS = "ansible_collections.awx.awx.plugins"

# The types a survey question may have, and what its default must be for AWX to save it.
DEFAULT_TYPES = {"text": str, "textarea": str, "password": str, "multiplechoice": str, "multiselect": str,
                 "integer": int, "float": (float, int)}
# AWX sets extra vars with these prefixes on every job; a question must not use them.
RESERVED_PREFIXES = ("awx_", "tower_", "controller_")
VALIDATOR_OPTIONS = ("mutually_exclusive", "required_together", "required_one_of", "required_if", "required_by")


class MadeModule(Exception):
    """Raised where an awx.awx module's main() makes its module, carrying what it was given."""


def awx_module(name):
    """(argument spec, validator options) of awx.awx's module ``name``, the controller connection options included."""
    module = importlib.import_module("%s.modules.%s" % (AWX_PLUGINS, name))
    api = importlib.import_module(AWX_PLUGINS + ".module_utils.controller_api")

    def made(argument_spec=None, **options):
        raise MadeModule(dict(argument_spec, **api.ControllerModule.AUTH_ARGSPEC), options)

    with mock.patch.object(module, "ControllerAPIModule", made), pytest.raises(MadeModule) as caught:
        module.main()
    spec, options = caught.value.args
    return spec, {key: value for key, value in options.items() if key in VALIDATOR_OPTIONS}


def parameter_problems(name, params):
    spec, options = awx_module(name)
    return ArgumentSpecValidator(spec, **options).validate(params).error_messages


def survey_problems(survey):
    """What AWX's API refuses when a job template's survey_spec is saved (and the variables AWX would overwrite)."""
    problems = ["%s is missing or not a %s" % (field, kind.__name__)
                for field, kind in (("name", str), ("description", str), ("spec", list)) if not isinstance(survey.get(field), kind)]
    if problems:
        return problems
    if not survey["spec"]:
        return ["spec has no question"]
    seen = set()
    for index, item in enumerate(survey["spec"]):
        where = "question %d" % index
        if not isinstance(item, dict):
            problems.append("%s is not an object" % where)
            continue
        problems += ["%s: %s is missing or not a %s" % (where, field, kind.__name__)
                     for field, kind in (("type", str), ("question_name", str), ("variable", str), ("required", bool))
                     if not isinstance(item.get(field), kind)]
        variable, kind, default = item.get("variable"), item.get("type"), item.get("default", "")
        if variable in seen:
            problems.append("%s: variable %s asked twice" % (where, variable))
        seen.add(variable)
        if str(variable).startswith(RESERVED_PREFIXES):
            problems.append("%s: AWX sets %s itself" % (where, variable))
        if kind not in DEFAULT_TYPES:
            problems.append("%s: type %s is not a survey type" % (where, kind))
            continue
        if default != "" and not isinstance(default, DEFAULT_TYPES[kind]):
            problems.append("%s: default %r is not a %s answer" % (where, default, kind))
        problems += ["%s: %s must be an integer" % (where, key) for key in ("min", "max")
                     if item.get(key) is not None and not isinstance(item[key], int)]
        if kind in ("multiplechoice", "multiselect"):
            if "choices" not in item:
                problems.append("%s: a %s question needs choices" % (where, kind))
                continue
            defaults = [line for line in default.splitlines() if line.strip()] if isinstance(default, str) else default
            if kind == "multiplechoice" and len(defaults) > 1:
                problems.append("%s: one default for a single choice" % where)
            if any(value not in item["choices"] for value in defaults):
                problems.append("%s: default %r is not among the choices" % (where, default))
    return problems


def answer_problems(item, answers, required=True):
    """What AWX refuses in a launch's answer to one question; a default it refuses is dropped from the job."""
    variable = item["variable"]
    if variable not in answers:
        return ["%s: no answer" % variable] if item["required"] and required else []
    value, kind = answers[variable], item["type"]
    if kind in ("text", "textarea", "password"):
        if not isinstance(value, str):
            return ["%s: %r is not text" % (variable, value)]
        if item.get("min") not in ("", None) and len(value) < int(item["min"]):
            return ["%s: shorter than %s" % (variable, item["min"])]
        if item.get("max") not in ("", None) and len(value) > int(item["max"]):
            return ["%s: longer than %s" % (variable, item["max"])]
    elif kind == "integer":
        if type(value) is not int:  # pylint: disable=unidiomatic-typecheck  # AWX refuses a bool here
            return ["%s: %r is not an integer" % (variable, value)]
    elif kind == "float":
        if type(value) not in (float, int):
            return ["%s: %r is not a number" % (variable, value)]
    elif kind == "multiplechoice":
        choices = item["choices"] if isinstance(item["choices"], list) else [c for c in item["choices"].splitlines() if c.strip()]
        if value not in choices:
            return ["%s: %r is not one of %s" % (variable, value, choices)]
    return []


def launch_problems(survey, extra_vars):
    """What AWX refuses in a launch through its API (`POST .../launch/` with these extra_vars)."""
    return [problem for item in survey["spec"] for problem in answer_problems(item, extra_vars)]


def template(flow):
    with open(os.path.join(ROOT, "awx", "job_templates", flow + ".json"), encoding="utf-8") as committed:
        return json.load(committed)


def loader():
    with open(LOADER, encoding="utf-8") as playbook:
        return yaml.safe_load(playbook)[0]


def awx_tasks():
    return [(action.split(".")[-1], args) for task in loader()["tasks"]
            for action, args in task.items() if action.startswith("awx.awx.")]


# The rules, on questions AWX refuses: the checks below would see each.
@pytest.mark.parametrize("item, problem", [
    ({"type": "multiplechoice", "question_name": "q", "variable": "v", "required": False, "default": "maybe", "choices": ["true", "false"]},
     "not among the choices"),
    ({"type": "integer", "question_name": "q", "variable": "v", "required": False, "default": "3"}, "not a integer answer"),
    ({"type": "text", "question_name": "q", "variable": "awx_v", "required": False, "default": ""}, "AWX sets awx_v itself"),
    ({"type": "boolean", "question_name": "q", "variable": "v", "required": False}, "not a survey type"),
    ({"type": "text", "question_name": "q", "variable": "v", "required": "yes"}, "required is missing or not a bool"),
    ({"type": "multiplechoice", "question_name": "q", "variable": "v", "required": False, "default": ""}, "needs choices"),
])
def test_the_survey_rules_see_what_awx_refuses(item, problem):
    problems = survey_problems({"name": "n", "description": "d", "spec": [item]})
    assert len(problems) == 1 and problem in problems[0], problems


def test_the_launch_rules_see_what_awx_refuses():
    scale = template("scale")["survey_spec"]
    spec_as_data = {"kcp_survey_kcp": {"replicas": 3}, "kcp_bundle_dir": "/b", "kcp_etcd_snapshot_dir": "/s"}
    assert launch_problems(scale, spec_as_data) == ["kcp_survey_kcp: {'replicas': 3} is not text"]
    assert launch_problems(scale, {"kcp_survey_kcp": "replicas: 3\n"}) == ["kcp_bundle_dir: no answer", "kcp_etcd_snapshot_dir: no answer"]
    answers = dict(spec_as_data, kcp_survey_kcp="replicas: 3\n", observe_timeout="5", kcp_survey_node_software_replace="yes")
    assert launch_problems(scale, answers) == ["observe_timeout: '5' is not a number",
                                               "kcp_survey_node_software_replace: 'yes' is not one of ['true', 'false']"]


def option_defaults(flow):
    """Each surveyed variable's default in its argument spec (None for a playbook's own variable)."""
    return {entry[0]: generate.argument_spec(*entry[1:4]).get("default") if entry[1] else None for entry in generate.QUESTIONS[flow]}


@pytest.mark.parametrize("flow", generate.FLOWS)
def test_awx_saves_each_survey_and_applies_each_default(flow):
    survey = template(flow)["survey_spec"]
    assert survey_problems(survey) == []
    for item in survey["spec"]:
        if item["default"] == "" and item["type"] in ("integer", "float", "textarea"):
            continue  # no default: AWX drops it, the role's default or the inventory holds (a textarea: survey_answers.yml)
        # a default AWX cannot use would be dropped without a word at every launch
        assert answer_problems(item, {item["variable"]: item["default"]}) == []
        # an empty text would reach the flow as "" over the role's default: only for a required question, or an
        # option whose own default is "" (the same meaning)
        assert item["default"] != "" or item["required"] or option_defaults(flow)[item["variable"]] == "", item["variable"]


@pytest.mark.parametrize("flow", generate.FLOWS)
def test_an_api_launch_as_docs_awx_shows_it_is_accepted(flow):
    """docs/awx.md: an API launch answers the required questions, the spec as text (what tests/e2e/test_awx_runner.py passes)."""
    survey = template(flow)["survey_spec"]
    answers = {"kcp_survey_kcp": "replicas: 3\nversion: v1.35.1\n", "kcp_bundle_dir": "/srv/kcp/bundle",
               "kcp_etcd_snapshot_dir": "/srv/kcp/snapshots", "kcp_survey_kcp_workers_remove": "[worker-1]\n",
               "kcp_backup_dir": "/srv/kcp/backups", "kcp_restore_backup": "/srv/kcp/backups/3f9a0c1d2e4b5a69/20261129T030012Z.json"}
    asked = {item["variable"] for item in survey["spec"]}
    assert launch_problems(survey, {name: value for name, value in answers.items() if name in asked}) == []


@pytest.mark.parametrize("flow", generate.FLOWS)
def test_each_job_template_is_what_awx_awx_job_template_takes(flow):
    params = dict(template(flow), organization="Default")  # the loader adds the organization
    assert parameter_problems("job_template", params) == []


def test_the_loader_makes_what_the_job_templates_refer_to():
    names = loader()["vars"]
    for flow in generate.FLOWS:
        made = template(flow)
        assert made["project"] == names["kcp_awx_project"]
        assert made["inventory"] == names["kcp_awx_inventory"]
        assert made["execution_environment"] == names["kcp_awx_execution_environment"]
        assert made["credentials"] == [names["kcp_awx_machine_credential"]]
    # the job templates task loads every file awx/generate.py writes, each parameter of it
    task = [task for task in loader()["tasks"] if "awx.awx.job_template" in task][0]
    assert "/job_templates/*.json" in task["loop"]
    given = {name: "{{ job_template.%s }}" % name for name in template("scale")}
    assert task["awx.awx.job_template"] == dict(given, organization="{{ kcp_awx_organization }}")


def test_each_loader_task_gives_its_awx_awx_module_only_what_it_takes():
    tasks = awx_tasks()
    assert sorted(name for name, _args in tasks) == sorted(
        ["execution_environment", "project", "inventory", "inventory_source", "credential", "job_template"])
    for name, args in tasks:
        spec, _options = awx_module(name)
        known = set(spec) | {alias for option in spec.values() for alias in option.get("aliases", ())}
        assert set(args) <= known, (name, set(args) - known)
        assert {option for option, about in spec.items() if about.get("required")} <= set(args), name
    credential = [task for task in loader()["tasks"] if "awx.awx.credential" in task][0]
    assert credential["no_log"] is True  # the hosts' private key is among its arguments


def ansible_playbook(*args, **env):
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1",
                       ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), **env)
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), LOADER] + list(args)
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120, check=False)


def test_the_loader_passes_its_syntax_check():
    run = ansible_playbook("--syntax-check")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_loader_refuses_incomplete_input_before_it_calls_awx():
    # nothing answers here: a task that reached for the controller would fail otherwise
    run = ansible_playbook("-e", "kcp_awx_ee_image=registry.example/ee:1", CONTROLLER_HOST="https://127.0.0.1:9")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "missing required arguments: kcp_awx_scm_url, kcp_awx_ssh_private_key_file" in run.stdout
    assert "TASK [The execution environment]" not in run.stdout
    assert "ok=0" in run.stdout and "failed=1" in run.stdout
