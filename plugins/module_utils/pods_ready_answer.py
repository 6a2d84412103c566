# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the pods_ready module does for its arguments: read a Node's pods through the Kubernetes API every second
until they all run and are ready (pod_readiness.py decides), and when the time is up, say why not, with the last
lines of each such pod's log. Run by the module where its task runs, or by its action plugin on the controller with
the admin kubeconfig read from a host."""

from __future__ import annotations

import time

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api, pod_readiness

IMPORT_ERROR = kube_api.IMPORT_ERROR

ARGUMENT_SPEC = dict(
    kubeconfig=dict(type="path"),
    admin_kubeconfig_on_host=dict(type="path"),
    node=dict(type="str", required=True),
    namespace=dict(type="str", default="kube-system"),
    selector=dict(type="str", default="tier=control-plane"),
    count=dict(type="int", default=1),
    timeout=dict(type="int", default=300),
    log_lines=dict(type="int", default=5),
    ready_since=dict(type="str"),
)
# How long one request may take, and how often the pods are read.
REQUEST_TIMEOUT = 10
POLL_SECONDS = 1.0


class NotReady(Exception):
    """The pods were not all running and ready in time; ``fields`` are what the failed result carries."""

    def __init__(self, message, **fields):
        super().__init__(message)
        self.fields = fields


def argument_problems(params):
    """The problems of the arguments, each naming the field."""
    problems = []
    if not params["kubeconfig"]:
        problems.append("kubeconfig: required (or admin_kubeconfig_on_host)")
    if not params["node"].strip():
        problems.append("node: must name a Node")
    for field, least in (("count", 0), ("timeout", 0), ("log_lines", 0)):
        if params[field] < least:
            problems.append("%s: must not be negative" % field)
    return problems


def _pods_path(namespace):
    return "/api/v1/namespaces/%s/pods" % namespace


def _read(api, params):
    query = {"fieldSelector": "spec.nodeName=" + params["node"]}
    if params["selector"]:
        query["labelSelector"] = params["selector"]
    return kube_api.request(api, "GET", _pods_path(params["namespace"]), REQUEST_TIMEOUT, query=query).get("items") or []


def _log_tail(api, pod, lines):
    """The last ``lines`` lines of the pod's (first container's) log, or why they cannot be read."""
    path = "%s/%s/log" % (_pods_path(pod["metadata"]["namespace"]), pod["metadata"]["name"])
    try:
        text = kube_api.request(api, "GET", path, REQUEST_TIMEOUT, query={"tailLines": lines})
    except kube_api.ClusterUnreadable as exc:
        return "(its log cannot be read: %s)" % exc
    return (text or "").rstrip("\n") or "(its log is empty)"


def _summary(pods):
    return [dict(name=p["metadata"]["name"], phase=(p.get("status") or {}).get("phase"), ready=pod_readiness.is_ready(p))
            for p in sorted(pods, key=lambda p: p["metadata"]["name"])]


def wait(params, check_mode, sleep=time.sleep, clock=time.monotonic):
    """The result once the pods run and are ready; in check mode what one reading found, never waiting. Raises
    NotReady when ``timeout`` seconds passed first, or kube_api.ClusterUnreadable for an unusable kubeconfig."""
    started = clock()
    deadline = started + params["timeout"]
    pods, problems, unanswered = [], [], None
    with kube_api.connected(params["kubeconfig"]) as api:
        while True:
            try:
                pods = _read(api, params)
            except kube_api.ClusterUnreadable as exc:  # the API server may be restarting: ask again
                unanswered = str(exc)
            else:
                unanswered = None
                problems = pod_readiness.problems(pods, params["count"], params["ready_since"])
                if not problems or check_mode:
                    return dict(changed=False, ready=not problems, problems=problems, pods=_summary(pods),
                                waited=round(clock() - started, 1))
            if check_mode or clock() >= deadline:
                break
            sleep(POLL_SECONDS)
        if unanswered:
            why = "the API server did not answer the last reading (%s)" % unanswered
        else:
            lines = params["log_lines"]
            logs = ["%s, last %d lines of its log:\n%s" % (p["metadata"]["name"], lines, _log_tail(api, p, lines))
                    for p in pods if lines and pod_readiness.pod_problem(p, params["ready_since"])]
            why = "; ".join(problems) + "".join("\n" + log for log in logs)
    raise NotReady("the pods of Node %s (%s in %s) are not all running and ready after %d s: %s"
                   % (params["node"], params["selector"] or "every pod", params["namespace"], params["timeout"], why),
                   problems=problems, pods=_summary(pods))
