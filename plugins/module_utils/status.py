# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The control plane's status as conditions, the way KubeadmControlPlane shows them (docs/status.md).

Pure function of the normalized spec and snapshot, no I/O. Each condition is ``{type, status, reason,
message, severity}``: ``status`` is ``True``, ``False`` or ``Unknown``; a ``False`` condition has a severity
(``Error``, ``Warning`` or ``Info``), the others none. ``Unknown`` means there was no answer to tell by:
nothing is concluded from no answer.

Per machine (in this order): ``NodeHealthy``, ``APIServerPodHealthy``, ``ControllerManagerPodHealthy``,
``SchedulerPodHealthy`` and, with stacked etcd, ``EtcdPodHealthy`` and ``EtcdMemberHealthy``; the component
conditions are component_health's (KCP EH6 / EH7) and etcd_health's (EH3 / EH4), and the machine's
``Ready`` summarizes them all.

For the control plane: ``Available``, ``MachinesReady``, ``MachinesUpToDate``, ``RollingOut``, ``Resized``,
``ScalingUp``, ``ScalingDown``, ``ControlPlaneComponentsHealthy``, ``EtcdClusterHealthy``,
``CertificatesNotExpiring``, ``RemediationAllowed``, ``Remediating`` and ``Deleting``, then ``Ready`` summarizing
them but for the ones that say work is under way (``UNDER_WAY``: true while it is, false at rest).

:func:`upgrade_progress` says how far the cluster is on its way to the spec's version: the control plane machines and
the workers that run it and those that do not yet, and each node whose in-place upgrade (the record on its Node,
docs/state.md) is under way or failed, with the step it is at and the failing step's error.

Summaries and cluster-level conditions aggregate as KCP does (docs/rules.md EH8, :func:`aggregate`): a ``False`` with
severity Error wins, then Warning, then Info; else ``True`` if any condition is true (even when others are
unknown); else ``Unknown``.
"""

from __future__ import annotations

from datetime import timedelta

from ansible_collections.kubeadm.control_plane.plugins.module_utils import (
    component_health,
    etcd_health,
    health_check,
    node_upgrade,
    remediation,
    rollout,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.component_health import (
    CONDITION_STATUS,
    ETCD_MEMBER,
    ETCD_POD,
    FALSE,
    POD_REASONS,
    TRUE,
    UNKNOWN,
    ready_status,
    stale,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import quorum
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import CERTIFICATE_FIELDS
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import etcd_is_external, with_v
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec_hash import spec_hashes
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

ERROR, WARNING, INFO = "Error", "Warning", "Info"
_SEVERITY_ORDER = (ERROR, WARNING, INFO)
# Certificates closer to expiry than this are reported when the spec sets no rollout.before threshold;
# 7 days is the least rollout.before.certificates_expiry_days accepts.
DEFAULT_CERTIFICATE_WARNING_DAYS = 7
# A CA closer to expiry than this is an error: kubeadm's CAs live ten years, and replacing one takes planning.
CA_WARNING_DAYS = 365
# The conditions that say work is under way: True while it is, False at rest; Ready does not summarize them.
UNDER_WAY = ("RollingOut", "ScalingUp", "ScalingDown", "Remediating", "Deleting")
# RollingOut names why machines roll out in this order, the version first as Cluster API v1.14 does.
ROLLOUT_KIND_ORDER = (rollout.VERSION, rollout.ETCD, rollout.UPGRADE, rollout.RENEWAL, rollout.SPEC, rollout.CERTIFICATES,
                      rollout.ROLLOUT_AFTER)


def condition(type_, status, reason="", message="", severity=None):
    """One condition; ``status`` in component_health's vocabulary (true / false / unknown)."""
    return {
        "type": type_,
        "status": CONDITION_STATUS[status],
        "reason": reason,
        "message": message,
        "severity": severity if status == FALSE else None,
    }


