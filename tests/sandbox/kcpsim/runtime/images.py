# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image references → executables, through the release mirror's ``images.json``.

``images.json`` maps ``registry.k8s.io/<component>:<tag>`` to a path relative to its own (real) directory,
or to null for an image the mirror lists but nothing in the sandbox runs (pause, CoreDNS, kube-proxy). An
image from another repository (a custom ``imageRepository``) resolves by its last path element and tag,
as if that repository mirrored the same images.
"""

import json
import os

DEFAULT_IMAGES_FILE = "/opt/kcpsim/releases/images.json"


class ImageNotFound(Exception):
    """The image is not in the mirror (like a failed pull: the pod cannot start)."""


def images_file():
    return os.environ.get("KCPSIM_IMAGES") or DEFAULT_IMAGES_FILE


def short_name(image):
    """``etcd:3.5.15-0`` for ``registry.k8s.io/etcd:3.5.15-0``."""
    return image.rsplit("/", 1)[-1]


class ImageIndex:
    """Reads images.json lazily and again whenever it changes on disk."""

    def __init__(self, path=None):
        self.path = path or images_file()
        self._stamp = None
        self._exact = {}
        self._short = {}

    def _refresh(self):
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise ImageNotFound("the image mirror %s is unreadable: %s" % (self.path, exc.strerror))
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp == self._stamp:
            return
        try:
            with open(self.path, "r", encoding="utf-8") as handle:
                mapping = json.load(handle)
        except (OSError, ValueError) as exc:
            raise ImageNotFound("the image mirror %s is unreadable: %s" % (self.path, exc))
        base = os.path.dirname(os.path.realpath(self.path))
        self._exact = {image: os.path.normpath(os.path.join(base, target)) if target else None
                       for image, target in mapping.items()}
        self._short = {}
        for image, target in sorted(self._exact.items()):
            self._short.setdefault(short_name(image), target)
        self._stamp = stamp

    def resolve(self, image):
        """The executable for ``image``; ImageNotFound when the mirror lacks it."""
        self._refresh()
        known = image in self._exact or short_name(image) in self._short
        target = self._exact[image] if image in self._exact else self._short.get(short_name(image))
        if not known:
            raise ImageNotFound("image %s is not in the mirror %s" % (image, self.path))
        if target is None:
            raise ImageNotFound("image %s is in the mirror but the sandbox has nothing that runs it" % image)
        if not os.access(target, os.X_OK):
            raise ImageNotFound("image %s maps to %s, which is not an executable" % (image, target))
        return target
