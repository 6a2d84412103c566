# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet service as kubeadm drives it: systemctl, its healthz endpoint, its version.
Adapter: I/O only."""

from __future__ import annotations

import http.client
import os
import shutil
import subprocess

from kcpsim.kubeadm.waiting import wait_for

HEALTHZ_HOST = "127.0.0.1"
HEALTHZ_PORT = 10248


class KubeletError(Exception):
    """The kubelet could not be driven or did not become healthy."""


class Kubelet:
    def __init__(self, host):
        self.host = host

    def _systemctl(self, *args):
        if self.host.root not in ("", "/"):
            raise KubeletError("refusing to drive the real kubelet while KCPSIM_ROOT=%s (a test root)" % self.host.root)
        systemctl = shutil.which("systemctl")
        if not systemctl:
            raise KubeletError("systemctl is not in PATH")
        return subprocess.run([systemctl] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=60, check=False, universal_newlines=True)

    def restart(self):
        result = self._systemctl("restart", "kubelet")
        if result.returncode != 0:
            raise KubeletError("unable to restart the kubelet service: %s" % result.stdout.strip())

    def stop(self):
        result = self._systemctl("stop", "kubelet")
        if result.returncode != 0:
            raise KubeletError("unable to stop the kubelet service: %s" % result.stdout.strip())

    def is_enabled(self):
        try:
            return self._systemctl("is-enabled", "kubelet").returncode == 0
        except KubeletError:
            return False

    def is_active(self):
        try:
            return self._systemctl("is-active", "kubelet").returncode == 0
        except KubeletError:
            return False

    @staticmethod
    def healthy():
        # http.client directly: proxy variables in the environment must not reroute a loopback probe.
        conn = http.client.HTTPConnection(HEALTHZ_HOST, HEALTHZ_PORT, timeout=2)
        try:
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            return response.status == 200 and response.read().strip() == b"ok"
        except OSError:
            return False
        finally:
            conn.close()

    def wait_healthy(self, timeout):
        try:
            wait_for(self.healthy, timeout, 0.5, "the kubelet to answer http://127.0.0.1:10248/healthz")
        except TimeoutError as exc:
            raise KubeletError("%s. It seems like the kubelet isn't running or healthy." % exc)

    @staticmethod
    def version():
        """The kubelet's version string (``v1.30.6``), or KubeletError."""
        binary = shutil.which("kubelet")
        if not binary:
            raise KubeletError('couldn\'t get kubelet version: exec: "kubelet": executable file not found in $PATH')
        try:
            result = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    timeout=30, check=False, universal_newlines=True,
                                    env=dict(os.environ))
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KubeletError("couldn't get kubelet version: %s" % exc)
        words = result.stdout.split()
        if result.returncode != 0 or len(words) < 2:
            raise KubeletError("couldn't get kubelet version: %s" % result.stdout.strip())
        return words[-1]
