# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CNI plugin stand-ins (``bridge``, ``host-local``, ``loopback``): they report versions, nothing more.

The plugin is named by argv[0]'s basename. ``CNI_COMMAND=VERSION`` prints the CNI version result; no
``CNI_COMMAND`` prints the "about" text to stderr, as the real plugins do; any other command answers a CNI
error (code 4, "invalid configuration") because the sandbox has no pod networking.
"""

import json
import os
import sys

from kcpsim import version

PLUGINS = ("bridge", "host-local", "loopback")


def main(argv=None):
    argv = sys.argv if argv is None else argv
    plugin = os.path.basename(argv[0]) if argv else "cni"
    command = os.environ.get("CNI_COMMAND", "")
    newest = version.CNI_SPEC_VERSIONS[-1]
    if command == "VERSION":
        print(json.dumps({"cniVersion": newest, "supportedVersions": list(version.CNI_SPEC_VERSIONS)}))
        return 0
    if command == "":
        print("CNI %s plugin v%s" % (plugin, version.component_version(version.CNI_PLUGINS_VERSIONS)), file=sys.stderr)
        print("CNI protocol versions supported: %s" % ", ".join(version.CNI_SPEC_VERSIONS), file=sys.stderr)
        return 0
    print(json.dumps({"cniVersion": newest, "code": 4,
                      "msg": "the sandbox's %s stand-in does not implement %s" % (plugin, command)}))
    return 1
