# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option every decision module reads the declared control plane spec from."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  spec:
    description:
      - The control plane spec as written in the inventory (C(docs/spec.md)); it is validated and defaulted
        as M(kubeadm.control_plane.kcp_validate) does.
    type: dict
    required: true
"""
