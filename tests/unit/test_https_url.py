# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The https_url filter: the etcd URLs the roles build from an inventory address."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.filter.https_url import https_url


@pytest.mark.parametrize("address, port, url", [
    ("10.0.0.11", 2379, "https://10.0.0.11:2379"),
    ("cp-1.example.org", 2380, "https://cp-1.example.org:2380"),
    ("fd00::11", 2379, "https://[fd00::11]:2379"),
    ("[fd00::11]", "2380", "https://[fd00::11]:2380"),
])
def test_the_url_brackets_an_ipv6_address(address, port, url):
    assert https_url(address, port) == url


@pytest.mark.parametrize("address, port, named", [
    ("", 2379, "host name or an IP address"),
    (None, 2379, "host name or an IP address"),
    ("10.0.0.11", 0, "port must be a number from 1 to 65535"),
    ("10.0.0.11", "2379x", "port must be a number from 1 to 65535"),
    ("10.0.0.11", True, "port must be a number from 1 to 65535"),
])
def test_bad_input_is_refused_naming_what_is_wrong(address, port, named):
    with pytest.raises(AnsibleFilterError, match=named):
        https_url(address, port)
