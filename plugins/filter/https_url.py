# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's address and a port as an https URL, an IPv6 address in brackets: the etcd client and peer URLs the roles
build from the inventory's ansible_host. The documentation is in https_url.yml, next to this file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeadm.control_plane.plugins.module_utils.spec import endpoint_address


def https_url(address, port):
    """``https://<address>:<port>``, an IPv6 address bracketed."""
    if not isinstance(address, str) or not address.strip("[]"):
        raise AnsibleFilterError("https_url: the input must be a host name or an IP address, not %r" % (address,))
    if isinstance(port, bool) or not str(port).isdigit() or not 0 < int(port) < 65536:
        raise AnsibleFilterError("https_url: the port must be a number from 1 to 65535, not %r" % (port,))
    return "https://" + endpoint_address({"host": address.strip("[]"), "port": int(port)})


class FilterModule(object):
    """https_url."""

    def filters(self):
        return {"https_url": https_url}