def aggregate(type_, conditions, message_when_true=""):
    """KCP's merge of several conditions into one (EH8): Error, Warning, Info false first, then true, then unknown.

    The message of a false or unknown result names the conditions that made it, ``Machine/Condition: message``.
    """
    for severity in _SEVERITY_ORDER:
        chosen = [c for c in conditions if c["status"] == "False" and c["severity"] == severity]
        if chosen:
            return condition(type_, FALSE, chosen[0]["reason"], _join(chosen), severity)
    if any(c["status"] == "True" for c in conditions):
        return condition(type_, TRUE, message=message_when_true)
    unknown = [c for c in conditions if c["status"] == "Unknown"]
    return condition(type_, UNKNOWN, unknown[0]["reason"] if unknown else "NothingToReport", _join(unknown))


def _join(conditions):
    return "; ".join("%s: %s" % (c.get("source", c["type"]), c["message"]) for c in conditions if c["message"])


def _sourced(conditions, source):
    """Copies of ``conditions`` that say where they come from, for an aggregate's message."""
    return [dict(c, source="%s/%s" % (source, c["type"])) for c in conditions]


# --- per machine ------------------------------------------------------------------------------------------


def node_condition(machine):
    """NodeHealthy: the Node's Ready condition; a Node that is gone is an error, one not there yet is info."""
    node = machine.get("node")
    if node is None:
        if machine.get("provisioned"):
            return condition("NodeHealthy", FALSE, "NodeNotFound", "the machine's Node no longer exists", ERROR)
        return condition("NodeHealthy", FALSE, "NodeProvisioning", "the machine has no Node yet", INFO)
    ready = ready_status(node)
    if ready == "True":
        return condition("NodeHealthy", TRUE)
    if ready == "False":
        return condition("NodeHealthy", FALSE, "NodeConditionsFailed", "Node %s is not Ready" % node["name"], WARNING)
    return condition("NodeHealthy", UNKNOWN, "NodeConditionsUnknown",
                     "Node %s reports no Ready status (its kubelet is not reporting)" % node["name"])


def _component_condition(name, entry, machine):
    """A component_health verdict as KCP's machine condition, with the reason and severity of its cause."""
    type_ = component_health.CONDITION_TYPES[name]
    if entry["status"] == TRUE:
        return condition(type_, TRUE)
    if machine.get("node") is None:
        if machine.get("provisioned"):
            return condition(type_, FALSE, "NodeNotFound", entry["reason"], ERROR)
        return condition(type_, UNKNOWN, "NodeProvisioning", entry["reason"])
    if name == ETCD_MEMBER:
        severity = INFO if machine.get("deleting") else ERROR
        reason = "EtcdMemberUnhealthy" if entry["status"] == FALSE else "EtcdMemberInspectionFailed"
        return condition(type_, entry["status"], reason, entry["reason"], severity)
    if entry["status"] == UNKNOWN and stale(ready_status(machine["node"])):
        return condition(type_, UNKNOWN, "NodeStatusStale", entry["reason"])
    state = (machine.get("components") or {}).get("etcd" if name == ETCD_POD else name, "unknown")
    reason, severity = POD_REASONS[state]
    return condition(type_, entry["status"], reason, entry["reason"], severity)


def machine_conditions(machine, etcd_managed, etcd_member):
    """The conditions of one machine, its ``Ready`` summary last (module docstring)."""
    verdicts = component_health.machine_conditions(machine, etcd_managed, etcd_member)
    conditions = [node_condition(machine)] + [_component_condition(n, verdicts[n], machine) for n in verdicts]
    return conditions + [aggregate("Ready", conditions)]


# --- the control plane ------------------------------------------------------------------------------------


def _available(snapshot, machines, etcd, etcd_managed):
    """Cluster API v1.9+ (v1beta2): initialized, etcd's voting members healthy to a quorum, and a machine with every
    component healthy; here also the API endpoint answering."""
    if not snapshot.get("initialized"):
        return condition("Available", FALSE, "WaitingForKubeadmInit", "kubeadm init has not completed", INFO)
    if not snapshot.get("endpoint_ready"):
        return condition("Available", FALSE, "EndpointNotReady", "the API endpoint does not answer /readyz", ERROR)
    if etcd_managed:
        voters = [m for m in component_health.quorum_members((snapshot.get("etcd") or {}).get("members") or [], machines,
                                                             etcd["members_by_machine"]) if not m.learner]
        if not voters:
            return condition("Available", UNKNOWN, "EtcdMembersUnknown", "etcd did not report its members")
        healthy = sum(1 for m in voters if m.healthy)
        if healthy < quorum(len(voters)):
            return condition("Available", FALSE, "EtcdQuorumLost", "%d of %d voting etcd members are healthy, a quorum is %d"
                             % (healthy, len(voters), quorum(len(voters))), ERROR)
    verdicts = component_health.all_conditions(machines, etcd_managed, etcd["members_by_machine"])
    if not any(component_health.all_healthy(verdicts[m["name"]]) for m in machines if not m.get("deleting")):
        return condition("Available", FALSE, "NoHealthyMachine", "no control plane machine has every component healthy", ERROR)
    return condition("Available", TRUE)


