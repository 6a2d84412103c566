#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_software_install
short_description: Install a node's software from the checked bundle in one step
version_added: "0.1.0"
description:
  - Installs on the host what a control plane machine needs from the node software bundle
    (C(docs/node-software.md)), as M(kubeadm.control_plane.node_bundle_info) checked it on the controller -
    kubeadm, kubelet and kubectl; containerd's archive and the CNI plugins' archive extracted; the kubelet's and
    containerd's systemd units and kubeadm's drop-in; the stand-in pod network's configuration; containerd enabled
    and started, the kubelet enabled (kubeadm starts it); IP forwarding on, now and at boot.
  - In two round trips whatever the host holds - one reads what is there, then only the files that differ are
    copied and installed. A host that is up to date costs the first round trip alone.
  - A kubeadm, kubelet or kubectl on the host that is neither the bundle's nor the one this module recorded is
    refused before anything changes, naming the file and both checksums, unless O(replace) is true.
  - Each copied file's SHA-256 is checked on the host before it is installed, so what is installed is what the
    controller checked.
  - Records what it installed (the checksum and version of each of kubeadm, kubelet and kubectl, and the version
    all three are of) in O(record_path), after the binaries, so the record never names software that is not there.
  - O(only) limits a run to some components - an in-place upgrade installs kubeadm, containerd and the CNI plugins
    before C(kubeadm upgrade) and the kubelet and kubectl after the drain (C(docs/in-place-upgrade.md)).
  - An action plugin - the controller side reads the archives' listings and copies the files. The role
    C(kubeadm.control_plane.node_software) checks the bundle and runs it.
author:
  - kubeadm.control_plane contributors (!UNKNOWN)
options:
  artifacts:
    description:
      - The bundle's artifacts, as M(kubeadm.control_plane.node_bundle_info) returns them (C(src), C(dest),
        C(sha256) for each role). The roles this module installs are V(kubeadm), V(kubelet), V(kubectl),
        V(containerd), V(cni_plugins), V(kubelet_unit), V(kubelet_dropin), V(containerd_unit) and V(cni_config);
        others are ignored.
    type: dict
    required: true
  version:
    description: The Kubernetes version the artifacts are of, recorded with their checksums.
    type: str
    required: true
  replace:
    description: Replace a kubeadm, kubelet or kubectl that is neither the bundle's nor one this module recorded.
    type: bool
    default: false
  record_path:
    description: Where the record of what was installed is kept on the host.
    type: path
    default: /var/lib/kubeadm-control-plane/node-software.json
  only:
    description:
      - The components to install, each with the files that go with it - V(kubeadm); V(kubelet) with its
        systemd unit and kubeadm's drop-in; V(kubectl); V(containerd) with its unit; V(cni_plugins);
        V(pod_network), the stand-in pod network's configuration. Null installs them all.
      - What is not named is neither read, checked nor changed, and the record keeps what it said of it. The
        record's C(version) names a version only when kubeadm, the kubelet and kubectl are all of it, and is null
        on a host half way through an upgrade (C(versions) says which binary is of which version).
      - containerd is enabled and started only when V(containerd) is named, the kubelet enabled only when
        V(kubelet) is.
    type: list
    elements: str
    choices: [kubeadm, kubelet, kubectl, containerd, cni_plugins, pod_network]
  staged:
    description:
      - Set by the action plugin, never by a task - null to read the host, else the remote paths of the files it
        copied, by role.
    type: dict
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    description: Reads the host and reports what would be installed; copies nothing.
  diff_mode:
    support: full
    description: The checksums of the files replaced, before and after.
  platform:
    platforms: posix
    description: Runs on the host with the Python standard library; needs root and systemctl.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
notes:
  - An archive is up to date when every member is on the host with its size and modification time; a member that
    is missing or differs has the whole archive extracted again. Members with absolute paths or C(..) are refused.
  - containerd is restarted when its archive was extracted again while it ran, so the new binary runs.
