# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes API as the modules reach it: a client from a kubeconfig, and every failure turned into one
exception that says where the module asked and what came back. I/O only; no decisions."""

from __future__ import annotations

import contextlib
import traceback

try:
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


def client(kubeconfig):
    """An ApiClient for ``kubeconfig`` (TLS verified as the kubeconfig says); ClusterUnreadable when it cannot
    be loaded."""
    try:
        return k8s_config.new_client_from_config(config_file=kubeconfig)
    except Exception as exc:  # a missing, unreadable or malformed kubeconfig
        raise ClusterUnreadable("kubeconfig %s cannot be used: %s" % (kubeconfig, exc))


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


def not_found(exc):
    return isinstance(exc, ClusterUnreadable) and exc.status == 404
