# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet emulation (sandbox only): flags and config like the real kubelet, TLS bootstrap, Node
registration and heartbeats, static pods run through kcpsim.runtime and mirrored into the API.

Modules: ``flags`` / ``config`` / ``manifests`` / ``backoff`` / ``objects`` decide or parse (no I/O beyond
reading their file); ``probes``, ``pods`` (static pod workers), ``certs`` (client credentials and TLS
bootstrap), ``apisync`` (Node, Lease, mirror pods) and ``endpoints`` (ports 10248 and 10250) do I/O; ``kubelet`` wires them;
``__main__.main(argv)`` is the entry point.
"""
