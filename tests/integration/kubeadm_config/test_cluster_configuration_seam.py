# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seam between what kubeadm stores and the update_kubeadm_config step: the spec is rendered as
kubeadm_init renders it, the sandbox's kubeadm emulation reads it and stores the ClusterConfiguration as
`kubeadm init` uploads it to kubeadm-config, kcp_observe parses that ConfigMap, and the planner compares it
with the spec. The same spec plans no update; a changed extraArg plans the update before the rollout's
first machine, and the document the filter writes is one kubeadm join reads, building its API server with the
new flag."""

import os
import sys

import yaml

from ansible_collections.kubeadm.control_plane.plugins.filter.kubeadm_cluster_configuration import (
    kubeadm_cluster_configuration_changes,
    kubeadm_cluster_configuration_update,
)
from ansible_collections.kubeadm.control_plane.plugins.module_utils import kubeadm_config, spec_hash
from ansible_collections.kubeadm.control_plane.plugins.module_utils.planner import plan
from ansible_collections.kubeadm.control_plane.plugins.module_utils.snapshot import normalize_spec_and_snapshot
from ansible_collections.kubeadm.control_plane.plugins.module_utils.cluster_reader import kubeadm_config_of
from ansible_collections.kubeadm.control_plane.plugins.modules.kubeadm_config import render

# The emulation's own configuration code (tests/sandbox is what its tests put on sys.path).
SANDBOX = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "sandbox")
if SANDBOX not in sys.path:
    sys.path.append(SANDBOX)  # after everything else: it adds packages, never shadows one

from kcpsim.kubeadm import clusterobjects, config, manifests  # noqa: E402
from kcpsim.kubeadm.release import Release  # noqa: E402

VERSION = "v1.37.1"
NOW = "2026-11-22T10:00:00Z"
MACHINES = [("cp-1", "10.0.0.11", "fd-a", "init"), ("cp-2", "10.0.0.12", "fd-b", "join"), ("cp-3", "10.0.0.13", "fd-c", "join")]
TOKEN, KEY = "abcdef.0123456789abcdef", "c" * 64


def raw_spec(max_age="30", **cluster_configuration):
    """The spec as an inventory writes it, with the API server's audit-log-maxage and the given fields."""
    configuration = {"apiServer": {"extraArgs": [{"name": "audit-log-maxage", "value": max_age}], "certSANs": ["api.example"]},
                     "etcd": {"local": {"extraArgs": [{"name": "snapshot-count", "value": "5000"}]}},
                     "networking": {"podSubnet": "10.244.0.0/16"}}
    configuration.update(cluster_configuration)
    return {"cluster_name": "prod", "replicas": 3, "version": VERSION, "endpoint": {"host": "10.0.0.100"},
            "kubeadm": {"cluster_configuration": configuration}}


def stored_by_kubeadm_init(raw):
    """The data of kube-system/kubeadm-config after the emulated `kubeadm init` of the first machine from ``raw``."""
    the_spec = normalize_spec_and_snapshot(raw, {"now": NOW, "machines": []})[0]
    name, address, domain, unused = MACHINES[0]
    text = render(kubeadm_config.documents(the_spec, {"name": name, "address": address, "failure_domain": domain}, "init", TOKEN, KEY))
    release = Release.of(VERSION)
    settings = config.init_settings(config.read_documents(text, release), {"config": "/etc/kubernetes/kubeadm-control-plane.yaml"},
                                    release.version, name, address)
    assert config.validate_init(settings, release) == []
    uploaded = clusterobjects.upload_kubeadm_config(config.stored_cluster_document(settings.cluster))
    config_map = next(body for unused_api, kind, unused_namespace, body in uploaded if kind == "configmaps")
    return config_map["data"]


