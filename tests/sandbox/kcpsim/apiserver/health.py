# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's etcd health check, rate-limited as the real one is.

The real kube-apiserver (k8s.io/apiserver, storage/storagebackend/factory/etcd3.go, ``newETCD3Check``) reads
``/health`` from etcd at most once per half of the check's timeout (``rate.NewLimiter(rate.Every(timeout/2), 1)``:
one token, refilled every ``timeout/2``); a call the limiter refuses answers the result of the last probe *sent*
(kept with the time it was sent, a newer probe's result replaces an older one's, never the other way round),
before any probe "etcd client connection not yet established". So however often load balancers and probes call
/readyz, etcd sees at most ``2 / timeout`` reads a second from it, and a lost quorum shows within
``timeout / 2 + timeout``: the first probe after the loss is sent at most ``timeout / 2`` later and fails at most
``timeout`` after that.
"""

import threading
import time

NOT_YET = "etcd client connection not yet established"


class RateLimitedCheck:
    """``check()`` -> None when healthy, else the error text. ``probe(timeout)`` raises ``errors`` on failure."""

    def __init__(self, probe, timeout, errors=(Exception,), clock=time.monotonic):
        self.probe = probe
        self.timeout = timeout
        self.interval = timeout / 2.0
        self.errors = errors
        self.clock = clock
        self.probes = 0                 # probes sent (for tests)
        self._lock = threading.Lock()
        self._allowed_at = None         # when the limiter next has a token; None: it has one now
        self._last_sent = None          # when the probe whose result is kept was sent
        self._last_error = NOT_YET

    def __call__(self):
        with self._lock:
            sent = self.clock()
            if self._allowed_at is not None and sent < self._allowed_at:
                return self._last_error
            self._allowed_at = sent + self.interval
            self.probes += 1
        try:
            self.probe(self.timeout)
            error = None
        except self.errors as exc:
            error = "error getting data from etcd: %s" % exc
        with self._lock:
            if self._last_sent is None or self._last_sent < sent:
                self._last_sent, self._last_error = sent, error
        return error
