# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes API as kubeadm uses it. Adapter over kcpsim.kubeclient: I/O only, no decisions."""

from __future__ import annotations

from kcpsim import kubeclient, kubeconfig
from kcpsim.kubeclient import ApiUnavailable, Conflict, NotFound  # noqa: F401 - re-exported for the commands
from kcpsim.kubeadm.waiting import wait_for


class Cluster:
    """One API server, one identity."""

    def __init__(self, client):
        self.client = client

    @classmethod
    def from_kubeconfig(cls, path, timeout=10.0, server=None):
        """The kubeconfig's identity; ``server`` replaces its API server URL (a client aimed at one instance)."""
        creds = kubeconfig.load_credentials(path)
        if server:
            creds.server = server
        return cls(kubeclient.KubeClient.from_credentials(creds, timeout=timeout, user_agent="kubeadm"))

    @classmethod
    def with_token(cls, server, ca_pem, token, timeout=10.0):
        return cls(kubeclient.KubeClient(server, ca_pem=ca_pem, token=token, timeout=timeout, user_agent="kubeadm"))

    @classmethod
    def anonymous(cls, server, ca_pem=None, timeout=10.0):
        """Without credentials; without a CA the server is not verified (token discovery's first read)."""
        return cls(kubeclient.KubeClient(server, ca_pem=ca_pem, insecure_skip_tls_verify=ca_pem is None,
                                         timeout=timeout, user_agent="kubeadm"))

    def close(self):
        self.client.close()

    # --- generic ------------------------------------------------------------------------------------

    def get(self, api_version, resource, name, namespace=None):
        """The object, or None when it does not exist."""
        try:
            return self.client.get(api_version, resource, name, namespace=namespace)
        except NotFound:
            return None

    def apply(self, objects):
        """Create each ``(api_version, resource, namespace, object)``, or update it when it exists."""
        for api_version, resource, namespace, body in objects:
            self.create_or_update(api_version, resource, namespace, body)

    def create_or_update(self, api_version, resource, namespace, body, attempts=5):
        for attempt in range(attempts):
            try:
                return self.client.create(api_version, resource, body, namespace=namespace)
            except Conflict:
                pass
            current = self.get(api_version, resource, body["metadata"]["name"], namespace)
            if current is None:
                continue  # deleted meanwhile: create again
            updated = dict(body)
            updated["metadata"] = dict(body["metadata"], resourceVersion=current["metadata"].get("resourceVersion"))
            try:
                return self.client.update(api_version, resource, updated, namespace=namespace)
            except Conflict:
                continue  # changed meanwhile: read again
        raise Conflict(409, "Conflict", "%s %s kept changing while kubeadm updated it" % (resource, body["metadata"]["name"]))

    def delete(self, api_version, resource, name, namespace=None):
        try:
            self.client.delete(api_version, resource, name, namespace=namespace)
            return True
        except NotFound:
            return False

    # --- specific -----------------------------------------------------------------------------------

    def configmap_data(self, namespace, name):
        cm = self.get("v1", "configmaps", name, namespace)
        return None if cm is None else (cm.get("data") or {})

    def node(self, name):
        return self.get("v1", "nodes", name)

    def nodes(self, label_selector=None):
        return self.client.list("v1", "nodes", label_selector=label_selector).get("items") or []

    def patch_node(self, name, patch):
        return self.client.patch("v1", "nodes", name, patch, patch_type="merge")

    def pods(self, namespace, label_selector=None, field_selector=None):
        return self.client.list("v1", "pods", namespace=namespace, label_selector=label_selector,
                                field_selector=field_selector).get("items") or []

    def healthy(self, timeout=5.0):
        """Whether ``/healthz`` answers ok."""
        try:
            return str(self.client.get_path("/healthz", timeout=timeout)).strip() == "ok"
        except (ApiUnavailable, kubeclient.ApiError):
            return False

    def wait_healthy(self, timeout, interval=0.5):
        return wait_for(self.healthy, timeout, interval, "the API server to answer /healthz")

    def wait_node(self, name, timeout, interval=0.5):
        return wait_for(lambda: self.node(name), timeout, interval, "the Node %s to register" % name)
