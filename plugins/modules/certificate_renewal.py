#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: certificate_renewal
short_description: Renew a kubeadm control plane host's certificates in place and restart its static pods
version_added: "0.1.0"
description:
  - Runs on a control plane host. Renews every certificate and kubeconfig kubeadm manages there with
    C(kubeadm certs renew all), then restarts the host's static pods one at a time (etcd, kube-apiserver,
    kube-controller-manager, kube-scheduler, those the host runs) so that they load the new files, which kubeadm
    does not do.
  - A pod is restarted as kubeadm's documentation says. Its manifest is moved out of C(manifests/) until the
    component no longer answers on the address of its own probe (the kubelet stopped it), then moved back until the
    component answers that probe healthy again, as the kubelet asks it.
  - Before etcd is restarted, the module asks every etcd member how it is (through this host's etcd client
    certificate, from O(etcd_endpoints)) and refuses when etcd would lose its quorum without this member; when this
    member leads, the leadership goes to another healthy voting member first.
  - Each step done is written to a record on the host (C(certificate-renewal/record.json) under O(kubernetes_dir),
    mode 0600), removed once the caller says the renewal is done (O(done)). A run killed at any point is finished by the next one, which starts at
    the first step not done, after putting back a manifest the killed run had moved aside. A step that fails is
    written to the record with its error and the module fails; nothing done is undone.
  - The steps are described in C(docs/certificates.md).
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  name:
    description:
      - The host's etcd member name, which kubeadm sets to the Node name.
    type: str
    required: true
  kubernetes_dir:
    description:
      - kubeadm's directory on the host.
    type: path
    default: /etc/kubernetes
  kubeadm:
    description:
      - The kubeadm command to run.
    type: path
    default: kubeadm
  restart_timeout:
    description:
      - Seconds a component has to stop once its manifest is moved out, and again to answer healthy once it is back.
    type: float
    default: 300.0
  expired:
    description:
      - The host's certificates have expired (C(docs/certificates.md) "Expired already"), as have, maybe, those of its
        peers; etcd and the API server refuse them, and a pod may not come back healthy until its peers are renewed too.
      - When the host's etcd peer certificate had expired before the renewal, its member was out of every quorum
        already (its peers refused it), so etcd is not asked before it restarts; otherwise it is, as always. Each pod
        restarted is waited for until it answers its probe at all, healthy or not. The record says so.
    type: bool
    default: false
  done:
    description:
      - Record that the renewal is done, which removes its record and takes no other step. The caller sets it once
        it has seen the machine's control plane pods ready in the API (what the module, which does not talk to the
        API, cannot see); until then the renewal counts as under way, and a run that finds it waits for that again.
      - Fails when steps of the renewal remain on the host.
    type: bool
    default: false
  etcd_endpoints:
    description:
      - etcd client URLs to ask before etcd is restarted, such as V(https://10.0.0.11:2379); the other members are
        discovered. Needed when the host runs an etcd static pod (stacked etcd).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Says which steps it would take and changes nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
    description: A kubeadm control plane host, with Python and PyYAML.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - The probes are asked as the kubelet asks them, without verifying the serving certificate (kube-controller-manager
    and kube-scheduler serve a self-signed one); nothing but the request line is sent, and only the status is read.
  - A host whose certificates have already expired is renewed too, as C(kubeadm certs renew) reads the configuration
    it cannot get from the API server from its defaults and the existing certificates.
  - Never returns a key or a certificate.
seealso:
  - module: kubeadm.control_plane.machine_info
  - name: kubeadm certs renew
    description: Certificate management with kubeadm, manual certificate renewal.
    link: https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#manual-certificate-renewal
"""

EXAMPLES = r"""
- name: Renew the certificates of a control plane host and restart its static pods
  kubeadm.control_plane.certificate_renewal:
    name: "{{ inventory_hostname }}"
    etcd_endpoints: ["https://10.0.0.11:2379", "https://10.0.0.12:2379", "https://10.0.0.13:2379"]
"""

RETURN = r"""
msg:
  description: What was done, for a person.
  returned: always
  type: str
  sample: "certs renewed (0.4 s), etcd restarted (6.1 s, leadership moved to cp-2), kube-apiserver restarted (9.8 s), ..."
steps:
  description:
    - The steps taken (or, in check mode, to take), in order; C(renew) then the static pods restarted; with O(done),
      C(ready).
  returned: always
  type: list
  elements: str
  sample: [renew, etcd, kube-apiserver, kube-controller-manager, kube-scheduler]
components:
  description: The static pods the host runs, in the order they are restarted.
  returned: always
  type: list
  elements: str
  sample: [etcd, kube-apiserver, kube-controller-manager, kube-scheduler]
resumed:
  description: Whether the run finished a renewal a previous run had begun (the host kept its record).
  returned: always
  type: bool
new_leader:
  description: The etcd member the leadership went to before this host's etcd restarted; null when it did not move.
  returned: always
  type: str
notes:
  description: What a renewal of expired certificates (O(expired)) went ahead without.
  returned: always
  type: list
  elements: str
seconds:
  description: Seconds each step took.
  returned: always
  type: dict
  sample: {renew: 0.4, etcd: 6.1, kube-apiserver: 9.8}
"""

import fcntl
import json
import os
import time
from datetime import datetime, timezone
from urllib.error import HTTPError, URLError

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.urls import open_url
from ansible_collections.kubeadm.control_plane.plugins.module_utils import certificate_renewal, etcd_client
from ansible_collections.kubeadm.control_plane.plugins.module_utils.certificate_dates import expiry_of_file
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_gateway import EtcdError, EtcdUnavailable
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_health import change_verdict
from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_leadership import among_members
from ansible_collections.kubeadm.control_plane.plugins.module_utils.private_file import replaced_whole

try:
    import yaml
    HAS_YAML = True
except ImportError:
    HAS_YAML = False

POLL_SECONDS = 0.2
PROBE_SECONDS = 2.0


class StepFailed(Exception):
    pass


def _now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Host:
    """The host's kubeadm files: the manifests, the ones set aside, the record."""

    def __init__(self, kubernetes_dir):
        self.manifests = os.path.join(kubernetes_dir, "manifests")
        # the record and the manifests moved out, side by side
        self.aside = os.path.join(kubernetes_dir, certificate_renewal.RECORD_DIR)
        self.record_path = os.path.join(kubernetes_dir, certificate_renewal.RECORD)

    def manifest(self, component):
        return os.path.join(self.manifests, component + ".yaml")

    def set_aside(self, component):
        return os.path.join(self.aside, component + ".yaml")

    def components(self):
        """The static pods the host runs (or a killed run set aside), in restart order."""
        return [c for c in certificate_renewal.COMPONENTS if os.path.exists(self.manifest(c)) or os.path.exists(self.set_aside(c))]

    def record(self):
        try:
            with open(self.record_path, encoding="utf-8") as handle:
                found = json.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StepFailed("%s: %s" % (self.record_path, exc))
        return found if isinstance(found, dict) else None

    def write(self, record):
        if not os.path.isdir(self.aside):
            os.mkdir(self.aside, 0o700)
        with replaced_whole(self.record_path) as out:
            out.write(json.dumps(record, sort_keys=True).encode("utf-8"))

    def finish(self):
        """The last step is done: the record and the lock file go (the lock held until the process ends)."""
        os.unlink(self.record_path)
        os.unlink(os.path.join(self.aside, "lock"))
        if not os.listdir(self.aside):
            os.rmdir(self.aside)

    def hold(self, timeout):
        """This run's lock on the host's renewal: a killed run's module may still run on the host (its SSH session
        gone), and two must not move the same manifests. Waits ``timeout`` seconds at most; the lock goes with the
        process."""
        if not os.path.isdir(self.aside):
            os.mkdir(self.aside, 0o700)
        handle = os.open(os.path.join(self.aside, "lock"), os.O_WRONLY | os.O_CREAT, 0o600)
        if not wait_for(lambda: _locked(handle), timeout):
            os.close(handle)
            raise StepFailed("another certificate renewal still runs on the host (a killed run's?) after %g s" % timeout)
        return handle

    def put_back(self):
        """Move back every manifest a killed run set aside."""
        for component in certificate_renewal.COMPONENTS:
            if os.path.exists(self.set_aside(component)) and not os.path.exists(self.manifest(component)):
                os.rename(self.set_aside(component), self.manifest(component))


def probe_url(path):
    """The URL of the component's own probe (readiness, else startup, else liveness), as the kubelet builds it."""
    with open(path, encoding="utf-8") as handle:
        pod = yaml.safe_load(handle)
    container = pod["spec"]["containers"][0]
    probe = container.get("readinessProbe") or container.get("startupProbe") or container.get("livenessProbe") or {}
    http = probe.get("httpGet")
    if not http:
        raise StepFailed("%s: the container has no HTTP probe to tell when it is up" % path)
    port = http.get("port")
    if isinstance(port, str) and not port.isdigit():
        port = next((p.get("containerPort") for p in container.get("ports") or [] if p.get("name") == port), None)
        if port is None:
            raise StepFailed("%s: the probe's port %s is not one of the container's ports" % (path, http.get("port")))
    host = http.get("host") or "127.0.0.1"
    host = "[%s]" % host if ":" in host else host
    return "%s://%s:%s%s" % (http.get("scheme", "HTTP").lower(), host, port, http.get("path") or "/")


def probe_state(url):
    """``gone`` (nothing answers), ``healthy`` (a 2xx or 3xx answer, the kubelet's success) or ``unhealthy``."""
    try:
        # the kubelet's probe does not verify the serving certificate either (module notes); no proxy stands between
        # the host and its own pods
        with open_url(url, validate_certs=False, timeout=PROBE_SECONDS, use_proxy=False, follow_redirects="none") as answer:
            return "healthy" if 200 <= answer.status < 400 else "unhealthy"
    except HTTPError as answer:  # a redirect not followed is a success to the kubelet too
        return "healthy" if 300 <= answer.code < 400 else "unhealthy"
    except (URLError, OSError):
        return "gone"


def _locked(handle):
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def wait_for(condition, timeout):
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() + POLL_SECONDS > deadline:
            return False
        time.sleep(POLL_SECONDS)


def hand_over_etcd(params, kubernetes_dir):
    """Refuse when etcd would lose its quorum without this host's member; move the leadership away from it first.
    Returns the name of the member that took the lead, or None."""
    pki = os.path.join(kubernetes_dir, "pki", "etcd")
    if not params["etcd_endpoints"]:
        raise StepFailed("etcd_endpoints: the host runs etcd, and etcd must be asked before its member restarts")
    with etcd_client.EtcdClient(params["etcd_endpoints"], os.path.join(pki, "ca.crt"), os.path.join(pki, "healthcheck-client.crt"),
                                os.path.join(pki, "healthcheck-client.key")) as client:
        members = client.gather()["members"]
        own = next((m for m in members if m["name"] == params["name"]), None)
        if own is None:
            raise StepFailed("etcd has no member named %s: %s" % (params["name"], ", ".join(sorted(m["name"] or m["id"] for m in members))))
        voters = [m for m in members if not m["learner"]]
        if len(voters) > 1:
            verdict = change_verdict({"members": members}, remove=[own["id"]])
            if not verdict["ok"]:
                raise StepFailed("refused to restart etcd member %s: %s" % (params["name"], "; ".join(verdict["reasons"])))
        if not own["leader"] or len(voters) == 1:
            return None
        heir = among_members(members, own["id"])
        if heir is None:
            raise StepFailed("etcd member %s leads and no other member can take the lead" % params["name"])
        client.move_leader(heir)
        return next(m["name"] for m in members if m["id"] == heir)


def peer_certificate_expired(kubernetes_dir):
    """Whether the host's etcd peer certificate has expired: then its member is in no quorum (its peers refuse it)."""
    try:
        return expiry_of_file(os.path.join(kubernetes_dir, "pki", "etcd", "peer.crt")) <= datetime.now(timezone.utc)
    except (OSError, ValueError):
        return False


def restart(host, component, timeout, healthy=True):
    """Move the manifest out until the component stops answering, then back until it answers healthy (or, with
    ``healthy`` false, at all)."""
    url = probe_url(host.manifest(component) if os.path.exists(host.manifest(component)) else host.set_aside(component))
    if os.path.exists(host.manifest(component)):
        os.rename(host.manifest(component), host.set_aside(component))
    stopped = wait_for(lambda: probe_state(url) == "gone", timeout)
    os.rename(host.set_aside(component), host.manifest(component))
    if not stopped:
        raise StepFailed("%s still answered %s %g s after its manifest was moved out: the kubelet did not stop it; its manifest is back"
                         % (component, url, timeout))
    wanted = ("healthy",) if healthy else ("healthy", "unhealthy")
    if not wait_for(lambda: probe_state(url) in wanted, timeout):
        raise StepFailed("%s did not answer its probe %s%s within %g s of its manifest coming back"
                         % (component, url, " healthy" if healthy else "", timeout))


def renew(module, kubeadm):
    rc, out, err = module.run_command([kubeadm, "certs", "renew", "all"])
    if rc != 0:
        raise StepFailed("kubeadm certs renew all failed (exit %d): %s" % (rc, (err or out).strip()[-2000:]))


def run(module):
    params = module.params
    host = Host(params["kubernetes_dir"])
    record = host.record()
    if params["done"]:
        return record_done(module, host, record)
    steps = on_host(record, host)
    result = dict(changed=False, steps=steps, components=host.components(), resumed=record is not None, new_leader=None, notes=[],
                  seconds={})
    if module.check_mode:
        result["changed"] = bool(steps)
        result["msg"] = "would take: " + (", ".join(steps) or "nothing")
        return result
    host.hold(params["restart_timeout"])
    # what a run that held the lock before this one did is not done again
    found, record = record, host.record()
    steps = [] if found is not None and record is None else on_host(record, host)
    result.update(steps=steps, resumed=found is not None)
    if not steps:
        result["msg"] = describe(result)
        return result
    record = dict(record or {"started": _now(), "step": None}, expired=params["expired"])
    record.pop("failed", None)
    if certificate_renewal.RENEW in steps:  # before the renewal makes it new; kept for a run that resumes
        record["etcd_peer_expired"] = params["expired"] and peer_certificate_expired(params["kubernetes_dir"])
    host.write(record)
    result["changed"] = True
    host.put_back()
    for step in steps:
        started = time.monotonic()
        try:
            if step == certificate_renewal.RENEW:
                renew(module, params["kubeadm"])
            else:
                if step == "etcd" and record.get("etcd_peer_expired"):
                    result["notes"].append("etcd not asked before its member restarted: its peer certificate had expired, so the member was "
                                           "in no quorum")
                elif step == "etcd":
                    result["new_leader"] = hand_over_etcd(params, params["kubernetes_dir"])
                restart(host, step, params["restart_timeout"], healthy=not params["expired"])
        except (StepFailed, EtcdError, EtcdUnavailable, OSError) as exc:
            host.write(dict(record, failed={"step": step, "error": str(exc), "at": _now()}))
            result["seconds"][step] = round(time.monotonic() - started, 1)
            module.fail_json(msg="%s: the step %s failed: %s; the next run resumes it" % (params["name"], step, exc), **result)
        result["seconds"][step] = round(time.monotonic() - started, 1)
        record["step"] = step
        host.write(record)
    result["msg"] = describe(result)
    return result


def on_host(record, host):
    """The steps left that the module takes on the host: all but the last (ready), which is its caller's."""
    return [step for step in certificate_renewal.remaining(record, host.components()) if step != certificate_renewal.READY]


def record_done(module, host, record):
    """``done``: the caller saw the machine's pods ready; the renewal is over and its record goes."""
    result = dict(changed=False, steps=[], components=host.components(), resumed=record is not None, new_leader=None, notes=[], seconds={})
    if record is None:
        result["msg"] = "no renewal under way"
        return result
    left = on_host(record, host)
    if left:
        raise StepFailed("the renewal is not done on the host: %s remain" % ", ".join(left))
    result.update(changed=True, steps=[certificate_renewal.READY], msg="renewal done")
    if not module.check_mode:
        host.hold(module.params["restart_timeout"])
        host.finish()
    return result


def describe(result):
    """The ``msg`` of a run's result."""
    parts = []
    for step in result["steps"]:
        extra = ", leadership moved to %s" % result["new_leader"] if step == "etcd" and result["new_leader"] else ""
        parts.append("%s (%s s%s)" % ("certificates renewed" if step == certificate_renewal.RENEW else step + " restarted",
                                      result["seconds"].get(step, "-"), extra))
    done = ", ".join(parts) or "nothing left to do"
    notes = "".join("; %s" % note for note in result["notes"])
    return ("finished the renewal a run had begun: " if result["resumed"] else "") + done + notes


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True),
            kubernetes_dir=dict(type="path", default="/etc/kubernetes"),
            kubeadm=dict(type="path", default="kubeadm"),
            restart_timeout=dict(type="float", default=300.0),
            etcd_endpoints=dict(type="list", elements="str", default=[]),
            expired=dict(type="bool", default=False),
            done=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML"))
    if module.params["restart_timeout"] <= 0:
        module.fail_json(msg="restart_timeout: must be more than 0 seconds")
    try:
        module.exit_json(**run(module))
    except StepFailed as exc:
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
