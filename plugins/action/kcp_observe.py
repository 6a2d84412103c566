# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcp_observe's controller side. With ``admin_kubeconfig_on_host`` (and ``etcd_endpoints``) the task runs on a
control plane host: the admin kubeconfig is read over the task's connection into a private file on the controller
that lives only while this task runs, and the cluster is read from the controller while etcd is read on the host
with the host's own certificates; the observation and the lock then run here, in one task, and a lock taken or
renewed is kept alive while the run acts (lock_keeper). Without them, the module runs where the task runs. The
documentation is in plugins/modules/kcp_observe.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_reader, kube_api, lock_lease, observation, preflight
from ansible_collections.kubeadm.control_plane.plugins.module_utils.observe_answer import ARGUMENT_SPEC, observe_and_lock
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_kubeconfig, lock_keeper


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        on_host = args.pop("admin_kubeconfig_on_host", None)
        endpoints = args.pop("etcd_endpoints", None)
        files = args.pop("etcd_files", None) or {}
        if not on_host:
            if endpoints or files:
                return dict(result, failed=True, msg="etcd_endpoints, etcd_files: read only with admin_kubeconfig_on_host")
            result.update(self._execute_module(module_name="kubeadm.control_plane.kcp_observe", module_args=args, task_vars=task_vars))
            return result
        if args.get("kubeconfig") or args.get("etcd") is not None:
            return dict(result, failed=True,
                        msg="admin_kubeconfig_on_host: the kubeconfig and etcd are read on the host, kubeconfig and etcd may not be given too")
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        params = validated.validated_parameters
        if cluster_reader.IMPORT_ERROR:
            return dict(result, failed=True, msg="the kubernetes Python package is needed on the controller",
                        exception=cluster_reader.IMPORT_ERROR)
        where = self._task.delegate_to or (task_vars or {}).get("inventory_hostname")
        etcd_silent = False  # etcd was read and no member answered: why the API server may not answer either
        try:
            with host_kubeconfig.private_copy(self, on_host, task_vars) as path:
                params["kubeconfig"] = path
                # the cluster is read from here while etcd is read on the host: the two round trips at once
                with ThreadPoolExecutor(max_workers=1) as reader:
                    cluster = reader.submit(cluster_reader.read_cluster, path, params["timeout"])
                    if endpoints:
                        found = self._execute_module(module_name="kubeadm.control_plane.etcd_info", task_vars=task_vars,
                                                     module_args=dict({key: value for key, value in files.items() if value},
                                                                      endpoints=endpoints, timeout=params["timeout"],
                                                                      external=params["external_etcd"]))
                        if found.get("failed"):
                            return dict(result, failed=True, msg="reading etcd on %s: %s%s" % (
                                where, found.get("msg"), self._other_topology(cluster, params["external_etcd"])))
                        params["etcd"] = found["etcd"]
                        etcd_silent = not (found.get("summary") or {}).get("answered")
                    read = cluster.result()
                observed = observe_and_lock(params, bool(self._play_context.check_mode), read)
                if observed["lock"]:
                    kept = lock_keeper.keep_alive(observed["lock"], path, params["lock"]["holder"], params["lock"]["duration"],
                                                  params["timeout"], bool(self._play_context.check_mode))
                    if kept:
                        result.setdefault("warnings", []).append(kept)
        except host_kubeconfig.Unreadable as exc:
            return dict(result, failed=True, msg=str(exc))
        except cluster_reader.Refused as exc:
            return dict(result, failed=True, msg=str(exc), errors=exc.errors)
        except kube_api.ClusterUnreadable as exc:
            why = ("; no %setcd member answered at %s either (read on %s): the API servers cannot serve without it, and no "
                   "step is taken before it answers" % ("external " if params["external_etcd"] else "", ", ".join(endpoints or []), where)
                   if etcd_silent else "")
            return dict(result, failed=True, msg="cannot read the cluster: %s%s" % (exc, why))
        except lock_lease.LockFailed as exc:
            return dict(result, failed=True, msg=str(exc), **exc.fields)
        if observed["lock"] and observed["lock"].pop("warning"):
            result.setdefault("warnings", []).append(observed["lock"]["reason"])
        result.update(observed)
        return result

    @staticmethod
    def _other_topology(cluster, declared_external):
        """Why etcd could not be read the way the spec declares it, when the cluster was made with the other topology
        (its stored ClusterConfiguration): the files of the one are not on the hosts of the other. Empty otherwise."""
        try:
            stored = observation.stored_etcd_external(cluster.result()[3])
        except kube_api.ClusterUnreadable:  # the cluster could not be read either: nothing to add
            return ""
        if stored is None or stored == declared_external:
            return ""
        return "; %s (its kubeadm-config): kubeadm cannot move a cluster from one to the other (rule etcd_topology)" % (
            preflight.topology_disagreement(declared_external, stored))