def _resized(spec, machines):
    count, wanted = len(machines), spec["replicas"]
    if count < wanted:
        message = "%d of %d machines; scaling up" % (count, wanted)
        return [condition("Resized", FALSE, "ScalingUp", message, WARNING), condition("ScalingUp", TRUE, "ScalingUp", message),
                condition("ScalingDown", FALSE, "NotScalingDown", severity=INFO)]
    if count > wanted:
        message = "%d machines, %d wanted; scaling down" % (count, wanted)
        return [condition("Resized", FALSE, "ScalingDown", message, WARNING),
                condition("ScalingUp", FALSE, "NotScalingUp", severity=INFO), condition("ScalingDown", TRUE, "ScalingDown", message)]
    return [condition("Resized", TRUE), condition("ScalingUp", FALSE, "NotScalingUp", severity=INFO),
            condition("ScalingDown", FALSE, "NotScalingDown", severity=INFO)]


def _up_to_date(spec, machines, now):
    """MachinesUpToDate and RollingOut (Cluster API v1.11+): which machines are outdated (rule RO1) and why."""
    if not machines:
        return [condition("MachinesUpToDate", TRUE, "NoReplicas"), condition("RollingOut", FALSE, "NotRollingOut", severity=INFO)]
    outdated = rollout.outdated_machines(machines, spec, spec_hashes(spec), now)
    if not outdated:
        return [condition("MachinesUpToDate", TRUE, "UpToDate"), condition("RollingOut", FALSE, "NotRollingOut", severity=INFO)]
    each = "; ".join("%s: %s" % (name, ", ".join(reasons)) for name, reasons in sorted(rollout.messages(outdated).items()))
    kinds = {}
    for name, reasons in sorted(outdated.items()):
        for reason in reasons:
            kinds.setdefault(reason.kind, []).append(name)
    why = ", ".join("%s (%s)" % (kind, ", ".join(kinds[kind])) for kind in ROLLOUT_KIND_ORDER if kind in kinds)
    return [condition("MachinesUpToDate", FALSE, "NotUpToDate", each, WARNING),
            condition("RollingOut", TRUE, "RollingOut", "rolling out %d not up-to-date %s: %s"
                      % (len(outdated), "machine" if len(outdated) == 1 else "machines", why))]


# Why a kubelet's client certificate is still close to expiry: a kubelet that rotates it renews it when 70 to 90 % of
# its lifetime has passed, through a certificate signing request the controller manager approves.
_KUBELET_ROTATION = {
    False: "the kubelet does not renew it (rotateCertificates is off)",
    True: "the kubelet has not renewed it: is its certificate signing request approved (kubectl get csr)?",
    None: "whether the kubelet renews it is not known",
}


