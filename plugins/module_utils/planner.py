# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planner: the one next safe step for the control plane, or why there is none. Pure, no I/O.

:func:`plan` reads a normalized spec (docs/spec.md) and a normalized snapshot (docs/snapshot.md) and returns
the *first* needed operation of this ordered list (docs/rules.md G1–G5; one operation per run, the playbook
executes it and observes again):

0. ``wait`` — etcd was asked and no member answered: nothing is concluded from no answer, so nothing is
   decided (rule ``etcd_unreachable``).
1. ``finish_delete`` — a machine is already being deleted (a run was killed half way): finish that first,
   the way KCP's re-entrant scale down does. Its etcd member, if still there, is removed only when quorum
   survives (``etcd_quorum.project``).
2. ``remove_etcd_member`` — EH11: with managed etcd, when every machine has a node and etcd is not healthy,
   a member whose name matches no node is removed (quorum permitting, and only with at least two nodes).
   Members with an empty name (still joining) are left alone.
3. ``clear_external_remediation`` — RX6: a machine that carries external remediation attempts and that the
   health check finds healthy again has its request cleared. It touches no membership: no preflight.
4. ``remediate`` — RM: the selected unhealthy machine is deleted (it is recreated by a later scale up); with
   ``remediation.external`` set, ``remediate_external`` first hands it to the user's remediation tasks, a
   bounded number of attempts, then escalates to ``remediate`` or waits for a person (RX1–RX5). A
   skipped remediation does not end the pass (G2): rollout and scaling still run, and when they have nothing
   to do the result is ``wait`` with the skip as the reason.
5. ``renew_certificates`` — a machine's certificates renewed where it stands (``certificate_renewal``), one machine
   per step: the machine whose host records a renewal under way first, then, with ``certificates.renewal:
   in_place``, the machine whose certificates expire first among those within ``rollout.before`` and outdated for
   nothing else (``rollout.split_by_strategy``). Behind preflight (the machine whose renewal has begun left out of
   it).
