# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster lock kept alive for as long as the run that holds it acts (docs/flows.md "The cluster lock").

A pass renews the lock when it observes, but one step may outlast the lock's duration (a drain held by a
PodDisruptionBudget, retried three times; a slow ``kubeadm join``; a machine provider's own tasks). The action
plugins of kcp_observe and kcp_lock, once they have taken or renewed the lock, start a keeper: a process of the
controller, detached from the worker that started it, that renews the lock (``state: held``) every third of its
duration while the run's ``ansible-playbook`` process runs. It stops, and removes its private copy of the
kubeconfig, when that process is gone (the run ended or was killed: a killed run's lock then expires, or is taken
over at once by the next run of this controller) or when the lock no longer names the run (released at the end
of the run, or taken over by another run after it expired: this run's next check before a membership change then
refuses). One keeper a run and a cluster: a keeper holds a file lock that another one for the same run and
server finds taken, and then leaves at once."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fcntl
import hashlib
import os
import shutil
import time

from ansible_collections.kubeadm.control_plane.plugins.module_utils import cluster_lock, controller_run, credential_files, lock_lease

try:
    import yaml
except ImportError:  # lock_lease.IMPORT_ERROR says so before any lock is taken
    yaml = None

KEEPERS_DIR = os.path.join("~", ".ansible", "kcp_lock_keepers")
# How long a keeper waits between two looks at whether the run still runs, and before it tries a failed renewal again.
POLL_SECONDS = 1.0
RETRY_SECONDS = 2.0


def server_of(kubeconfig_text):
    """The API server the kubeconfig's current context names ('' when it cannot be told)."""
    try:
        config = yaml.safe_load(kubeconfig_text) or {}
        context = next(c["context"] for c in config.get("contexts") or [] if c.get("name") == config.get("current-context"))
        return next(c["cluster"]["server"] for c in config.get("clusters") or [] if c.get("name") == context.get("cluster"))
    except (StopIteration, KeyError, TypeError, AttributeError, yaml.YAMLError):
        return ""


def keeper_path(run_pid, holder, server):
    """The file a keeper of this run, holder and API server holds locked while it runs."""
    digest = hashlib.sha256(("%s\n%s" % (holder, server)).encode("utf-8")).hexdigest()[:16]
    return os.path.join(os.path.expanduser(KEEPERS_DIR), "%d-%s.lock" % (run_pid, digest))


def keep_alive(lock_result, kubeconfig, holder, duration, timeout, check_mode):
    """After kcp_lock or kcp_observe took, renewed or held the lock (``lock_result``, as lock_lease.apply gives
    it): start its keeper for this run. A warning when none could be started (the lock is then renewed only when
    a pass observes, as it always is), else None."""
    if check_mode or lock_result["decision"] not in (cluster_lock.TAKE, cluster_lock.RENEW, cluster_lock.TAKE_OVER):
        return None
    try:
        keep(kubeconfig, holder, duration, timeout, controller_run.run_pid())
    except OSError as exc:
        return "the cluster lock could not be kept alive between passes (%s): a step longer than its duration may let another run take it" % exc
    return None


def keep(kubeconfig, holder, duration, timeout, run_pid):
    """Start a keeper for the lock ``holder`` holds in the cluster of ``kubeconfig`` (a file only this user reads),
    renewing it every ``duration`` / 3 seconds while the process ``run_pid`` runs, unless one keeps it already.
    Returns at once; the keeper lives on in a process of its own."""
    with open(kubeconfig, "rb") as handle:
        config = handle.read()
    path = keeper_path(run_pid, holder, server_of(config))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if kept(path):
        return  # every pass renews the lock and asks again; the keeper of the first still runs
    child = os.fork()
    if child:
        os.waitpid(child, 0)  # the first child leaves at once; the keeper is its child, adopted by init
        return
    # The first child: a session of its own, so that the worker's signals (it kills its process group) and its
    # end do not reach the keeper; then the keeper itself, which no process waits for.
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        stdio = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(stdio, descriptor)
        os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024)
        renew_while_running(config, holder, duration, timeout, run_pid, path)
    finally:
        os._exit(0)


def kept(path):
    """Whether a keeper holds the file lock of ``path`` (a keeper that stops removes the file first)."""
    try:
        handle = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(handle)  # also gives back a lock just taken
    return False


def renew_while_running(config, holder, duration, timeout, run_pid, path):
    """The keeper's work (also run in the foreground by the tests): renew until the run is gone or the lock no
    longer names it. Returns why it stopped."""
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        return "another keeper keeps this lock"
    directory = credential_files.private_directory()
    try:
        kubeconfig = os.path.join(directory, "admin.conf")
        with os.fdopen(os.open(kubeconfig, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(config)
        interval = duration / float(cluster_lock.RENEWALS_PER_DURATION)
        due = time.monotonic() + interval
        while controller_run.process_running(run_pid):
            if time.monotonic() >= due:
                try:
                    lock_lease.apply(kubeconfig, holder, "", "held", duration, timeout, False)
                except lock_lease.LockFailed as exc:
                    if exc.refused:
                        return str(exc)
                    due = time.monotonic() + min(interval, RETRY_SECONDS)
                else:
                    due = time.monotonic() + interval
            time.sleep(min(POLL_SECONDS, interval))
        return "the run ended"
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        os.unlink(path)
        os.close(handle)
