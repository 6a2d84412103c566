# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The informer's store when its consumer's own writes (taken in at once) meet the watch's events: an object
deleted and made again under the same name (a mirror pod re-created for a Node of the same name). No server."""

from kcpsim import informer


def _pod(uid, revision):
    return {"metadata": {"namespace": "kube-system", "name": "etcd-cp-1", "uid": uid,
                         "resourceVersion": str(revision)}}


class _Stream:
    def __init__(self, events):
        self._events = events

    def events(self):
        return iter(self._events)

    def close(self):
        pass


class _Client:
    """Answers the informer's WATCH with the given events, then ends it."""

    def __init__(self, events):
        self.events = events

    def watch(self, *args, **kwargs):
        return _Stream(self.events)


def _store(*objects, events=()):
    store = informer.Informer(connect=lambda: _Client(list(events)), api_version="v1", resource="pods")
    for obj in objects:
        store.written(obj)
    return store


def test_the_consumers_delete_of_an_old_pod_leaves_the_new_one_of_that_name():
    store = _store(_pod("new", 12))
    store.deleted(_pod("old", 10))
    assert store.get("etcd-cp-1", "kube-system")["metadata"]["uid"] == "new"
    store.deleted(_pod("new", 12))
    assert store.get("etcd-cp-1", "kube-system") is None


def test_a_late_deleted_event_of_the_old_pod_leaves_the_new_one_the_consumer_wrote():
    # The consumer deleted the old pod (revision 11) and made the new one (12); the watch then brings the old
    # one's DELETED event.
    store = _store(_pod("new", 12), events=[{"type": "DELETED", "object": _pod("old", 11)}])
    assert store._watch("10") == "11"
    assert store.get("etcd-cp-1", "kube-system")["metadata"]["uid"] == "new"
    deleted_later = _store(_pod("new", 12), events=[{"type": "DELETED", "object": _pod("new", 13)}])
    deleted_later._watch("12")
    assert deleted_later.get("etcd-cp-1", "kube-system") is None
