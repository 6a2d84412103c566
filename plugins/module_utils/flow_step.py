# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which inventory hosts a flow's pass acts on (roles/flow/tasks/pick.yml, docs/providers.md): the plan names the
machine, the workers or the failure domain; the inventory says which hosts answered and which are free. Pure."""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils.plan_projection import creates_machine

# Steps on the machine the plan names.
MACHINE_STEPS = frozenset((
    "scale_down", "finish_delete", "rollout", "remediate", "remediate_external", "clear_external_remediation",
    "upgrade_in_place", "renew_certificates",
))
# Steps on the workers the plan names (a rolling replacement's join: on the host it names, or a free one of the group).
WORKER_STEPS = frozenset(("upgrade_workers", "remediate_worker", "roll_workers"))
# Cluster steps that any machine running the control plane can take.
CLUSTER_STEPS = frozenset(("update_kubeadm_config", "remove_etcd_member"))


def title(plan, unfinished, emptied=False):
    """The words the flow names a pass's step with ("This pass's step: pass N, <title>"): the action, the step of a
    rollout or of a worker's replacement, and what it acts on - the machine it upgrades, renews or hands to the user's
    tasks, the workers it upgrades, remediates or replaces; a machine started and not finished is finished first."""
    if emptied:
        return "none"
    if unfinished:
        return "finish " + unfinished
    action, step, workers = plan["action"], plan.get("step"), ",".join(plan.get("workers") or [])
    if action in ("wait", "none"):
        return action
    if action == "rollout":
        return "%s %s" % (action, step)
    if step and workers:
        return "%s %s %s" % (action, step, workers)
    if action in ("upgrade_in_place", "renew_certificates") or (workers and plan.get("machine")):
        return "%s %s" % (action, plan.get("machine"))
    if action in ("upgrade_workers", "remediate_worker"):
        return "%s %s" % (action, workers)
    return action


def step_action(plan, unfinished):
    """What the step does: finishing a machine started and not finished is a scale up; a rollout step is the scale
    up or the scale down the plan names, a worker's replacement step (roll_workers, or remediate_worker by a new host)
    the join or the removal it names."""
    if unfinished:
        return "scale_up"
    return plan["step"] if plan["action"] in ("rollout", "roll_workers", "remediate_worker") and plan.get("step") else plan["action"]


def step_hosts(plan, unfinished, running, free_domains, free_workers=None):
    """The hosts the step acts on: the unfinished machine; the plan's machine; the plan's workers, but for the join of
    a worker's replacement the host it names or, when it names none, the first free worker host of its group
    (``free_workers``: host -> worker group, in inventory order); for a cluster step, the first of ``running`` (the
    machines that run the control plane, stay and answered); for a new machine, the first free host (``free_domains``:
    host -> failure domain, in inventory order) of the plan's failure domain, or of any when the plan names none.
    Empty when no free host is there (the machine provider, if any, makes one)."""
    action = plan["action"]
    if unfinished:
        return [unfinished]
    if action in MACHINE_STEPS and plan.get("machine"):
        return [plan["machine"]]
    if action in ("roll_workers", "remediate_worker") and plan.get("step") == "join_worker":
        record = plan.get("worker_rollout") or {}
        if record.get("replacement"):
            return [record["replacement"]]
        # never the replaced worker's own host, which a stopped run may have left without a Node (WR6)
        return [host for host, group in (free_workers or {}).items() if group == plan.get("worker_group") and host != record.get("worker")][:1]
    if action in WORKER_STEPS:
        return list(plan.get("workers") or [])
    if action in CLUSTER_STEPS:
        return list(running[:1])
    return first_free_host(free_domains, plan.get("failure_domain"))


def workers_reached(plan, hosts):
    """The worker hosts a worker step and the rest of its replacement reach over SSH, which the inventory group of
    workers must hold: the plan's workers and the step's ``hosts``. Not the replaced worker once a join follows its
    removal (a remediation's, or max_surge 0): its host then only goes back to the machine provider, by name, and a run
    stopped after the provider deleted it finds it gone from the inventory already. Empty for any other step."""
    if plan["action"] not in WORKER_STEPS:
        return []
    record = plan.get("worker_rollout") or {}
    removed = plan.get("step") == "join_worker" and bool(record) and not record.get("surge")
    reached = [] if removed else list(plan.get("workers") or [])
    return reached + [host for host in hosts if host not in reached]


def first_free_host(free_domains, wanted):
    """[the first host of ``free_domains`` (host -> failure domain, in inventory order) in failure domain ``wanted``,
    or in any when ``wanted`` is empty], or [] when none is there."""
    return [host for host, domain in free_domains.items() if not wanted or domain == wanted][:1]


def hosts_ahead(plan, unfinished, free_domains, hosts):
    """The free hosts the run's next steps make machines on, after this step's own ``hosts``: a step that makes a
    machine installs their node software at once with its own host's (roles/machine_create), as an operator prepares
    every new host before the first kubeadm command. Read from the plan's projection, as far as its steps that make a
    machine follow one another, each on the first free host of its failure domain not taken before it (the rule of
    :func:`step_hosts`); up to the first such step no host is free for. None for a machine started and not finished (the
    plan is made for the machines after it), a step that makes no machine or found no free host, or a plan without its
    projection."""
    projection = plan.get("projection") or []
    if unfinished or not hosts or not projection or not creates_machine(projection[0]):
        return []
    free = dict((host, domain) for host, domain in free_domains.items() if host not in hosts)
    ahead = []
    for step in projection[1:]:
        if not creates_machine(step):
            break
        picked = first_free_host(free, step.get("failure_domain"))
        if not picked:
            break
        ahead.append(picked[0])
        del free[picked[0]]
    return ahead


def provider_request(plan, action):
    """What the machine provider (docs/providers.md) is asked for when the step has no free host: a worker host of the
    plan's group for a worker's join, else a host in the plan's failure domain. ``failure_domain`` / ``worker_group``
    (the create tasks' ``kcp_provider_failure_domain`` / ``kcp_provider_worker_group``, "" when not asked), ``key``
    and ``value`` (the field of ``kcp_provider_host`` that must say what was asked), ``what`` (in words)."""
    if action == "join_worker":
        group = plan.get("worker_group") or ""
        return dict(failure_domain="", worker_group=group, key="worker_group", value=group, what="a worker host of group %s" % group)
    domain = plan.get("failure_domain") or ""
    return dict(failure_domain=domain, worker_group="", key="failure_domain", value=domain, what="a host in failure domain %s" % domain)


def pass_step(plan, unfinished, running, free_domains, snapshot, free_workers=None):
    """The step of one pass as the act play needs it: ``action``, ``hosts``, ``via`` (a machine that runs the
    control plane, stays and is not acted on: the cluster steps of a join or a removal go through it), ``bootstrap``
    (init or join: an unfinished machine's own, else the plan's), ``remediation`` (the machine a new one replaces:
    an unfinished machine is finished as the replacement of the remediation in progress) and ``provider`` (what the
    machine provider is asked for when ``hosts`` is empty: :func:`provider_request`), ``ahead`` (the free hosts the
    run's next steps make machines on, whose node software this step installs with its own host's: :func:`hosts_ahead`),
    ``hosts_title`` (:func:`hosts_title`) and ``workers_reached`` (:func:`workers_reached`)."""
    hosts = step_hosts(plan, unfinished, running, free_domains, free_workers)
    if unfinished:
        machine = next(m for m in snapshot["machines"] if m["name"] == unfinished)
        bootstrap, remediation = machine.get("bootstrap"), snapshot.get("remediation_in_progress")
    else:
        bootstrap, remediation = ("init" if plan.get("init") else "join"), plan.get("remediation_for")
    action = step_action(plan, unfinished)
    ahead = hosts_ahead(plan, unfinished, free_domains, hosts)
    return dict(
        action=action,
        hosts=hosts,
        hosts_title=hosts_title(hosts, ahead),
        via=next((name for name in running if name not in hosts), ""),
        bootstrap=bootstrap,
        remediation=remediation,
        provider=provider_request(plan, action),
        ahead=ahead,
        workers_reached=workers_reached(plan, hosts),
    )


def hosts_title(hosts, ahead):
    """The words the flow names a step's hosts with: "cp-2", or "cp-2 (and cp-3, cp-4 ahead)" with the hosts whose
    node software it installs for the run's next steps."""
    named = ", ".join(hosts)
    return "%s (and %s ahead)" % (named, ", ".join(ahead)) if ahead else named
