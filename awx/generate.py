# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes awx/job_templates/<flow>.json, one AWX job template a flow with its survey (docs/awx.md).

Each file holds the parameters of module awx.awx.job_template (the names AWX's API gives a job template), its
survey_spec included. The survey's questions are made from the roles' meta/argument_specs.yml: which options a
flow asks is listed below (QUESTIONS), what each question says, its type, default and choices come from the
option's argument spec, so the two cannot drift (tests/unit/test_awx_job_templates.py regenerates and compares).

    python awx/generate.py           # write the files
    python awx/generate.py --check   # exit 1, naming them, when a file is not what this would write

Types: str and path are text (multiple choice when the spec gives choices), int is integer, float is float;
bool, list and dict are answered as text (multiple choice true/false, or a textarea holding YAML or JSON), so
they are asked under the name kcp_survey_<option>, which awx/playbooks/survey_answers.yml reads into <option>.
Pure Python and PyYAML, no network.
"""

import json
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "job_templates")

FLOWS = ("create", "scale", "rollout", "upgrade", "remediate", "reconcile", "certificates", "delete", "status", "workers", "workers_remove",
         "backup", "etcd_maintenance", "restore")

# A question: (variable, role, entry point, option[, overrides]). The variable is what the flow reads (an option
# itself, or the playbook variable that feeds it: kcp -> flow_spec, kcp_bundle_dir -> machine_create_bundle_dir,
# kcp_etcd_snapshot_dir -> the snapshot directory). Overrides change what the spec says for AWX, with the reason.
SPEC = ("kcp", "flow", "main", "flow_spec")
# the controller is the job's container: a snapshot directory that is not a mounted volume is gone with the job
SNAPSHOTS = ("kcp_etcd_snapshot_dir", "machine_create", "main", "machine_create_snapshot_dir", {"required": True})
REMOVAL_SNAPSHOTS = ("kcp_etcd_snapshot_dir", "machine_delete", "main", "machine_delete_snapshot_dir", {"required": True})
BUNDLE = ("kcp_bundle_dir", "machine_create", "main", "machine_create_bundle_dir")
OBSERVE = [("flow_group", "flow", "main", "flow_group"), ("flow_failure_domains", "flow", "main", "flow_failure_domains"),
           ("observe_timeout", "observe", "main", "observe_timeout")]
BUILD = [("machine_create_ready_timeout", "machine_create", "main", "machine_create_ready_timeout"),
         ("node_software_arch", "node_software", "main", "node_software_arch"),
         ("node_software_replace", "node_software", "main", "node_software_replace")]
FIRST = [("machine_create_endpoint_timeout", "machine_create", "main", "machine_create_endpoint_timeout")]
REMOVE = [("machine_delete_drain_timeout", "machine_delete", "main", "machine_delete_drain_timeout"),
          ("machine_delete_drain_retries", "machine_delete", "main", "machine_delete_drain_retries"),
          ("machine_delete_unreachable_pod_timeout", "machine_delete", "main", "machine_delete_unreachable_pod_timeout")]
KEEP = [("etcd_snapshot_keep", "etcd_snapshot", "main", "etcd_snapshot_keep")]
RENEW = [("flow_certificate_restart_timeout", "flow", "renew_certificates", "flow_certificate_restart_timeout")]
UPGRADE = [("kcp_worker_group", None, None, None),
           ("node_upgrade_drain_timeout", "node_upgrade", "main", "node_upgrade_drain_timeout"),
           ("node_upgrade_drain_retries", "node_upgrade", "main", "node_upgrade_drain_retries"),
           ("node_upgrade_ready_timeout", "node_upgrade", "main", "node_upgrade_ready_timeout")]
# the workers playbook: its group, and what the worker_join role asks (docs/workers.md)
WORKERS = [("kcp_worker_group", None, None, None),
           ("kcp_bundle_dir", "worker_join", "main", "worker_join_bundle_dir", {"required": True}),
           ("worker_join_ready_timeout", "worker_join", "main", "worker_join_ready_timeout")]
# the workers_remove playbook: which workers, and what the worker_remove role asks
WORKERS_REMOVE = [("kcp_workers_remove", None, None, None),
                  ("worker_remove_drain_timeout", "worker_remove", "main", "worker_remove_drain_timeout"),
                  ("worker_remove_drain_retries", "worker_remove", "main", "worker_remove_drain_retries"),
                  ("worker_remove_unreachable_pod_timeout", "worker_remove", "main", "worker_remove_unreachable_pod_timeout")]

# the backup playbook: what the backup role asks; its directory must outlive the job's container (a volume)
BACKUP = [("kcp_backup_dir", "backup", "main", "backup_dir", {"required": True}),
          ("kcp_backup_keep", "backup", "main", "backup_keep"),
          ("kcp_backup_max_age_days", "backup", "main", "backup_max_age_days"),
          ("kcp_backup_vault_id", "backup", "main", "backup_vault_id"),
          ("kcp_etcdutl", "backup", "main", "backup_etcdutl")]
# the restore playbook: which backup (on a volume the job mounts), where, whether forced; then the scale flow's questions
RESTORE = [("kcp_restore_backup", "restore", "main", "restore_backup"),
           ("kcp_restore_host", "restore", "main", "restore_host"),
           ("kcp_restore_force", "restore", "main", "restore_force"),
           ("kcp_etcdutl", "restore", "main", "restore_etcdutl")]
# the etcd maintenance playbook: what the etcd_maintenance role asks
MAINTENANCE = [("etcd_maintenance_compact", "etcd_maintenance", "main", "etcd_maintenance_compact"),
               ("etcd_maintenance_defrag_timeout", "etcd_maintenance", "main", "etcd_maintenance_defrag_timeout")]

QUESTIONS = {
    "create": [SPEC, BUNDLE, SNAPSHOTS] + OBSERVE + FIRST + BUILD + KEEP,
    "scale": [SPEC, BUNDLE, SNAPSHOTS] + OBSERVE + FIRST + BUILD + REMOVE + KEEP,
    "rollout": [SPEC, BUNDLE, SNAPSHOTS] + OBSERVE + BUILD + REMOVE + KEEP,
    "upgrade": [SPEC, BUNDLE, SNAPSHOTS] + OBSERVE + BUILD + REMOVE + UPGRADE + KEEP,
    "remediate": [SPEC, BUNDLE, SNAPSHOTS] + OBSERVE + BUILD + REMOVE + KEEP,
    "reconcile": [SPEC, BUNDLE, SNAPSHOTS] + OBSERVE + FIRST + BUILD + REMOVE + UPGRADE + RENEW + KEEP,
    "certificates": [SPEC] + OBSERVE + RENEW,
    "delete": [SPEC, REMOVAL_SNAPSHOTS] + OBSERVE + REMOVE + KEEP + [("kcp_delete_force", None, None, None)],
    "status": [SPEC] + OBSERVE,
    "workers": [SPEC] + WORKERS + OBSERVE[:1] + OBSERVE[2:] + BUILD[1:],
    "workers_remove": WORKERS_REMOVE + OBSERVE[:1] + OBSERVE[2:],
    "backup": BACKUP + OBSERVE[:1] + OBSERVE[2:],
    "etcd_maintenance": MAINTENANCE + OBSERVE[:1] + OBSERVE[2:],
    "restore": [SPEC] + RESTORE + [BUNDLE, SNAPSHOTS] + OBSERVE + BUILD + KEEP,
}

# Variables a playbook reads that no argument spec describes (the playbook's own, in playbooks/<flow>.yml).
PLAYBOOK_VARIABLES = {
    "kcp_delete_force": {
        "type": "bool", "default": False,
        "description": "Delete the control plane even while worker Nodes remain; they are left without one (playbooks/delete.yml).",
    },
    "kcp_workers_remove": {
        "type": "list", "required": True,
        "description": "The inventory names of the worker hosts to remove, one at a time: drain, kubeadm reset, the "
                       "Node deleted (playbooks/workers_remove.yml).",
    },
    "kcp_worker_group": {
        "type": "str", "default": "workers",
        "description": "The inventory group of the worker hosts, each named as its Node and with its worker_group: "
                       "playbooks/workers.yml joins them, playbooks/upgrade.yml upgrades them in place.",
    },
}

MARKUP = re.compile(r"\b[OVCMIBU]\(([^()]*)\)")
LINK = re.compile(r"\bL\(([^(),]*),[^()]*\)")


def plain(description):
    """An argument spec's description (a string or a list of them) as plain text, without ansible-doc markup."""
    text = " ".join(description) if isinstance(description, list) else str(description or "")
    text = LINK.sub(r"\1", MARKUP.sub(r"\1", text))
    return re.sub(r"\s+", " ", text).strip()


def argument_spec(role, entry_point, option, root=ROOT):
    with open(os.path.join(root, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as spec_file:
        specs = yaml.safe_load(spec_file)["argument_specs"]
    return specs[entry_point]["options"][option]


def as_text(value):
    """A default for a question answered as text: YAML flow style, one line (true, [], {a: 1})."""
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix("...").strip()


# The label a person reads for each survey question (AWX's question_name); its description says the rest.
LABELS = {
    "kcp": "Control plane spec (YAML or JSON)",
    "kcp_bundle_dir": "Node software bundle directory (on the controller)",
    "kcp_etcd_snapshot_dir": "etcd snapshot directory (on the controller; a volume of the execution environment)",
    "kcp_backup_dir": "Backup directory (on the controller; a volume of the execution environment)",
    "kcp_backup_keep": "Backups to keep",
    "kcp_backup_max_age_days": "Days a backup is kept (0: any age)",
    "kcp_backup_vault_id": "Vault id of the secret that encrypts the PKI (an attached Vault credential's)",
    "kcp_etcdutl": "etcdutl on the controller",
    "kcp_restore_backup": "Backup to restore (its record, <backup dir>/<cluster id>/<UTC time>.json)",
    "kcp_restore_host": "Host the cluster comes back on (empty: the first that ran it)",
    "kcp_restore_force": "Restore although etcd has quorum or the backup was restored before",
    "etcd_maintenance_compact": "Compact etcd's history before defragmenting",
    "etcd_maintenance_defrag_timeout": "Seconds each member's defragmentation may take",
    "kcp_delete_force": "Delete even while worker Nodes remain",
    "kcp_worker_group": "Inventory group of the worker hosts",
    "kcp_workers_remove": "Worker hosts to remove",
    "flow_group": "Inventory group of the control plane hosts",
    "flow_failure_domains": "Failure domains, in order",
    "flow_certificate_restart_timeout": "Seconds a static pod has to restart after a certificate renewal",
    "etcd_snapshot_keep": "etcd snapshots to keep",
    "machine_create_endpoint_timeout": "Seconds the first machine waits for the API endpoint",
    "machine_create_ready_timeout": "Seconds a new machine has to be ready",
    "machine_delete_drain_retries": "Drain attempts before a machine is removed",
    "machine_delete_drain_timeout": "Seconds each drain of a machine may take",
    "machine_delete_unreachable_pod_timeout": "Seconds a drain waits for pods on an unreachable machine",
    "node_software_arch": "Node architecture",
    "node_software_replace": "Replace Kubernetes binaries the bundle did not install",
    "node_upgrade_drain_retries": "Drain attempts before an in-place upgrade gives up",
    "node_upgrade_drain_timeout": "Seconds each drain of an upgrade may take",
    "node_upgrade_ready_timeout": "Seconds an upgraded node has to be ready",
    "observe_timeout": "Seconds each read of the cluster or etcd may take",
    "worker_join_ready_timeout": "Seconds a joined worker has to be ready",
    "worker_remove_drain_retries": "Drain attempts before a worker is removed",
    "worker_remove_drain_timeout": "Seconds each drain of a worker may take",
    "worker_remove_unreachable_pod_timeout": "Seconds a drain waits for pods on an unreachable worker",
}


def question(variable, role, entry_point, option, overrides=None, root=ROOT):
    """One survey question (AWX survey_spec item) for ``variable``, from the option's argument spec."""
    if role is None:
        spec, source = dict(PLAYBOOK_VARIABLES[variable]), "playbook variable"
    else:
        spec, source = dict(argument_spec(role, entry_point, option, root)), "%s %s: %s" % (role, entry_point, option)
    spec.update(overrides or {})
    kind = spec.get("type", "str")
    item = {
        "question_name": LABELS.get(variable, variable),  # every surveyed variable has a label (tests/unit)
        "question_description": "%s (%s)" % (plain(spec.get("description")), source),
        "variable": variable,
        "type": "text",
        "required": bool(spec.get("required", False)),
        "default": "",
        "choices": "",
    }
    default = spec.get("default")
    if kind in ("bool", "boolean"):
        item.update(type="multiplechoice", choices=["true", "false"], variable="kcp_survey_" + variable,
                    default=as_text(bool(default)))
    elif kind in ("list", "dict"):
        item.update(type="textarea", variable="kcp_survey_" + variable,
                    default="" if default is None else as_text(default))
    elif kind == "int":
        item.update(type="integer", default="" if default is None else int(default))
    elif kind == "float":
        item.update(type="float", default="" if default is None else float(default))
    elif kind in ("str", "path", "raw"):
        if spec.get("choices"):
            item.update(type="multiplechoice", choices=[str(choice) for choice in spec["choices"]])
        item["default"] = "" if default is None else str(default)
    else:
        raise ValueError("%s: no survey type for argument spec type %s" % (variable, kind))
    return item


def playbook_summary(flow, root=ROOT):
    """What the collection's playbook says it does: its opening comment, after 'kubeadm.control_plane.<flow> - '."""
    lines = []
    with open(os.path.join(root, "playbooks", flow + ".yml"), encoding="utf-8") as playbook:
        for line in playbook:
            if line.startswith("---"):
                continue
            if not line.startswith("#"):
                break
            lines.append(line[1:].strip())
    text = " ".join(lines)
    return text.split(" - ", 1)[1] if " - " in text else text


def job_template(flow, root=ROOT):
    """The awx.awx.job_template parameters of ``flow``'s job template, its survey_spec included."""
    name = "kubeadm control plane: %s" % flow
    return {
        "name": name,
        "description": playbook_summary(flow, root),
        "job_type": "run",
        "project": "kubeadm.control_plane",
        "playbook": "awx/playbooks/%s.yml" % flow,
        # the inventory holds the group control_plane_candidates, each host with failure_domain (docs/awx.md)
        "inventory": "kubeadm control plane",
        "execution_environment": "kubeadm.control_plane",
        "credentials": ["kubeadm control plane hosts"],
        "become_enabled": False,
        "ask_variables_on_launch": True,
        "ask_limit_on_launch": False,
        "ask_inventory_on_launch": False,
        "allow_simultaneous": False,
        "job_slice_count": 1,
        # each pass asks every candidate host at once (docs/flows.md "How fast"); AWX's 0 would be Ansible's 5
        "forks": 20,
        "use_fact_cache": False,
        # a fixed holder of the cluster lock for this template: a rerun after a killed job renews it at once
        "extra_vars": {"flow_holder": "awx-kubeadm-control-plane-%s" % flow},
        "survey_enabled": True,
        "survey_spec": {
            "name": name,
            "description": "The spec and options of the %s flow, from the roles' argument specs (awx/generate.py)" % flow,
            "spec": [question(*entry, root=root) for entry in QUESTIONS[flow]],
        },
    }


def render(flow, root=ROOT):
    return json.dumps(job_template(flow, root), indent=2, sort_keys=False) + "\n"


def main(argv):
    check = "--check" in argv
    stale = []
    os.makedirs(OUT, exist_ok=True)
    for flow in FLOWS:
        path = os.path.join(OUT, flow + ".json")
        text = render(flow)
        current = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as existing:
                current = existing.read()
        if current == text:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not check:
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
    if check and stale:
        print("not what awx/generate.py writes: %s" % ", ".join(stale))
        return 1
    print(("written: %s" % ", ".join(stale)) if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
