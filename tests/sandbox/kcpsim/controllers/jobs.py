# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Job controller's and TTL-after-finished controller's decisions. Pure, no I/O.

The emulation runs no pods: a Job whose pod could be placed on some node (placement.fits: a Ready, uncordoned
node whose taints the pod template tolerates) completes at once — ``succeeded`` = ``spec.completions``
(default 1), ``startTime`` / ``completionTime``, conditions ``SuccessCriteriaMet`` and ``Complete``. A Job whose
pod fits nowhere stays active (``active: 1``), as its pod would stay Pending — which is how kubeadm's upgrade
health check Job fails when no control plane node is schedulable. Suspended and finished Jobs are left alone.

TTL after finished: a finished Job with ``spec.ttlSecondsAfterFinished`` is deleted once that many seconds have
passed since its completion (or failure) time.
"""

import datetime

from kcpsim.apiserver import auth
from kcpsim.controllers import placement


def finished(job):
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def next_status(job, nodes, stamp):
    """The Job's new status, or None when it stays as it is."""
    spec, status = job.get("spec") or {}, dict(job.get("status") or {})
    if spec.get("suspend") or finished(job):
        return None
    pod_spec = ((spec.get("template") or {}).get("spec")) or {}
    start = status.get("startTime") or stamp
    if not any(placement.fits(node, pod_spec) for node in nodes):
        if status.get("active") == 1 and status.get("startTime"):
            return None
        status.update({"startTime": start, "active": 1})
        return status
    conditions = [{"type": kind, "status": "True", "reason": reason, "message": message,
                   "lastProbeTime": stamp, "lastTransitionTime": stamp}
                  for kind, reason, message in (("SuccessCriteriaMet", "CompletionsReached",
                                                 "Reached expected number of succeeded pods"),
                                                ("Complete", "CompletionsReached",
                                                 "Reached expected number of succeeded pods"))]
    status.update({"startTime": start, "completionTime": stamp, "succeeded": int(spec.get("completions") or 1),
                   "active": 0, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
                   "conditions": conditions})
    return status


def ttl_expired(job, now):
    """Whether a finished Job's ``ttlSecondsAfterFinished`` has run out."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or not finished(job):
        return False
    status = job.get("status") or {}
    ended = auth.parse_time(status.get("completionTime") or "")
    if ended is None:  # a failed Job has no completionTime: its Failed condition says when
        for condition in status.get("conditions") or []:
            if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
                ended = auth.parse_time(condition.get("lastTransitionTime") or "")
    return ended is not None and now >= ended + datetime.timedelta(seconds=int(ttl))
