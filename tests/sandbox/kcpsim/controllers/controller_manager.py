# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kube-controller-manager`` emulation: the controllers a kubeadm control plane relies on, run by the leader.

Flags as kubeadm renders them (kubeadm-reference.md §1.3): --kubeconfig (the authentication / authorization
kubeconfigs are accepted and ignored), --bind-address / --secure-port (HTTPS /healthz, default 10257),
--leader-elect and its timings, --cluster-signing-cert-file / --cluster-signing-key-file /
--cluster-signing-duration, --node-monitor-grace-period (50s, Kubernetes 1.32 on), --node-monitor-period (5s),
--node-startup-grace-period (1m), --controllers (``*`` = every default controller, a name adds one, ``-name``
removes one; bootstrapsigner and tokencleaner are off unless named, as in the real one). Others are ignored.

Controllers (decisions in the modules named): nodelifecycle (nodelifecycle.py), csrapproving and csrsigning
(csr.py), bootstrapsigner and tokencleaner (bootstrap.py), garbagecollector (gc.py), podgc (pods bound to a
Node that has been gone for 40 s are removed at once, as their kubelet never will), disruption (the status of
PodDisruptionBudgets, kcpsim/apiserver/disruption.py), job and ttl-after-finished (jobs.py), replicaset and
deployment (workloads.py: the pods of a ReplicaSet, a Deployment's ReplicaSets and its rollout). Each runs on its
own period against shared informers (kcpsim/informer.py: one LIST and then a WATCH per resource, started when
this instance becomes the leader, as the real controller manager's informers are), so an idle cluster costs the
API server nothing but the watches; the API server is called to write, and by the garbage collector to check an
owner once more before deleting. A failed API call is logged and retried on the next period.
"""

import base64
import datetime
import sys

from kcpsim import kubeclient, pki
from kcpsim.apiserver import api, disruption, resources
from kcpsim.controllers import bootstrap, component, csr, gc, jobs, nodelifecycle, workloads

FLAGS = {
    "secure-port": ("int", 10257),
    "cluster-signing-cert-file": ("str", ""),
    "cluster-signing-key-file": ("str", ""),
    "cluster-signing-duration": ("duration", 8760 * 3600.0),
    "node-monitor-grace-period": ("duration", 50.0),
    "node-monitor-period": ("duration", 5.0),
    "node-startup-grace-period": ("duration", 60.0),
    "controllers": ("list", ["*"]),
    "cluster-name": ("str", "kubernetes"),
}

# Controller names as --controllers takes them, with the long names 1.28+ also accepts.
ALIASES = {"node-lifecycle-controller": "nodelifecycle",
           "certificatesigningrequest-approving-controller": "csrapproving",
           "certificatesigningrequest-signing-controller": "csrsigning",
           "bootstrap-signer-controller": "bootstrapsigner", "token-cleaner-controller": "tokencleaner",
           "garbage-collector-controller": "garbagecollector", "job-controller": "job",
           "ttl-after-finished-controller": "ttl-after-finished", "disruption-controller": "disruption",
           "pod-garbage-collector-controller": "podgc", "replicaset-controller": "replicaset",
           "deployment-controller": "deployment"}
DEFAULT_ON = ("nodelifecycle", "csrapproving", "csrsigning", "garbagecollector", "job", "ttl-after-finished",
              "disruption", "podgc", "replicaset", "deployment")
DEFAULT_OFF = ("bootstrapsigner", "tokencleaner")
TICK = 0.25
ORPHAN_QUARANTINE = datetime.timedelta(seconds=40)
# The kinds whose replicas a disruption budget counts (their scale), by the API they are served at.
SCALED_KINDS = (("apps/v1", "replicasets", "ReplicaSet"), ("apps/v1", "deployments", "Deployment"),
                ("apps/v1", "statefulsets", "StatefulSet"))


def enabled_controllers(names):
    """The controllers ``--controllers`` turns on (see the module docstring)."""
    chosen = set()
    for name in names:
        negated = name.startswith("-")
        name = ALIASES.get(name.lstrip("-"), name.lstrip("-"))
        if name == "*":
            chosen.update(DEFAULT_ON)
        elif negated:
            chosen.discard(name)
        elif name in DEFAULT_ON + DEFAULT_OFF:
            chosen.add(name)
    # A later "-name" wins over "*": apply the removals again after the additions.
    for name in names:
        if name.startswith("-"):
            chosen.discard(ALIASES.get(name[1:], name[1:]))
    return chosen


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


class Controllers:
    """Every controller's sync, over one API client; ``syncs()`` says which run and how often."""

    def __init__(self, client, values, log, signer=None, clock=utcnow, lister=None):
        self.client = client
        self.lister = lister or client  # reads: informer.Listers (or, without one, the API server itself)
        self.values = values
        self.log = log
        self.signer = signer  # (CA cert, CA key) or None: csrsigning then leaves CSRs unsigned
        self.clock = clock
        self.missing_nodes = {}  # node name -> when podgc first saw pods bound to it while it did not exist

    def syncs(self, enabled):
        table = {"nodelifecycle": (self.values["node-monitor-period"], self.sync_nodes),
                 "csrapproving": (1.0, self.sync_csr_approval),
                 "csrsigning": (1.0, self.sync_csr_signing),
                 "bootstrapsigner": (1.0, self.sync_bootstrap_signer),
                 "tokencleaner": (1.0, self.sync_token_cleaner),
                 "garbagecollector": (5.0, self.sync_garbage),
                 "job": (1.0, self.sync_jobs),
                 "disruption": (1.0, self.sync_disruption),
                 "podgc": (5.0, self.sync_orphaned_pods),
                 "replicaset": (1.0, self.sync_replica_sets),
                 "deployment": (1.0, self.sync_deployments),
                 "ttl-after-finished": (2.0, self.sync_ttl)}
        return [(name,) + table[name] for name in sorted(enabled) if name in table]

    # --- node lifecycle --------------------------------------------------------------------------------

    def sync_nodes(self):
        now = self.clock()
        stamp = api.rfc3339(now)
        grace = datetime.timedelta(seconds=self.values["node-monitor-grace-period"])
        startup = datetime.timedelta(seconds=self.values["node-startup-grace-period"])
        leases = {lease["metadata"]["name"]: lease
                  for lease in self.lister.list("coordination.k8s.io/v1", "leases", "kube-node-lease")["items"]}
        for node in self.lister.list("v1", "nodes")["items"]:
            name = node["metadata"]["name"]
            conditions = nodelifecycle.silenced_conditions(node, leases.get(name), now, grace, startup, stamp)
            if conditions is not None:
                node.setdefault("status", {})["conditions"] = conditions
                try:
                    node = self.client.update("v1", "nodes", node, subresource="status")
                except kubeclient.Conflict:
                    continue  # the kubelet wrote meanwhile: judge again next period
                self.log("node %s: kubelet stopped posting node status, Ready is now Unknown" % name)
                self._mark_pods_not_ready(name, stamp)
            taints = nodelifecycle.wanted_taints(node, stamp)
            if taints is not None:
                self.client.patch("v1", "nodes", name, {"spec": {"taints": taints}})

    def _mark_pods_not_ready(self, node_name, stamp):
        pods = self.lister.list("v1", "pods", field_selector="spec.nodeName=" + node_name)["items"]
        for pod, status in nodelifecycle.pods_to_mark_not_ready(pods, stamp):
            pod["status"] = status
            try:
                self.client.update("v1", "pods", pod, pod["metadata"]["namespace"], subresource="status")
            except (kubeclient.Conflict, kubeclient.NotFound):
                pass

    def _wrote(self, api_version, plural, obj):
        """Let the informers know of our own write at once (the watch brings it a moment later)."""
        if hasattr(self.lister, "written"):
            self.lister.written(api_version, plural, obj)

    # --- certificate signing requests ------------------------------------------------------------------

    def _csrs(self):
        return self.lister.list("certificates.k8s.io/v1", "certificatesigningrequests")["items"]

    def sync_csr_approval(self):
        stamp = api.rfc3339(self.clock())
        for request in self._csrs():
            try:
                reason = csr.approval_reason(request)
            except csr.BadRequest:
                continue  # the signer marks it Failed
            if reason is None:
                continue
            request.setdefault("status", {}).setdefault("conditions", []).append(csr.approved_condition(stamp))
            try:
                self._wrote("certificates.k8s.io/v1", "certificatesigningrequests", self.client.update(
                    "certificates.k8s.io/v1", "certificatesigningrequests", request, subresource="approval"))
                self.log("approved CSR %s (%s)" % (request["metadata"]["name"], reason))
            except kubeclient.Conflict:
                pass

    def sync_csr_signing(self):
        if self.signer is None:
            return
        ca_cert, ca_key = self.signer
        now = self.clock()
        limit = datetime.timedelta(seconds=self.values["cluster-signing-duration"])
        for request in self._csrs():
            if not csr.wants_signing(request):
                continue
            status = request.setdefault("status", {})
            try:
                certificate = pki.sign_csr(csr.request_pem(request), ca_cert, ca_key,
                                           usages=csr.certificate_usages(request),
                                           validity=csr.validity(request, limit), now=now)
                status["certificate"] = base64.b64encode(pki.cert_pem(certificate)).decode("ascii")
            except (csr.BadRequest, pki.PKIError) as exc:
                status.setdefault("conditions", []).append(csr.failed_condition(api.rfc3339(now), str(exc)))
            try:
                self.client.update("certificates.k8s.io/v1", "certificatesigningrequests", request,
                                   subresource="status")
                self.log("signed CSR %s" % request["metadata"]["name"] if status.get("certificate")
                         else "CSR %s failed: %s" % (request["metadata"]["name"], status["conditions"][-1]["message"]))
            except kubeclient.Conflict:
                pass

    # --- bootstrap tokens ------------------------------------------------------------------------------

    def _token_secrets(self):
        secrets = self.lister.list("v1", "secrets", "kube-system", field_selector="type=" + bootstrap.SECRET_TYPE)
        return secrets["items"]

    def sync_bootstrap_signer(self):
        try:
            cluster_info = self.lister.get("v1", "configmaps", "cluster-info", "kube-public")
        except kubeclient.NotFound:
            return
        data = bootstrap.signed_cluster_info(cluster_info.get("data") or {},
                                             bootstrap.signing_tokens(self._token_secrets(), self.clock()))
        if data is None:
            return
        cluster_info["data"] = data
        try:
            self.client.update("v1", "configmaps", cluster_info, "kube-public")
        except kubeclient.Conflict:
            pass

    def sync_token_cleaner(self):
        for secret in bootstrap.expired_tokens(self._token_secrets(), self.clock()):
            metadata = secret["metadata"]
            try:
                self.client.delete("v1", "secrets", metadata["name"], "kube-system",
                                   body={"preconditions": {"uid": metadata["uid"]}})
                self.log("deleted expired bootstrap token %s" % metadata["name"])
            except (kubeclient.NotFound, kubeclient.Conflict):
                pass

    # --- garbage collector -----------------------------------------------------------------------------

    def _live_uid(self, resource, namespace, name):
        try:
            owner = self.client.get(resources.group_version(resource), resource.plural, name, namespace)
        except kubeclient.NotFound:
            return None
        return owner["metadata"].get("uid")

    def sync_garbage(self):
        stored = [resource for resource in resources.RESOURCES if not resource.dropped]
        objects, uids = [], {}
        for resource in stored:
            for obj in self.lister.list(resources.group_version(resource), resource.plural)["items"]:
                metadata = obj["metadata"]
                uids[(resource.plural, metadata.get("namespace"), metadata["name"])] = metadata.get("uid")
                if metadata.get("ownerReferences"):
                    objects.append((resource, obj))
        for resource, obj in objects:
            if not gc.is_orphan(obj, lambda owner, namespace, name: uids.get((owner.plural, namespace, name))):
                continue
            if not gc.is_orphan(obj, self._live_uid):  # the lists are not one snapshot: ask again
                continue
            metadata = obj["metadata"]
            try:
                self.client.delete(resources.group_version(resource), resource.plural, metadata["name"],
                                   metadata.get("namespace"), body={"preconditions": {"uid": metadata["uid"]}})
                self.log("garbage collected %s %s/%s: its owners are gone"
                         % (resource.kind, metadata.get("namespace") or "", metadata["name"]))
            except (kubeclient.NotFound, kubeclient.Conflict):
                pass

    # --- pod garbage collector -------------------------------------------------------------------------

    def sync_orphaned_pods(self):
        now = self.clock()
        nodes = {node["metadata"]["name"] for node in self.lister.list("v1", "nodes")["items"]}
        orphans = [pod for pod in self.lister.list("v1", "pods")["items"]
                   if (pod.get("spec") or {}).get("nodeName") and pod["spec"]["nodeName"] not in nodes]
        missing = {pod["spec"]["nodeName"] for pod in orphans}
        self.missing_nodes = {name: self.missing_nodes.get(name, now) for name in missing}
        for pod in orphans:
            if now - self.missing_nodes[pod["spec"]["nodeName"]] < ORPHAN_QUARANTINE:
                continue
            metadata = pod["metadata"]
            try:
                self.client.delete("v1", "pods", metadata["name"], metadata["namespace"],
                                   body={"gracePeriodSeconds": 0, "preconditions": {"uid": metadata["uid"]}})
                self.log("deleted pod %s/%s: its node %s does not exist" % (metadata["namespace"], metadata["name"],
                                                                            pod["spec"]["nodeName"]))
            except (kubeclient.NotFound, kubeclient.Conflict):
                pass

    # --- disruption ------------------------------------------------------------------------------------

    def sync_disruption(self):
        budgets = self.lister.list("policy/v1", "poddisruptionbudgets")["items"]
        if not budgets:
            return
        now = self.clock()
        pods = self.lister.list("v1", "pods")["items"]
        controllers = {}
        for api_version, plural, kind in SCALED_KINDS:
            for obj in self.lister.list(api_version, plural)["items"]:
                metadata = obj["metadata"]
                owner = next((ref for ref in metadata.get("ownerReferences") or [] if ref.get("controller")), None)
                controllers[(kind, metadata["namespace"], metadata["name"])] = (
                    metadata.get("uid"), int((obj.get("spec") or {}).get("replicas", 1)), owner)
        for budget in budgets:
            namespace = budget["metadata"]["namespace"]
            status = disruption.budget_status(
                budget, [pod for pod in pods if pod["metadata"]["namespace"] == namespace], controllers, now)
            if status == budget.get("status"):
                continue
            budget["status"] = status
            try:
                self.client.update("policy/v1", "poddisruptionbudgets", budget, namespace, subresource="status")
            except (kubeclient.Conflict, kubeclient.NotFound):
                pass  # an eviction took a disruption meanwhile: next round

    # --- replica sets and deployments -----------------------------------------------------------------

    def sync_replica_sets(self):
        replica_sets = self.lister.list("apps/v1", "replicasets")["items"]
        if not replica_sets:
            return
        pods = self.lister.list("v1", "pods")["items"]
        for replica_set in replica_sets:
            metadata = replica_set["metadata"]
            if metadata.get("deletionTimestamp"):
                continue
            to_create, to_delete = workloads.replica_changes(replica_set, pods)
            try:
                for _made in range(to_create):
                    pod = self.client.create("v1", "pods", workloads.new_pod(replica_set), metadata["namespace"])
                    self._wrote("v1", "pods", pod)
                    pods.append(pod)
                    self.log("replicaset %s/%s: created pod %s" % (metadata["namespace"], metadata["name"], pod["metadata"]["name"]))
                for pod in to_delete:
                    gone = self.client.delete("v1", "pods", pod["metadata"]["name"], metadata["namespace"],
                                              body={"preconditions": {"uid": pod["metadata"]["uid"]}})
                    # a graceful delete answers the pod, terminating; one gone at once answers a Status
                    terminating = [gone] if isinstance(gone, dict) and gone.get("kind") == "Pod" else []
                    for answered in terminating:
                        self._wrote("v1", "pods", answered)
                    pods = [p for p in pods if p["metadata"].get("uid") != pod["metadata"]["uid"]] + terminating
                    self.log("replicaset %s/%s: deleted pod %s" % (metadata["namespace"], metadata["name"], pod["metadata"]["name"]))
            except kubeclient.ApiError as exc:
                self.log("replicaset %s/%s: %s" % (metadata["namespace"], metadata["name"], exc))
                continue
            self._write_status("apps/v1", "replicasets", replica_set, workloads.replica_set_status(replica_set, pods))

    def sync_deployments(self):
        deployments = self.lister.list("apps/v1", "deployments")["items"]
        if not deployments:
            return
        replica_sets = self.lister.list("apps/v1", "replicasets")["items"]
        pods = self.lister.list("v1", "pods")["items"]
        for deployment in deployments:
            metadata = deployment["metadata"]
            if metadata.get("deletionTimestamp"):
                continue
            owned = workloads.controlled(deployment, replica_sets)
            pod_hash = workloads.template_hash((deployment.get("spec") or {}).get("template") or {})
            name = "%s-%s" % (metadata["name"], pod_hash)
            try:
                new = next((rs for rs in owned if rs["metadata"]["name"] == name), None)
                if new is None:
                    new = self.client.create("apps/v1", "replicasets", workloads.new_replica_set(deployment, pod_hash), metadata["namespace"])
                    self._wrote("apps/v1", "replicasets", new)
                    self.log("deployment %s/%s: created replicaset %s" % (metadata["namespace"], metadata["name"], name))
                olds = [rs for rs in owned if rs["metadata"]["name"] != name]
                for rs_name, count in sorted(workloads.rollout_scales(deployment, new, olds, pods).items()):
                    scaled = self.client.patch("apps/v1", "replicasets", rs_name, {"spec": {"replicas": count}},
                                               metadata["namespace"])
                    self._wrote("apps/v1", "replicasets", scaled)
                    self.log("deployment %s/%s: scaled replicaset %s to %d" % (metadata["namespace"], metadata["name"], rs_name, count))
            except kubeclient.ApiError as exc:
                self.log("deployment %s/%s: %s" % (metadata["namespace"], metadata["name"], exc))
                continue
            self._write_status("apps/v1", "deployments", deployment, workloads.deployment_status(deployment, new, olds))

    def _write_status(self, api_version, plural, obj, status):
        """``obj``'s status, written when it changed; a write that lost a race is made again next period."""
        if status == obj.get("status"):
            return
        obj["status"] = status
        try:
            self._wrote(api_version, plural, self.client.update(api_version, plural, obj, obj["metadata"]["namespace"], subresource="status"))
        except (kubeclient.Conflict, kubeclient.NotFound):
            pass

    # --- jobs ------------------------------------------------------------------------------------------

    def sync_jobs(self):
        stamp = api.rfc3339(self.clock())
        nodes = None
        for job in self.lister.list("batch/v1", "jobs")["items"]:
            if jobs.finished(job) or (job.get("spec") or {}).get("suspend"):
                continue
            if nodes is None:
                nodes = self.lister.list("v1", "nodes")["items"]
            status = jobs.next_status(job, nodes, stamp)
            if status is None:
                continue
            job["status"] = status
            try:
                self.client.update("batch/v1", "jobs", job, job["metadata"]["namespace"], subresource="status")
                if jobs.finished(job):
                    self.log("job %s/%s completed" % (job["metadata"]["namespace"], job["metadata"]["name"]))
            except (kubeclient.Conflict, kubeclient.NotFound):
                pass

    def sync_ttl(self):
        now = self.clock()
        for job in self.lister.list("batch/v1", "jobs")["items"]:
            if not jobs.ttl_expired(job, now):
                continue
            metadata = job["metadata"]
            try:
                self.client.delete("batch/v1", "jobs", metadata["name"], metadata["namespace"],
                                   body={"preconditions": {"uid": metadata["uid"]},
                                         "propagationPolicy": "Background"})
            except (kubeclient.NotFound, kubeclient.Conflict):
                pass


def prepare(values, log):
    """The leader's work, each enabled controller's sync on its period; None when the signing pair cannot be
    loaded."""
    enabled = enabled_controllers(values["controllers"])
    signer = None
    if values["cluster-signing-cert-file"] or values["cluster-signing-key-file"]:
        try:
            signer = (pki.load_cert(values["cluster-signing-cert-file"]),
                      pki.load_key(values["cluster-signing-key-file"]))
        except pki.PKIError as exc:
            log("Error: failed to start certificate controller: %s" % exc, "E")
            return None

    def syncs(client, lister):
        table = Controllers(client, values, log, signer, lister=lister).syncs(enabled)
        log("started controllers: %s" % ", ".join(entry[0] for entry in table))
        return table
    return component.periodic(syncs, log, TICK)


def main(argv=None):
    return component.main(argv, "kube-controller-manager", FLAGS, prepare)


if __name__ == "__main__":
    sys.exit(main())
