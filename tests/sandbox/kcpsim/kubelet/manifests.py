# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static pod manifests: reading ``staticPodPath``, the config hash, and the container's command line.

Like the real kubelet: ``*.yaml``, ``*.yml`` and ``*.json`` files, dotfiles ignored; a pod is named by
``metadata.name``; its ``kubernetes.io/config.hash`` changes whenever the manifest's content does (here:
md5 of the pod as canonical JSON, so formatting alone does not count). A file that does not parse keeps
the last good version of its pod (kubeadm rewrites manifests in place, and a half-written file must not
stop etcd); a pod whose file disappears is gone.
"""

import hashlib
import json
import os
import stat
import time

import yaml

SUFFIXES = (".yaml", ".yml", ".json")
REREAD_SECONDS = 20.0


class Manifest:
    """One static pod: ``name`` (metadata.name), the ``pod`` dict, its ``config_hash``, its ``path``."""

    def __init__(self, path, pod):
        self.path = path
        self.pod = pod
        self.metadata = pod.get("metadata") or {}
        self.name = self.metadata["name"]
        self.namespace = self.metadata.get("namespace") or "default"
        self.spec = pod.get("spec") or {}
        self.container = (self.spec.get("containers") or [{}])[0]
        self.config_hash = config_hash(pod)

    @property
    def grace_period(self):
        return float(self.spec.get("terminationGracePeriodSeconds", 30))


def config_hash(pod):
    return hashlib.md5(json.dumps(pod, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def _problem(pod):
    """Why ``pod`` cannot be run as a static pod, or None."""
    if not isinstance(pod, dict) or pod.get("kind") != "Pod":
        return "not a Pod"
    name = (pod.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not name:
        return "metadata.name is missing"
    containers = (pod.get("spec") or {}).get("containers")
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
        return "spec.containers is empty"
    if not containers[0].get("image"):
        return "spec.containers[0].image is missing"
    return None


def read_file(path):
    """``(Manifest, None)`` or ``(None, reason)``."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            pod = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return None, "cannot read %s: %s" % (path, exc)
    problem = _problem(pod)
    if problem:
        return None, "%s: %s" % (path, problem)
    return Manifest(path, pod), None


class ManifestDir:
    """Polls a static pod directory; ``scan()`` returns ``({name: Manifest}, [problems])``.

    A file is parsed again only when its inode, size, modification or change time differ from the last read, or
    that read is older than ``REREAD_SECONDS`` (the real kubelet's fileCheckFrequency, its periodic full re-read
    behind the inotify events): parsing every manifest on every poll cost each emulated node a tenth of a core.
    """

    def __init__(self, path, clock=time.monotonic):
        self.path = path
        self.clock = clock
        self._last_good = {}  # file path -> Manifest
        self._reads = {}  # file path -> (stat key, read_file's answer, when read)

    def _read(self, path):
        """``read_file(path)``, from the last read while the file is unchanged; None when it is not a file."""
        try:
            info = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        key = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        now = self.clock()
        last = self._reads.get(path)
        if last is not None and last[0] == key and now - last[2] < REREAD_SECONDS:
            return last[1]
        answer = read_file(path)
        self._reads[path] = (key, answer, now)
        return answer

    def scan(self):
        problems = []
        try:
            entries = sorted(os.listdir(self.path)) if self.path else []
        except FileNotFoundError:
            entries = []
        except OSError as exc:
            return {m.name: m for m in self._last_good.values()}, ["cannot list %s: %s" % (self.path, exc)]
        files = [os.path.join(self.path, e) for e in entries if not e.startswith(".") and e.endswith(SUFFIXES)]
        current = {}
        self._reads = {path: read for path, read in self._reads.items() if path in files}
        for path in files:
            answer = self._read(path)
            if answer is None:
                continue
            manifest, problem = answer
            if manifest is None:
                problems.append(problem)
                manifest = self._last_good.get(path)
            if manifest is not None:
                current[path] = manifest
        self._last_good = current
        pods = {}
        for path, manifest in current.items():
            if manifest.name in pods:
                problems.append("%s: a static pod named %r already comes from %s"
                                % (path, manifest.name, pods[manifest.name].path))
                continue
            pods[manifest.name] = manifest
        return pods, problems


def command_line(container, executable):
    """``[executable] + command[1:] + args``: the image's binary stands in for the container's argv[0]."""
    command = [str(part) for part in container.get("command") or []]
    args = [str(part) for part in container.get("args") or []]
    return [executable] + command[1:] + args


def environment(container, inherited):
    """The container's ``env`` (plain values) on top of PATH and the sandbox's ``KCPSIM_*`` settings."""
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    env.update({key: value for key, value in inherited.items() if key.startswith("KCPSIM_")})
    for item in container.get("env") or []:
        if isinstance(item, dict) and item.get("name") and "value" in item:
            env[item["name"]] = str(item["value"])
    return env
