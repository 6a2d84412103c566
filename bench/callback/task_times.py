# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark aid, not shipped: the wall-clock seconds of each task of a run (from its start to the next task's, the
linear strategy runs one task at a time), summed by task name and written as JSON to $KCP_BENCH_TASK_TIMES at the
end of the run. bench/flows.py prints the ten most costly."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = """
    name: task_times
    type: aggregate
    short_description: wall-clock seconds per task name, written to $KCP_BENCH_TASK_TIMES (benchmarks only)
    description: Sums each task's wall-clock time by its name and writes the totals as JSON at the end of the run.
    requirements:
      - enabled in ANSIBLE_CALLBACKS_ENABLED, KCP_BENCH_TASK_TIMES set to the output file
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_times"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._current = None
        self._totals = {}

    def _close(self):
        if self._current is not None:
            name, started = self._current
            entry = self._totals.setdefault(name, [0.0, 0])
            entry[0] += time.monotonic() - started
            entry[1] += 1
            self._current = None

    def _start(self, name):
        self._close()
        self._current = (name, time.monotonic())

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start(task.get_name().strip())

    def v2_playbook_on_handler_task_start(self, task):
        self._start(task.get_name().strip())

    def v2_playbook_on_play_start(self, play):
        self._close()

    def v2_playbook_on_stats(self, stats):
        self._close()
        path = os.environ.get("KCP_BENCH_TASK_TIMES")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump({name: {"seconds": seconds, "runs": runs} for name, (seconds, runs) in self._totals.items()}, handle)
