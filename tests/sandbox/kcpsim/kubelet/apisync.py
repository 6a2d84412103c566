# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's API side, on its own thread so static pods never wait for the API server.

Once per start it registers the Node (an existing one is kept, its default labels — the topology zone
among them — brought up to date, as the real kubelet does); every heartbeat it renews the Lease in kube-node-lease,
and writes the Node's status when it changed, or when nodeStatusReportFrequency (5 min) has passed since it was last
written. The pods bound to its node (``spec.nodeName``, every namespace) it knows from an informer, as the real
kubelet's pod config source does: one LIST, then a WATCH (kcpsim/informer.py; a broken watch lists again). Its
sync runs when the watch brings a change and otherwise every second against what the informer holds (no API
request unless something is to be done), and

- makes the mirror pods match the static pods (create, recreate when the manifest hash changed, the mirror pod
  was deleted or is being deleted (one of an earlier Node of this name the garbage collector took on), delete
  when the static pod is gone, write status when phase / readiness / restarts changed);
  mirror pods are deleted at once (grace period 0, the pod's uid as precondition), as the real kubelet deletes
  them;
- starts the other pods (the API's) once their network can exist (host network, or a CNI network config in
  /etc/cni/net.d): Running and Ready, with no process behind them (the sandbox runs no workloads);
- finishes a pod's graceful deletion: once it carries a deletionTimestamp its (emulated) containers stop at
  once, and the kubelet removes the object (grace period 0, uid precondition), as the real kubelet does after
  its containers have exited. A pod on a node whose kubelet is down stays Terminating, as it would.

Any API failure backs off (0.5 s doubling to 10 s) and the round is tried again.
"""

import datetime
import logging
import threading
import time

from kcpsim import informer, kubeclient
from kcpsim.kubelet import backoff, objects
from kcpsim.runtime import network

LOG = logging.getLogger("kubelet")
MIRROR_PERIOD = 1.0
CORE = "v1"
COORDINATION = "coordination.k8s.io/v1"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


class ApiSync(threading.Thread):
    def __init__(self, connect, node_name, flag_labels, taints, machine, runtime_up, runtime_version, pods,
                 heartbeat, lease_duration, stop, report_frequency=300.0):
        super().__init__(name="api-sync", daemon=True)
        self.connect = connect            # () -> KubeClient for this node's identity
        self.node_name = node_name
        self.flag_labels = flag_labels
        self.taints = taints
        self.machine = machine            # facts for the Node status (see objects.node_status)
        self.runtime_up = runtime_up      # () -> bool
        self.runtime_version = runtime_version  # () -> CRI VersionResponse dict, None when it does not answer
        self.last_runtime_version = None  # kept while the runtime is down, as the real kubelet keeps nodeInfo
        self.pods = pods                  # PodWorkers (snapshot())
        self.heartbeat = heartbeat
        self.report_frequency = report_frequency  # nodeStatusReportFrequency: an unchanged status is written this often
        self.last_report = None           # monotonic time of the last status written
        self.lease_duration = lease_duration
        self.stop = stop
        self.api = None
        self.node_uid = None
        self.lease = None                 # the Lease as last written (renewed from it without a GET)
        self.next_heartbeat = 0.0
        self.first_seen = {}              # (pod name, config hash) -> datetime the kubelet first saw it
        self.last_error = None
        self.bound_pods = None            # the informer of the pods bound to this node, made once connected
        self.wake = threading.Event()     # set by the informer on every change

    def run(self):
        failures = 0
        while not self.stop.is_set():
            try:
                self.step()
                failures, wait = 0, min(MIRROR_PERIOD, self.heartbeat)
                self.last_error = None
            except Exception as exc:  # noqa: BLE001 - the heartbeat must outlive any one bad round
                failures += 1
                if isinstance(exc, kubeclient.Unauthorized):
                    self.api = None  # kubelet.conf may have been rewritten: reload it
                if str(exc) != self.last_error:
                    expected = isinstance(exc, (kubeclient.ApiUnavailable, kubeclient.ApiError))
                    LOG.warning("API: %s", exc, exc_info=not expected)
                    self.last_error = str(exc)
                wait = backoff.api_retry_delay(failures)
            self.wake.wait(wait)
            self.wake.clear()
        if self.bound_pods is not None:
            self.bound_pods.stop()

    def step(self):
        if self.api is None:
            self.api = self.connect()
        if self.node_uid is None:
            self.register()
        if time.monotonic() >= self.next_heartbeat:
            self.renew_lease()
            self.post_node_status()
            self.next_heartbeat = time.monotonic() + self.heartbeat
        if self.bound_pods is None:
            self.bound_pods = informer.Informer(self.connect, CORE, "pods", field_selector="spec.nodeName=" +
                                                self.node_name, on_change=self.wake.set,
                                                log=lambda message: LOG.info("pods informer: %s", message)).start()
        if not self.bound_pods.synced.is_set():
            return  # as the real kubelet, pods are synced against the API once its pod informer has listed
        bound = self.bound_pods.items()
        mirrors = {}
        for pod in bound:
            metadata = pod["metadata"]
            if MIRROR_ANNOTATION in (metadata.get("annotations") or {}):
                mirrors[(metadata["namespace"], metadata["name"])] = pod
        # The API's pods are picked before sync_mirror_pods takes the mirror pods it handles out of ``mirrors``:
        # a mirror pod is never handled as an API pod.
        api_pods = [pod for pod in bound if (pod["metadata"]["namespace"], pod["metadata"]["name"]) not in mirrors]
        self.sync_mirror_pods(mirrors)
        self.sync_api_pods(api_pods)

    # --- node ------------------------------------------------------------------------------------------

    def register(self):
        initial = objects.node(self.node_name, self.flag_labels, self.taints)
        try:
            node = self.api.create(CORE, "nodes", initial)
            LOG.info("registered node %s", self.node_name)
        except kubeclient.Conflict:
            node = self.api.get(CORE, "nodes", self.node_name)
            stale = objects.default_label_updates(initial["metadata"]["labels"],
                                                  (node.get("metadata") or {}).get("labels") or {})
            if stale:
                node = self.api.patch(CORE, "nodes", self.node_name, {"metadata": {"labels": stale}})
            LOG.info("node %s was already registered", self.node_name)
        self.node_uid = node["metadata"].get("uid", "")
        self.post_node_status(node)

    def post_node_status(self, node=None):
        """As the real kubelet's tryUpdateNodeStatus: the Node as the API server's cache holds it
        (resourceVersion=0, no etcd read), the new status computed from it, and a PATCH of the status with what
        changed (no resourceVersion, so no conflict with whoever else writes the Node)."""
        node = node or self.api.get(CORE, "nodes", self.node_name, resource_version="0")
        self.last_runtime_version = self.runtime_version() or self.last_runtime_version
        old = node.get("status") or {}
        new = objects.node_status(self.machine, self.runtime_up(), self.last_runtime_version, old.get("conditions"),
                                  utcnow(), network.not_ready_reason())
        change = objects.merge_patch_between(old, new)
        # As the real kubelet: a status that changed only in its heartbeat times is not written until
        # nodeStatusReportFrequency has passed since the last write (the Lease says the kubelet lives meanwhile).
        due = self.last_report is None or time.monotonic() >= self.last_report + self.report_frequency
        if change and (due or objects.status_changed(old, new)):
            self.api.patch(CORE, "nodes", self.node_name, {"status": change}, subresource="status")
            self.last_report = time.monotonic()

    def renew_lease(self):
        """As the real kubelet's node lease controller: an Update of the Lease it last wrote (no GET); a GET
        (and a create when there is none) only the first time or after a conflict."""
        now = utcnow()
        if self.lease is not None:
            try:
                self.lease = self.api.update(COORDINATION, "leases", self._renewed(self.lease, now),
                                             objects.NODE_LEASE_NAMESPACE)
                return
            except (kubeclient.Conflict, kubeclient.NotFound) as exc:
                LOG.info("failed to update lease using latest lease, fallback to ensure lease: %s", exc)
                self.lease = None
        try:
            current = self.api.get(COORDINATION, "leases", self.node_name, objects.NODE_LEASE_NAMESPACE)
        except kubeclient.NotFound:
            body = objects.lease(self.node_name, self.node_uid, self.lease_duration, now)
            self.lease = self.api.create(COORDINATION, "leases", body, objects.NODE_LEASE_NAMESPACE)
            return
        self.lease = self.api.update(COORDINATION, "leases", self._renewed(current, now), objects.NODE_LEASE_NAMESPACE)

    def _renewed(self, lease, now):
        body = objects.lease(self.node_name, self.node_uid, self.lease_duration, now)
        return dict(lease, spec=dict(lease.get("spec") or {}, **body["spec"]))

    # --- mirror pods -----------------------------------------------------------------------------------

    def sync_mirror_pods(self, existing):
        """``existing``: the mirror pods bound to this node, by (namespace, name)."""
        states = self.pods.snapshot()
        now = utcnow()
        for name, state in sorted(states.items()):
            manifest = state.manifest
            key = (manifest.namespace, objects.mirror_name(name, self.node_name))
            seen = self.first_seen.setdefault((name, manifest.config_hash), now)
            pod = existing.pop(key, None)
            if pod is not None:
                # As the real kubelet's syncPod: a mirror pod that is not the static pod's (another manifest hash)
                # or that is being deleted (say by the garbage collector: it belonged to an earlier Node of this
                # name) is deleted at once and made again.
                why = ("its manifest changed" if pod["metadata"]["annotations"].get(MIRROR_ANNOTATION)
                       != manifest.config_hash else "it is being deleted" if pod["metadata"].get("deletionTimestamp")
                       else None)
                if why:
                    LOG.info("recreating mirror pod %s/%s: %s", key[0], key[1], why)
                    if not self._delete_now(pod):
                        continue  # the informer held an older pod of that name: the watch brings the current one
                    pod = None
            if pod is None:
                mirror = objects.mirror_pod(manifest, self.node_name, self.node_uid, seen)
                try:
                    pod = self.api.create(CORE, "pods", mirror, manifest.namespace)
                except kubeclient.Conflict:
                    continue  # the old one is still being deleted, or the watch has yet to bring it: next round
                self.bound_pods.written(pod)
            status = objects.pod_status(state, self.machine["node_ip"], (pod.get("status") or {}).get("conditions"),
                                        now, seen)
            if objects.status_fingerprint(status) != objects.status_fingerprint(pod.get("status")):
                pod["status"] = status
                try:
                    self.bound_pods.written(self.api.update(CORE, "pods", pod, manifest.namespace,
                                                            subresource="status"))
                except kubeclient.Conflict:
                    pass  # changed meanwhile: the watch brings the newer one
        for key in sorted(existing):
            LOG.info("deleting mirror pod %s/%s: no such static pod", *key)
            self._delete_now(existing[key])
        live = {(name, state.manifest.config_hash) for name, state in states.items()}
        self.first_seen = {k: v for k, v in self.first_seen.items() if k in live}

    def _delete_now(self, pod):
        """Remove the pod object at once: grace period 0, and only this very pod (its uid). Whether it is gone
        (deleted now, or already); False when the name holds another pod now (the uid precondition failed), which
        the informer then still has to bring: that one stays in the informer's store, as it is on the server."""
        metadata = pod["metadata"]
        try:
            self.api.delete(CORE, "pods", metadata["name"], metadata["namespace"],
                            body={"gracePeriodSeconds": 0, "preconditions": {"uid": metadata["uid"]}})
        except kubeclient.Conflict:
            return False
        except kubeclient.NotFound:
            pass
        self.bound_pods.deleted(pod)
        return True

    # --- pods from the API ------------------------------------------------------------------------------

    def sync_api_pods(self, pods):
        network_ready = None
        for pod in pods:
            metadata, spec = pod["metadata"], pod.get("spec") or {}
            if metadata.get("deletionTimestamp"):
                LOG.info("pod %s/%s: containers stopped, removing it", metadata["namespace"], metadata["name"])
                self._delete_now(pod)
                continue
            if (pod.get("status") or {}).get("phase") != "Pending":
                continue
            if not spec.get("hostNetwork"):
                if network_ready is None:
                    network_ready = network.not_ready_reason() is None
                if not network_ready:
                    continue  # the real runtime cannot set up the pod's sandbox without a network plugin
            node_ip = self.machine["node_ip"]
            pod["status"] = objects.api_pod_status(pod, node_ip, utcnow(),
                                                   node_ip if spec.get("hostNetwork") else objects.pod_ip(pod))
            try:
                self.bound_pods.written(self.api.update(CORE, "pods", pod, metadata["namespace"],
                                                        subresource="status"))
                LOG.info("pod %s/%s started", metadata["namespace"], metadata["name"])
            except (kubeclient.Conflict, kubeclient.NotFound):
                pass  # changed meanwhile: next round