6. ``rollout`` — RO / G3: machines are outdated: the step is ``scale_up`` while fewer than replicas +
   max_surge machines exist, else ``scale_down`` among the outdated ones. ``upgrade_in_place`` instead, when
   ``upgrade.strategy`` is ``in_place`` and the machines differ only in version and etcd (the etcd image tag they
   run is behind the spec's; ``rollout.IN_PLACE_KINDS``): one machine per step, the
   oldest control plane machine first with ``kubeadm upgrade apply`` (the only one), then the others oldest
   first with ``kubeadm upgrade node``; the last of them upgrades the addons (CoreDNS, kube-proxy), which
   kubeadm does only once every API server runs the new version.
   With the in-place strategy the request is checked first (``upgrade_request``, IP2-IP4: nothing but the
   version changes unless ``upgrade.other_changes`` is ``rolling``, no downgrade, no minor skipped, etcd's path
   between its minors): a refused request is a ``wait`` naming the rules, and nothing is upgraded or replaced.
7. ``scale_up`` / ``scale_down`` — G4: no machine → the first one, with ``init`` (no preflight), but only
   when the cluster is not initialized and etcd has no member; otherwise the observation missed the machines
   of a cluster that exists, and the answer is ``wait`` (``no_machine_observed``). Fewer than replicas →
   scale up; more → scale down (SD1 with no outdated machine).
8. ``remediate_worker`` — only when the flow remediates workers (``remediate_workers``: remediate, reconcile), once
   the control plane has no step to take: a worker whose remediation a stopped run left half done, else (RX6) the
   external remediation request of a worker healthy again cleared, else the first unhealthy worker of a group whose
   health check allows it (``worker_remediation.decide``): handed to the user's tasks first (``remediate_external``,
   with the group's ``external_remediation``), rebuilt where it stands, or, with ``provider_makes_hosts``, replaced
   by a new host (WR6, ``step`` ``remove_worker`` then ``join_worker``), behind preflight; the groups whose budget
   holds their workers back, and the workers waiting on their external remediation, make the settled answer a
   ``wait`` (``worker_remediation_not_allowed``, ``external_remediation_in_progress`` / ``_exhausted``).
9. ``roll_workers`` — WR1-WR6, once the control plane has no step to take: a worker the user marked for replacement,
   or, with the rolling strategy, one whose kubelet is not at the spec's version, replaced one at a time
   (``worker_rollout.decide``): ``step`` ``join_worker`` (a new worker on a free host of its group, or its own host
   again) or ``remove_worker`` (drain, reset, Node deleted), as the group's ``max_surge`` orders them, a removal within
   its ``max_unavailable``; a replacement begun is finished first. Behind preflight.
10. ``upgrade_workers`` — IP6 / IP7, with the in-place strategy only: once the control plane is as declared (so
   every API server runs the spec's version), the next workers, one group after the other, at most the group's
   ``max_unavailable`` at a time (``worker_upgrade.next_batch``), behind the same request checks, the
   kubeadm-config and preflight.
11. ``none`` — the control plane is as declared.

Before a machine joins (any ``scale_up`` but the first) or is upgraded in place, the cluster's kubeadm
configuration (the ClusterConfiguration in the ``kubeadm-config`` ConfigMap, which ``kubeadm join`` and
``kubeadm upgrade`` build the control plane from) must say the spec's version and agree with the spec in every
field the spec may change (``kubeadm_config.MANAGED_FIELDS``: image repositories, feature gates, the API
server, controller manager and scheduler sections, etcd and DNS settings), or the machine is built from the
old configuration while its spec hash claims the new one: ``update_kubeadm_config`` comes first, behind the
full preflight, its reason naming the fields. When the snapshot does not say which version the ConfigMap
holds, that is a ``wait`` (``kubeadm_config_not_observed``); when it has no ``cluster_configuration`` (an older
snapshot), only the version is compared.

Every step that creates or removes a machine runs preflight first (PF, excluding the machine a scale down
removes) and every step that removes an etcd member projects quorum first; a scale up projects the join
the way kubeadm makes it (``etcd_quorum.project_join``: a learner, promoted once it has caught up). A failure
turns the step into ``wait`` with ``blocked_by`` naming each rule that stops it.

``retry_after_seconds`` (with ``wait`` and ``none``): the seconds until the earliest moment at which the same
observation would give another answer (a health check timeout, a remediation retry period or
min_healthy_period, an external remediation attempt's timeout, ``rollout.after``, certificates entering
``rollout.before``); null when only a change in
the cluster can change the answer.
"""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils import (
    certificate_renewal,
    component_health,
    etcd_health,
    etcd_leadership,
    external_remediation,
    failure_domains,
    health_check,
    kubeadm_config,
    preflight,
    remediation,
    rollout,
    scale_down,
    spec_hash,
    upgrade_request,
    worker_remediation,
    worker_rollout,
    worker_upgrade,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_quorum import project, project_join
from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import etcd_is_external
from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

NONE, WAIT = "none", "wait"
SCALE_UP, SCALE_DOWN = rollout.SCALE_UP, rollout.SCALE_DOWN
ROLLOUT, REMEDIATE, UPGRADE_IN_PLACE = "rollout", "remediate", "upgrade_in_place"
UPGRADE_WORKERS, REMEDIATE_WORKER, ROLL_WORKERS = "upgrade_workers", "remediate_worker", "roll_workers"
REMOVE_ETCD_MEMBER, FINISH_DELETE = "remove_etcd_member", "finish_delete"
UPDATE_KUBEADM_CONFIG = "update_kubeadm_config"
RENEW_CERTIFICATES = "renew_certificates"
REMEDIATE_EXTERNAL, CLEAR_EXTERNAL_REMEDIATION = external_remediation.REMEDIATE_EXTERNAL, "clear_external_remediation"
ACTIONS = (
    NONE,
    WAIT,
    SCALE_UP,
    SCALE_DOWN,
    ROLLOUT,
    REMEDIATE,
    UPGRADE_IN_PLACE,
    REMOVE_ETCD_MEMBER,
    FINISH_DELETE,
    UPDATE_KUBEADM_CONFIG,
    REMEDIATE_EXTERNAL,
    CLEAR_EXTERNAL_REMEDIATION,
    UPGRADE_WORKERS,
    RENEW_CERTIFICATES,
    REMEDIATE_WORKER,
    ROLL_WORKERS,
)
# How a machine is upgraded in place: ``kubeadm upgrade apply`` on the first, ``kubeadm upgrade node`` after.
UPGRADE_APPLY, UPGRADE_NODE = "apply", "node"


class _View:
    """What one pass derives from (spec, snapshot) before deciding; built once, read by every stage."""

    def __init__(self, spec, snapshot, desired_hashes, health, remediate_workers=False, provider_makes_hosts=False):
        self.spec = spec
        self.snapshot = snapshot
        self.now = parse_time(snapshot["now"])
        self.machines = list(snapshot.get("machines") or [])
        self.etcd_managed = not etcd_is_external(spec)
        self.desired_hashes = desired_hashes
        self.etcd = etcd_health.evaluate(snapshot.get("etcd") or {}, self.machines)
        self.conditions = component_health.all_conditions(self.machines, self.etcd_managed, self.etcd["members_by_machine"])
        self.members = component_health.quorum_members(
            (snapshot.get("etcd") or {}).get("members") or [], self.machines, self._physical_member_health()
        )
        self.outdated = rollout.outdated_machines(self.machines, spec, desired_hashes, self.now)
        self.in_place_strategy = spec["upgrade"]["strategy"] == "in_place"
        self.replace, self.in_place, self.renew = rollout.split_by_strategy(
            self.outdated, spec["upgrade"]["strategy"], spec["certificates"]["renewal"])
        self.workers = list(snapshot.get("workers") or [])
        self.health = health
        self.flagged = remediation.flagged_names(health)
        self.remediation_in_progress = remediation.in_progress(snapshot.get("remediation_in_progress"), self.machines)
        strategy = spec.get("remediation") or {}
        decision = remediation.decide(
            self.machines,
            health,
            self.members,
            strategy,
            self.now,
            bool(snapshot.get("initialized")),
            self.etcd_managed,
            self.remediation_in_progress,
            [m["name"] for m in self.machines if rollout.upgrade_unfinished(m, spec["version"])],
            self.conditions,
            [m["name"] for m in self.machines if m.get("certificate_renewal") is not None],
        )
        self.remediation = external_remediation.decide(decision, self.machines, strategy.get("external"), self.now)
        self.worker_remediation = worker_remediation.decide(
            spec, health_check.evaluate_workers(spec, snapshot), snapshot.get("worker_remediation_in_progress"), self.workers, self.now
        ) if remediate_workers else None
        self.provider_makes_hosts = provider_makes_hosts
        self.worker_rollout = worker_rollout.decide(spec, self.workers, snapshot.get("worker_rollout_in_progress"), provider_makes_hosts)

    def _physical_member_health(self):
        """Member health for the quorum arithmetic: a deleting machine's member counts by how it answers.

        EH3 marks the member of a deleting machine false, which is right for preflight; but while it still
        answers in sync it still votes, and only finish_delete and member clean-up ever see such machines.
        """
        if not any(m.get("deleting") for m in self.machines):
            return self.etcd["members_by_machine"]
        undeleted = [dict(m, deleting=False) for m in self.machines]
        return etcd_health.evaluate(self.snapshot.get("etcd") or {}, undeleted)["members_by_machine"]

    def preflight(self, excluded=()):
        return preflight.check(self.snapshot, self.etcd_managed, excluded)

    def member_of(self, machine_name):
        """The etcd member named after the machine's node, or None."""
        machine = next(m for m in self.machines if m["name"] == machine_name)
        name = component_health.node_name(machine)
        return next((mb for mb in self.members if name is not None and mb.name == name), None)

    def leader_candidate(self, leaving):
        """SD4 / EH9: who takes etcd leadership if ``leaving``'s member leads (``etcd_leadership``)."""
        return etcd_leadership.among_machines(self.machines, self.members, leaving=leaving, flagged=self.flagged)


def plan(spec, snapshot, desired_hashes=None, health=None, remediate_workers=False, provider_makes_hosts=False):
    """The next step for the control plane (module docstring), as a dict; see kcp_plan's RETURN for its keys.

    ``desired_hashes`` defaults to ``spec_hash.spec_hashes(spec)`` and ``health`` to
    ``health_check.evaluate(spec["health_check"], snapshot)``; tests pass them to pin one input at a time.
    ``remediate_workers``: the flow remediates workers (remediate, reconcile), so their health checks are planned for.
    ``provider_makes_hosts``: the flow's machine provider is a hook, so a worker is replaced by a new host, never
    rebuilt where it stands (worker_rollout WR6).
    """
    if desired_hashes is None:
        desired_hashes = spec_hash.spec_hashes(spec)
    if health is None:
        health = health_check.evaluate(spec["health_check"], snapshot)
    view = _View(spec, snapshot, desired_hashes, health, remediate_workers, provider_makes_hosts)
    step = (
        _etcd_unreachable(view)
        or _finish_delete(view)
        or _clean_up_etcd_members(view)
        or _clear_external_remediation(view)
        or _remediate(view)
        or _renew_certificates(view)
        or _roll_out(view)
        or _scale(view)
        or _remediate_worker(view)
        or _roll_workers(view)
        or _upgrade_workers(view)
    )
    if step is None:
        step = _settled(view)
    return _result(view, step)


def _etcd_unreachable(view):
    """Step 0: etcd was asked (members are listed) and none answered: no decision can be made on that."""
    members = (view.snapshot.get("etcd") or {}).get("members") or []
    if not members or any(m.get("responsive") for m in members):
        return None
    tried = "; ".join("%s: %s" % (m.get("name") or ", ".join(m.get("client_urls") or []) or "?", m.get("error") or "no answer") for m in members)
    return _wait(
        "no etcd member answered, so nothing about the control plane can be decided",
        [preflight.blocker("etcd_unreachable", "no etcd endpoint answered (%s)" % tried, [])],
    )


def _finish_delete(view):
    """A machine already deleting is finished first (oldest first)."""
    deleting = component_health.oldest_first([m for m in view.machines if m.get("deleting")])
    if not deleting:
        return None
    name = deleting[0]["name"]
    return _remove(view, FINISH_DELETE, name, "%s is being deleted: finish that first" % name)


def _clean_up_etcd_members(view):
    """EH11: remove an etcd member that belongs to no machine (also one never started), when the conditions for it
    hold."""
    if not view.etcd_managed or not view.machines or view.etcd["ok"]:
        return None
    if any(m.get("node") is None for m in view.machines):
        return None
    # a member added and never started has no name: a join that died before its etcd started (Cluster API v1.14
    # removes those too); it goes first, as the empty name sorts first there. An endpoint tried that did not answer
    # is listed nameless too, but with no id: no member to remove
    members = (view.snapshot.get("etcd") or {}).get("members") or []
    unstarted = sorted((m for m in members if not m.get("name") and m.get("id") and m.get("peer_urls")), key=lambda m: m["id"])
    strays = unstarted + sorted((s for s in view.etcd["strays"] if s.get("name")), key=lambda s: s["name"])
    if not strays:
        return None
    stray = strays[0]
    label = "etcd member %s (%s)" % (stray["name"], stray["id"]) if stray.get("name") else \
        "etcd member %s (added, never started, peer URLs %s)" % (stray["id"], ", ".join(stray.get("peer_urls") or []))
    if len(view.machines) < 2:
        return _wait(
            "%s belongs to no machine, but removing a member needs at least two control plane nodes" % label,
            [preflight.blocker("too_few_machines", "a member is removed through the remaining nodes; only one exists", [])],
        )
    verdict = project(view.members, remove=[stray["id"]])
    if not verdict.ok:
        return _wait(
            "%s belongs to no machine, but removing it would lose etcd quorum" % label,
            [preflight.blocker("etcd_quorum", "; ".join(verdict.reasons), [])],
            quorum=verdict.as_dict(),
        )
    return _step(
        REMOVE_ETCD_MEMBER,
        "%s belongs to no machine: remove it" % label,
        member={"name": stray.get("name") or "", "id": stray["id"], "peer_urls": list(stray.get("peer_urls") or [])},
        leader_candidate=view.leader_candidate(None) if stray.get("leader") else None,
        quorum=verdict.as_dict(),
    )


def _clear_external_remediation(view):
    """RX6: clear the external remediation request of a machine that is healthy again."""
    healed = external_remediation.requests_to_clear(view.machines, view.health)
    if not healed:
        return None
    name = healed[0]["name"]
    attempts = external_remediation.attempts_of(healed[0])[0]
    return _step(
        CLEAR_EXTERNAL_REMEDIATION,
        "%s is healthy again after %d external remediation attempt%s: clear its request" % (name, attempts, "" if attempts == 1 else "s"),
        machine=name,
    )


def _remediate(view):
    """RM8: delete the machine the remediation rules selected, or (RX4) hand it to the user's remediation tasks;
    a skip lets the pass go on (G2)."""
    decision = view.remediation
    if decision.status not in (remediation.REMEDIATE, REMEDIATE_EXTERNAL):
        return None
    selected = "RM4: %s selected among flagged %s" % (decision.machine, ", ".join(sorted(view.flagged)))
    if decision.status == REMEDIATE_EXTERNAL:
        # a power cycle takes the etcd member down too: the flow may hand its leadership over first, as a deletion does
        return _step(
            REMEDIATE_EXTERNAL,
            decision.reason,
            machine=decision.machine,
            attempt=decision.attempt,
            timeout_seconds=decision.timeout_seconds,
            leader_candidate=decision.leader_candidate,
            quorum=decision.quorum.as_dict() if decision.quorum else None,
            details=[selected],
        )
    return _step(
        REMEDIATE,
        decision.reason,
        machine=decision.machine,
        leader_candidate=decision.leader_candidate,
        quorum=decision.quorum.as_dict() if decision.quorum else None,
        retry_count=decision.retry_count,
        details=[selected],
    )


def _renew_certificates(view):
    """One machine per step, its certificates renewed where it stands (``certificate_renewal``): a renewal under way
    first, then the machine whose certificates expire first. Behind preflight; a machine whose renewal has begun is
    left out of it (its pods may be down until its remaining steps are taken, as for a half-upgraded machine). With
    every other member healthy, restarting the machine's etcd member keeps quorum (certificate_renewal checks it
    again right before it stops the member)."""
    if not view.renew:
        return None
    machine = certificate_renewal.machine_to_renew(view.machines, view.renew)
    begun = next(m for m in view.machines if m["name"] == machine).get("certificate_renewal") is not None
    what = "%s the certificates of %s in place: %s" % (
        "finish renewing" if begun else "renew", machine, "; ".join(r.message for r in view.renew[machine]))
    report = view.preflight(excluded=[machine] if begun else ())
    return _behind_preflight(RENEW_CERTIFICATES, what, report, machine=machine, machines=sorted(view.renew))


def _roll_out(view):
    """RO3 (and in-place upgrades): the next rollout step, when any machine is outdated (G3). With the in-place
    strategy the request is checked first (IP2-IP4), and nothing is replaced or upgraded while it is refused."""
    if view.in_place_strategy and view.outdated:
        refusal = _refuse_in_place(view)
        if refusal is not None:
            return refusal
    if view.replace:  # also the machines the in-place strategy replaces (other_changes: rolling)
        refusal = _refuse_rolling_version(view)
        if refusal is not None:
            return refusal
    if view.replace:
        names = ", ".join(sorted(view.replace))
        if rollout.next_step(len(view.machines), view.spec["replicas"], view.spec["rollout"]["max_surge"]) == SCALE_UP:
            step = _scale_up(view, "rolling out %s: add an up-to-date machine first" % names)
        else:
            step = _scale_down(view, set(view.replace), "rolling out %s: remove an outdated machine" % names)
        if step["action"] in (SCALE_UP, SCALE_DOWN):
            step["action"] = ROLLOUT
        return step
    if view.in_place:
        return _upgrade_in_place(view)
    return None


def _upgrade_in_place(view):
    """One machine per step: the oldest machine with ``upgrade apply``, then the others oldest first with
    ``upgrade node``; the last one upgrades the addons. Behind the kubeadm-config update and preflight.

    A machine whose upgrade to the spec's version has begun (its Node's record, ``upgrade``) and is not done is
    taken first, and its preflight leaves it out: half upgraded (a killed run, a failed step), it may well be
    unhealthy until its remaining steps are taken, and the others must be healthy without it (PF5's rule, as for
    the machine a scale down removes)."""
    names = [m["name"] for m in component_health.oldest_first([m for m in view.machines if m["name"] in view.in_place])]
    oldest = component_health.oldest_first([m for m in view.machines if not m.get("deleting")])[0]["name"]
    begun = [m["name"] for m in component_health.oldest_first(view.machines)
             if m["name"] in names and rollout.upgrade_unfinished(m, view.spec["version"])]
    if begun:
        machine = begun[0]
        command = UPGRADE_APPLY if machine == oldest else UPGRADE_NODE
    else:
        machine, command = (oldest, UPGRADE_APPLY) if oldest in view.in_place else (names[0], UPGRADE_NODE)
    addons = len(names) == 1
    what = "%s %s in place to %s with kubeadm upgrade %s%s" % (
        "finish the upgrade of" if begun else "upgrade",
        machine,
        view.spec["version"],
        command,
        ", the last one: it upgrades the addons" if addons else "",
    )
    config = _kubeadm_config_first(view, what)
    if config is not None:
        return config
    report = view.preflight(excluded=[machine] if begun else ())
    # the etcd the node's kubeadm upgrade is to leave behind, so the node is not taken for upgraded before it does
    upgrade = {"command": command, "addons": addons, "etcd_image_tag": rollout.wanted_etcd_tag(view.spec)}
    return _behind_preflight(UPGRADE_IN_PLACE, what, report, machine=machine, machines=names, upgrade=upgrade)


def _refuse_in_place(view):
    """IP2-IP4: the ``wait`` that refuses the in-place request (``upgrade_request.check``), or None."""
    refusals = upgrade_request.check(view.spec, view.snapshot, view.replace)
    if not refusals:
        return None
    rules = ", ".join("%s %s" % (upgrade_request.RULE_IDS[r["rule"]], r["rule"]) for r in refusals)
    return _wait("the in-place upgrade to %s is refused (%s); nothing is upgraded or replaced until the spec or the "
                 "cluster changes" % (view.spec["version"], rules), refusals)


def _refuse_rolling_version(view):
    """RO6: the ``wait`` that refuses a rolling rollout to a minor Kubernetes cannot reach from the running one
    (``upgrade_request.rolling_version_path``), or None."""
    config = view.snapshot.get("kubeadm_config") or {}
    refusals = upgrade_request.rolling_version_path(view.spec["version"], [m for m in view.machines if not m.get("deleting")],
                                                    config.get("kubernetes_version"))
    if not refusals:
        return None
    rules = ", ".join("%s %s" % (upgrade_request.RULE_IDS[r["rule"]], r["rule"]) for r in refusals)
    return _wait("the rollout to %s is refused (%s); nothing is replaced until the spec or the cluster changes"
                 % (view.spec["version"], rules), refusals)


def _upgrade_workers(view):
    """IP6 / IP7: with the in-place strategy, once the control plane is as declared (every machine at the spec's
    version), the next batch of workers (``worker_upgrade.next_batch``), behind the request's checks, the
    kubeadm-config and preflight."""
    if not view.in_place_strategy:
        return None
    version = view.spec["version"]
    batch = worker_upgrade.next_batch(view.workers, version, view.spec["upgrade"]["workers"])
    if batch is None:
        return None
    refusal = _refuse_in_place(view)
    if refusal is not None:
        return refusal
    group = worker_upgrade.group_label(batch.group)
    fields = dict(workers=batch.workers, worker_group=batch.group)
    if batch.blocker is not None:
        return _wait("upgrade %s in place to %s, once its workers are back" % (group, version), [batch.blocker], **fields)
    what = "upgrade %s of %s in place to %s with kubeadm upgrade node (%d of its %d outdated workers, at most %d at a time)" % (
        ", ".join(batch.workers), group, version, len(batch.workers), len(batch.left), batch.limit)
    config = _kubeadm_config_first(view, what)
    if config is not None:
        return config
    return _behind_preflight(UPGRADE_WORKERS, what, view.preflight(), **fields)


def _remediate_worker(view):
    """Workers' health checks (``worker_remediation.decide``), once the control plane has no step to take: a worker's
    external remediation request cleared (RX6), a worker handed to the user's remediation tasks (RX4), or rebuilt where
    it stands; with a machine provider that makes hosts, replaced by a new host instead (WR6: the rolling replacement's
    steps, once no replacement is under way). Behind the control plane's preflight (a join goes through the control
    plane), but the clearing of a request, which changes nothing else."""
    decision = view.worker_remediation
    if decision is None or decision.action is None:
        return None
    fields = dict(workers=[decision.worker], worker_group=decision.group)
    if decision.action == CLEAR_EXTERNAL_REMEDIATION:
        return _step(CLEAR_EXTERNAL_REMEDIATION, decision.reason, machine=decision.worker, **fields)
    if decision.action == REMEDIATE_EXTERNAL:
        return _behind_preflight(REMEDIATE_EXTERNAL, decision.reason, view.preflight(), machine=decision.worker, attempt=decision.attempt,
                                 timeout_seconds=decision.timeout_seconds, **fields)
    fields["timeout_seconds"] = worker_remediation.drain_timeout(view.spec, decision.group)
    if decision.owed or not view.provider_makes_hosts or decision.group is None:
        how = "" if decision.owed else ": drain it, kubeadm reset, delete its Node and join it again"
        return _behind_preflight(REMEDIATE_WORKER, decision.reason + how, view.preflight(), **fields)
    if view.worker_rollout.timestamp is not None:
        return None  # a replacement under way is finished first (WR3): _roll_workers
    worker = next(w for w in view.workers if w["name"] == decision.worker)
    replacement = worker_rollout.remediation(worker, decision.group, decision.reason + ": drain it, kubeadm reset, delete its Node and "
                                             "give its host back to the machine provider, then a new host of the group joins")
    return _behind_preflight(REMEDIATE_WORKER, replacement.reason, view.preflight(), step=replacement.step,
                             worker_rollout=worker_rollout.record_of(replacement), **fields)


def _roll_workers(view):
    """WR1-WR6 (``worker_rollout.decide``), once the control plane has no step to take: the next step of a worker's
    rolling replacement, the new worker's join or the old one's removal, behind the control plane's preflight (a join
    goes through the control plane, and a removal's drain moves pods onto the others). The replacement of a worker the
    health check remediates (WR6) goes on as ``remediate_worker``, the step the remediate flow takes."""
    decision = view.worker_rollout
    if decision.step is None:
        return None
    action = REMEDIATE_WORKER if decision.remediation else ROLL_WORKERS
    fields = dict(step=decision.step, workers=[decision.worker], worker_group=decision.group,
                  timeout_seconds=worker_remediation.drain_timeout(view.spec, decision.group), worker_rollout=worker_rollout.record_of(decision))
    if decision.blocker is not None:
        return _wait(decision.reason, [decision.blocker], **fields)
    return _behind_preflight(action, decision.reason, view.preflight(), **fields)


def _kubeadm_config_first(view, what):
    """The kubeadm-config update a joining or upgrading machine needs first (module docstring), or None when the
    ConfigMap already says what the spec does."""
    if not view.snapshot.get("initialized"):
        return None
    config = view.snapshot.get("kubeadm_config")
    if config is None or config.get("kubernetes_version") is None:
        return _wait(
            "%s: the kubeadm-config ConfigMap's kubernetesVersion must say %s first, and it was not observed" % (what, view.spec["version"]),
            [preflight.blocker("kubeadm_config_not_observed", "the snapshot has no kubeadm_config.kubernetes_version", [])],
        )
    current, version = config["kubernetes_version"], view.spec["version"]
    version_differs = rollout.version_differs(current, version)
    # Without the stored ClusterConfiguration (an older snapshot) only the version can be compared.
    stored = config.get("cluster_configuration")
    fields = [] if stored is None else [
        field for field in kubeadm_config.cluster_configuration_differences(view.spec, stored) if field != "kubernetesVersion"
    ]
    if not version_differs and not fields:
        return None
    if not fields:
        reason = "the cluster's kubeadm configuration says %s; before a machine of %s joins or is upgraded it must say %s" % (
            current,
            version,
            version,
        )
    elif version_differs:
        reason = (
            "the cluster's kubeadm configuration says %s and differs from the spec in %s; before a machine of %s joins or is "
            "upgraded it must say %s and match the spec" % (current, ", ".join(fields), version, version)
        )
    else:
        reason = (
            "the cluster's kubeadm configuration differs from the spec in %s; before a machine joins or is upgraded it must "
            "match the spec (kubeadm builds the machine's control plane from it)" % ", ".join(fields)
        )
    return _behind_preflight(UPDATE_KUBEADM_CONFIG, reason, view.preflight(), details=[what])


def _scale(view):
    """G4: create the first machine, or scale towards the declared replicas."""
    count, replicas = len(view.machines), view.spec["replicas"]
    if count == 0:
        existing = _existing_cluster(view)
        if existing:
            return _wait(
                "the observation found no control plane machine, but the cluster exists (%s): check the inventory "
                "group and the kubeconfig the observation used" % existing,
                [preflight.blocker("no_machine_observed", "no machine observed for a cluster that exists: %s" % existing, [])],
            )
        choice = _placement(view)
        return _step(
            SCALE_UP,
            "no control plane machine exists: create the first one with kubeadm init",
            failure_domain=choice.domain,
            init=True,
            details=["%s: %s" % (choice.rule, choice.detail)],
        )
    if count < replicas:
        return _scale_up(view, "%d of %d machines: add one" % (count, replicas))
    if count > replicas:
        return _scale_down(view, set(), "%d machines, %d declared: remove one" % (count, replicas))
    return None


def _existing_cluster(view):
    """Why the cluster exists although no machine was observed ("" when nothing says it does)."""
    if view.snapshot.get("initialized"):
        return "it is initialized"
    members = (view.snapshot.get("etcd") or {}).get("members") or []
    if view.etcd_managed and members:
        return "etcd has %d member%s" % (len(members), "" if len(members) == 1 else "s")
    return ""


def _scale_up(view, reason):
    """Scale up behind the kubeadm-config update, preflight (PF5: nothing excluded; RM11: a remediation's
    replacement leaves the machines flagged for remediation out) and the projection of a kubeadm join."""
    config = _kubeadm_config_first(view, reason)
    if config is not None:
        return config
    choice = _placement(view)
    # RM11: a remediation's replacement does not wait for the machines flagged for remediation to heal (seed
    # scenario 2 replaces two unhealthy machines one after the other); the join's quorum projection still counts
    # their etcd members as they answer.
    report = view.preflight(excluded=sorted(view.flagged) if view.remediation_in_progress else ())
    details = ["%s: %s" % (choice.rule, choice.detail)]
    if not report["ok"]:
        return _wait(
            reason + ", once preflight passes",
            report["failures"],
            preflight=report,
            step=SCALE_UP,
            failure_domain=choice.domain,
            details=details,
        )
    verdict = project_join(view.members) if view.etcd_managed else None
    if verdict is not None and not verdict.ok:
        return _wait(
            reason + ", once etcd can take a member",
            [preflight.blocker("etcd_quorum", "; ".join(verdict.reasons), [])],
            preflight=report,
            quorum=verdict.as_dict(),
            step=SCALE_UP,
            failure_domain=choice.domain,
            details=details,
        )
    return _step(
        SCALE_UP,
        reason,
        step=SCALE_UP,
        failure_domain=choice.domain,
        preflight=report,
        quorum=verdict.as_dict() if verdict else None,
        remediation_for=view.remediation_in_progress,
        details=details,
    )


def _scale_down(view, outdated, reason):
    """SD1–SD4: select the machine, then preflight without it (SD3), then the quorum projection."""
    selection = scale_down.select_machine(view.snapshot.get("failure_domains"), view.machines, outdated, view.conditions)
    report = view.preflight(excluded=[selection.machine])
    if not report["ok"]:
        return _wait(
            reason + " (%s), once preflight passes" % selection.machine,
            report["failures"],
            preflight=report,
            step=SCALE_DOWN,
            machine=selection.machine,
            failure_domain=selection.domain,
            details=[selection.detail],
        )
    step = _remove(view, SCALE_DOWN, selection.machine, "%s: %s" % (reason, selection.machine), step=SCALE_DOWN)
    step.update(failure_domain=selection.domain, preflight=report)
    step["details"] = [selection.detail] + step["details"]
    return step


def _remove(view, action, name, reason, step=None):
    """A step that removes machine ``name``: its etcd member must be removable without losing quorum."""
    member = view.member_of(name) if view.etcd_managed else None
    if member is None:
        return _step(action, reason, machine=name, step=step)
    verdict = project(view.members, remove=[member.id])
    if not verdict.ok:
        return _wait(
            reason + ", but removing its etcd member would lose quorum",
            [preflight.blocker("etcd_quorum", "; ".join(verdict.reasons), [name])],
            quorum=verdict.as_dict(),
            machine=name,
            step=step,
        )
    candidate = view.leader_candidate(name)
    return _step(
        action,
        reason,
        machine=name,
        leader_candidate=candidate,
        quorum=verdict.as_dict(),
        step=step,
        details=["etcd member %s leaves; leadership goes to %s if it leads" % (member.name, candidate)],
    )


def _settled(view):
    """Nothing to do: ``none``, or ``wait`` while a remediation is held back (RM10), a worker group's too, or a
    worker waits on its external remediation (RX3, RX5)."""
    decision = view.remediation
    if decision.status in (remediation.SKIP, remediation.FAIL):
        blocker = preflight.blocker(decision.rule, decision.reason, [decision.machine] if decision.machine else [])
        return _wait(remediation.held_back(decision), [blocker])
    held = view.worker_remediation.held if view.worker_remediation is not None else []
    waiting = view.worker_remediation.waiting if view.worker_remediation is not None else []
    reasons, blockers = [], []
    if held:
        reasons.append("unhealthy workers are not remediated (%s): %s" % (worker_remediation.NOT_ALLOWED, worker_remediation.held_back(held)))
        blockers += [preflight.blocker(worker_remediation.NOT_ALLOWED, "%s: %s" % (worker_upgrade.group_label(group["group"]), group["reason"]),
                                       group["workers"]) for group in held]
    if waiting:
        reasons.append("unhealthy workers wait on their external remediation: %s" % "; ".join(found.reason for found in waiting))
        blockers += [preflight.blocker(found.rule, found.reason, [found.machine]) for found in waiting]
    if reasons:
        return _wait("; ".join(reasons), blockers)
    report = view.preflight()
    return _step(NONE, "the control plane is as declared", preflight=report, blocked_by=report["failures"])


def _placement(view):
    up_to_date = {m["name"] for m in view.machines if m["name"] not in view.outdated and not m.get("deleting")}
    return failure_domains.scale_up_domain(view.snapshot.get("failure_domains"), view.machines, up_to_date)


def _behind_preflight(action, reason, report, **fields):
    """The step ``action``, or, while preflight ``report`` fails, the ``wait`` for it, blocked by its failures."""
    if not report["ok"]:
        return _wait(reason + ", once preflight passes", report["failures"], preflight=report, **fields)
    return _step(action, reason, preflight=report, **fields)


def _wait(reason, blocked_by, **fields):
    return _step(WAIT, reason, blocked_by=list(blocked_by), **fields)


def _step(action, reason, **fields):
    step = {"action": action, "reason": reason, "details": []}
    step.update(fields)
    return step


def _retry_after(view, action):
    """For ``wait`` and ``none``: seconds until the soonest timer that can change the answer (module docstring)."""
    if action not in (WAIT, NONE):
        return None
    timers = (
        view.health.get("next_check_seconds"),
        view.remediation.retry_after_seconds,
        worker_remediation.retry_after(view.worker_remediation),
        rollout.seconds_until_outdated(view.machines, view.spec, view.now),
    )
    known = [t for t in timers if t is not None]
    return round(min(known), 3) if known else None


def _result(view, step):
    """The plan as returned: the step plus what every consumer reads, with every key present."""
    decision = view.remediation
    result = {
        "action": step["action"],
        "step": step.get("step"),
        "machine": step.get("machine"),
        "machines": step.get("machines", []),
        "upgrade": step.get("upgrade"),
        "workers": step.get("workers", []),
        "worker_group": step.get("worker_group"),
        "failure_domain": step.get("failure_domain"),
        "init": bool(step.get("init")),
        "leader_candidate": step.get("leader_candidate"),
        "member": step.get("member"),
        "retry_count": step.get("retry_count"),
        "remediation_for": step.get("remediation_for"),
        "attempt": step.get("attempt"),
        "timeout_seconds": step.get("timeout_seconds"),
        "worker_rollout": step.get("worker_rollout"),
        "reason": step["reason"],
        "retry_after_seconds": _retry_after(view, step["action"]),
        "details": step.get("details", []),
        "blocked_by": step.get("blocked_by", []),
        "outdated": rollout.messages(view.outdated),
        "flagged": sorted(view.flagged),
        "remediation": {
            "status": decision.status,
            "machine": decision.machine,
            "rule": decision.rule,
            "reason": decision.reason,
            "retry_count": decision.retry_count,
        },
        "quorum": step.get("quorum"),
        "preflight": step.get("preflight") or view.preflight(),
        "health_check": {
            "unhealthy": list(view.health.get("unhealthy") or []),
            "remediation_allowed": bool(view.health.get("remediation_allowed")),
            "reason": view.health.get("reason", ""),
        },
        "etcd": {"ok": view.etcd["ok"], "problems": list(view.etcd["problems"])},
        "spec_hashes": dict(view.desired_hashes),
    }
    return result