seealso:
  - module: kubeadm.control_plane.node_bundle_info
"""

EXAMPLES = r"""
- name: Check the bundle's files against their checksums
  kubeadm.control_plane.node_bundle_info:
    path: /srv/kcp-bundle
    version: v1.37.1
  delegate_to: localhost
  run_once: true
  register: bundle

- name: Install the node software
  kubeadm.control_plane.node_software_install:
    artifacts: "{{ bundle.artifacts }}"
    version: v1.37.1

- name: Install the new kubeadm, containerd and the CNI plugins only (an in-place upgrade, before kubeadm upgrade)
  kubeadm.control_plane.node_software_install:
    artifacts: "{{ bundle.artifacts }}"
    version: v1.37.1
    only: [kubeadm, containerd, cni_plugins]
"""

RETURN = r"""
installed:
  description: The roles whose files were installed (or, in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: [kubeadm, kubelet, kubectl, containerd]
services:
  description: What was done to the services, for example V(containerd started) or V(kubelet enabled).
  returned: always
  type: list
  elements: str
ip_forward:
  description: Whether IP forwarding was turned on now or its boot setting written.
  returned: always
  type: bool
record:
  description: The record of what is installed, as it is after the run (or, in check mode, would be).
  returned: always
  type: dict
  contains:
    version:
      description: The version kubeadm, the kubelet and kubectl are all of; null when they differ.
      type: str
    versions:
      description: Each binary's version, by name.
      type: dict
    sha256:
      description: Each binary's SHA-256, by name.
      type: dict
transfer:
  description: The roles whose files the host lacks, by which the action plugin decides what to copy.
  returned: when the host was only read
  type: list
  elements: str
"""

import json
import os
import shutil
import tarfile
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.kubeadm.control_plane.plugins.module_utils import node_bundle, software_record
from ansible_collections.kubeadm.control_plane.plugins.module_utils.file_digest import sha256_of

SYSCTL_CONF = "/etc/sysctl.d/99-kubernetes.conf"
SYSCTL_CONTENT = "net.ipv4.ip_forward = 1\n"
IP_FORWARD = "/proc/sys/net/ipv4/ip_forward"


def file_sha256(path):
    """The SHA-256 of ``path``, or None when it is not a file."""
    return sha256_of(path) if os.path.isfile(path) else None


def archive_up_to_date(dest, members):
    """Whether every regular file and directory of an archive's listing is under ``dest`` as listed."""
    for member in members:
        path = os.path.join(dest, member["name"])
        if member["type"] == "dir":
            if not os.path.isdir(path):
                return False
        elif member["type"] == "file":
            try:
                found = os.lstat(path)
            except OSError:
                return False
            if found.st_size != member["size"] or int(found.st_mtime) != member["mtime"]:
                return False
        elif not os.path.islink(path):
            return False
    return True


def systemctl(module, *args):
    rc, out, _err = module.run_command(["systemctl"] + list(args))
    return rc, out.strip()


def read_host(module, artifacts, record_path, roles=node_bundle.INSTALLED):
    """What the host holds of the files ``roles`` names: the SHA-256 of each installed file, the archives not fully
    there; and the services' state, the record, IP forwarding."""
    files = {role: file_sha256(artifacts[role]["dest"]) for role in node_bundle.INSTALLED_FILES if role in roles}
    archives_missing = [role for role in node_bundle.ARCHIVES
                        if role in roles and not archive_up_to_date(artifacts[role]["dest"], artifacts[role].get("members") or [])]
    services = {name: {"enabled": systemctl(module, "is-enabled", name)[1] == "enabled",
                       "active": systemctl(module, "is-active", name)[1] == "active"} for name in ("containerd", "kubelet")}
    try:
        with open(SYSCTL_CONF, encoding="utf-8") as handle:
            sysctl_ok = handle.read() == SYSCTL_CONTENT
    except OSError:
        sysctl_ok = False
    try:
        with open(IP_FORWARD, encoding="utf-8") as handle:
            forwarding = handle.read().strip() == "1"
    except OSError:
        forwarding = False
    return {"files": files, "archives_missing": archives_missing, "services": services, "record": software_record.read(record_path),
            "sysctl_ok": sysctl_ok, "forwarding": forwarding}


def transfer_needed(artifacts, host):
    return sorted([role for role, found in host["files"].items() if found != artifacts[role]["sha256"]] + host["archives_missing"])


def service_actions(host, units_changed, containerd_changed, roles=node_bundle.INSTALLED):
    """What systemctl must do, in order (containerd's and the kubelet's only when ``roles`` installs them)."""
    actions = ["daemon-reload"] if units_changed else []
    containerd, kubelet = host["services"]["containerd"], host["services"]["kubelet"]
    if "containerd" in roles:
        if not containerd["enabled"]:
            actions.append("enable containerd")
        if not containerd["active"]:
            actions.append("start containerd")
        elif containerd_changed:
            actions.append("restart containerd")
    if "kubelet" in roles and not kubelet["enabled"]:
        actions.append("enable kubelet")
    return actions


def safe_members(archive):
    """The archive's members, refusing any that would land outside the directory it is extracted into."""
    members = archive.getmembers()
    for member in members:
        parts = member.name.split("/")
        if member.name.startswith("/") or ".." in parts:
            raise ValueError("member %s would be extracted outside the directory" % member.name)
        if member.issym() and (member.linkname.startswith("/") or ".." in member.linkname.split("/")):
            raise ValueError("member %s links outside the directory (%s)" % (member.name, member.linkname))
        if not (member.isfile() or member.isdir() or member.issym()):
            raise ValueError("member %s is neither a file, a directory nor a symbolic link" % member.name)
    return members


def extract(path, dest):
    """Extract the archive into ``dest``, each file written beside its target then renamed into place: a running
    binary (containerd) is replaced, never written over, and a file is never seen half written."""
    os.makedirs(dest, mode=0o755, exist_ok=True)
    with tarfile.open(path) as archive:
        for member in safe_members(archive):
            target = os.path.join(dest, member.name)
            if member.isdir():
                os.makedirs(target, exist_ok=True)
                os.chmod(target, member.mode & 0o755)
                os.chown(target, 0, 0)
                continue
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            handle, scratch = tempfile.mkstemp(prefix=".kcp-", dir=os.path.dirname(target))
            os.close(handle)
            try:
                if member.issym():
                    os.unlink(scratch)
                    os.symlink(member.linkname, scratch)
                else:
                    with archive.extractfile(member) as source, open(scratch, "wb") as out:
                        shutil.copyfileobj(source, out)
                    os.chmod(scratch, member.mode & 0o755)
                    os.utime(scratch, (member.mtime, member.mtime))
                os.lchown(scratch, 0, 0)
                os.replace(scratch, target)
            except BaseException:
                if os.path.lexists(scratch):
                    os.unlink(scratch)
                raise


def install_file(module, staged, dest, mode):
    os.makedirs(os.path.dirname(dest), mode=0o755, exist_ok=True)
    os.chmod(staged, mode)
    os.chown(staged, 0, 0)
    module.atomic_move(staged, dest)
    os.chmod(dest, mode)


def install(module, artifacts, host, staged, roles, record):
    """Install the staged files in the order the docs give, the record, then the services and IP forwarding."""
    params = module.params
    needed = transfer_needed(artifacts, host)
    missing = [role for role in needed if role not in staged]
    if missing:
        module.fail_json(msg="the host lacks %s and no copy of them was staged" % ", ".join(missing))
    for role in needed:
        found = sha256_of(staged[role])
        if found != artifacts[role]["sha256"]:
            module.fail_json(msg="%s arrived on the host with SHA-256 %s, not the bundle's %s; nothing was installed"
                             % (role, found, artifacts[role]["sha256"]))
    for role in node_bundle.BINARIES:
        if role in needed:
            install_file(module, staged[role], artifacts[role]["dest"], 0o755)
    if record != host["record"]:
        os.makedirs(os.path.dirname(params["record_path"]), mode=0o755, exist_ok=True)
        staged_record = params["record_path"] + ".new"
        with open(staged_record, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=4, sort_keys=True)
        install_file(module, staged_record, params["record_path"], 0o644)
    for role in node_bundle.ARCHIVES:
        if role in needed:
            try:
                extract(staged[role], artifacts[role]["dest"])
            except (OSError, ValueError, tarfile.TarError) as exc:
                module.fail_json(msg="%s: %s" % (role, exc))
    for role in node_bundle.UNITS + node_bundle.CONFIGS:
        if role in needed:
            install_file(module, staged[role], artifacts[role]["dest"], 0o644)
    services = service_actions(host, any(role in needed for role in node_bundle.UNITS), "containerd" in needed, roles)
    for action in services:
        rc, out = systemctl(module, *action.split())
        if rc != 0:
            module.fail_json(msg="systemctl %s failed: %s" % (action, out), installed=needed)
    if not host["sysctl_ok"]:
        os.makedirs(os.path.dirname(SYSCTL_CONF), mode=0o755, exist_ok=True)
        with open(SYSCTL_CONF + ".new", "w", encoding="utf-8") as handle:
            handle.write(SYSCTL_CONTENT)
        install_file(module, SYSCTL_CONF + ".new", SYSCTL_CONF, 0o644)
    if not host["forwarding"]:
        with open(IP_FORWARD, "w", encoding="utf-8") as handle:
            handle.write("1\n")
    return needed, services


def diff(artifacts, host, roles):
    before = "".join("%s %s\n" % (role, host["files"].get(role) or ("incomplete" if role in node_bundle.ARCHIVES else "absent"))
                     for role in roles)
    after = "".join("%s %s\n" % (role, artifacts[role]["sha256"]) for role in roles)
    return {"before": before, "after": after, "before_header": "node software", "after_header": "node software"}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            artifacts=dict(type="dict", required=True),
            version=dict(type="str", required=True),
            replace=dict(type="bool", default=False),
            record_path=dict(type="path", default="/var/lib/kubeadm-control-plane/node-software.json"),
            only=dict(type="list", elements="str", choices=sorted(node_bundle.COMPONENTS)),
            staged=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    roles = node_bundle.selected(params["only"])
    absent = [role for role in roles if role not in params["artifacts"]]
    if absent:
        module.fail_json(msg="artifacts: %s missing (node_bundle_info returns them all)" % ", ".join(absent))
    artifacts = params["artifacts"]
    host = read_host(module, artifacts, params["record_path"], roles)
    foreign = node_bundle.foreign_binaries(artifacts, host["files"], host["record"], params["replace"], roles)
    if foreign:
        module.fail_json(msg=" ".join(foreign) + " Nothing was changed. Set replace (node_software_replace) to replace it.")
    needed = transfer_needed(artifacts, host)
    record = node_bundle.record_after(host["record"], params["version"], artifacts, roles)
    if params["staged"] is None:
        services = service_actions(host, any(role in needed for role in node_bundle.UNITS), "containerd" in needed, roles)
        pending = bool(needed or services or record != host["record"] or not host["sysctl_ok"] or not host["forwarding"])
        module.exit_json(changed=module.check_mode and pending, transfer=needed, installed=needed, services=services,
                         ip_forward=not (host["sysctl_ok"] and host["forwarding"]), pending=pending, record=record,
                         diff=diff(artifacts, host, needed))
    installed, services = install(module, artifacts, host, params["staged"], roles, record)
    module.exit_json(changed=bool(installed or services or record != host["record"] or not host["sysctl_ok"] or not host["forwarding"]),
                     installed=installed, services=services, ip_forward=not (host["sysctl_ok"] and host["forwarding"]),
                     record=record, diff=diff(artifacts, host, installed))


if __name__ == "__main__":
    main()
