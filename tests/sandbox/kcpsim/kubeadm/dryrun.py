# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kubeadm init --dry-run`` / ``join --dry-run``: everything rendered, nothing on the host changed but one
directory. Adapters: I/O only.

The rule (kubeadm's dry run): the command makes a fresh ``/etc/kubernetes/tmp/kubeadm-<command>-dryrun<random>``
directory and writes there, flat, what it would write to the certificate directory, ``/etc/kubernetes``, the
manifest directory and ``/var/lib/kubelet``; other directories it would create (the etcd data directory) are left
alone. The kubelet is neither started nor waited for. Reads from the API server still happen when a server is
there (join's discovery and the cluster's configuration); every write is printed as "Would perform action" with
the object instead of being sent, Secrets with their data keys only. At the end the would-be static Pod
manifests are printed.
"""

from __future__ import annotations

import yaml

from kcpsim.kubeadm.cluster import Cluster, NotFound
from kcpsim.kubeadm.hostfs import Host
from kcpsim.kubeadm.kubelet import Kubelet

TMP_DIR = "/etc/kubernetes/tmp"
# Directories whose files the dry run writes into its own directory instead, most specific first.
REDIRECTED = ("/etc/kubernetes/pki", "/etc/kubernetes/manifests", "/var/lib/kubelet", "/etc/kubernetes")


def make_dir(host, command):
    """The fresh dry-run directory of ``command`` (init, join) on the real host; its absolute path."""
    return host.make_temp_dir(TMP_DIR, "kubeadm-%s-dryrun" % command)


class DryRunHost(Host):
    """The host as a dry run sees it: the redirected directories are the dry-run directory; writes elsewhere
    are skipped."""

    def __init__(self, real, directory):
        super().__init__(real.root)
        self.real = real
        self.directory = directory

    def redirected(self, absolute):
        """Where the dry run keeps ``absolute`` (a host path), or None when it is not redirected."""
        absolute = "/" + absolute.lstrip("/")
        if absolute == TMP_DIR or absolute.startswith(TMP_DIR + "/"):
            return None
        for prefix in REDIRECTED:
            if absolute == prefix or absolute.startswith(prefix + "/"):
                return self.directory + absolute[len(prefix):]
        return None

    def path(self, absolute):
        return self.real.path(self.redirected(absolute) or absolute)

    def write(self, absolute, data, mode):
        if self.redirected(absolute):
            super().write(absolute, data, mode)

    def mkdir(self, absolute, mode):
        if self.redirected(absolute):
            super().mkdir(absolute, mode)

    def remove(self, absolute):
        return bool(self.redirected(absolute)) and super().remove(absolute)

    def empty_dir(self, absolute):
        if self.redirected(absolute):
            super().empty_dir(absolute)

    def stop_pods(self, timeout=10.0):
        return []


class DryRunKubelet(Kubelet):
    """The kubelet service as a dry run drives it: not at all."""

    def __init__(self, host, out):
        super().__init__(host)
        self.out = out

    def restart(self):
        self.out("[dryrun] Would restart the kubelet")

    def stop(self):
        self.out("[dryrun] Would stop the kubelet")

    def wait_healthy(self, timeout):
        self.out("[dryrun] Would wait for the kubelet to be healthy")


def _group_version(api_version):
    return api_version if "/" in api_version else "core/" + api_version


def _shown(body):
    """What is printed of an object: a Secret without its values."""
    if isinstance(body, dict) and body.get("kind") == "Secret":
        body = dict(body, data={key: "<redacted>" for key in body.get("data") or {}})
        body.pop("stringData", None)
    return body


class DryRunClient:
    """A KubeClient that reads through ``reader`` (None: nothing exists but the Nodes kubeadm asks for) and
    prints every write instead of sending it."""

    def __init__(self, out, reader=None):
        self.out = out
        self.reader = reader

    def _would(self, action, api_version, resource, body):
        self.out('[dryrun] Would perform action %s on resource "%s" in API group "%s"'
                 % (action, resource, _group_version(api_version)))
        if body is not None:
            self.out("[dryrun] Attached object:")
            self.out(yaml.safe_dump(_shown(body), sort_keys=True, default_flow_style=False).rstrip())

    def get(self, api_version, resource, name, namespace=None, subresource=None):
        try:
            if self.reader is None:
                raise NotFound(404, "NotFound", '%s "%s" not found' % (resource, name))
            return self.reader.get(api_version, resource, name, namespace=namespace, subresource=subresource)
        except NotFound:
            if resource == "nodes":  # the Node this command's kubelet would have registered
                return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}}
            raise

    def list(self, api_version, resource, namespace=None, label_selector=None, field_selector=None):
        if self.reader is not None:
            return self.reader.list(api_version, resource, namespace=namespace, label_selector=label_selector,
                                    field_selector=field_selector)
        return {"items": []}

    def create(self, api_version, resource, body, namespace=None):
        self._would("CREATE", api_version, resource, body)
        return body

    def update(self, api_version, resource, body, namespace=None, subresource=None):
        self._would("UPDATE", api_version, resource, body)
        return body

    def patch(self, api_version, resource, name, patch, namespace=None, patch_type="merge", subresource=None):
        shown = dict(patch, metadata=dict(patch.get("metadata") or {}, name=name))
        self._would("PATCH", api_version, resource, shown)
        return self.get(api_version, resource, name, namespace=namespace)

    def delete(self, api_version, resource, name, namespace=None, body=None):
        self._would("DELETE", api_version, resource, None)

    def get_path(self, path, timeout=None):
        if self.reader is not None:
            return self.reader.get_path(path, timeout=timeout)
        return "ok"

    def close(self):
        if self.reader is not None:
            self.reader.close()


def cluster(out, reader=None):
    """A Cluster whose writes are printed; ``reader`` a real Cluster to read from, or None."""
    return Cluster(DryRunClient(out, reader.client if reader is not None else None))


def print_manifests(out, host, components, manifest_path):
    """The closing listing: each static Pod manifest the command would have written, with its content."""
    for component in components:
        path = manifest_path(component)
        if not host.exists(path):
            continue
        out('[dryrun] Would write file "%s" with content:' % path)
        for line in host.read_text(path).splitlines():
            out("\t" + line)
