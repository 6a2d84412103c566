# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulation stands on its own: kcpsim loads nothing of the collection (plugins/), so a bug in the
collection's etcd transport cannot hide itself by sitting on both sides of a test, and the bundles carry only
kcpsim."""

import ast
import os
import sys
import zipfile

import pytest

from kcpsim import build, version

KCPSIM = os.path.dirname(os.path.abspath(build.__file__))
# What a host's /usr/bin/python3 offers besides the standard library (Debian packages), and kcpsim itself.
ALLOWED_IMPORTS = {"kcpsim", "cryptography", "yaml"}
COLLECTION_MARKERS = ("module_utils", "ansible_collections", "etcd_gateway")


def _sources():
    for directory, dirs, names in os.walk(KCPSIM):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def _imported_tops(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0]


def _docstrings(tree):
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


@pytest.mark.parametrize("path", list(_sources()), ids=lambda path: os.path.relpath(path, os.path.dirname(KCPSIM)))
def test_kcpsim_imports_only_the_standard_library_its_debian_packages_and_itself(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    foreign = sorted(set(_imported_tops(tree)) - ALLOWED_IMPORTS - set(sys.stdlib_module_names))
    assert not foreign, "%s imports %s" % (path, foreign)
    prose = _docstrings(tree)
    paths = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and id(node) not in prose
             and (node.value == "plugins" or any(marker in node.value for marker in COLLECTION_MARKERS))]
    assert not paths, "%s names a path into the collection: %s" % (path, paths)


def test_the_bundled_binaries_hold_kcpsim_and_nothing_of_the_collection(releases):
    sources = {os.path.relpath(path, os.path.dirname(KCPSIM)) for path in _sources()}
    sources.discard(os.path.join("kcpsim", "build.py"))
    checked = 0
    for release in version.RELEASES:
        for binary in sorted((releases / release / "bin").iterdir()):
            with zipfile.ZipFile(binary) as archive:
                names = set(archive.namelist())
            assert names - sources == {"__main__.py", "kcpsim/_stamp.py"}, binary
            checked += 1
    assert checked >= len(version.RELEASES)
