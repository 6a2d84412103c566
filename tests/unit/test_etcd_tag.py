# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether an etcd image tag is behind the one wanted: as etcd versions, never down, nothing from no answer."""

import pytest

from ansible_collections.kubeadm.control_plane.plugins.module_utils.etcd_tag import behind, etcd_version

# (id, observed, wanted, behind)
CASES = [
    ("an older patch is behind", "3.6.8-0", "3.6.11-0", True),
    ("an older minor is behind", "3.6.11-0", "3.7.0-0", True),
    ("the same tag is not", "3.6.8-0", "3.6.8-0", False),
    ("a newer tag is not: kubeadm never downgrades etcd", "3.6.11-0", "3.6.8-0", False),
    ("the patch compares as a number, not as text", "3.6.9-0", "3.6.10-0", True),
    ("the same version with another image suffix is not", "3.6.8-1", "3.6.8-0", False),
    ("a tag not observed is not", None, "3.6.8-0", False),
    ("nothing wanted (external etcd) is not", "3.6.8-0", None, False),
    ("a tag that is no version and differs is", "3.6.8-0", "custom", True),
    ("the same tag that is no version is not", "custom", "custom", False),
]


@pytest.mark.parametrize("observed,wanted,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_behind(observed, wanted, expected):
    assert behind(observed, wanted) is expected


@pytest.mark.parametrize("tag,expected", [("3.6.8-0", (3, 6, 8)), ("v3.5.24", (3, 5, 24)), ("3.6", None), ("latest", None), (None, None)])
def test_etcd_version(tag, expected):
    assert etcd_version(tag) == expected
