"""Offline stand-in for the pip bootstrap script ansible-test downloads (this machine reaches no host but the
package indexes). ansible-test runs it in an empty virtualenv with get-pip's arguments; it installs pip from the
interpreter's own ensurepip wheel, then lets that pip install the pinned pip release ansible-test asked for."""

import ensurepip
import importlib
import os
import runpy
import sys

# ensurepip switches pip's configuration off in this process's environment; the pip that runs next must
# see the machine's configuration (index, certificates) again.
environment = dict(os.environ)
ensurepip.bootstrap(upgrade=True)
os.environ.clear()
os.environ.update(environment)
importlib.invalidate_caches()
# get-pip takes package specs plus these two switches, which `pip install` does not know.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.argv = ["pip", "install", "--quiet"] + args
runpy.run_module("pip", run_name="__main__", alter_sys=True)
