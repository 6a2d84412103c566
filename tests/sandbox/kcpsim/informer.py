# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An informer, as client-go's reflector + store: the objects of one resource kept in memory by one LIST and then
a WATCH from the list's resourceVersion, for the emulated kubelet, controller manager and scheduler.

As client-go's reflector does: a watch the server ends (its ``timeoutSeconds``, 5 to 10 minutes, random) is
opened again from the last resourceVersion seen (BOOKMARKs move it on); a watch that breaks (the API server went
away, the connection went silent) or that the server refuses as too old (410 Gone, an ERROR event) starts over
with a fresh LIST after a back-off (0.8 s doubling to 30 s, reset by a successful list), and while it cannot list
the store keeps what it last saw. ``synced`` is set after the first complete LIST; ``version`` grows with every
change, and ``on_change`` (optional) is called after each, so a consumer can wake up on events instead of
polling the API server.

Reads (``items``, ``get``) hand out copies: callers modify what they read before writing it back.
"""

import copy
import random
import threading

from kcpsim import kubeclient

WATCH_MIN, WATCH_MAX = 300, 600
BACKOFF_START, BACKOFF_MAX = 0.8, 30.0


class Informer:
    """``connect()`` -> KubeClient (called again after an Unauthorized: credentials may have been rewritten)."""

    def __init__(self, connect, api_version, resource, namespace=None, field_selector=None, label_selector=None,
                 on_change=None, log=None, name=None):
        self.connect = connect
        self.api_version = api_version
        self.resource = resource
        self.namespace = namespace
        self.field_selector = field_selector
        self.label_selector = label_selector
        self.on_change = on_change
        self.log = log or (lambda message: None)
        self.name = name or "%s %s" % (resource, field_selector or namespace or "")
        self.synced = threading.Event()
        self.stopping = threading.Event()
        self.version = 0
        self.lists = 0  # how many LISTs this informer made (the first one and every relist)
        self._objects = {}
        self._revision = {}  # key -> resourceVersion (int) of what the store holds
        self._lock = threading.Lock()
        self._client = None
        self._stream = None
        self._thread = None

    # --- reads ------------------------------------------------------------------------------------------

    def items(self):
        with self._lock:
            return [copy.deepcopy(obj) for _key, obj in sorted(self._objects.items())]

    def get(self, name, namespace=None):
        with self._lock:
            obj = self._objects.get((namespace, name))
            return copy.deepcopy(obj) if obj is not None else None

    # --- the consumer's own writes ----------------------------------------------------------------------

    def written(self, obj):
        """Take in what the API server answered to the consumer's own write, so the next sync does not act on
        the state before it (the watch brings the same object shortly; the later resourceVersion wins)."""
        with self._lock:
            self._put(obj)
            self.version += 1

    def deleted(self, obj):
        """Take in the consumer's own successful delete of ``obj``: dropped from the store if the store still
        holds that very object (its uid), not another one of the same name made since (a pod re-created under
        its old name; its events may already have been seen)."""
        with self._lock:
            key = _key(obj)
            held = self._objects.get(key)
            if held is None or _uid(held) != _uid(obj):
                return
            self._objects.pop(key, None)
            self._revision.pop(key, None)
            self.version += 1

    # --- running ----------------------------------------------------------------------------------------

    def start(self):
        self._thread = threading.Thread(target=self.run, name="informer " + self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.stopping.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def run(self):
        failures = 0
        while not self.stopping.is_set():
            try:
                revision = self._list()
                failures = 0
                while not self.stopping.is_set():
                    revision = self._watch(revision)
            except Relist as exc:
                self.log("%s: %s; listing again" % (self.name, exc))
            except (kubeclient.ApiUnavailable, kubeclient.ApiError) as exc:
                if isinstance(exc, kubeclient.Unauthorized):
                    self._client = None
                self.log("%s: %s" % (self.name, exc))
            except Exception as exc:  # noqa: BLE001 - e.g. unreadable credentials: try again, as the reflector does
                self._client = None
                self.log("%s: %s" % (self.name, exc))
            finally:
                self._stream = None
            if self.stopping.is_set():
                return
            failures += 1
            self.stopping.wait(min(BACKOFF_MAX, BACKOFF_START * 2 ** (failures - 1)) * random.uniform(1.0, 1.2))

    def _api(self):
        if self._client is None:
            self._client = self.connect()
        return self._client

    def _list(self):
        listing = self._api().list(self.api_version, self.resource, self.namespace,
                                   label_selector=self.label_selector, field_selector=self.field_selector)
        self.lists += 1
        with self._lock:
            self._objects, self._revision = {}, {}
            for obj in listing.get("items") or []:
                self._put(obj)
            self.version += 1
        self.synced.set()
        self._changed()
        return listing["metadata"]["resourceVersion"]

    def _watch(self, revision):
        """One watch from ``revision``; the last resourceVersion seen when the server ended it."""
        self._stream = self._api().watch(self.api_version, self.resource, self.namespace, revision,
                                         field_selector=self.field_selector, label_selector=self.label_selector,
                                         timeout_seconds=random.randint(WATCH_MIN, WATCH_MAX))
        try:
            for event in self._stream.events():
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    raise Relist("watch ended: %s" % obj.get("message", obj))
                revision = (obj.get("metadata") or {}).get("resourceVersion") or revision
                if kind == "BOOKMARK":
                    continue
                with self._lock:
                    if kind == "DELETED":
                        self._drop(obj)
                    else:
                        self._put(obj)
                    self.version += 1
                self._changed()
                if self.stopping.is_set():
                    break
        except kubeclient.WatchBroken as exc:
            raise Relist(str(exc))
        finally:
            self._stream.close()
        return revision

    def _put(self, obj):
        key = _key(obj)
        revision = int((obj.get("metadata") or {}).get("resourceVersion") or 0)
        if revision >= self._revision.get(key, 0):
            self._objects[key] = obj
            self._revision[key] = revision

    def _drop(self, obj):
        """A DELETED event: the store forgets the key, unless it holds a later revision of it (the consumer's own
        write of an object made again under that name after this deletion, taken in before the event came)."""
        key = _key(obj)
        revision = int((obj.get("metadata") or {}).get("resourceVersion") or 0)
        if revision >= self._revision.get(key, 0):
            self._objects.pop(key, None)
            self._revision.pop(key, None)

    def _changed(self):
        if self.on_change is not None:
            self.on_change()


class Relist(Exception):
    """The watch cannot go on from where it was: list again."""


def _key(obj):
    metadata = obj.get("metadata") or {}
    return metadata.get("namespace"), metadata.get("name")


def _uid(obj):
    return (obj.get("metadata") or {}).get("uid")


class NotSynced(kubeclient.ApiUnavailable):
    """An informer has not completed its first LIST within the wait."""


class Listers:
    """Shared informers, as a controller manager's SharedInformerFactory: one per resource (every namespace),
    started on first use; ``list`` / ``get`` answer from them as ``KubeClient.list`` / ``get`` would (the
    namespace and field selectors of the ``a=b`` / ``a!=b`` form applied here). A read waits up to
    ``sync_timeout`` for its informer's first LIST (as controllers wait for their caches to sync), then raises
    NotSynced."""

    def __init__(self, connect, log=None, sync_timeout=10.0, on_change=None):
        self.connect = connect
        self.log = log or (lambda message: None)
        self.sync_timeout = sync_timeout
        self.on_change = on_change
        self._informers = {}
        self._lock = threading.Lock()

    def informer(self, api_version, resource):
        key = (api_version, resource)
        with self._lock:
            found = self._informers.get(key)
            if found is None:
                found = self._informers[key] = Informer(self.connect, api_version, resource,
                                                        on_change=self.on_change, log=self.log).start()
        if not found.synced.wait(self.sync_timeout):
            raise NotSynced(found.name, "its informer has not synced yet")
        return found

    def list(self, api_version, resource, namespace=None, field_selector=None):
        items = self.informer(api_version, resource).items()
        if namespace:
            items = [obj for obj in items if obj["metadata"].get("namespace") == namespace]
        if field_selector:
            items = [obj for obj in items if fields_match(field_selector, obj)]
        return {"items": items}

    def get(self, api_version, resource, name, namespace=None):
        """The object, or kubeclient.NotFound as the API server would answer."""
        obj = self.informer(api_version, resource).get(name, namespace)
        if obj is None:
            raise kubeclient.NotFound(404, "NotFound", '%s "%s" not found' % (resource, name))
        return obj

    def written(self, api_version, resource, obj):
        """What the API server answered to one of the consumer's own writes (see Informer.written)."""
        with self._lock:
            found = self._informers.get((api_version, resource))
        if found is not None:
            found.written(obj)

    def stop(self):
        with self._lock:
            informers, self._informers = list(self._informers.values()), {}
        for one in informers:
            one.stop()


def fields_match(selector, obj):
    """Whether ``obj`` matches a field selector of ``path=value`` / ``path!=value`` terms (pure)."""
    for term in selector.split(","):
        negated = "!=" in term
        path, _sep, wanted = term.partition("!=" if negated else "=")
        value = obj
        for part in path.strip().lstrip("=").split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if ((value or "") == wanted.lstrip("=").strip()) == negated:
            return False
    return True