def observed(built_from, config_map_data):
    """Three healthy machines built from the spec ``built_from``, and the kubeadm-config as kcp_observe reads it."""
    the_spec = normalize_spec_and_snapshot(built_from, {"now": NOW, "machines": []})[0]
    hashes = spec_hash.spec_hashes(the_spec)
    members = [{"name": name, "id": "%016x" % (i + 1), "responsive": True, "leader": i == 0, "member_ids_seen": ["%016x" % (j + 1) for j in range(3)]}
               for i, (name, unused_address, unused_domain, unused_bootstrap) in enumerate(MACHINES)]
    machines = [{"name": name, "host": address, "failure_domain": domain, "created": "2026-11-20T09:0%d:00Z" % i, "version": VERSION,
                 "spec_hash": hashes[bootstrap], "bootstrap": bootstrap,
                 "node": {"name": name, "conditions": [{"type": "Ready", "status": "True", "last_transition": "2026-11-20T10:00:00Z"}]},
                 "components": {"api_server": "healthy", "controller_manager": "healthy", "scheduler": "healthy", "etcd": "healthy"}}
                for i, (name, address, domain, bootstrap) in enumerate(MACHINES)]
    return {"now": NOW, "initialized": True, "endpoint_ready": True, "kubeadm_config": kubeadm_config_of(config_map_data),
            "failure_domains": [{"name": d, "control_plane": True} for d in ("fd-a", "fd-b", "fd-c")],
            "machines": machines, "etcd": {"members": members}}


def planned(raw, snapshot):
    the_spec, the_snapshot, errors = normalize_spec_and_snapshot(raw, snapshot)
    assert errors == []
    return plan(the_spec, the_snapshot)


def test_what_kubeadm_init_stored_from_the_spec_needs_no_update():
    before = raw_spec()
    data = stored_by_kubeadm_init(before)
    stored = yaml.safe_load(data["ClusterConfiguration"])
    assert stored["imageRepository"] == "registry.k8s.io" and stored["etcd"]["local"]["dataDir"] == "/var/lib/etcd"
    assert kubeadm_cluster_configuration_changes(stored, before) == []
    # a rollout that does not touch the ClusterConfiguration (the machine template) goes straight to its scale up
    template_change = dict(raw_spec(), machine_template={"image": "node-v2"})
    result = planned(template_change, observed(before, data))
    assert (result["action"], result["step"]) == ("rollout", "scale_up"), result["reason"]
    result = planned(dict(before, replicas=5), observed(before, data))
    assert result["action"] == "scale_up", result["reason"]


def test_a_changed_extra_arg_is_written_before_the_first_join_and_kubeadm_join_builds_with_it():
    before, after = raw_spec(), raw_spec(max_age="90")
    data = stored_by_kubeadm_init(before)
    result = planned(after, observed(before, data))
    assert result["action"] == "update_kubeadm_config", result["reason"]
    assert "differs from the spec in apiServer.extraArgs" in result["reason"]

    # the act: the filter's document, stored the way the flow's update_kubeadm_config task writes it
    stored = yaml.safe_load(data["ClusterConfiguration"])
    assert kubeadm_cluster_configuration_changes(stored, after) == ["apiServer.extraArgs"]
    updated = kubeadm_cluster_configuration_update(stored, after)
    text = yaml.safe_dump(updated, indent=2)
    assert {key: value for key, value in updated.items() if key != "apiServer"} == {key: value for key, value in stored.items() if key != "apiServer"}

    # kubeadm join reads it and renders the new machine's API server with the new flag
    release = Release.of(VERSION)
    cluster = config.read_stored_cluster(text, release)
    command = manifests.apiserver_pod(cluster, release, "10.0.0.14", 6443, "IfNotPresent")["spec"]["containers"][0]["command"]
    assert "--audit-log-maxage=90" in command and "--audit-log-maxage=30" not in command

    # observed again, the configuration agrees: the rollout's first machine is next, and the update is not asked again
    result = planned(after, observed(before, {"ClusterConfiguration": text}))
    assert (result["action"], result["step"]) == ("rollout", "scale_up"), result["reason"]
