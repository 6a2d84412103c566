# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A control plane machine's certificate renewal in place (docs/certificates.md): its steps, what its host record
says is left, and which machine is renewed next. Pure, no I/O.

The steps, in order, each written to the host's record (RECORD under /etc/kubernetes, mode 0600, JSON ``{"started",
"step", "failed"}``) once done, so a run killed at any point is resumed by the next at the first step not done:

    renew                    kubeadm certs renew all
    etcd                     each static pod restarted, one at a time, so that it loads the renewed files (kubeadm
    kube-apiserver           does not restart them): its manifest moved out of the manifest directory until its
    kube-controller-manager  container is gone, then back until it answers its own probe again; etcd first, so that
    kube-scheduler           the API server is not interrupted twice
    ready                    the machine's control plane pods ready in the API again (what the next observation reads
                             of it): the caller, which can ask the API, waits for that and then records it, which
                             removes the record

The record exists only while a renewal is under way: the last step removes it. A machine whose host keeps one is
half renewed (its files are new, some of its pods may still run with the old ones, or be stopped) and is finished
before anything else is decided about it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeadm.control_plane.plugins.module_utils.timeutil import parse_time

# Under /etc/kubernetes: the record, and the manifests moved out while their pods restart.
RECORD_DIR = "certificate-renewal"
RECORD = RECORD_DIR + "/record.json"
RENEW, READY = "renew", "ready"
# The static pods kubeadm makes on a control plane machine, in the order they are restarted.
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
STEPS = (RENEW,) + COMPONENTS + (READY,)


def remaining(record, present):
    """The steps left of the renewal ``record`` describes (None: none begun, so every step), leaving out the static
    pods the host does not run (``present``: the components whose manifest it has; no etcd with external etcd)."""
    done = (record or {}).get("step")
    start = STEPS.index(done) + 1 if done in STEPS else 0
    return [step for step in STEPS[start:] if step in (RENEW, READY) or step in present]


def progress(record):
    """The snapshot's ``certificate_renewal`` (docs/snapshot.md) from a host's record: ``{started, step,
    failed_step, error, expired}``, or None when the host keeps none (no renewal under way). ``expired``: the renewal
    is a recovery of expired certificates, begun through the hosts without the API (docs/certificates.md)."""
    if record is None:
        return None
    failed = record.get("failed") if isinstance(record.get("failed"), dict) else {}
    step = record.get("step")
    failed_step = failed.get("step")
    return {
        "started": record.get("started"),
        "step": step if step in STEPS else None,
        "failed_step": failed_step if failed_step in STEPS else None,
        "error": failed.get("error"),
        "expired": record.get("expired") is True,
    }


def left(renewal):
    """What an unfinished renewal (the snapshot's ``certificate_renewal``) says of where it stopped."""
    if renewal.get("failed_step") is not None:
        return "its certificate renewal in place failed at step %s: %s" % (renewal["failed_step"], renewal.get("error") or "no error recorded")
    return "its certificate renewal in place stopped after step %s" % (renewal.get("step") or "(none)")


def machine_to_renew(machines, names):
    """Which of the machines named in ``names`` is renewed next: one whose renewal is under way first (oldest
    first), else the one whose certificates expire first (ties: the oldest)."""
    candidates = [m for m in machines if m["name"] in names]
    begun = [m for m in candidates if m.get("certificate_renewal") is not None]

    def age(machine):
        return (parse_time(machine["created"]), machine["name"])

    if begun:
        return min(begun, key=age)["name"]

    def expiry(machine):
        expires = machine.get("certificates_expire")
        # a machine whose expiry is not known is renewed for another reason (its record): after the dated ones
        return (expires is None, parse_time(expires) if expires is not None else None, age(machine))

    return min(candidates, key=expiry)["name"]
