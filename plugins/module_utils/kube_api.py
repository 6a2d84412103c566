# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes API as the modules reach it: a client from a kubeconfig, and every failure turned into one
exception that says where the module asked and what came back. I/O only; no decisions."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import traceback

from ansible_collections.kubeadm.control_plane.plugins.module_utils import credential_files

try:
    import yaml
    from kubernetes import config as k8s_config
    from kubernetes.client.exceptions import ApiException
except ImportError:
    IMPORT_ERROR = traceback.format_exc()

    class ApiException(Exception):  # noqa: N818 (the client's name, so the except clauses below read the same)
        status = reason = None
else:
    IMPORT_ERROR = None


class ClusterUnreadable(Exception):
    """The API server did not answer, or answered with an error: nothing about the cluster is known."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


# The kubeconfig's inline credentials, and the keys naming the files TLS reads them from.
_CREDENTIALS = (("user", "client-certificate-data", "client-certificate"), ("user", "client-key-data", "client-key"),
                ("cluster", "certificate-authority-data", "certificate-authority"))


def _credentials_as_files(config, directory, base):
    """``config`` (a kubeconfig's dict) with each inline certificate, key and CA written to a file of its own in
    ``directory`` (mode 0600) and named by its path, and each path the kubeconfig names relative to ``base`` (the
    kubeconfig's directory, as kubectl reads it) made absolute."""
    for kind, inline, path_key in _CREDENTIALS:
        for index, entry in enumerate(config.get(kind + "s") or []):
            fields = entry.get(kind) or {}
            if fields.get(inline):
                path = os.path.join(directory, "%s-%d-%s" % (kind, index, path_key))
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(base64.standard_b64decode(fields.pop(inline)))
                fields[path_key] = path
            elif fields.get(path_key):
                fields[path_key] = os.path.join(base, fields[path_key])
    return config


@contextlib.contextmanager
def connected(kubeconfig):
    """An ApiClient for ``kubeconfig`` (TLS verified as the kubeconfig says), closed on leaving; ClusterUnreadable
    when it cannot be loaded. TLS reads a client certificate and key from files: the kubeconfig's inline ones are
    written to a private directory removed on leaving, not to the files the client would make itself, which it
    removes only at the process's exit, which an ansible worker leaves without."""
    directory = credential_files.private_directory()
    api = None
    try:
        try:
            with open(kubeconfig, encoding="utf-8") as handle:
                config = _credentials_as_files(yaml.safe_load(handle) or {}, directory,
                                               os.path.dirname(os.path.abspath(kubeconfig)))
            api = k8s_config.new_client_from_config_dict(config)
        except Exception as exc:  # a missing, unreadable or malformed kubeconfig
            raise ClusterUnreadable("kubeconfig %s cannot be used: %s" % (kubeconfig, exc))
        yield api
    finally:
        if api is not None:
            api.close()
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def answers(api):
    """Turns what the client raises into ClusterUnreadable naming the server (``status`` set for an HTTP error)."""
    try:
        yield
    except ApiException as exc:
        raise ClusterUnreadable("the API server at %s answered %s %s" % (api.configuration.host, exc.status, exc.reason),
                                status=exc.status)
    except ClusterUnreadable:
        raise
    except Exception as exc:  # urllib3's connection, timeout and TLS errors: no answer at all
        raise ClusterUnreadable("the API server at %s did not answer: %s" % (api.configuration.host, exc))


# What one API server answers when it cannot serve now (its etcd member down, say) while another behind the same
# load balancer could: a read that gets one is made once more, on a new connection.
RETRIED_STATUSES = (500, 502, 503, 504)


def request(api, method, path, timeout, query=None, body=None, content_type="application/json"):
    """What the API server answers to ``method path`` (with ``query`` parameters, and a JSON ``body`` sent as
    ``content_type``: application/merge-patch+json for a merge patch): the decoded JSON, or the text of an answer
    that is not JSON (a pod's log, /readyz). ClusterUnreadable for an error answer (``status`` set) or none.
    Plain objects in and out, through the client's connection, TLS and credentials but not its typed API classes
    and models: importing those costs a process most of a second of CPU (measured: 1.0 s for CoreV1Api against
    0.3 s for the client alone), paid again by every task that reads the API.
    A GET answered with a RETRIED_STATUSES error is made once more on a new connection: a load balancer in TCP mode
    keeps a connection on the API server it chose, which may be one whose etcd member just went down (until its
    health check takes it out). A write is never repeated: it may have been done."""
    try:
        return _request(api, method, path, timeout, query, body, content_type)
    except ClusterUnreadable as exc:
        if method != "GET" or exc.status not in RETRIED_STATUSES:
            raise
    api.rest_client.pool_manager.clear()
    return _request(api, method, path, timeout, query, body, content_type)


def _request(api, method, path, timeout, query, body, content_type):
    headers = {"Accept": "application/json, */*"}
    if body is not None:
        headers["Content-Type"] = content_type
    with answers(api):
        method, url, headers, body, _post = api.param_serialize(
            method, path, query_params=sorted((query or {}).items()), header_params=headers, body=body,
            auth_settings=["BearerToken"])
        response = api.call_api(method, url, header_params=headers, body=body, _request_timeout=timeout)
        data = response.read()
    if not 200 <= response.status < 300:
        raise ClusterUnreadable("the API server at %s answered %s %s" % (api.configuration.host, response.status, response.reason),
                                status=response.status)
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else (data or "")
    if "json" in (response.getheader("Content-Type") or ""):
        return json.loads(text)
    return text


def read_optional(api, path, timeout):
    """The object at ``path`` as the API server answered it, or None when it does not exist (404)."""
    try:
        return request(api, "GET", path, timeout)
    except ClusterUnreadable as exc:
        if not_found(exc):
            return None
        raise


def not_found(exc):
    return isinstance(exc, ClusterUnreadable) and exc.status == 404
