# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark aid, not shipped: the wall-clock seconds of each task of a run (from its start to the next task's, the
linear strategy runs one task at a time), summed by task name with how many of its runs ran a module on a remote
host (and on how many hosts in all), how many a command and no module on a remote host (raw, machine_info; and
on how many hosts), how many one on the controller (delegated to localhost) and how many no
module at all (set_fact, debug, an include, an action plugin that needs no connection, a task skipped
everywhere), written as JSON to $KCP_BENCH_TASK_TIMES at the end of the run, with the run's total. bench/flows.py
splits a flow's time with them."""

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
from ansible.plugins.loader import action_loader

# what the strategy does itself, no action plugin: the controller alone
STRATEGY_ACTIONS = frozenset(("include_tasks", "include_role", "import_tasks", "import_role", "meta"))
# the actions that run a command over the host's connection and no module there (no Python started on the host)
COMMAND_ACTIONS = frozenset(("raw", "machine_info"))
# a task run's kind, the most costly of its hosts' results: no module, a module on the controller, one on a remote
# host, a command and no module on a remote host
NO_MODULE, LOCAL_MODULE, REMOTE_MODULE, REMOTE_COMMAND = 0, 1, 2, 3


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_times"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self._current = None
        self._kind = NO_MODULE
        self._remote = self._command = 0
        self._totals = {}
        self._connection_needed = {}
        self._started = time.monotonic()

    def _close(self):
        if self._current is not None:
            name, started = self._current
            entry = self._totals.setdefault(name, {"seconds": 0.0, "runs": 0, "kinds": [0, 0, 0, 0], "remote_hosts": 0, "command_hosts": 0})
            entry["seconds"] += time.monotonic() - started
            entry["runs"] += 1
            entry["kinds"][self._kind] += 1
            entry["remote_hosts"] += self._remote
            entry["command_hosts"] += self._command
            self._current = None

    def _start(self, name):
        self._close()
        self._current = (name, time.monotonic())
        self._kind = NO_MODULE
        self._remote = self._command = 0

    def _ran(self, result):
        task = result.task if hasattr(result, "task") else result._task
        if not self._needs_connection(task.action):
            return
        data = result.result if hasattr(result, "result") else result._result
        connection = (data.get("_ansible_delegated_vars") or {}).get("ansible_connection")
        host = task.delegate_to or (result.host if hasattr(result, "host") else result._host).get_name()
        if connection == "local" or host in ("localhost", "127.0.0.1"):
            kind = LOCAL_MODULE
        else:
            kind = REMOTE_COMMAND if task.action.rsplit(".", 1)[-1] in COMMAND_ACTIONS else REMOTE_MODULE
        self._kind = max(self._kind, kind)
        self._remote += kind == REMOTE_MODULE
        self._command += kind == REMOTE_COMMAND

    def _needs_connection(self, action):
        """Whether ``action`` runs a module (through a connection): not the strategy's own, nor an action plugin
        that says it needs no connection (set_fact, debug, this collection's kcp_plan ...)."""
        if action not in self._connection_needed:
            if action.rsplit(".", 1)[-1] in STRATEGY_ACTIONS:
                self._connection_needed[action] = False
            else:
                plugin = action_loader.get(action, class_only=True)
                self._connection_needed[action] = plugin is None or getattr(plugin, "_requires_connection", True)
        return self._connection_needed[action]

    def v2_runner_on_ok(self, result):
        self._ran(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._ran(result)

    def v2_runner_on_unreachable(self, result):
        self._ran(result)

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
                json.dump({"seconds": time.monotonic() - self._started, "tasks": self._totals}, handle)
