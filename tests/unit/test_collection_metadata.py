# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection declares about itself: action groups named for the options their members share."""

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = os.path.join(ROOT, "plugins", "modules")


def fragments_of(module):
    """The collection's doc fragments a module extends."""
    namespace = {}
    with open(os.path.join(MODULES, module + ".py"), encoding="utf-8") as handle:
        source = handle.read()
    start = source.index('DOCUMENTATION = r"""') + len('DOCUMENTATION = r"""')
    namespace = yaml.safe_load(source[start:source.index('"""', start)])
    prefix = "kubeadm.control_plane."
    return {f[len(prefix):] for f in namespace.get("extends_documentation_fragment", []) if f.startswith(prefix)}


def test_each_action_group_holds_exactly_the_modules_that_share_its_options():
    with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as handle:
        groups = yaml.safe_load(handle)["action_groups"]
    modules = sorted(name[:-3] for name in os.listdir(MODULES) if name.endswith(".py"))
    expected = {}
    for module in modules:
        for fragment in fragments_of(module):
            expected.setdefault(fragment, []).append(module)
    assert {group: sorted(members) for group, members in groups.items()} == expected
