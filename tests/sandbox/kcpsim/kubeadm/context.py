# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every command shares: the host, kubeadm's release, output, errors and the phase runner.

Errors end the command with kubeadm's exit status: 1 for almost everything (phase errors are wrapped as
"error execution phase <name>: ..."), 3 for configuration validation errors that reach the top unwrapped.
"""

from __future__ import annotations

import datetime
import os
import sys

from kcpsim import version as kcpsim_version
from kcpsim.kubeadm.hostfs import Host
from kcpsim.kubeadm.release import Release

KEY_ALGORITHM_ENV = "KCPSIM_KEY_ALGORITHM"


class KubeadmError(Exception):
    """A refusal or failure, printed to stderr with kubeadm's ``--v=5`` hint; ``exit_code`` is the status."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def refuse_unemulated(flags, dry_run_emulated=False):
    """What the emulation does not do is refused, never silently skipped: dry runs other than init's and join's
    (``dry_run_emulated``)."""
    if flags.get("dry-run") and not dry_run_emulated:
        raise KubeadmError("--dry-run is not emulated by the sandbox's kubeadm")


class Context:
    """One kubeadm invocation."""

    def __init__(self, stdout=None, stderr=None, stdin=None, host=None, environ=None, version=None):
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.stdin = stdin or sys.stdin
        self.environ = environ if environ is not None else os.environ
        self.host = host or Host(self.environ.get("KCPSIM_ROOT"))
        self.release = Release.of(version or kcpsim_version.current())

    @property
    def version(self):
        return self.release.version

    def out(self, line=""):
        self.stdout.write(line + "\n")
        self.stdout.flush()

    def warn(self, message):
        """A klog-style warning line on stderr."""
        now = datetime.datetime.now()
        self.stderr.write("W%s %7d kubeadm] %s\n" % (now.strftime("%m%d %H:%M:%S.%f"), os.getpid(), message))
        self.stderr.flush()

    def key_algorithm_override(self):
        """The sandbox speed-up: ``KCPSIM_KEY_ALGORITHM=ECDSA-P256`` (kubeadm itself has no such switch)."""
        return self.environ.get(KEY_ALGORITHM_ENV, "")

    def confirm(self, question):
        """kubeadm's ``[y/N]`` prompt: True only for an answer of y / Y; EOF is a no."""
        self.stdout.write(question + " [y/N]: ")
        self.stdout.flush()
        answer = self.stdin.readline()
        return answer.strip().lower() == "y"


class Phase:
    """A named step of a workflow, optionally with sub-phases (``certs/apiserver``)."""

    def __init__(self, name, run=None, children=()):
        self.name = name
        self.run = run
        self.children = list(children)


def run_phases(phases, data, skip, only=None):
    """Run ``phases`` in order, skipping those named in ``skip`` (a phase or ``phase/sub``).

    ``only``: run just this phase (``certs`` or ``certs/apiserver``), as ``kubeadm init phase`` does.
    A failure is wrapped as "error execution phase <name>: <message>". A name in ``skip`` that is no phase is
    refused before any phase runs, as kubeadm's workflow runner refuses it.
    """
    skip = set(skip or ())
    unknown = sorted(skip - set(phase_names(phases)))
    if unknown:
        raise KubeadmError("invalid phase name: %s" % unknown[0])
    wanted, wanted_child = (only or "").partition("/")[::2]
    for phase in phases:
        if phase.name in skip or (only and wanted != phase.name):
            continue
        children = [c for c in phase.children
                    if "%s/%s" % (phase.name, c.name) not in skip and wanted_child in ("", "all", c.name)]
        steps = ([(phase.name, phase.run)] if phase.run else []) + \
            [("%s/%s" % (phase.name, c.name), c.run) for c in children]
        for name, step in steps:
            try:
                step(data)
            except KubeadmError as exc:
                if exc.message.startswith("error execution phase"):
                    raise
                raise KubeadmError("error execution phase %s: %s" % (name, exc.message), exc.exit_code) from exc
            except Exception as exc:  # noqa: BLE001 - every failure of a phase is reported the kubeadm way
                raise KubeadmError("error execution phase %s: %s" % (name, describe(exc))) from exc


def describe(exc):
    """An exception as one line for the user."""
    return str(exc) or type(exc).__name__


def phase_names(phases):
    out = []
    for phase in phases:
        out.append(phase.name)
        out.extend("%s/%s" % (phase.name, c.name) for c in phase.children)
    return out