def _certificates(spec, machines, now):
    """CertificatesNotExpiring: an Error when a CA expires within a year (renewing the leaves cannot help then), a
    Warning when a machine's certificates or its kubelet's client certificate expire within the spec's threshold;
    Unknown when a machine's expiry was not observed."""
    days = ((spec.get("rollout") or {}).get("before") or {}).get("certificates_expiry_days") or DEFAULT_CERTIFICATE_WARNING_DAYS
    limit, ca_limit = now + timedelta(days=days), now + timedelta(days=CA_WARNING_DAYS)

    def within(machine, field, until):
        return bool(machine.get(field)) and parse_time(machine[field]) <= until

    authorities = ["%s: a CA expires at %s" % (m["name"], m["certificate_authorities_expire"])
                   for m in machines if within(m, "certificate_authorities_expire", ca_limit)]
    leaves = ["%s: expire at %s" % (m["name"], m["certificates_expire"]) for m in machines if within(m, "certificates_expire", limit)]
    kubelets = ["%s: the kubelet's client certificate expires at %s and %s" % (m["name"], m["kubelet_certificate_expire"], _KUBELET_ROTATION[
        m.get("kubelet_certificate_rotates")]) for m in machines if within(m, "kubelet_certificate_expire", limit)]
    found = [(severity, reason, "%s (within %s)" % ("; ".join(parts), window)) for severity, reason, parts, window in (
        (ERROR, "CertificateAuthorityExpiring", authorities, "a year"),
        (WARNING, "CertificatesExpiring", leaves, "%d days" % days),
        (WARNING, "KubeletCertificateExpiring", kubelets, "%d days" % days)) if parts]
    if found:
        return condition("CertificatesNotExpiring", FALSE, found[0][1], "; ".join(part[2] for part in found), found[0][0])
    unknown = [m["name"] for m in machines if not m.get("certificates_expire")]
    if unknown:
        return condition("CertificatesNotExpiring", UNKNOWN, "CertificatesExpiryUnknown",
                         "certificate expiry not observed on %s" % ", ".join(unknown))
    return condition("CertificatesNotExpiring", TRUE)


def _etcd_cluster(machine_entries, etcd, etcd_managed, members):
    if not etcd_managed:
        return _external_etcd_cluster(etcd, members)
    members = [c for name, conds in machine_entries for c in _sourced(conds, name) if c["type"] == "EtcdMemberHealthy"]
    strays = [condition("EtcdClusterHealthy", FALSE, "EtcdClusterUnhealthy",
                        "etcd member %s (%s) belongs to no machine" % (m["name"], m["id"]), ERROR) for m in etcd["strays"]]
    return aggregate("EtcdClusterHealthy", strays + members)


def _external_etcd_cluster(etcd, members):
    """EtcdClusterHealthy of an external etcd cluster, as the run read it (Cluster API leaves it unset; an operator
    of this collection sees here what the flows see): not answering or without quorum is an error and blocks
    membership steps, a minority of members down or answering with errors is a warning only."""
    if etcd["problems"]:
        unknown = not any(m.get("responsive") for m in members)
        return condition("EtcdClusterHealthy", UNKNOWN if unknown else FALSE, "ExternalEtcdConnectionDown" if unknown else "ExternalEtcdUnhealthy",
                         "external etcd: " + "; ".join(etcd["problems"] + etcd["degraded"]), ERROR)
    if etcd["degraded"]:
        return condition("EtcdClusterHealthy", FALSE, "ExternalEtcdDegraded",
                         "external etcd keeps its quorum, but " + "; ".join(etcd["degraded"]), WARNING)
    return condition("EtcdClusterHealthy", TRUE, message="external etcd: every member answered, no alarm")


def _remediation(health):
    if health["remediation_allowed"]:
        return condition("RemediationAllowed", TRUE, message=health["reason"])
    return condition("RemediationAllowed", FALSE, "TooManyUnhealthy", health["reason"], WARNING)


def _remediating(snapshot, health):
    """Remediating (Cluster API v1.9+): a remediation whose replacement is still to come, and the machines the
    health check flagged for one (remediation.flagged_names)."""
    parts = []
    record = remediation.in_progress(snapshot.get("remediation_in_progress"), snapshot["machines"])
    if record:
        parts.append("%s removed, its replacement still to create" % record["machine"])
    flagged = sorted(remediation.flagged_names(health))
    if flagged:
        parts.append("%s to remediate" % ", ".join(flagged))
    if parts:
        return condition("Remediating", TRUE, "Remediating", "; ".join(parts))
    return condition("Remediating", FALSE, "NotRemediating", severity=INFO)


def _deleting(machines):
    """Deleting: the machines whose removal began (the ``deleting`` mark) and is not finished."""
    deleting = [m["name"] for m in machines if m.get("deleting")]
    if deleting:
        return condition("Deleting", TRUE, "WaitingForMachineDeletion", "removal of %s under way" % ", ".join(deleting))
    return condition("Deleting", FALSE, "NotDeleting", severity=INFO)


