# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The discovery documents clients read before anything else: ``/api``, ``/apis``, ``/apis/<group>``,
``/api/v1`` and ``/apis/<group>/<version>`` (legacy, unaggregated discovery: kubectl falls back to it when the
server answers a request for aggregated discovery with a plain APIGroupList). Pure, no I/O."""

from kcpsim.apiserver import resources


def _version_entry(group, version):
    return {"groupVersion": "%s/%s" % (group, version), "version": version}


def api_versions(server_address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group(group, versions):
    entries = [_version_entry(group, version) for version in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries,
            "preferredVersion": entries[0]}


def api_group_list():
    groups = [api_group(group, versions) for group, versions in resources.groups().items() if group]
    for group in groups:
        del group["kind"], group["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resource_list(group, version):
    """The APIResourceList of one group version, or None when the server does not serve it."""
    served = resources.in_group_version(group, version)
    if not served:
        return None
    entries = []
    for resource in served:
        entry = {"name": resource.plural, "singularName": resource.singular, "namespaced": resource.namespaced,
                 "kind": resource.kind, "verbs": list(resource.verbs)}
        if resource.short_names:
            entry["shortNames"] = list(resource.short_names)
        if resource.categories:
            entry["categories"] = list(resource.categories)
        entries.append(entry)
        for sub in resource.subresources:
            sub_group, sub_version, sub_kind, verbs = resources.SUBRESOURCE_KINDS[sub]
            sub_entry = {"name": "%s/%s" % (resource.plural, sub), "singularName": "",
                         "namespaced": resource.namespaced, "kind": sub_kind or resource.kind, "verbs": list(verbs)}
            if sub_group is not None:
                sub_entry["group"] = sub_group
                sub_entry["version"] = sub_version
            entries.append(sub_entry)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": resources.group_version(served[0]),
            "resources": entries}


def root_paths():
    """What ``GET /`` lists."""
    paths = ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]
    for group, versions in resources.groups().items():
        if group:
            paths.append("/apis/" + group)
            paths.extend("/apis/%s/%s" % (group, version) for version in versions)
    return {"paths": sorted(paths)}


def _openapi_path(resource):
    base = "/api/v1" if not resource.group else "/apis/%s/%s" % (resource.group, resource.version)
    if resource.namespaced:
        return "%s/namespaces/{namespace}/%s/{name}" % (base, resource.plural)
    return "%s/%s/{name}" % (base, resource.plural)


def openapi_v3_root(revision):
    """``/openapi/v3``: where each group version's document is (``revision`` makes the URLs cacheable)."""
    paths = {}
    for group, versions in resources.groups().items():
        for version_name in versions:
            relative = "api/%s" % version_name if not group else "apis/%s/%s" % (group, version_name)
            paths[relative] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (relative, revision)}
    return {"paths": paths}


def openapi_v3_document(group, version_name, title_version):
    """A minimal OpenAPI v3 document for one group version, or None when it is not served.

    It holds only what kubectl reads to decide that the server validates fields itself: every object path's
    PATCH operation with its ``x-kubernetes-group-version-kind`` and the ``fieldValidation`` query parameter.
    No schemas: kubectl then validates nothing client-side and falls back to its built-in types for patches.
    """
    served = resources.in_group_version(group, version_name)
    if not served:
        return None
    parameter = {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    paths = {}
    for resource in served:
        gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
        paths[_openapi_path(resource)] = {"patch": {
            "x-kubernetes-group-version-kind": gvk, "parameters": [parameter],
            "responses": {"200": {"description": "OK"}}}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": title_version}, "paths": paths,
            "components": {"schemas": {}}}
