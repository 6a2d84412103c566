# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The objects under one etcd prefix, kept in memory by a list and then a watch: what the real API server's
informers give its authenticators and authorizers (bootstrap-token Secrets, RBAC objects).

Like an informer, the cache keeps answering with what it last saw while etcd is unreachable, and catches up
(a fresh list, then a watch from its revision) once etcd answers again. ``synced`` is set after the first
complete list.
"""

import collections
import queue
import threading
import time

from kcpsim.apiserver import storage


class WatchCache:
    """Thread-safe. ``start()`` runs the list-and-watch loop in a daemon thread until ``stopping`` is set."""

    def __init__(self, store, prefix, stopping, retry_interval=1.0, log=None):
        self.store = store
        self.prefix = prefix
        self.stopping = stopping
        self.retry_interval = retry_interval
        self.log = log or (lambda message, level="I": None)
        self.synced = threading.Event()
        self._objects = {}
        self._lock = threading.Lock()
        self._watch = None
        self.generation = 0  # grows with every change seen, so callers can cache what they derive
        self._revision = 0  # the etcd revision the cache reflects

    def start(self):
        threading.Thread(target=self._run, name="cache " + self.prefix, daemon=True).start()
        return self

    def get(self, namespace, name):
        """The object as last seen, or None (namespace None for a cluster-scoped one)."""
        with self._lock:
            return self._objects.get((namespace, name))

    def objects(self):
        with self._lock:
            return list(self._objects.values())

    def remember(self, obj):
        """Take in an object read from etcd directly, unless the cache has seen a later revision (a change the
        caller's read may predate)."""
        with self._lock:
            if _identity(obj) not in self._objects and int(obj["metadata"]["resourceVersion"]) > self._revision:
                self._objects[_identity(obj)] = obj
                self.generation += 1

    def _replace(self, objects, revision):
        with self._lock:
            self._objects = {_identity(obj): obj for obj in objects}
            self._revision = revision
            self.generation += 1

    def _apply(self, change):
        with self._lock:
            self._revision = max(self._revision, change.revision)
            if change.obj is not None:
                self._objects[_identity(change.obj)] = change.obj
            elif change.previous is not None:
                self._objects.pop(_identity(change.previous), None)
            self.generation += 1

    def _run(self):
        while not self.stopping.is_set():
            try:
                objects, revision = self.store.list(self.prefix)
                self._replace(objects, revision)
                self.synced.set()
                self._watch = self.store.watch(self.prefix, revision + 1)
                for change in self._watch.changes():
                    self._apply(change)
                    if self.stopping.is_set():
                        break
            except (storage.StoreUnavailable, storage.StoreError) as exc:
                self.log("cache of %s: %s; serving what it holds" % (self.prefix, exc))
            finally:
                if self._watch is not None:
                    self._watch.close()
                    self._watch = None
            self.stopping.wait(self.retry_interval)

    def close(self):
        watch = self._watch
        if watch is not None:
            watch.close()


def _identity(obj):
    metadata = obj["metadata"]
    return metadata.get("namespace"), metadata["name"]


HISTORY = 4096          # changes a watch may start behind the newest (the real watch cache keeps ~75 s' worth)
FRESH_TIMEOUT = 3.0     # how long a consistent read waits for the cache to catch up before it reads etcd


class Subscriber:
    """One watch served from the RegistryCache: ``queue`` receives Change objects (the objects decoded for this
    watcher alone), then None when the cache starts over (the watcher must end, as the real cacher ends its
    watchers when its reflector relists)."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.queue = queue.Queue()


class RegistryCache:
    """Every object under ``/registry/`` in memory, kept by one list and one watch of all of etcd (so its revision
    is etcd's once caught up): the real API server's watch cache, from which it serves LISTs (consistent ones
    once the cache has caught up with etcd's current revision, ``resourceVersion=0`` ones as they are) and
    WATCHes (fanned out from one etcd watch; a watch may start from any revision the cache's history still
    holds). Thread-safe; ``start()`` runs the loop in a daemon thread until ``stopping`` is set. While it is not
    ``ready`` (before the first list, and from a broken etcd watch until the next list) callers read etcd."""

    def __init__(self, store, stopping, prefix="/registry/", retry_interval=1.0, history=HISTORY, log=None):
        self.store = store
        self.prefix = prefix
        self.stopping = stopping
        self.retry_interval = retry_interval
        self.log = log or (lambda message, level="I": None)
        self.ready = False
        self.revision = 0
        self.lists = 0
        self._values = {}           # key -> (value, mod_revision)
        self._history = collections.deque(maxlen=history)  # (revision, key, value, prev_value, prev_revision)
        self._history_start = 0     # the history holds every change after this revision
        self._subscribers = set()
        self._cond = threading.Condition()
        self._watch = None

    def start(self):
        threading.Thread(target=self._run, name="registry cache", daemon=True).start()
        return self

    def close(self):
        watch = self._watch
        if watch is not None:
            watch.close()
        with self._cond:
            self._end_subscribers()

    # --- reads ------------------------------------------------------------------------------------------

    def wait_fresh(self, revision, timeout=FRESH_TIMEOUT):
        """Whether the cache is ready and has seen ``revision``, waiting up to ``timeout`` for it."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not (self.ready and self.revision >= revision):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.stopping.is_set():
                    return False
                self._cond.wait(remaining)
            return True

    def list(self, prefix):
        """``(objects, revision)`` under ``prefix`` in key order, as etcd would answer at the cache's revision;
        None when the cache is not ready."""
        with self._cond:
            if not self.ready:
                return None
            found = sorted((key, value) for key, value in self._values.items() if key.startswith(prefix))
            revision = self.revision
        return [storage.decode(value, mod_revision) for _key, (value, mod_revision) in found], revision

    def get(self, key):
        """``(True, object or None)`` for ``key`` as the cache holds it, ``(False, None)`` when it is not ready."""
        with self._cond:
            if not self.ready:
                return False, None
            found = self._values.get(key)
        return True, None if found is None else storage.decode(*found)

    def subscribe(self, prefix, since=None):
        """A Subscriber for the changes under ``prefix`` after revision ``since`` (its queue already holds those
        the history has), or, with ``since`` None, ``(Subscriber, objects, revision)``: the current objects and
        the changes after them. None when the cache cannot serve it (not ready, or ``since`` older than its
        history): the caller watches etcd instead."""
        with self._cond:
            if not self.ready or (since is not None and since < self._history_start):
                return None
            subscriber = Subscriber(prefix)
            if since is None:
                found = sorted((key, value) for key, value in self._values.items() if key.startswith(prefix))
                objects = [storage.decode(value, mod_revision) for _key, (value, mod_revision) in found]
                self._subscribers.add(subscriber)
                return subscriber, objects, self.revision
            for entry in self._history:
                if entry[0] > since and entry[1].startswith(prefix):
                    subscriber.queue.put(_change(*entry))
            self._subscribers.add(subscriber)
            return subscriber

    def unsubscribe(self, subscriber):
        with self._cond:
            self._subscribers.discard(subscriber)

    def bookmark(self, subscriber):
        """The revision a BOOKMARK may carry to ``subscriber`` now (every change up to it is in its queue and the
        queue is empty), or None."""
        with self._cond:
            if subscriber in self._subscribers and subscriber.queue.empty():
                return self.revision
        return None

    # --- the loop ---------------------------------------------------------------------------------------

    def _end_subscribers(self):
        for subscriber in self._subscribers:
            subscriber.queue.put(None)
        self._subscribers = set()

    def _run(self):
        while not self.stopping.is_set():
            try:
                entries, revision = self.store.list_raw(self.prefix)
                with self._cond:
                    self._end_subscribers()
                    self._values = {key: (value, mod_revision) for key, value, mod_revision in entries}
                    self.revision = self._history_start = revision
                    self._history.clear()
                    self.ready = True
                    self.lists += 1
                    self._cond.notify_all()
                self._watch = self.store.watch_all(revision + 1)
                for key, value, mod_revision, prev_value, prev_revision in self._watch.raw_changes():
                    self._apply(key, value, mod_revision, prev_value, prev_revision)
                    if self.stopping.is_set():
                        break
                self.log("registry cache: the etcd watch ended; listing again")
            except (storage.StoreUnavailable, storage.StoreError) as exc:
                self.log("registry cache: %s; reads go to etcd" % exc)
            finally:
                if self._watch is not None:
                    self._watch.close()
                    self._watch = None
                with self._cond:
                    self.ready = False
                    self._end_subscribers()
                    self._cond.notify_all()
            self.stopping.wait(self.retry_interval)

    def _apply(self, key, value, mod_revision, prev_value, prev_revision):
        with self._cond:
            if mod_revision > self.revision:
                self.revision = mod_revision
            if key.startswith(self.prefix):
                if value is None:
                    self._values.pop(key, None)
                else:
                    self._values[key] = (value, mod_revision)
                entry = (mod_revision, key, value, prev_value, prev_revision)
                if len(self._history) == self._history.maxlen:
                    self._history_start = self._history[0][0]
                self._history.append(entry)
                for subscriber in self._subscribers:
                    if key.startswith(subscriber.prefix):
                        subscriber.queue.put(_change(*entry))
            self._cond.notify_all()


def _change(revision, key, value, prev_value, prev_revision):
    return storage.Change(None if value is None else storage.decode(value, revision),
                          None if prev_value is None else storage.decode(prev_value, prev_revision), revision)
