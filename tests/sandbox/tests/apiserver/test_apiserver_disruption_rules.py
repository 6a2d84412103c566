# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Graceful pod deletion, eviction against PodDisruptionBudgets and the budgets' status, without an API server
(kcpsim/apiserver/disruption.py)."""

import datetime

import pytest

from kcpsim.apiserver import disruption, errors

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
LABELS = {"app": "web"}


def pod(name="web-1", phase="Running", ready=True, node="cp-1", deleting=None, owner=None, grace=None, labels=None):
    metadata = {"name": name, "namespace": "default", "uid": "uid-" + name, "labels": dict(LABELS if labels is None else labels),
                "resourceVersion": "7"}
    if deleting:
        metadata.update(deletionTimestamp=deleting[0], deletionGracePeriodSeconds=deleting[1])
    if owner:
        metadata["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "uid": owner[2], "controller": True,
                                        "apiVersion": "apps/v1"}]
    spec = {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": metadata, "spec": spec,
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def budget(name="web", generation=1, observed=1, allowed=1, healthy=3, desired=2, policy=None, selector=None,
           **spec):
    spec.setdefault("selector", {"matchLabels": LABELS} if selector is None else selector)
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    return {"metadata": {"name": name, "namespace": "default", "generation": generation, "resourceVersion": "3"},
            "spec": spec,
            "status": {"observedGeneration": observed, "disruptionsAllowed": allowed, "currentHealthy": healthy,
                       "desiredHealthy": desired, "expectedPods": 3}}


@pytest.mark.parametrize("subject, options, expected", [
    (pod(), {}, 30),
    (pod(grace=5), {}, 5),
    (pod(grace=5), {"gracePeriodSeconds": 12}, 12),
    (pod(), {"gracePeriodSeconds": -3}, 1),
    (pod(node=""), {}, 0),
    (pod(phase="Succeeded"), {}, 0),
    (pod(phase="Failed"), {"gracePeriodSeconds": 20}, 0),
], ids=["a pod gets the default 30 seconds", "a pod gets its own terminationGracePeriodSeconds",
        "the request's gracePeriodSeconds wins", "a negative grace period counts as one second",
        "an unscheduled pod goes at once", "a succeeded pod goes at once", "a failed pod goes at once"])
def test_deletion_grace(subject, options, expected):
    assert disruption.deletion_grace(subject, options) == expected


def test_a_graceful_delete_stamps_the_deadline_and_the_period():
    at_once, updated = disruption.graceful_deletion(pod(grace=10), {}, NOW)
    assert not at_once
    assert (updated["metadata"]["deletionTimestamp"], updated["metadata"]["deletionGracePeriodSeconds"]) == (
        "2026-01-01T12:00:10Z", 10)


@pytest.mark.parametrize("options, expected", [
    ({}, (False, None)),
    ({"gracePeriodSeconds": 30}, (False, None)),
    ({"gracePeriodSeconds": 0}, (True, None)),
], ids=["deleting a terminating pod again changes nothing", "a longer grace period is not taken",
        "grace period zero removes a terminating pod"])
def test_a_terminating_pod_only_takes_a_shorter_grace_period(options, expected):
    assert disruption.graceful_deletion(pod(deleting=("2026-01-01T12:00:10Z", 10)), options, NOW) == expected


def test_a_shorter_grace_period_brings_the_deadline_forward():
    updated = disruption.graceful_deletion(pod(deleting=("2026-01-01T12:00:30Z", 30)), {"gracePeriodSeconds": 5},
                                           NOW)[1]
    assert (updated["metadata"]["deletionTimestamp"], updated["metadata"]["deletionGracePeriodSeconds"]) == (
        "2026-01-01T12:00:05Z", 5)


@pytest.mark.parametrize("subject, budgets, expected", [
    (pod(), [], ("delete", None)),
    (pod(phase="Pending"), [budget(allowed=0)], ("delete", None)),
    (pod(phase="Succeeded"), [budget(allowed=0)], ("delete", None)),
    (pod(deleting=("2026-01-01T12:00:10Z", 10)), [budget(allowed=0)], ("delete", None)),
    (pod(labels={"app": "other"}), [budget(allowed=0)], ("delete", None)),
    (pod(), [budget(selector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]})],
     ("delete", None)),
    (pod(ready=False), [budget(allowed=0, healthy=2, desired=2)], ("delete-unchanged", "web")),
    (pod(ready=False), [budget(allowed=0, healthy=1, desired=2, policy="AlwaysAllow")], ("delete-unchanged", "web")),
], ids=["a pod without a budget is deleted", "a pending pod ignores its budget", "a finished pod ignores its budget",
        "a terminating pod ignores its budget", "a budget selecting other labels does not count",
        "a budget whose expression does not match does not count",
        "an unready pod goes without taking a disruption while the budget is met",
        "an unready pod goes whatever the budget under AlwaysAllow"])
def test_eviction_plan_without_taking_a_disruption(subject, budgets, expected):
    assert disruption.eviction_plan(subject, budgets) == expected


def test_a_ready_pod_under_one_budget_takes_a_disruption():
    chosen = budget()
    assert disruption.eviction_plan(pod(), [chosen]) == ("take", chosen)


def test_a_pod_under_two_budgets_cannot_be_evicted():
    with pytest.raises(errors.ApiError) as refused:
        disruption.eviction_plan(pod(), [budget("a"), budget("b")])
    assert (refused.value.code, refused.value.message) == (
        500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")


def test_taking_a_disruption_decrements_it_and_records_the_pod():
    status = disruption.take_disruption(budget(allowed=1), "web-1", NOW)
    assert status["disruptionsAllowed"] == 0
    assert status["disruptedPods"] == {"web-1": "2026-01-01T12:00:00Z"}
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("DisruptionAllowed", "False", "InsufficientPods")]


@pytest.mark.parametrize("subject, retry_after, cause", [
    (budget(allowed=0, healthy=2, desired=2), None, "The disruption budget web needs 2 healthy pods and has 2 currently"),
    (budget(generation=2, observed=1), 10, "The disruption budget web is still being processed by the server."),
], ids=["a budget that allows no disruption refuses with 429", "a budget not yet observed refuses with 429"])
def test_a_budget_that_would_be_broken_refuses_with_the_real_servers_words(subject, retry_after, cause):
    with pytest.raises(errors.ApiError) as refused:
        disruption.take_disruption(subject, "web-1", NOW)
    status = refused.value.status()
    assert (status["code"], status["reason"], status["message"]) == (
        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
    assert status["details"]["causes"] == [{"reason": "DisruptionBudget", "message": cause}]
    assert status["details"].get("retryAfterSeconds") == retry_after


RS = ("ReplicaSet", "web-abc", "rs-uid")
CONTROLLERS = {("ReplicaSet", "default", "web-abc"): ("rs-uid", 3, {"kind": "Deployment", "name": "web",
                                                                    "uid": "deploy-uid"}),
               ("Deployment", "default", "web"): ("deploy-uid", 4, None)}


def three_pods(ready=(True, True, True), owner=RS):
    return [pod("web-%d" % i, ready=is_ready, owner=owner) for i, is_ready in enumerate(ready, 1)]


@pytest.mark.parametrize("spec, pods, expected", [
    ({"minAvailable": 2}, three_pods(), (1, 3, 2, 3)),
    ({"minAvailable": 2}, three_pods((True, True, False)), (0, 2, 2, 3)),
    ({"minAvailable": "50%"}, three_pods(), (1, 3, 2, 4)),
    ({"maxUnavailable": 1}, three_pods(), (0, 3, 3, 4)),
    ({"maxUnavailable": "50%"}, three_pods(), (1, 3, 2, 4)),
    ({"minAvailable": 0}, [], (0, 0, 0, 0)),
], ids=["minAvailable 2 of 3 ready pods allows one disruption", "minAvailable 2 with one pod unready allows none",
        "a percentage counts the deployment's replicas, rounded up", "maxUnavailable counts the deployment's replicas",
        "maxUnavailable as a percentage rounds up", "no pod expected allows no disruption"])
def test_budget_status(spec, pods, expected):
    status = disruption.budget_status(budget(generation=3, observed=0, **spec), pods, CONTROLLERS, NOW)
    assert (status["disruptionsAllowed"], status["currentHealthy"], status["desiredHealthy"],
            status["expectedPods"]) == expected
    assert status["observedGeneration"] == 3


def test_a_pod_without_a_controller_fails_a_max_unavailable_budget_safe():
    status = disruption.budget_status(budget(maxUnavailable=1), three_pods(owner=None), CONTROLLERS, NOW)
    condition = status["conditions"][-1]
    assert status["disruptionsAllowed"] == 0
    assert (condition["reason"], condition["message"]) == ("SyncFailed", 'found no controller ref for pod "web-1"')


def test_disrupted_pods_stop_counting_until_deleted_or_two_minutes_pass():
    previous = budget(minAvailable=1)
    previous["status"]["disruptedPods"] = {"web-1": "2026-01-01T11:59:30Z", "web-2": "2026-01-01T11:57:00Z",
                                           "gone": "2026-01-01T11:59:59Z"}
    status = disruption.budget_status(previous, three_pods(), CONTROLLERS, NOW)
    assert status["disruptedPods"] == {"web-1": "2026-01-01T11:59:30Z"}
    assert status["currentHealthy"] == 2
