# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Log lines on stderr in klog's header format (``I1122 03:10:55.658123   42 kube-apiserver] message``), so the
emulated components' logs read like the real ones' in the sandbox's log files."""

import datetime
import os
import sys
import threading

_LOCK = threading.Lock()


def logger(component, stream=None):
    """``log(message, level="I")`` for one component; levels I, W, E as klog writes them."""
    def log(message, level="I"):
        now = datetime.datetime.now()
        line = "%s%s %7d %s] %s\n" % (level, now.strftime("%m%d %H:%M:%S.%f"), os.getpid(), component, message)
        with _LOCK:
            out = stream or sys.stderr
            out.write(line)
            out.flush()
    return log
