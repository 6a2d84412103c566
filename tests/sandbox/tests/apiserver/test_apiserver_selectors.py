# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Label and field selectors (kcpsim.apiserver.selectors), as list and watch requests use them."""

import pytest

from kcpsim.apiserver import selectors

LABELS = {"tier": "control-plane", "zone": "fd-1", "empty": ""}


@pytest.mark.parametrize("selector, matches", [
    ("", True),
    ("tier", True),
    ("!tier", False),
    ("!absent", True),
    ("tier=control-plane", True),
    ("tier==control-plane", True),
    ("tier=worker", False),
    ("tier!=worker", True),
    ("absent!=x", True),
    ("zone in (fd-1, fd-2)", True),
    ("zone in (fd-2)", False),
    ("absent in (x)", False),
    ("zone notin (fd-2)", True),
    ("absent notin (x)", True),
    ("tier=control-plane,zone in (fd-1,fd-3),!absent", True),
    ("tier=control-plane,zone=fd-2", False),
    ("empty=", True),
    ("topology.kubernetes.io/zone", False),
], ids=["an empty selector matches everything", "exists", "does not exist, present", "does not exist, absent",
        "equality", "double equals", "equality with another value", "inequality",
        "inequality holds for an absent label", "in, listed", "in, not listed", "in needs the label",
        "notin, not listed", "notin holds for an absent label", "all requirements hold",
        "one requirement fails", "an empty value", "a prefixed key"])
def test_label_selector(selector, matches):
    assert selectors.labels_match(selectors.parse_labels(selector), LABELS) is matches


@pytest.mark.parametrize("selector", ["a=b=c,!", "Tier-=x", "in (a)"],
                         ids=["a bare exclamation mark", "a key ending in a dash", "a set without a key"])
def test_a_malformed_label_selector_is_refused(selector):
    with pytest.raises(selectors.SelectorError):
        selectors.parse_labels(selector)


POD = {"metadata": {"name": "etcd-cp-1", "namespace": "kube-system"},
       "spec": {"nodeName": "cp-1"}, "status": {"phase": "Running"}}


@pytest.mark.parametrize("plural, selector, obj, matches", [
    ("pods", "spec.nodeName=cp-1", POD, True),
    ("pods", "spec.nodeName!=cp-1", POD, False),
    ("pods", "metadata.name=etcd-cp-1,status.phase=Running", POD, True),
    ("pods", "metadata.namespace==default", POD, False),
    ("nodes", "spec.unschedulable=false", {"metadata": {"name": "n"}, "spec": {}}, True),
    ("nodes", "spec.unschedulable=true", {"metadata": {"name": "n"}, "spec": {"unschedulable": True}}, True),
    ("secrets", "type=bootstrap.kubernetes.io/token", {"metadata": {"name": "s"},
                                                       "type": "bootstrap.kubernetes.io/token"}, True),
], ids=["pods by node", "pods not on a node", "name and phase together", "namespace",
        "an absent boolean counts as false", "a cordoned node", "secrets by type"])
def test_field_selector(plural, selector, obj, matches):
    assert selectors.fields_match(selectors.parse_fields(selector, plural), obj) is matches


@pytest.mark.parametrize("plural, selector", [("configmaps", "spec.nodeName=x"), ("pods", "nodeName")],
                         ids=["a field the resource is not indexed by", "no operator"])
def test_a_field_selector_the_server_cannot_answer_is_refused(plural, selector):
    with pytest.raises(selectors.SelectorError):
        selectors.parse_fields(selector, plural)
