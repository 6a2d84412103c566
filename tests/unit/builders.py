# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small builders for specs, machines and snapshots, so a test states only what matters to it.

Every builder returns plain dicts in the shape of docs/snapshot.md and docs/spec.md, fully filled in. And one way for
a test to stand a fake API server where the modules reach the Kubernetes API (``serve_api``).
"""

import contextlib
import hashlib

from ansible_collections.kubeadm.control_plane.plugins.module_utils import kube_api

NOW = "2026-11-22T10:00:00Z"
VERSION = "v1.36.4"
NEXT = "v1.37.1"  # the next minor, for upgrades (in place too: never a downgrade)
HASH = "current-hash"
HASHES = {"init": HASH, "join": HASH}  # the spec hash of each part (init, join), as the planner takes them


def _digest(name):
    """A stable number for a name (Python's hash() changes between runs)."""
    return int(hashlib.sha256(name.encode()).hexdigest()[:15], 16)


def at(minutes_before_now):
    """A timestamp `minutes_before_now` minutes before NOW (negative = after)."""
    from datetime import datetime, timedelta, timezone

    base = datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc)
    return (base - timedelta(minutes=minutes_before_now)).strftime("%Y-%m-%dT%H:%M:%SZ")


def certificate_pem(now, days):
    """A self-signed X.509 certificate (PEM bytes), valid from a day before `now` (a datetime) until `days` days after
    it: what the host reads (machine_info) parse as kubeadm's certificates."""
    from datetime import timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test")])
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
                   .not_valid_after(now + timedelta(days=days)).sign(key, hashes.SHA256()))
    return certificate.public_bytes(serialization.Encoding.PEM)


def node(name, ready="True", since=600, conditions=None):
    """A Node whose Ready condition has had status `ready` for `since` minutes."""
    conds = [{"type": "Ready", "status": ready, "last_transition": at(since)}]
    return {"name": name, "conditions": conds + list(conditions or [])}


def machine(
    name,
    fd=None,
    created=1000,
    version=VERSION,
    spec_hash=HASH,
    etcd_image_tag=None,
    node_ready="True",
    has_node=True,
    deleting=False,
    delete_requested=False,
    remediation_requested=False,
    retries=0,
    last_remediation=None,
    external_attempts=0,
    external_last=None,
    components=None,
    certificates_expire="2027-11-20T09:00:00Z",
    host=None,
    failure=None,
    bootstrap=None,
    upgrade=None,
    certificate_renewal=None,
):
    """A control plane machine created `created` minutes before NOW, healthy unless told otherwise.

    `components` overrides some of api_server / controller_manager / scheduler / etcd
    (healthy | unhealthy | missing | unknown).
    """
    comps = {"api_server": "healthy", "controller_manager": "healthy", "scheduler": "healthy", "etcd": "healthy"}
    comps.update(components or {})
    if not has_node:
        comps = {k: "unknown" for k in comps}
    return {
        "name": name,
        "host": host or "10.0.0.%d" % (_digest(name) % 200 + 10),
        "failure_domain": fd,
        "created": at(created),
        "version": version,
        "etcd_image_tag": etcd_image_tag,
        "spec_hash": spec_hash,
        "bootstrap": bootstrap,
        "provisioned": has_node,
        "deleting": deleting,
        "delete_requested": delete_requested,
        "failure": failure,
        "remediation": {"requested": remediation_requested, "retries": retries, "last": last_remediation},
        "external_remediation": {"attempts": external_attempts, "last": external_last},
        "node": node(name, node_ready) if has_node else None,
        "components": comps,
        "certificates_expire": certificates_expire,
        "upgrade": upgrade,
        "certificate_renewal": certificate_renewal,
    }


FAILURE_DOMAINS = [{"name": n, "control_plane": True} for n in ("fd-a", "fd-b", "fd-c")]


def control_plane(n, spec_hash, **overrides):
    """Machines cp-1..cp-n built from the spec of ``spec_hash``, spread over fd-a..fd-c, cp-1 oldest; ``overrides``
    maps cp_2 to machine() arguments."""
    machines = []
    for i in range(1, n + 1):
        fields = dict(fd=FAILURE_DOMAINS[(i - 1) % 3]["name"], created=1000 - i, spec_hash=spec_hash)
        fields.update(overrides.get("cp_%d" % i, {}))
        machines.append(machine("cp-%d" % i, **fields))
    return machines


def member(name, member_id=None, responsive=True, leader=False, learner=False, alarms=(), seen=None):
    """An etcd member named after its machine. `seen` = the member ids it reports (default: filled by snapshot)."""
    mid = member_id or "%016x" % _digest(name)
    return {
        "name": name,
        "id": mid,
        "peer_urls": ["https://%s:2380" % name],
        "client_urls": ["https://%s:2379" % name],
        "responsive": responsive,
        "error": None if responsive else "no answer within 2.0s",
        "leader": leader,
        "learner": learner,
        "alarms": list(alarms),
        "member_ids_seen": seen,
    }


