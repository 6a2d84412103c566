# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the cluster_object module does for its arguments: read one object through the Kubernetes API, and merge
patch, create or delete it only where object_patch says that changes something. Run by the module where its task
runs, or by its action plugin on the controller with the admin kubeconfig read from a host."""

from __future__ import annotations

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api, object_patch

IMPORT_ERROR = kube_api.IMPORT_ERROR

# The kinds the collection writes, with their collection's path (a namespace in it, or none: cluster-scoped).
KINDS = {
    "Node": "/api/v1/nodes",
    "ConfigMap": "/api/v1/namespaces/%s/configmaps",
    "Secret": "/api/v1/namespaces/%s/secrets",
}
ARGUMENT_SPEC = dict(
    kubeconfig=dict(type="path"),
    admin_kubeconfig_on_host=dict(type="path"),
    kind=dict(type="str", required=True, choices=sorted(KINDS)),
    name=dict(type="str", required=True),
    namespace=dict(type="str"),
    state=dict(type="str", default="present", choices=["present", "absent"]),
    patch=dict(type="dict", default={}),
    create=dict(type="bool", default=False),
    timeout=dict(type="int", default=10),
)
MERGE_PATCH = "application/merge-patch+json"
# A creation that finds the object created meanwhile (409) reads it again and patches it instead.
ATTEMPTS = 2


class Refused(Exception):
    """The object cannot be made as asked (it does not exist, and creating it was not asked for)."""


def argument_problems(params):
    """The problems of the arguments, each naming the field."""
    problems = []
    if not params["kubeconfig"]:
        problems.append("kubeconfig: required (or admin_kubeconfig_on_host)")
    if not params["name"].strip():
        problems.append("name: must name the object")
    namespaced = "%s" in KINDS[params["kind"]]
    if namespaced and not params["namespace"]:
        problems.append("namespace: required for a %s" % params["kind"])
    if not namespaced and params["namespace"]:
        problems.append("namespace: a %s has none" % params["kind"])
    if params["state"] == "absent" and (params["patch"] or params["create"]):
        problems.append("patch, create: only with state present")
    if params["timeout"] < 1:
        problems.append("timeout: must be at least 1 second")
    return problems


def _collection(params):
    path = KINDS[params["kind"]]
    return path % params["namespace"] if "%s" in path else path


def _template(params):
    metadata = {"name": params["name"]}
    if params["namespace"]:
        metadata["namespace"] = params["namespace"]
    return {"apiVersion": "v1", "kind": params["kind"], "metadata": metadata}


def apply(params, check_mode, diff):
    """The result ``{changed, action, existed}`` (and ``diff`` when asked) once the object is as asked; in check mode
    what would be done, nothing written. Raises Refused, or kube_api.ClusterUnreadable."""
    collection = _collection(params)
    path = collection + "/" + params["name"]
    timeout = params["timeout"]
    with kube_api.connected(params["kubeconfig"]) as api:
        for attempt in range(1, ATTEMPTS + 1):
            found = kube_api.read_optional(api, path, timeout)
            action, after = object_patch.decide(found, params["state"], params["patch"], params["create"], _template(params))
            if action == object_patch.MISSING:
                raise Refused("%s %s does not exist: state present patches an existing object, unless create is set"
                              % (params["kind"], "/".join(n for n in (params["namespace"], params["name"]) if n)))
            try:
                if not check_mode:
                    _write(api, action, collection, path, params["patch"], after, timeout)
                break
            except kube_api.ClusterUnreadable as exc:
                if not (action == object_patch.CREATE and exc.status == 409 and attempt < ATTEMPTS):
                    raise
    result = {"changed": action != object_patch.NONE, "action": action, "existed": found is not None}
    if diff:
        secret = params["kind"] == "Secret"
        result["diff"] = {"before": object_patch.shown(found, secret), "after": object_patch.shown(after, secret)}
    return result


def _write(api, action, collection, path, patch, after, timeout):
    if action == object_patch.PATCH:
        kube_api.request(api, "PATCH", path, timeout, body=patch, content_type=MERGE_PATCH)
    elif action == object_patch.CREATE:
        kube_api.request(api, "POST", collection, timeout, body=after)
    elif action == object_patch.DELETE:
        try:
            kube_api.request(api, "DELETE", path, timeout)
        except kube_api.ClusterUnreadable as exc:
            if not kube_api.not_found(exc):  # deleted meanwhile: as asked
                raise
