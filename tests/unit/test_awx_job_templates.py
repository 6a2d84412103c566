# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX job templates (awx/job_templates, docs/awx.md) are what awx/generate.py makes from the roles' argument
specs, so a changed option cannot leave a survey behind; the wrapper playbooks import the collection's flows."""

import importlib.util
import json
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = importlib.util.spec_from_file_location("awx_generate", os.path.join(ROOT, "awx", "generate.py"))
generate = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(generate)


def committed(flow):
    with open(os.path.join(ROOT, "awx", "job_templates", flow + ".json"), encoding="utf-8") as template:
        return template.read()


def questions(flow):
    return {item["variable"]: item for item in generate.job_template(flow)["survey_spec"]["spec"]}


@pytest.mark.parametrize("flow", generate.FLOWS)
def test_the_committed_job_template_is_what_the_generator_makes(flow):
    assert committed(flow) == generate.render(flow), "run: python awx/generate.py"


def test_there_is_one_job_template_per_flow_and_no_other():
    assert sorted(os.listdir(os.path.join(ROOT, "awx", "job_templates"))) == sorted(f + ".json" for f in generate.FLOWS)
    flows = {name[:-4] for name in os.listdir(os.path.join(ROOT, "playbooks"))} - {"flow", "flow_pass", "bundle"}
    assert flows == set(generate.FLOWS)


@pytest.mark.parametrize("flow", generate.FLOWS)
def test_each_template_runs_its_wrapper_playbook_with_a_survey(flow):
    template = generate.job_template(flow)
    assert template["playbook"] == "awx/playbooks/%s.yml" % flow
    assert os.path.isfile(os.path.join(ROOT, template["playbook"]))
    assert template["survey_enabled"] and template["ask_variables_on_launch"]
    assert not template["allow_simultaneous"] and template["job_slice_count"] == 1
    # as many forks as ansible.cfg: each pass reads every candidate host at once (AWX's 0 is Ansible's 5)
    assert template["forks"] == 20
    # a fixed lock holder per template, and nothing secret in the extra vars
    assert template["extra_vars"] == {"flow_holder": "awx-kubeadm-control-plane-" + flow}
    survey = template["survey_spec"]
    assert survey["name"] and survey["description"]
    variables = [item["variable"] for item in survey["spec"]]
    assert len(variables) == len(set(variables))
    for item in survey["spec"]:
        assert set(item) == {"question_name", "question_description", "variable", "type", "required", "default", "choices"}
        assert item["type"] != "password"  # nothing secret is asked; AWX's own rules: test_awx_loader.py
        assert item["question_name"] and item["question_description"]
        # a label a person reads, not the variable
        assert item["question_name"] not in (item["variable"], item["variable"].replace("kcp_survey_", ""))
        assert " " in item["question_name"] and len(item["question_name"]) <= 100
        # an answer given as text that the flow needs as data is read by survey_answers.yml
        assert item["variable"].startswith("kcp_survey_") == (item["type"] == "textarea" or item["choices"] == ["true", "false"])


def test_the_spec_is_a_required_textarea_in_every_survey_but_those_that_read_the_cluster_alone():
    for flow in generate.FLOWS:
        if flow == "workers_remove":
            # removing workers needs no spec: which workers is its one required answer
            assert "kcp_survey_kcp" not in questions(flow)
            named = questions(flow)["kcp_survey_kcp_workers_remove"]
            assert named["type"] == "textarea" and named["required"]
            continue
        if flow in ("backup", "etcd_maintenance"):
            # they read the cluster, not the spec; a backup's directory must outlive the job's container
            assert "kcp_survey_kcp" not in questions(flow)
            assert flow != "backup" or questions(flow)["kcp_backup_dir"]["required"]
            continue
        spec = questions(flow)["kcp_survey_kcp"]
        assert spec["type"] == "textarea" and spec["required"] and spec["default"] == ""
        assert spec["question_description"].startswith("The control plane spec (docs/spec.md).")


def test_the_questions_take_their_type_default_and_words_from_the_argument_specs():
    scale = questions("scale")
    # str -> text with the spec's default
    assert scale["flow_group"]["type"] == "text" and scale["flow_group"]["default"] == "control_plane_candidates"
    # int -> integer, float -> float
    assert scale["machine_delete_drain_retries"]["type"] == "integer" and scale["machine_delete_drain_retries"]["default"] == 2
    assert scale["observe_timeout"]["type"] == "float" and scale["observe_timeout"]["default"] == 5.0
    # bool -> multiple choice true/false, answered as text under its kcp_survey_ name
    assert scale["kcp_survey_node_software_replace"]["type"] == "multiplechoice"
    assert scale["kcp_survey_node_software_replace"]["choices"] == ["true", "false"]
    assert scale["kcp_survey_node_software_replace"]["default"] == "false"
    # list -> textarea holding YAML
    assert scale["kcp_survey_flow_failure_domains"]["type"] == "textarea"
    # a required option is a required question; the words are the spec's, without ansible-doc markup
    assert scale["kcp_bundle_dir"]["required"] and scale["kcp_bundle_dir"]["type"] == "text"
    with open(os.path.join(ROOT, "roles", "machine_create", "meta", "argument_specs.yml"), encoding="utf-8") as specs:
        bundle = yaml.safe_load(specs)["argument_specs"]["main"]["options"]["machine_create_bundle_dir"]
    assert scale["kcp_bundle_dir"]["question_description"].startswith(generate.plain(bundle["description"]))
    assert "O(" not in json.dumps(scale) and "V(" not in json.dumps(scale) and "C(" not in json.dumps(scale)
    # the snapshot directory must be given: the job's container forgets its own
    assert scale["kcp_etcd_snapshot_dir"]["required"]


def test_choices_in_an_argument_spec_make_a_multiple_choice_question():
    item = generate.question("observe_lock_state", "observe", "main", "observe_lock_state")
    assert item["type"] == "multiplechoice" and item["choices"] == ["present", "absent"] and item["default"] == "present"


def test_each_flow_asks_what_it_uses():
    assert "kcp_bundle_dir" not in questions("status") and "kcp_etcd_snapshot_dir" not in questions("status")
    assert "kcp_bundle_dir" not in questions("delete") and "kcp_survey_kcp_delete_force" in questions("delete")
    assert "machine_delete_drain_timeout" not in questions("create")
    assert "machine_create_endpoint_timeout" in questions("create")
    assert all("kcp_survey_kcp_delete_force" not in questions(flow) for flow in generate.FLOWS if flow != "delete")


@pytest.mark.parametrize("flow", generate.FLOWS)
def test_each_wrapper_playbook_reads_the_answers_then_imports_the_flow(flow):
    with open(os.path.join(ROOT, "awx", "playbooks", flow + ".yml"), encoding="utf-8") as wrapper:
        plays = yaml.safe_load(wrapper)
    assert [play["ansible.builtin.import_playbook"] for play in plays] == ["survey_answers.yml", "kubeadm.control_plane." + flow]


def test_the_project_installs_this_collection_at_its_version():
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as galaxy:
        meta = yaml.safe_load(galaxy)
    with open(os.path.join(ROOT, "awx", "collections", "requirements.yml"), encoding="utf-8") as requirements:
        collections = yaml.safe_load(requirements)["collections"]
    assert collections[0] == {"name": "kubeadm.control_plane", "version": meta["version"]}
    assert [c["name"] for c in collections[1:]] == sorted(meta["dependencies"] or {})


def test_the_check_mode_of_the_generator_passes():
    assert generate.main(["--check"]) == 0