def control_plane_status(spec, snapshot):
    """``{conditions, machines}``: the control plane's conditions and each machine's (module docstring).

    ``spec`` and ``snapshot`` are normalized (spec.normalize_spec, snapshot.normalize_snapshot).
    """
    etcd_managed = not etcd_is_external(spec)
    now = parse_time(snapshot["now"])
    all_machines = snapshot["machines"]
    etcd = etcd_health.evaluate(snapshot.get("etcd"), all_machines)
    entries = [(m["name"], machine_conditions(m, etcd_managed, etcd["members_by_machine"].get(m["name"])))
               for m in all_machines]
    live = [m for m in all_machines if not m.get("deleting")]
    pods = [c for name, conds in entries for c in _sourced(conds, name)
            if c["type"] in ("APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy", "EtcdPodHealthy")]
    ready = [c for name, conds in entries for c in _sourced(conds, name) if c["type"] == "Ready"]
    health = health_check.evaluate(spec["health_check"], snapshot)
    conditions = [
        _available(snapshot, all_machines, etcd, etcd_managed),
        aggregate("MachinesReady", ready),
        *_up_to_date(spec, live, now),
        *_resized(spec, live),
        aggregate("ControlPlaneComponentsHealthy", pods),
        _etcd_cluster(entries, etcd, etcd_managed, (snapshot.get("etcd") or {}).get("members") or []),
        _certificates(spec, live, now),
        _remediation(health),
        _remediating(snapshot, health),
        _deleting(all_machines),
    ]
    summarized = [c for c in conditions if c["type"] not in UNDER_WAY]
    conditions.append(aggregate("Ready", summarized))
    return {"conditions": conditions, "machines": dict(entries), "upgrade": upgrade_progress(spec, snapshot),
            "certificates": {m["name"]: {field: m.get(field) for field in CERTIFICATE_FIELDS} for m in all_machines},
            "workers_health": workers_health(spec, snapshot)}


def workers_health(spec, snapshot):
    """The health check of each worker group that has one (``health_check.evaluate_workers``): ``[{group, workers:
    {name: {state, reason}}, remediation_allowed, reason}]``, by group name, the workers without a group last."""
    return [{"group": checked["group"], "remediation_allowed": checked["remediation_allowed"], "reason": checked["reason"],
             "workers": {t["machine"]: {"state": t["state"], "reason": t["reason"]} for t in checked["targets"]}}
            for checked in health_check.evaluate_workers(spec, snapshot)]


def upgrade_progress(spec, snapshot):
    """``{version, control_plane: {upgraded, to_upgrade}, workers: {upgraded, to_upgrade}, nodes}``: who runs the
    spec's version with its upgrade done and who not yet (names, in snapshot order; machines being deleted left
    out; a node past its kubelet step, its upgrade not done, is still to upgrade), and ``nodes``:
    ``{name: upgrade record}`` of each node whose upgrade is under way (a step done, not yet ``ready``) or whose
    last step failed."""
    version = with_v(spec["version"])

    def split(records):
        upgraded = [r["name"] for r in records
                    if not rollout.version_differs(r.get("version"), version) and not rollout.upgrade_unfinished(r, version)]
        return {"upgraded": upgraded, "to_upgrade": [r["name"] for r in records if r["name"] not in upgraded]}

    machines = [m for m in snapshot["machines"] if not m.get("deleting")]
    workers = snapshot.get("workers") or []
    nodes = {r["name"]: r["upgrade"] for r in machines + workers if node_upgrade.unfinished(r.get("upgrade"))}
    return {"version": version, "control_plane": split(machines), "workers": split(workers), "nodes": nodes}


def _upgrade_cell(record):
    """A node's upgrade as the table shows it: ``-`` for none or one done, else the version and the last step done,
    and the step that failed with its error."""
    if not node_upgrade.unfinished(record):
        return "-"
    cell = "%s: %s" % (record["version"], ("%s done" % record["step"]) if record.get("step") else "not started")
    if record.get("failed_step"):
        cell += ", %s failed: %s" % (record["failed_step"], " ".join((record.get("error") or "").split()))
    return cell


