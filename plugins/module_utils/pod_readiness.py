# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a machine's pods run and are ready, and if not, why, in words an operator acts on: the pod's phase, its
Ready condition's reason and each container's state and restarts. Pure: pods as the API returns them (camelCase)."""

from __future__ import annotations


def _condition(pod, kind):
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def is_ready(pod):
    """Running, and its Ready condition True."""
    return (pod.get("status") or {}).get("phase") == "Running" and _condition(pod, "Ready").get("status") == "True"


def _container_words(container):
    """What is wrong with one container, or '' when nothing is."""
    state = container.get("state") or {}
    last = (container.get("lastState") or {}).get("terminated") or {}
    words = []
    if state.get("waiting"):
        waiting = state["waiting"]
        words.append("waiting: %s" % " - ".join(w for w in (waiting.get("reason"), waiting.get("message")) if w))
    elif state.get("terminated"):
        done = state["terminated"]
        words.append("terminated: %s (exit code %s)" % (done.get("reason") or "unknown", done.get("exitCode")))
    elif not container.get("ready"):
        words.append("running, not ready")
    if container.get("restartCount"):
        words.append("restarted %d times%s" % (container["restartCount"], (", last ended %s (exit code %s)" % (
            last.get("reason") or "unknown", last.get("exitCode"))) if last else ""))
    return "; ".join(words)


def pod_problem(pod, ready_since=None):
    """Why ``pod`` is not running and ready, or None when it is. ``ready_since`` (RFC 3339, UTC, as the kubelet writes
    times): a pod counts as ready only when its Ready condition turned True at or after it - a status from before
    (one a restore brought back) is not its kubelet's word on it now."""
    if is_ready(pod):
        since = _condition(pod, "Ready").get("lastTransitionTime")
        if ready_since is None or (since and since >= ready_since):
            return None
        return "%s: Ready since %s, before %s: its kubelet has not posted its status since" % (
            pod["metadata"]["name"], since or "an unknown time", ready_since)
    status = pod.get("status") or {}
    ready = _condition(pod, "Ready")
    words = [status.get("phase") or "no phase yet"]
    if ready:
        words.append("Ready %s%s" % (ready.get("status"), (" (%s)" % ": ".join(
            w for w in (ready.get("reason"), ready.get("message")) if w)) if ready.get("reason") or ready.get("message") else ""))
    else:
        words.append("no Ready condition yet")
    for container in status.get("containerStatuses") or []:
        said = _container_words(container)
        if said:
            words.append("container %s %s" % (container.get("name"), said))
    return "%s: %s" % (pod["metadata"]["name"], ", ".join(words))


def problems(pods, count, ready_since=None):
    """Why the pods are not yet all running and ready (empty when they are): fewer than ``count`` pods, and each pod
    that is not (or not since ``ready_since``: :func:`pod_problem`), by name."""
    found = ["%d of the %d pods expected are there yet (%s)" % (len(pods), count, ", ".join(
        sorted(p["metadata"]["name"] for p in pods)) or "none")] if len(pods) < count else []
    return found + [problem for problem in (pod_problem(pod, ready_since) for pod in sorted(pods, key=lambda p: p["metadata"]["name"]))
                    if problem]
