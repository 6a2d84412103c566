"""Makes this checkout importable as ansible_collections.kubeadm.control_plane (the link `make setup` creates), and
registers the suite's markers."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(ROOT, ".collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)


def pytest_configure(config):
    """The suite's markers, here rather than in pytest.ini so that ansible-test units (its own pytest configuration,
    --strict-markers) knows them too."""
    for marker in ("etcd: needs the real etcd server (installed by make setup)",
                   "sandbox: needs root and builds network namespaces (the local sandbox)",
                   "ansible: runs modules through ansible-core"):
        config.addinivalue_line("markers", marker)
