# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two ways a sandbox command fails on purpose: bad input (nothing touched) or a refused / failed step."""


class SandboxError(Exception):
    """A step could not be done; the message says which and why. The CLI prints it without a traceback."""


class InvalidArguments(SandboxError):
    """Bad input, found before anything was touched: every problem at once, each naming its field and rule."""

    def __init__(self, problems):
        super().__init__("; ".join(problems))
        self.problems = list(problems)
