# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API objects the kubelet writes: Node, Node status, Lease, mirror Pod and its status, CSR. Pure.

Shapes follow the real kubelet where a reader can see them: the Node's default labels and conditions,
``nodeInfo``, the Lease in ``kube-node-lease``, mirror pods named ``<pod>-<node>`` carrying the manifest's
labels and annotations plus ``kubernetes.io/config.{hash,mirror,seen,source}``, owned by the Node.
A condition's ``lastTransitionTime`` only moves when its status changes.
"""

import base64
import datetime
import hashlib

SIGNER_KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
NODE_LEASE_NAMESPACE = "kube-node-lease"
KUBELET_PORT = 10250


def rfc3339(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def from_epoch(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


def rfc3339_micro(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _condition(kind, status, reason, message, previous, now):
    """A condition whose lastTransitionTime is kept from ``previous`` ({type: condition}) if status is unchanged."""
    old = previous.get(kind) or {}
    transition = old.get("lastTransitionTime") if old.get("status") == status else None
    condition = {"type": kind, "status": status, "lastTransitionTime": transition or rfc3339(now)}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def _node_condition(kind, status, reason, message, previous, now):
    return dict(_condition(kind, status, reason, message, previous, now), lastHeartbeatTime=rfc3339(now))


def by_type(conditions):
    return {c.get("type"): c for c in conditions or [] if isinstance(c, dict)}


def owner_node(node_name, node_uid, controller=False):
    reference = {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": node_uid}
    if controller:
        reference["controller"] = True
    return reference


# The labels a restarted kubelet brings an already registered Node back to (the real kubelet's
# updateDefaultLabels): the topology ones included, so a zone given with --node-labels is reconciled too.
DEFAULT_LABEL_KEYS = (
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type", "kubernetes.io/os",
    "kubernetes.io/arch", "node.kubernetes.io/windows-build", "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
)


def default_label_updates(initial, existing):
    """The merge-patch ``labels`` that bring an existing Node's default labels to those of the Node this kubelet
    would register (``initial``): a default label the kubelet sets gets its value, one it sets empty is removed;
    every other label (kubeadm's role label, an operator's) is left alone. Empty when nothing changes."""
    updates = {}
    for key in DEFAULT_LABEL_KEYS:
        if key not in initial:
            continue
        if initial[key] == "":
            if key in existing:
                updates[key] = None
        elif existing.get(key) != initial[key]:
            updates[key] = initial[key]
    return updates


def node_labels(node_name, flag_labels):
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": node_name, "kubernetes.io/os": "linux",
    }
    labels.update(flag_labels)
    return labels


def node(node_name, flag_labels, taints):
    """The Node the kubelet registers (status follows with ``node_status``)."""
    body = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node_name, "labels": node_labels(node_name, flag_labels),
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {},
    }
    if taints:
        body["spec"]["taints"] = [dict(t) for t in taints]
    return body


def node_status(machine, runtime_up, runtime_version, previous_conditions, now, network_not_ready=None):
    """The Node's status: Ready True while the runtime answers and its pod network is ready
    (``network_not_ready``: None, or the runtime's reason why not), else False (reason KubeletNotReady);
    ``containerRuntimeVersion`` is ``<runtimeName>://<version>`` of the runtime's last CRI version answer
    (``runtime_version``: that answer, or None when none came yet)."""
    previous = by_type(previous_conditions)
    if runtime_up and not network_not_ready:
        ready = _node_condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", previous, now)
    if not runtime_up:
        down = "container runtime is down: %s is missing" % machine["runtime_socket"]
        ready = _node_condition("Ready", "False", "KubeletNotReady", down, previous, now)
    elif network_not_ready:
        ready = _node_condition("Ready", "False", "KubeletNotReady", network_not_ready, previous, now)
    resources = {"cpu": str(machine["cpus"]), "memory": "%dKi" % machine["memory_kib"], "pods": "110",
                 "ephemeral-storage": "%dKi" % machine["storage_kib"]}
    return {
        "conditions": [
            _node_condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                            "kubelet has sufficient memory available", previous, now),
            _node_condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure",
                            previous, now),
            _node_condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available",
                            previous, now),
            ready,
        ],
        "addresses": [{"type": "InternalIP", "address": machine["node_ip"]},
                      {"type": "Hostname", "address": machine["hostname"]}],
        "capacity": resources,
        "allocatable": dict(resources),
        "daemonEndpoints": {"kubeletEndpoint": {"Port": machine.get("kubelet_port", KUBELET_PORT)}},
        "nodeInfo": {
            "architecture": "amd64", "operatingSystem": "linux", "osImage": machine["os_image"],
            "kernelVersion": machine["kernel"], "machineID": machine["machine_id"],
            "systemUUID": machine["machine_id"], "bootID": machine["boot_id"],
            "containerRuntimeVersion": runtime_version_string(runtime_version),
            "kubeletVersion": machine["kubelet_version"], "kubeProxyVersion": machine["kubelet_version"],
        },
    }


def runtime_version_string(answer):
    """``containerd://1.7.22`` from a CRI VersionResponse (the kubelet drops the version's leading v)."""
    if not answer or not answer.get("runtimeName") or not answer.get("runtimeVersion"):
        return ""
    return "%s://%s" % (answer["runtimeName"], answer["runtimeVersion"].lstrip("v"))


def status_changed(old, new):
    """Whether the Node status ``new`` differs from ``old`` in anything but its conditions' heartbeat times (the
    real kubelet's nodeStatusHasChanged)."""
    def without_heartbeats(status):
        conditions = [{k: v for k, v in c.items() if k != "lastHeartbeatTime"} for c in status.get("conditions") or []]
        return dict(status, conditions=conditions)
    return without_heartbeats(old or {}) != without_heartbeats(new or {})


def merge_patch_between(old, new):
    """The JSON merge patch (RFC 7386) that turns ``old`` into ``new`` (maps): changed or added keys, None for
    removed ones, lists and scalars whole. Empty when they are equal."""
    change = {}
    for key in old:
        if key not in new:
            change[key] = None
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            inner = merge_patch_between(before, value)
            if inner:
                change[key] = inner
        elif key not in old or before != value:
            change[key] = value
    return change


def lease(node_name, node_uid, duration, now):
    return {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": node_name, "namespace": NODE_LEASE_NAMESPACE,
                     "ownerReferences": [owner_node(node_name, node_uid)]},
        "spec": {"holderIdentity": node_name, "leaseDurationSeconds": duration, "renewTime": rfc3339_micro(now)},
    }


