# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long the kubelet waits before trying again. Pure.

A crashed static pod: the first restart is immediate, then 1, 2, 4, 8 and at most 10 seconds; a container
that ran for RESET_AFTER seconds starts the sequence again. An unreachable API server: 0.5, 1, 2, 4, 8, at
most 10 seconds between attempts.
"""

CAP = 10.0
RESET_AFTER = 10.0


def restart_delay(consecutive_failures):
    """Seconds before restarting a container that has now exited ``consecutive_failures`` times in a row."""
    if consecutive_failures <= 1:
        return 0.0
    return min(CAP, 2.0 ** (consecutive_failures - 2))


def api_retry_delay(consecutive_failures):
    """Seconds before the next API attempt after ``consecutive_failures`` failed ones (≥ 1)."""
    return min(CAP, 0.5 * 2.0 ** max(0, consecutive_failures - 1))
