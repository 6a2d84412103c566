# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod deletion and disruption rules, as the real API server and disruption controller apply them. Pure.

Graceful deletion (the Pod strategy): a DELETE gives a pod ``gracePeriodSeconds`` from the request, else its
``spec.terminationGracePeriodSeconds`` (30 by default); an unscheduled pod or one that has finished
(Succeeded / Failed) goes at once; a negative period counts as 1. A pod already being deleted only takes a
shorter period. Grace 0 removes the object; otherwise it gets ``deletionTimestamp`` = now + grace and
``deletionGracePeriodSeconds``, and its kubelet removes it once its containers have stopped.

Eviction (``pods/<name>/eviction``): a pod that is Pending, finished or already being deleted is deleted
without looking at budgets. Otherwise the PodDisruptionBudgets of its namespace whose selector matches its
labels decide: none, deleted; more than one, a 500; one, that budget must allow a disruption
(``status.disruptionsAllowed`` > 0, its status observed at its current generation), and the eviction takes
one (``disruptionsAllowed`` - 1, the pod noted in ``disruptedPods``); else 429 TooManyRequests. A pod that is
not Ready is deleted without taking one when the budget's ``unhealthyPodEvictionPolicy`` is AlwaysAllow, or
(IfHealthyBudget, the default) when the budget is met without it (currentHealthy >= desiredHealthy > 0).

