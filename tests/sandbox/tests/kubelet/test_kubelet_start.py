# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's crash loop before kubeadm writes /var/lib/kubelet/config.yaml: each start exits 1 with the real
kubelet's words, having imported none of the kubelet's heavy modules, so that systemd's restarts cost little."""

import json
import os
import subprocess

import pytest

from kubelet_harness import SYSTEM_PYTHON

SANDBOX = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("kcpsim.kubelet.kubelet", "kcpsim.kubelet.pods", "kcpsim.kubelet.certs", "kcpsim.pki", "cryptography",
         "yaml", "ssl", "http.server")
# Runs the entry point as the bundle's __main__ does, then reports the exit status and which heavy modules
# the start imported.
START = """
import json, sys
sys.path.insert(0, sys.argv[1])
from kcpsim.kubelet.__main__ import main
status = main(sys.argv[3:])
print(json.dumps({"status": status, "imported": [m for m in json.loads(sys.argv[2]) if m in sys.modules]}))
"""


def start_kubelet(*argv, version=None):
    env = dict({"PATH": "/usr/bin:/bin"}, **({"KCPSIM_VERSION": version} if version else {}))
    done = subprocess.run([SYSTEM_PYTHON, "-c", START, SANDBOX, json.dumps(HEAVY)] + list(argv), capture_output=True,
                          text=True, timeout=60, check=False, env=env)
    assert done.stdout, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def test_a_missing_config_file_ends_the_start_with_the_real_kubelets_words(tmp_path):
    path = str(tmp_path / "config.yaml")
    result, stderr = start_kubelet("--config=%s" % path, "--kubeconfig=/etc/kubernetes/kubelet.conf")
    assert result["status"] == 1
    assert ('command failed: failed to load kubelet config file, path: {0}, error: failed to load Kubelet config file '
            '{0}, error failed to read kubelet config file "{0}", error: open {0}: no such file or directory'
            .format(path)) in stderr


@pytest.mark.parametrize("config, imported", [
    (None, []),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", list(HEAVY)),
], ids=[
    "a start that finds no config file imports none of the heavy modules",
    "a start that finds its config file goes on to import them all",
])
def test_only_a_start_that_can_go_on_imports_the_kubelet_proper(tmp_path, config, imported):
    path = tmp_path / "config.yaml"
    if config is not None:
        path.write_text(config)
    # With the config file there, the start stops at the missing runtime socket: nothing is left running.
    result, stderr = start_kubelet("--config=%s" % path, "--container-runtime-endpoint=unix://%s" % (tmp_path / "no.sock"))
    assert result == {"status": 1, "imported": imported}, stderr


def test_a_kubelet_of_1_35_given_the_pod_infra_container_image_flag_kubeadm_1_34_wrote_does_not_start(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    result, stderr = start_kubelet("--config=%s" % path, "--pod-infra-container-image=registry.k8s.io/pause:3.10",
                                   version="v1.35.9")
    assert result == {"status": 1, "imported": []} and "unknown flag: --pod-infra-container-image" in stderr
