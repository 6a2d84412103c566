# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the sandbox runs faster than real life, and the one switch (``sandbox up --real-timings``) that
turns every such speed-up off. Each speed-up is an environment variable the emulated components read; ``up``
gives it to every host's SSH sessions and services unless the sandbox runs at real timings.
"""

# variable: (sandbox value, what it speeds up, the real value)
SPEED_UPS = {
    "KCPSIM_HEARTBEAT": ("2", "the kubelet's Lease renewals and Node status checks (written when changed), every 2 s",
                         "nodeStatusUpdateFrequency 10 s"),
    "KCPSIM_KEY_ALGORITHM": ("ECDSA-P256", "kubeadm makes ECDSA-P256 keys where it would make RSA-2048 ones",
                             "RSA-2048 (v1beta4's default encryptionAlgorithm)"),
}


def environment(real_timings, requested):
    """The hosts' environment: the speed-ups (none at real timings), then what ``--env`` asked for (pure)."""
    env = {} if real_timings else {name: value for name, (value, _what, _real) in SPEED_UPS.items()}
    env.update(requested)
    return env