The budget's status (the disruption controller): ``expectedPods`` and ``desiredHealthy`` from
``minAvailable`` (a number: the matching pods, that number; a percentage: the replicas their controllers
want, rounded up) or ``maxUnavailable`` (the controllers' replicas, minus the number or the percentage
rounded up; neither: nothing expected); a pod without a controller that has a scale (ReplicaSet, Deployment,
StatefulSet) makes a percentage or maxUnavailable fail (``SyncFailed``, no disruption allowed);
``currentHealthy`` = matching pods that are Ready, not being deleted and not in ``disruptedPods``;
``disruptionsAllowed`` = currentHealthy - desiredHealthy when positive (0 when no pod is expected). The
condition ``DisruptionAllowed`` says why. ``disruptedPods`` entries leave when the pod is gone or being
deleted, or after two minutes.
"""

import copy
import datetime
import math

from kcpsim.apiserver import errors, selectors

DEFAULT_GRACE = 30
DISRUPTED_POD_TIMEOUT = datetime.timedelta(minutes=2)
MAX_DISRUPTED_PODS = 2000
TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget."
FINISHED = ("Succeeded", "Failed")


def _parse_time(text):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None


def _rfc3339(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- graceful deletion ------------------------------------------------------------------------------------

def deletion_grace(pod, options):
    """The grace period, in seconds, a DELETE with ``options`` gives this pod (0: remove it now)."""
    requested = (options or {}).get("gracePeriodSeconds")
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    grace = requested if requested is not None else spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE)
    try:
        grace = int(grace)
    except (TypeError, ValueError):
        raise errors.bad_request("gracePeriodSeconds must be a number")
    if grace < 0:
        grace = 1
    if not spec.get("nodeName") or status.get("phase") in FINISHED:
        return 0
    return grace


def graceful_deletion(pod, options, now):
    """``(delete_now, updated pod or None)`` for a DELETE of this pod at ``now``: the pod with its deletion
    timestamp when it is to terminate gracefully, None when nothing changes (already terminating, and the
    request asks for no shorter period)."""
    grace = deletion_grace(pod, options)
    metadata = pod.get("metadata") or {}
    current = metadata.get("deletionGracePeriodSeconds")
    if metadata.get("deletionTimestamp") and current is not None and grace >= current:
        return False, None
    if grace == 0:
        return True, None
    updated = copy.deepcopy(pod)
    deadline = now + datetime.timedelta(seconds=grace)
    existing = _parse_time(metadata.get("deletionTimestamp"))
    if existing is not None and existing < deadline:
        deadline = existing
    updated["metadata"]["deletionTimestamp"] = _rfc3339(deadline)
    updated["metadata"]["deletionGracePeriodSeconds"] = grace
    return False, updated


# --- eviction ---------------------------------------------------------------------------------------------

def pod_ready(pod):
    return any(condition.get("type") == "Ready" and condition.get("status") == "True"
               for condition in (pod.get("status") or {}).get("conditions") or [])


def ignores_budgets(pod):
    """A pod that is Pending, finished or already being deleted is evicted without looking at budgets."""
    return ((pod.get("status") or {}).get("phase") in ("Pending",) + FINISHED
            or bool((pod.get("metadata") or {}).get("deletionTimestamp")))


def selector_requirements(selector):
    """A LabelSelector object as selectors.labels_match requirements; None for a null selector (matches
    nothing) or one that does not parse (the real server then treats the budget as matching nothing)."""
    if selector is None:
        return None
    requirements = [(key, "=", (value,)) for key, value in sorted((selector.get("matchLabels") or {}).items())]
    operators = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
    for expression in selector.get("matchExpressions") or []:
        operator = operators.get(expression.get("operator"))
        if operator is None or not expression.get("key"):
            return None
        requirements.append((expression["key"], operator, tuple(expression.get("values") or ())))
    return requirements


def selects(budget, pod):
    requirements = selector_requirements((budget.get("spec") or {}).get("selector"))
    return requirements is not None and selectors.labels_match(requirements, (pod.get("metadata") or {})
                                                               .get("labels"))


def budgets_of(pod, budgets):
    namespace = (pod.get("metadata") or {}).get("namespace")
    return [budget for budget in budgets if budget["metadata"].get("namespace") == namespace and selects(budget, pod)]


def _too_many(cause, retry_after=0):
    return errors.too_many_requests(TOO_MANY, [("DisruptionBudget", cause)], retry_after)


def eviction_plan(pod, budgets):
    """How to evict ``pod`` given its namespace's budgets: ``("delete", None)``, ``("delete-unchanged", name)``
    (an unhealthy pod, deleted only if it has not changed since, so it cannot have turned Ready meanwhile) or
    ``("take", budget)``; ApiError when the eviction is refused before any budget is touched."""
    if ignores_budgets(pod):
        return "delete", None
    matching = budgets_of(pod, budgets)
    if len(matching) > 1:
        raise errors.ApiError(500, "InternalError",
                              "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                              "does not support.")
    if not matching:
        return "delete", None
    budget = matching[0]
    if not pod_ready(pod):
        status = budget.get("status") or {}
        policy = (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy")
        if policy == "AlwaysAllow" or (status.get("currentHealthy", 0) >= status.get("desiredHealthy", 0)
                                       and status.get("desiredHealthy", 0) > 0):
            return "delete-unchanged", budget["metadata"]["name"]
    return "take", budget


def still_processing(name):
    return _too_many("The disruption budget %s is still being processed by the server." % name, retry_after=10)


def take_disruption(budget, pod_name, now, dry_run=False):
    """The budget's status after this eviction takes a disruption, or ApiError (429 when it allows none)."""
    metadata, status = budget["metadata"], copy.deepcopy(budget.get("status") or {})
    name = metadata["name"]
    if status.get("observedGeneration", 0) < metadata.get("generation", 0):
        raise still_processing(name)
    allowed = status.get("disruptionsAllowed", 0)
    if allowed < 0:
        raise errors.forbidden_because("poddisruptionbudget.policy", name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise errors.forbidden_because("poddisruptionbudget.policy", name, "DisruptedPods map too big - too many "
                                       "evictions not confirmed by PDB controller")
    if allowed == 0:
        raise _too_many("The disruption budget %s needs %d healthy pods and has %d currently"
                        % (name, status.get("desiredHealthy", 0), status.get("currentHealthy", 0)))
    status["disruptionsAllowed"] = allowed - 1
    if status["disruptionsAllowed"] == 0:
        status["conditions"] = _with_condition(status.get("conditions"), False, "InsufficientPods", "",
                                               status.get("observedGeneration", 0), now)
    if not dry_run:
        status.setdefault("disruptedPods", {})[pod_name] = _rfc3339(now)
    return status


def disruption_target_condition(now):
    """The condition an evicted pod gets before its deletion."""
    return {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting", "lastTransitionTime": _rfc3339(now)}


def _with_condition(conditions, allowed, reason, message, generation, now):
    """``conditions`` with DisruptionAllowed set; its transition time moves only when its status does."""
    kept = [dict(c) for c in conditions or [] if c.get("type") != "DisruptionAllowed"]
    previous = next((c for c in conditions or [] if c.get("type") == "DisruptionAllowed"), None)
    status = "True" if allowed else "False"
    moved = previous is None or previous.get("status") != status
    kept.append({"type": "DisruptionAllowed", "status": status, "reason": reason, "message": message,
                 "observedGeneration": generation,
                 "lastTransitionTime": _rfc3339(now) if moved else previous.get("lastTransitionTime")})
    return kept


# --- the disruption controller ----------------------------------------------------------------------------

def _scaled(value, total, round_up):
    """An int-or-percent against ``total``; (None, why) when it does not parse."""
    if isinstance(value, int):
        return value, None
    text = str(value)
    if text.endswith("%") and text[:-1].isdigit():
        share = int(text[:-1]) * total / 100.0
        return (int(math.ceil(share)) if round_up else int(math.floor(share))), None
    if text.isdigit():
        return int(text), None
    return None, "invalid value for IntOrString: invalid value %r" % text


def _controller_ref(obj):
    return next((ref for ref in (obj.get("metadata") or {}).get("ownerReferences") or [] if ref.get("controller")),
                None)


def expected_scale(pods, controllers):
    """The replicas the matching pods' controllers want, counting each controller once; ``controllers`` maps
    ``(kind, namespace, name)`` to ``(uid, replicas, its own controller reference or None)`` (a Deployment's
    ReplicaSet answers for its Deployment). ``(scale, None)`` or ``(None, why)``."""
    seen, total = set(), 0
    for pod in pods:
        ref = _controller_ref(pod)
        namespace = pod["metadata"].get("namespace")
        if ref is None:
            return None, 'found no controller ref for pod "%s"' % pod["metadata"]["name"]
        found = controllers.get((ref.get("kind"), namespace, ref.get("name")))
        if found is None or found[0] != ref.get("uid"):
            return None, 'found no controllers for pod "%s"' % pod["metadata"]["name"]
        uid, replicas, owner = found
        if ref.get("kind") == "ReplicaSet" and owner is not None and owner.get("kind") == "Deployment":
            deployment = controllers.get(("Deployment", namespace, owner.get("name")))
            if deployment is not None and deployment[0] == owner.get("uid"):
                uid, replicas = deployment[0], deployment[1]
        if uid not in seen:
            seen.add(uid)
            total += replicas
    return total, None


def budget_status(budget, pods, controllers, now):
    """The status the disruption controller writes for ``budget`` (``pods`` = every pod of its namespace)."""
    spec, previous = budget.get("spec") or {}, budget.get("status") or {}
    generation = budget["metadata"].get("generation", 0)
    matching = [pod for pod in pods if selects(budget, pod)]
    disrupted = {}
    names = {pod["metadata"]["name"]: pod for pod in matching}
    for name, stamp in sorted((previous.get("disruptedPods") or {}).items()):
        pod, when = names.get(name), _parse_time(stamp)
        if pod is None or pod["metadata"].get("deletionTimestamp") or when is None:
            continue
        if when + DISRUPTED_POD_TIMEOUT > now:
            disrupted[name] = stamp
    healthy = sum(1 for pod in matching if pod_ready(pod) and not pod["metadata"].get("deletionTimestamp")
                  and pod["metadata"]["name"] not in disrupted)
    failure, desired = None, 0
    if spec.get("maxUnavailable") is not None:
        expected, failure = expected_scale(matching, controllers)
        if failure is None:
            unavailable, failure = _scaled(spec["maxUnavailable"], expected, True)
            desired = max(0, expected - unavailable) if failure is None else desired
    elif isinstance(spec.get("minAvailable"), int) or str(spec.get("minAvailable", "")).isdigit():
        expected, desired = len(matching), int(spec["minAvailable"])
    elif spec.get("minAvailable") is not None:
        expected, failure = expected_scale(matching, controllers)
        if failure is None:
            desired, failure = _scaled(spec["minAvailable"], expected, True)
    else:
        expected, desired = 0, 0  # neither set: nothing is expected, so nothing may be disrupted
    if failure is not None:
        # As the real controller's fail-safe: no disruption allowed, the rest of the status as it was.
        status = dict(previous, disruptionsAllowed=0)
        status["conditions"] = _with_condition(previous.get("conditions"), False, "SyncFailed", failure,
                                               previous.get("observedGeneration", 0), now)
        return status
    allowed = healthy - desired if expected > 0 and healthy > desired else 0
    status = {"observedGeneration": generation, "disruptionsAllowed": allowed, "currentHealthy": healthy,
              "desiredHealthy": desired, "expectedPods": expected,
              "conditions": _with_condition(previous.get("conditions"), allowed > 0,
                                            "SufficientPods" if allowed > 0 else "InsufficientPods", "",
                                            generation, now)}
    if disrupted:
        status["disruptedPods"] = disrupted
    return status
