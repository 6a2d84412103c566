# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubeadm's patches (``--patches <dir>`` / ``patches.directory``): changes to what kubeadm writes, kept in files.

The rules, as kubeadm's docs state them: a file in the directory is named ``target[suffix][+patchtype].extension``;
``target`` is one of the components kubeadm writes (the static pods ``etcd``, ``kube-apiserver``,
``kube-controller-manager``, ``kube-scheduler``, the kubelet's ``kubeletconfiguration``, the addons'
``corednsdeployment`` and, from 1.37, ``kubeproxydaemonset``); ``patchtype`` is ``strategic`` (the default),
``merge`` or ``json``, as kubectl patch takes them; ``extension`` is ``json`` or ``yaml``. Files are applied in the
order of their names (the suffix orders them), each YAML document of a file a patch of its own. A file that does not
follow the pattern is not applied. A patch that does not apply stops the command. Applying a patch prints
``[patches] Applied patch of type "<content type>" to target "<target>"``.

init and join apply them to what they write, upgrade apply and upgrade node to what they write again: an upgrade
run without the patches writes the manifests without them.
"""

from __future__ import annotations

import json
import os
import re

import yaml

from kcpsim.apiserver import patch
from kcpsim.kubeadm.context import KubeadmError

TARGETS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubeletconfiguration",
           "corednsdeployment")
CONTENT_TYPES = {"strategic": patch.STRATEGIC, "merge": patch.MERGE, "json": patch.JSON_PATCH}
_NAME = re.compile(r"^(?P<stem>[^+]+?)(\+(?P<type>[a-z]+))?\.(?P<extension>json|yaml)$")


def targets(release):
    """The targets kubeadm ``release`` knows."""
    return TARGETS + (("kubeproxydaemonset",) if release.minor >= 37 else ())


def parse_name(name, known):
    """``(target, content type)`` of a patch file's name, or None for a name that is no patch of ``known``."""
    match = _NAME.match(name)
    if not match or (match.group("type") or "strategic") not in CONTENT_TYPES:
        return None
    target = next((t for t in sorted(known, key=len, reverse=True) if match.group("stem").startswith(t)), None)
    return (target, CONTENT_TYPES[match.group("type") or "strategic"]) if target else None


class PatchSet:
    """The patches of a directory, in the order they apply: ``[(target, content type, file name, body)]``."""

    def __init__(self, patches=()):
        self.patches = list(patches)

    @classmethod
    def load(cls, host, directory, release):
        """The patches under ``directory`` on ``host`` (an empty set for no directory); KubeadmError when it cannot
        be read or a file holds no patch."""
        if not directory:
            return cls()
        try:
            names = sorted(os.listdir(host.path(directory)))
        except OSError as exc:
            raise KubeadmError('could not list patch files for path "%s": %s' % (directory, exc.strerror))
        found = []
        for name in names:
            parsed = parse_name(name, targets(release))
            if parsed is None or not os.path.isfile(host.path(os.path.join(directory, name))):
                continue
            text = host.read_text(os.path.join(directory, name))
            try:
                bodies = [json.loads(text)] if name.endswith(".json") else \
                    [doc for doc in yaml.safe_load_all(text) if doc is not None]
            except (ValueError, yaml.YAMLError) as exc:
                raise KubeadmError('could not parse patch file "%s": %s' % (name, exc))
            found += [(parsed[0], parsed[1], name, body) for body in bodies]
        return cls(found)

    def apply(self, target, obj, out):
        """``obj`` with every patch of ``target`` applied in turn, each said on ``out``; KubeadmError for one that
        does not apply."""
        for patch_target, content_type, name, body in self.patches:
            if patch_target != target:
                continue
            try:
                obj = patch.apply(content_type, obj, body)
            except patch.PatchError as exc:
                raise KubeadmError('could not apply the patch "%s" of type "%s" to target "%s": %s'
                                   % (name, content_type, target, exc))
            out('[patches] Applied patch of type "%s" to target "%s"' % (content_type, target))
        return obj


def patched_objects(patch_set, target, objects, kind, out):
    """An addon's ``(api, resource, namespace, object)`` list with ``target``'s patches applied to its ``kind``."""
    return [(api, resource, namespace, patch_set.apply(target, obj, out) if obj.get("kind") == kind else obj)
            for api, resource, namespace, obj in objects]
