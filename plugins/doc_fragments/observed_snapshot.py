# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option every decision module reads the observed snapshot from."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  observed:
    description:
      - The observed snapshot of the control plane, as the info modules produce it (C(docs/snapshot.md)).
      - Needs C(now) and C(machines); each machine needs C(name) and C(created).
      - C(kubeadm_config) holds what the C(kube-system/kubeadm-config) ConfigMap says - C(kubernetes_version) and
        C(cluster_configuration), its ClusterConfiguration as a mapping (null = not read; the plan then compares
        only the version with the spec).
      - A machine's C(external_remediation) (C(attempts), C(last)) is the external remediation request its Node
        carries; no attempt (C(attempts) 0, C(last) null) when it carries none.
      - C(workers) lists the Nodes without the control plane role (C(name), C(group), C(created), C(version),
        C(ready), C(unschedulable)), which an in-place upgrade upgrades after the control plane; empty when left
        out.
    type: dict
    required: true
"""