def mirror_name(pod_name, node_name):
    return "%s-%s" % (pod_name, node_name)


def mirror_pod(manifest, node_name, node_uid, seen):
    """The mirror pod of a static pod manifest (its status follows with ``pod_status``)."""
    metadata = manifest.metadata
    annotations = dict(metadata.get("annotations") or {})
    annotations.update({
        "kubernetes.io/config.hash": manifest.config_hash,
        "kubernetes.io/config.mirror": manifest.config_hash,
        "kubernetes.io/config.seen": rfc3339_micro(seen),
        "kubernetes.io/config.source": "file",
    })
    spec = dict(manifest.spec)
    spec["nodeName"] = node_name
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": mirror_name(manifest.name, node_name), "namespace": manifest.namespace,
                     "labels": dict(metadata.get("labels") or {}), "annotations": annotations,
                     "ownerReferences": [owner_node(node_name, node_uid, controller=True)]},
        "spec": spec,
    }


def container_id(name, started_at):
    return "containerd://" + hashlib.sha256(("%s/%r" % (name, started_at)).encode("utf-8")).hexdigest()


def pod_status(state, node_ip, previous_conditions, now, started):
    """A mirror pod's status from a PodState; ``started`` is when the kubelet first saw the pod."""
    previous = by_type(previous_conditions)
    ready = "True" if state.ready else "False"
    not_ready_reason = None if state.ready else "ContainersNotReady"

    def condition(kind, status, reason=None):
        return dict(_condition(kind, status, reason, None, previous, now), lastProbeTime=None)

    container = state.manifest.container
    status = {"name": container.get("name") or state.manifest.name, "image": container["image"],
              "imageID": container["image"], "ready": state.ready, "restartCount": state.restarts,
              "started": state.running}
    if state.running:
        status["containerID"] = container_id(state.manifest.name, state.started_at)
        status["state"] = {"running": {"startedAt": rfc3339(from_epoch(state.started_at))}}
    else:
        status["state"] = {"waiting": {"reason": state.waiting_reason or "ContainerCreating",
                                       "message": state.message or ""}}
    if state.last_exit_code is not None:
        status["lastState"] = {"terminated": {"exitCode": state.last_exit_code,
                                              "reason": "Completed" if state.last_exit_code == 0 else "Error"}}
    return {
        "phase": state.phase,
        "conditions": [
            condition("PodReadyToStartContainers", "True"),
            condition("Initialized", "True"),
            condition("Ready", ready, not_ready_reason),
            condition("ContainersReady", ready, not_ready_reason),
            condition("PodScheduled", "True"),
        ],
        "hostIP": node_ip, "hostIPs": [{"ip": node_ip}], "podIP": node_ip, "podIPs": [{"ip": node_ip}],
        "qosClass": "Burstable", "startTime": rfc3339(started),
        "containerStatuses": [status],
    }


def pod_ip(pod):
    """A stable address for a pod on the pod network: no IPAM is emulated, so it comes from the pod's uid, in
    10.244.0.0/16 (the pod subnet kubeadm's docs use)."""
    digest = hashlib.sha256(pod["metadata"]["uid"].encode("utf-8")).digest()
    return "10.244.%d.%d" % (digest[0], 1 + digest[1] % 254)


def api_pod_status(pod, node_ip, now, pod_ip):
    """The status of a pod from the API whose containers the emulated runtime has started: Running and Ready
    (no process runs for them: the sandbox runs no workloads, only their lifecycle)."""
    started = rfc3339(now)

    def condition(kind):
        return {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}

    containers = [{"name": c.get("name"), "image": c.get("image"), "imageID": c.get("image") or "",
                   "containerID": container_id("%s/%s" % (pod["metadata"]["uid"], c.get("name")), started),
                   "ready": True, "started": True, "restartCount": 0, "state": {"running": {"startedAt": started}}}
                  for c in (pod.get("spec") or {}).get("containers") or []]
    return {"phase": "Running",
            "conditions": [condition(kind) for kind in ("PodReadyToStartContainers", "Initialized", "Ready",
                                                        "ContainersReady", "PodScheduled")],
            "hostIP": node_ip, "hostIPs": [{"ip": node_ip}], "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "qosClass": "BestEffort", "startTime": started, "containerStatuses": containers}


def status_fingerprint(status):
    """What makes a mirror pod status worth writing again: phase, readiness, restarts, container identity."""
    status = status or {}
    containers = status.get("containerStatuses") or [{}]
    first = containers[0]
    return (status.get("phase"), by_type(status.get("conditions")).get("Ready", {}).get("status"),
            first.get("restartCount"), first.get("containerID"), tuple(sorted((first.get("state") or {}).keys())),
            ((first.get("state") or {}).get("waiting") or {}).get("reason"))


def csr(name, request_pem, usages):
    return {
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": base64.b64encode(request_pem).decode("ascii"), "signerName": SIGNER_KUBELET_CLIENT,
                 "usages": list(usages)},
    }
