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


def _mapping_keys(tree):
    """Strings used as keys of a mapping (``d["k"]``, ``d.get("k")``, ``"k" in d``, ``{"k": …}``): a CNI
    conflist's ``plugins`` field is no path."""
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args:
            keys.add(id(node.args[0]))
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            keys.add(id(node.left))
        elif isinstance(node, ast.Dict):
            keys.update(id(key) for key in node.keys if key is not None)
    return keys


def collection_paths(tree):
    """The string constants of ``tree`` that name a path into the collection (docstrings and mapping keys
    aside)."""
    skipped = _docstrings(tree) | _mapping_keys(tree)
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skipped
            and (node.value == "plugins" or any(marker in node.value for marker in COLLECTION_MARKERS))]


@pytest.mark.parametrize("source, found", [
    ('os.path.join(REPO, "plugins", "module_utils")', ["plugins", "module_utils"]),
    ('path = "plugins"', ["plugins"]),
    ('types = config.get("plugins") if "plugins" in config else config["plugins"]', []),
    ('{"plugins": []}', []),
], ids=["a path joined from the collection's directories is found", "a bare 'plugins' string is found",
        "a CNI conflist's plugins field is a mapping key, not a path", "a dict key is not a path"])
def test_collection_paths_are_told_from_mapping_keys(source, found):
    assert collection_paths(ast.parse(source)) == found


@pytest.mark.parametrize("path", list(_sources()), ids=lambda path: os.path.relpath(path, os.path.dirname(KCPSIM)))
def test_kcpsim_imports_only_the_standard_library_its_debian_packages_and_itself(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    foreign = sorted(set(_imported_tops(tree)) - ALLOWED_IMPORTS - set(sys.stdlib_module_names))
    assert not foreign, "%s imports %s" % (path, foreign)
    paths = collection_paths(tree)
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
