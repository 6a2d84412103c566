# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The objects under one etcd prefix, kept in memory by a list and then a watch: what the real API server's
informers give its authenticators and authorizers (bootstrap-token Secrets, RBAC objects).

Like an informer, the cache keeps answering with what it last saw while etcd is unreachable, and catches up
(a fresh list, then a watch from its revision) once etcd answers again. ``synced`` is set after the first
complete list.
"""

import threading

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
