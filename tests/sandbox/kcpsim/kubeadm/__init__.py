# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox's kubeadm emulation (test and demo infrastructure, named so).

What a caller of real kubeadm v1.29 – v1.31 can observe — commands, flags, configuration files, the files
it writes and their modes, static pod manifests, kubeconfigs, API objects, etcd membership, the lines
callers parse, exit status and refusals — emulated from /work/shared/design/kubeadm-reference.md.

Layout: pure decisions (``release``, ``config``, ``durations``, ``manifests``, ``images``, ``certplan``,
``kubeletconfig``, ``clusterobjects``, ``bootstraptoken``, ``certsecret``, ``discovery``, ``upgrade_policy``,
``expiration``) have no I/O; adapters (``hostfs``, ``pkifiles``, ``cluster``, ``etcd``, ``kubelet``,
``preflight``'s checks, ``waiting``) do I/O only; the commands (``cmd_init``, ``cmd_join``, ``cmd_reset``,
``cmd_upgrade``, ``cmd_certs``, ``cmd_token``) wire them in kubeadm's phase order (``context``);
``__main__.main(argv)`` parses the command line.
"""
