# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tarball `ansible-galaxy collection build` makes holds what a user runs and reads, and nothing that builds,
tests or measures the collection: no tests, benchmarks, generator or molecule scenario, no placeholder URL; its
changelog is there."""

import os
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope="module")
def members(tmp_path_factory):
    out = tmp_path_factory.mktemp("tarball")
    built = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", ROOT, "--output-path", str(out)],
                           capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (tarball,) = os.listdir(out)
    with tarfile.open(os.path.join(out, tarball)) as archive:
        return archive.getnames()


def test_the_tarball_holds_no_development_file(members):
    development = [name for name in members if name.split("/")[0] in ("tests", "bench", ".ci", ".venv", "extensions")
                   or name in ("awx/generate.py", "Makefile", "ansible.cfg", "pytest.ini")]
    assert development == []


def test_the_tarball_holds_the_product_and_its_changelog(members):
    for name in ("README.md", "LICENSE", "CHANGELOG.rst", "changelogs/changelog.yaml", "requirements.txt", "meta/runtime.yml",
                 "awx/execution-environment.yml", "awx/requirements.txt", "playbooks/create.yml", "roles/flow/tasks/main.yml",
                 "plugins/modules/kcp_plan.py", "docs/flows.md"):
        assert name in members, name


def test_galaxy_yml_publishes_no_placeholder():
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as galaxy:
        text = galaxy.read()
    assert "example.invalid" not in text and "example.com" not in text
    assert yaml.safe_load(text)["version"]
