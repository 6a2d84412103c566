"""Makes this checkout importable as ansible_collections.kubeadm.control_plane (the link `make setup` creates)."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, ".collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)


def pytest_collection_modifyitems(items):
    """With pytest-xdist's ``--dist loadgroup`` (make test), each test module runs whole on one worker, so that its
    module-scoped sandbox or etcd cluster is made once; tests that share a sandbox across modules name their group
    themselves (``xdist_group``)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