def snapshot(machines, members=None, failure_domains=None, external=False, initialized=True, now=NOW, workers=(), **extra):
    """A snapshot of `machines`. Without `members`, every machine with a node gets a healthy member, the first
    one leading. Members whose `member_ids_seen` is None see exactly the member list."""
    if members is None and not external:
        members = [member(m["name"], leader=(i == 0)) for i, m in enumerate(machines) if m["node"] is not None]
    members = members or []
    ids = sorted(m["id"] for m in members)
    for m in members:
        if m["member_ids_seen"] is None:
            m["member_ids_seen"] = ids if m["responsive"] else []
    fds = failure_domains
    if fds is None:
        fds = [{"name": n, "control_plane": True} for n in sorted({m["failure_domain"] for m in machines} - {None})]
    snap = {
        "now": now,
        "initialized": initialized,
        "kubeadm_config": {"kubernetes_version": VERSION},
        "endpoint_ready": True,
        "failure_domains": fds,
        "remediation_in_progress": None,
        "worker_remediation_in_progress": None,
        "worker_rollout_in_progress": None,
        "machines": list(machines),
        "workers": list(workers),
        "etcd": {"external": external, "members": members},
    }
    snap.update(extra)
    return snap


def upgrade(strategy="rolling", other_changes="refuse", max_unavailable=1, groups=None):
    """A normalized upgrade section (docs/spec.md); ``groups``: {name: max_unavailable}."""
    return {
        "strategy": strategy,
        "other_changes": other_changes,
        "workers": {"max_unavailable": max_unavailable, "groups": {g: {"max_unavailable": n} for g, n in (groups or {}).items()}},
    }


def worker(name, group=None, created=1000, version=VERSION, ready=True, unschedulable=False, node_ready=None, changed=None,
           remediation_requested=False, replace_requested=False, uid=None, external_attempts=0, external_last=None):
    """A worker Node (docs/snapshot.md ``workers``) created `created` minutes before NOW, Ready unless told otherwise;
    its Ready condition `node_ready` (by default as `ready` says) since `changed` minutes before NOW (its creation);
    its uid ``uid-<name>`` unless given; its external remediation's attempts, the last begun ``external_last`` minutes
    before NOW."""
    status = node_ready or ("True" if ready else "False")
    return {"name": name, "group": group, "created": at(created), "version": version, "ready": status == "True",
            "unschedulable": unschedulable,
            "node": {"name": name, "conditions": [{"type": "Ready", "status": status, "last_transition": at(created if changed is None else changed)}]},
            "remediation": {"requested": remediation_requested, "retries": 0, "last": None},
            "external_remediation": {"attempts": external_attempts, "last": None if external_last is None else at(external_last)},
            "uid": uid or "uid-" + name, "replace_requested": replace_requested}


def spec(**overrides):
    """A normalized spec (docs/spec.md) for 3 replicas at VERSION; keyword arguments replace top-level fields."""
    base = {
        "cluster_name": "demo",
        "replicas": 3,
        "version": VERSION,
        "endpoint": {"host": "10.0.0.100", "port": 6443},
        "kubeadm": {
            "api_version": "kubeadm.k8s.io/v1beta4",
            "cluster_configuration": {},
            "init_configuration": {},
            "join_configuration": {},
        },
        "machine_template": {},
        "rollout": {"strategy": "RollingUpdate", "max_surge": 1, "after": None, "before": {"certificates_expiry_days": None}},
        "upgrade": upgrade(),
        "certificates": {"renewal": "rollout"},
        "remediation": {"max_retry": None, "retry_period": 0.0, "min_healthy_period": 3600.0, "external": None},
        "health_check": {
            "unhealthy_conditions": [
                {"type": "Ready", "status": "Unknown", "timeout": 300.0},
                {"type": "Ready", "status": "False", "timeout": 300.0},
            ],
            "unhealthy_machine_conditions": [],
            "node_startup_timeout": 600.0,
            "max_unhealthy": "100%",
            "unhealthy_range": None,
        },
        "workers": {"health_check": None, "drain_timeout": 300.0, "max_surge": 1, "max_unavailable": 0, "external_remediation": None, "groups": {}},
    }
    base.update(overrides)
    return base


def seconds_ago(seconds):
    """A timestamp `seconds` seconds before NOW (negative = after), for boundaries finer than a minute."""
    return at(seconds / 60.0)


def health_check(**overrides):
    """A normalized health_check section (docs/spec.md): spec()'s defaults, keyword arguments replace fields."""
    rules = dict(spec()["health_check"])
    rules.update(overrides)
    return rules


def _steps(path):
    """The keys and indexes of a field path as errors write it: `machines[2].node.name`."""
    import re

    return [int(index) if index else key for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path)]


def with_field(document, path, value):
    """A deep copy of `document` with the field at `path` (dots and [i]) set to `value`, parents created."""
    import copy

    out = copy.deepcopy(document)
    *parents, last = _steps(path)
    here = out
    for step in parents:
        if isinstance(step, str) and not isinstance(here.get(step), dict) and not isinstance(here.get(step), list):
            here[step] = {}
        here = here[step]
    here[last] = value
    return out


def without_field(document, path):
    """A deep copy of `document` without the field at `path` (dots and [i])."""
    import copy

    out = copy.deepcopy(document)
    *parents, last = _steps(path)
    here = out
    for step in parents:
        here = here[step]
    del here[last]
    return out


# One value of every JSON type and shape, for tests that feed each field anything and expect errors, never a crash.
ODD_VALUES = (None, True, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}, ["x", {"y": None}])


def serve_api(monkeypatch, fake):
    """Send what kube_api would ask the API server to ``fake.request`` (same arguments as kube_api.request), through
    a connection that needs no kubeconfig; returns ``fake``."""
    @contextlib.contextmanager
    def connected(_kubeconfig):
        yield object()

    monkeypatch.setattr(kube_api, "connected", connected)
    monkeypatch.setattr(kube_api, "request", fake.request)
    return fake
