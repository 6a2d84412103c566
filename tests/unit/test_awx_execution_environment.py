# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environment AWX runs the job templates in (awx/execution-environment.yml, docs/awx.md): ansible-builder
renders its build context (`ansible-builder create`, no container runtime needed) from the collection built as the
definition says, and that context installs the collection, its Python dependencies at their pins, ansible-core and
ansible-runner at the versions the collection is tested with, and an SSH client."""

import io
import os
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
DEFINITION = os.path.join(ROOT, "awx", "execution-environment.yml")


def pins(path):
    with open(path, encoding="utf-8") as requirements:
        return {line.split("==")[0]: line.strip() for line in requirements if "==" in line and not line.startswith("#")}


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    """The build context ansible-builder renders, from a copy of the repository's layout around the definition (the
    definition's paths are relative to it) and the collection tarball `ansible-galaxy collection build` makes."""
    work = tmp_path_factory.mktemp("ee")
    (work / "awx").mkdir()
    shutil.copy(DEFINITION, work / "awx")
    shutil.copy(os.path.join(ROOT, "awx", "requirements.txt"), work / "awx")
    etcd = work / "etcd-v3.6.5-linux-amd64.tar.gz"  # etcd's release archive, as the operator places it
    with tarfile.open(etcd, "w:gz") as archive:
        data = b"#!/bin/sh\necho 'etcdutl version: 3.6.5'\n"
        member = tarfile.TarInfo("etcd-v3.6.5-linux-amd64/etcdutl")
        member.size, member.mode = len(data), 0o755
        archive.addfile(member, io.BytesIO(data))
    built = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", ROOT, "--output-path", str(work)],
                           capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    created = subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "-f", "awx/execution-environment.yml",
                              "-c", "context", "--output-filename", "Containerfile"],
                             cwd=work, capture_output=True, text=True, timeout=300, check=False)
    assert created.returncode == 0, created.stdout + created.stderr
    return work / "context"


def test_the_definition_is_ansible_builder_schema_version_3():
    with open(DEFINITION, encoding="utf-8") as definition:
        assert yaml.safe_load(definition)["version"] == 3


def test_the_context_installs_the_collection_built_from_this_repository(context):
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as galaxy:
        version = yaml.safe_load(galaxy)["version"]
    tarball = "kubeadm-control_plane-%s.tar.gz" % version
    assert os.listdir(context / "_build" / "collection") == [tarball]
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert requirements == {"collections": [{"name": "collection/" + tarball, "type": "file"}]}
    containerfile = (context / "Containerfile").read_text()
    assert "COPY _build /build" in containerfile
    assert 'ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml' in containerfile


def test_the_context_installs_the_collections_python_dependencies_at_the_versions_tested(context):
    copied = pins(context / "_build" / "requirements.txt")
    assert copied == pins(os.path.join(ROOT, "awx", "requirements.txt"))
    with open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8") as declared:
        ranges = [line.split(">=")[0] for line in declared if line.strip() and not line.startswith("#")]
    # every package the collection declares, pinned; the test venv installs the same pins
    assert set(copied) == set(ranges) == {"kubernetes"}
    with open(os.path.join(ROOT, "tests", "requirements.txt"), encoding="utf-8") as tested:
        assert "-r ../awx/requirements.txt\n" in tested.read()
    assert "COPY _build/requirements.txt requirements.txt" in (context / "Containerfile").read_text()


def test_ansible_core_and_runner_are_the_versions_the_collection_is_tested_with(context):
    tested = pins(os.path.join(ROOT, "tests", "requirements.txt"))
    containerfile = (context / "Containerfile").read_text()
    assert 'ARG ANSIBLE_INSTALL_REFS="%s %s"' % (tested["ansible-core"], tested["ansible-runner"]) in containerfile
    # ansible-core 2.19 needs Python 3.11 or later
    assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile


def test_the_job_container_has_an_ssh_client(context):
    assert "openssh-clients [platform:rpm]" in (context / "_build" / "bindep.txt").read_text()


def test_the_job_container_pipes_modules_into_the_hosts_python(context):
    # the setting the flows are measured with (bench/flows.py); without it every module is copied to the host first
    assert "ENV ANSIBLE_PIPELINING=True" in (context / "Containerfile").read_text()


def test_the_image_gets_etcdutl_from_etcds_release_archive(context):
    """etcdutl verifies every backup on the controller, the job's container (docs/disaster-recovery.md)."""
    assert os.listdir(context / "_build" / "etcd") == ["etcd-v3.6.5-linux-amd64.tar.gz"]
    containerfile = (context / "Containerfile").read_text()
    final = containerfile.rsplit("\nFROM ", 1)[1]
    assert "COPY _build/etcd/ /tmp/etcd/" in final and "archive.extract(member, '/usr/local/bin')" in final
    assert "/usr/local/bin/etcdutl version" in final
