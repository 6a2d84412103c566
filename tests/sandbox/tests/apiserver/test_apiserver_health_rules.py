# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's etcd check (kcpsim.apiserver.health), rate-limited as the real server's newETCD3Check: at most
one etcd read per timeout / 2, the last sent probe's result in between, a lost etcd shown within
timeout / 2 + timeout. Pure: a fake clock and a fake probe."""

import threading

from kcpsim.apiserver import health

TIMEOUT = 1.0


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Etcd:
    """The probe: answers while ``up``; a probe of a lost etcd takes the whole timeout (the clock moves on)."""

    def __init__(self, clock):
        self.clock, self.up, self.reads = clock, True, 0

    def __call__(self, timeout):
        self.reads += 1
        if not self.up:
            self.clock.now += timeout
            raise OSError("context deadline exceeded")


def check_and_etcd():
    clock = Clock()
    etcd = Etcd(clock)
    return health.RateLimitedCheck(etcd, TIMEOUT, errors=(OSError,), clock=clock), etcd, clock


def test_calls_within_half_the_timeout_reuse_the_last_result_without_reading_etcd():
    check, etcd, clock = check_and_etcd()
    assert check() is None and etcd.reads == 1
    for step in range(3):   # callers every 0.125 s: no read until 0.5 s have passed
        clock.now += 0.125
        assert check() is None
    assert etcd.reads == 1
    clock.now += 0.125
    assert check() is None and etcd.reads == 2


def test_at_most_two_reads_per_timeout_however_often_it_is_called():
    check, etcd, clock = check_and_etcd()
    for step in range(80):  # 10 s of calls every 0.125 s
        check()
        clock.now += 0.125
    assert etcd.reads == 20


def test_a_lost_etcd_fails_the_check_within_half_the_timeout_plus_the_timeout():
    check, etcd, clock = check_and_etcd()
    assert check() is None
    clock.now += 0.3
    etcd.up = False
    lost_at, failed_at = clock.now, None
    while failed_at is None and clock.now - lost_at < 5:
        if check() is not None:
            failed_at = clock.now
        clock.now += 0.0625
    assert failed_at is not None and failed_at - lost_at <= TIMEOUT / 2 + TIMEOUT
    assert "error getting data from etcd" in check()   # and it keeps failing
    etcd.up = True
    clock.now += TIMEOUT / 2
    assert check() is None


def test_callers_during_a_probe_in_flight_get_the_previous_result_and_an_older_probe_never_overwrites_a_newer():
    clock = Clock()
    release, answers = threading.Event(), []

    def slow_failing_probe(timeout):
        release.wait(5)
        raise OSError("timed out")
    check = health.RateLimitedCheck(slow_failing_probe, TIMEOUT, errors=(OSError,), clock=clock)
    assert check._last_error == health.NOT_YET
    slow = threading.Thread(target=lambda: answers.append(check()))
    slow.start()
    clock.now += 0.1
    assert check() == health.NOT_YET       # refused by the limiter while the first probe is out
    check.probe = lambda timeout: None
    clock.now += TIMEOUT / 2
    assert check() is None                 # a newer probe succeeded
    release.set()
    slow.join(5)
    assert answers and answers[0] is not None   # the slow caller gets its own failure…
    clock.now += 0.1
    assert check() is None                 # …but the kept result is the newer probe's