def status_table(snapshot, status):
    """The compact table an operator reads in the play output: one line a machine (name, failure domain, version,
    etcd role, the day its first certificate expires, its conditions that are not True, else Ready, and while any machine's in-place upgrade is under way
    or failed, how far it went), under a line with the control plane's own conditions that are not True; then, when
    the cluster has workers, a line saying how many run the spec's version and one line a worker (group, version,
    Ready and cordoned, its upgrade). ``snapshot`` normalized; ``status`` from :func:`control_plane_status`."""
    roles = {}
    for member in (snapshot.get("etcd") or {}).get("members") or []:
        if member.get("name"):
            roles[member["name"]] = "learner" if member.get("learner") else ("leader" if member.get("leader") else "voter")
    rows = [("MACHINE", "FAILURE DOMAIN", "VERSION", "ETCD", "CERTIFICATES", "CONDITIONS")]
    for machine in snapshot["machines"]:
        node = (machine.get("node") or {}).get("name")
        rows.append((
            machine["name"] + (" (deleting)" if machine.get("deleting") else ""),
            machine.get("failure_domain") or "-",
            machine.get("version") or "?",
            roles.get(node or machine["name"], "-"),
            (machine.get("certificates_expire") or "?")[:10],
            _not_true(status["machines"].get(machine["name"]) or []) or "Ready",
        ))
    upgrading = any(node_upgrade.unfinished(m.get("upgrade")) for m in snapshot["machines"])
    if upgrading:
        rows = [row + (_upgrade_cell(machine.get("upgrade")) if machine else "UPGRADE",)
                for row, machine in zip(rows, [None] + snapshot["machines"])]
    lines = ["control plane: %s" % (_not_true(status["conditions"]) or "Ready")] + _external_etcd_line(snapshot) + _aligned(rows)
    workers = snapshot.get("workers") or []
    if workers:
        progress = status.get("upgrade") or {}
        lines.append("workers: %d, %d of them at %s" % (len(workers), len((progress.get("workers") or {}).get("upgraded") or []),
                                                        progress.get("version") or "the spec's version"))
        checked = status.get("workers_health") or []
        health = {name: verdict["state"] for group in checked for name, verdict in group["workers"].items()}
        lines += ["worker group %s: %s" % (group["group"] or "(none)", group["reason"]) for group in checked
                  if any(verdict["state"] != health_check.HEALTHY for verdict in group["workers"].values())]
        lines += _aligned([("WORKER", "GROUP", "VERSION", "STATE", "HEALTH", "UPGRADE")] + [(
            worker["name"], worker.get("group") or "-", worker.get("version") or "?",
            ("Ready" if worker.get("ready") else "NotReady") + (", cordoned" if worker.get("unschedulable") else ""),
            health.get(worker["name"], "-") + _attempts_cell(worker), _upgrade_cell(worker.get("upgrade")),
        ) for worker in workers])
    return lines


def _attempts_cell(worker):
    """The external remediation attempts a worker's Node records, after its health (none: nothing)."""
    attempts = ((worker.get("external_remediation") or {}).get("attempts")) or 0
    return ", %d external remediation attempt%s" % (attempts, "" if attempts == 1 else "s") if attempts else ""


def _external_etcd_line(snapshot):
    """With external etcd, one line naming its members as the run found them (role, or why not answering, alarms)."""
    etcd = snapshot.get("etcd") or {}
    if not etcd.get("external"):
        return []
    members = etcd.get("members") or []

    def state(member):
        if not member.get("responsive"):
            return "not answering"
        return ", ".join(["learner" if member.get("learner") else ("leader" if member.get("leader") else "voter")]
                         + (["error: %s" % member["error"]] if member.get("error") else []) + list(member.get("alarms") or []))
    answering = sum(1 for m in members if m.get("responsive"))
    return ["external etcd: %d of %d members answer%s" % (answering, len(members), (": " if members else "") + "; ".join(
        "%s (%s)" % (m.get("name") or ", ".join(m.get("client_urls") or []) or m.get("id") or "?", state(m)) for m in members))]


def _aligned(rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _not_true(conditions):
    """The conditions that are not True, as Type=Status (Reason); Ready sums them up and the conditions of work
    under way are False at rest, so none of those is listed."""
    return ", ".join("%s=%s%s" % (c["type"], c["status"], " (%s)" % c["reason"] if c["reason"] else "")
                     for c in conditions if c["status"] != "True" and c["type"] != "Ready" and c["type"] not in UNDER_WAY)
