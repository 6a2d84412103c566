# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The table of what each supported kubeadm release accepts and defaults to (docs/kubernetes-versions.md)."""

import os
import re

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.kubeadm_releases import (
    FEATURE_GATES,
    KUBEADM_RELEASES,
    SUPPORTED_RANGE,
    V1BETA3,
    V1BETA4,
    feature_gate_problem,
    release,
)


def test_the_supported_range_is_v1_33_to_v1_37():
    assert SUPPORTED_RANGE == "v1.33 to v1.37"
    assert [m for m in ((1, 32), (1, 33), (1, 37), (1, 38), (2, 33)) if release(m)] == [(1, 33), (1, 37)]


@pytest.mark.parametrize("minor,apis", [((1, 33), (V1BETA4, V1BETA3)), ((1, 36), (V1BETA4, V1BETA3)), ((1, 37), (V1BETA4,))],
                         ids=["v1.33 reads both config APIs", "v1.36 still reads v1beta3", "v1.37 reads only v1beta4"])
def test_the_config_apis_each_minor_reads(minor, apis):
    assert release(minor).config_apis == apis


def test_a_patch_version_finds_its_minor():
    assert release((1, 36, 4)) == release((1, 36))


@pytest.mark.parametrize("minor,images", [
    ((1, 33), ("3.5.24-0", "v1.12.0", "3.10")),
    ((1, 34), ("3.6.5-0", "v1.12.1", "3.10.1")),
    ((1, 37), ("3.7.0-0", "v1.14.6", "3.10.2")),
], ids=["v1.33 deploys etcd 3.5", "v1.34 moved to etcd 3.6", "v1.37 moved to etcd 3.7"])
def test_the_default_images_follow_the_minor(minor, images):
    entry = release(minor)
    assert (entry.etcd_image, entry.coredns_image, entry.pause_image) == images


# (id, gate, value, minor, fragment of the problem or None)
GATES = [
    ("a gate the table does not know is left to kubeadm", "SomeNewGate", False, (1, 37), None),
    ("a gate before it is locked may be off", "NodeLocalCRISocket", False, (1, 35), None),
    ("a locked gate may be true", "NodeLocalCRISocket", True, (1, 36), None),
    ("a locked gate may not be false", "NodeLocalCRISocket", False, (1, 36), "locked to true from v1.36"),
    ("a locked gate may not be a string", "ControlPlaneKubeletLocalMode", "true", (1, 35), "locked to true from v1.35"),
    ("a removed gate is refused even as true", "NodeLocalCRISocket", True, (1, 37), "removed in v1.37; it is always on"),
    ("a gate removed earlier stays refused", "EtcdLearnerMode", True, (1, 36), "no longer knows this feature gate"),
    ("the kubeadm version is named", "WaitForAllControlPlaneComponents", True, (1, 35), "kubeadm v1.35 no longer"),
    ("PublicKeysECDSA may still be set before v1.37", "PublicKeysECDSA", True, (1, 36), None),
    ("PublicKeysECDSA at v1.37 points at encryptionAlgorithm", "PublicKeysECDSA", False, (1, 37), "encryptionAlgorithm"),
]


@pytest.mark.parametrize("gate,value,minor,fragment", [c[1:] for c in GATES], ids=[c[0] for c in GATES])
def test_feature_gates_follow_the_version(gate, value, minor, fragment):
    problem = feature_gate_problem(gate, value, minor)
    if fragment is None:
        assert problem is None
    else:
        assert fragment in problem


DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "kubernetes-versions.md")


def doc_rows(first_header):
    """The rows of the table in docs/kubernetes-versions.md whose header starts with ``first_header``."""
    with open(DOC, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| %s |" % first_header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def minor_of(text):
    """(1, 33) from "v1.33"; None for a cell that names no version."""
    match = re.match(r"v(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def test_the_table_is_the_one_docs_kubernetes_versions_states():
    documented = {}
    for minor, apis, etcd, coredns, pause in doc_rows("minor"):
        names = tuple("kubeadm.k8s.io/" + api.strip() for api in apis.split(","))
        documented[minor_of(minor)] = (names, etcd, coredns, pause)
    assert documented == {minor: tuple(entry) for minor, entry in KUBEADM_RELEASES.items()}


def test_the_feature_gates_are_the_ones_docs_kubernetes_versions_states():
    documented = {gate: (minor_of(locked), minor_of(removed)) for gate, locked, removed in doc_rows("gate")}
    assert documented == FEATURE_GATES


@pytest.mark.parametrize("gate,value,minor,problem", [
    ("NodeLocalCRISocket", True, (1, 37, 2),
     "kubeadm v1.37 no longer knows this feature gate (removed in v1.37; it is always on): leave it out"),
    ("PublicKeysECDSA", True, (1, 37, 0),
     "kubeadm v1.37 no longer knows this feature gate (removed in v1.37; set encryptionAlgorithm instead): leave it out"),
    ("ControlPlaneKubeletLocalMode", False, (1, 35, 1),
     "is locked to true from v1.35 (the feature is GA): leave it out or set it to true"),
], ids=["a removed GA gate says it is always on", "PublicKeysECDSA says to set encryptionAlgorithm instead",
        "a locked gate set to false says to leave it out or set it to true"])
def test_the_feature_gate_problem_is_stated_in_full(gate, value, minor, problem):
    assert feature_gate_problem(gate, value, minor) == problem
