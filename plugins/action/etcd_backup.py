# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd_backup on the controller, in one task delegated to the control plane host the snapshot is taken through:
the etcd_snapshot module saves it on the host, the file is copied here checked and removed there, etcdutl verifies
the copy, the PKI is archived beside it, the record written, older backups removed (module_utils/etcd_backup.py
decides what verifies and what retention removes). The documentation is in plugins/modules/etcd_backup.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.vault import AnsibleVaultError, VaultLib, match_encrypt_secret
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_backup, private_file
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import etcdutl as etcdutl_tool
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import host_file

CONNECTION = ("endpoints", "ca_file", "cert_file", "key_file", "timeout")
PARTS = (".db", ".pki.tar", ".pki.tar.vault", ".json")  # a backup's files, after its name (the UTC time)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validated = ArgumentSpecValidator(etcd_backup.ARGUMENT_SPEC).validate(dict(self._task.args))
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        params = validated.validated_parameters
        check_mode = bool(self._play_context.check_mode)
        try:
            etcdutl = etcdutl_tool.find(params["etcdutl"], "it verifies the snapshot")
        except ValueError as exc:
            return dict(result, failed=True, msg=str(exc))
        vault = None
        if params["vault_id"]:
            secrets = self._loader._vault.secrets or []
            try:
                vault = match_encrypt_secret(secrets, encrypt_vault_id=params["vault_id"])
            except AnsibleVaultError:
                vault = None
            if not vault:
                return dict(result, failed=True, msg="vault_id: this run has no vault secret %s to encrypt the PKI with (give "
                            "it with --vault-id %s@<file or prompt>, or an AWX Vault credential)" % (params["vault_id"], params["vault_id"]))
            vault = (VaultLib(secrets), vault)
        name = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        saved = self._execute_module(module_name="kubeadm.control_plane.etcd_snapshot", task_vars=task_vars, module_args=dict(
            {key: params[key] for key in CONNECTION}, dest=os.path.join(params["host_dir"], name + ".db")))
        if saved.get("failed"):
            return dict(result, failed=True, msg="the snapshot could not be saved: %s" % saved.get("msg"))
        try:
            return dict(result, **self._keep(params, name, saved, etcdutl, vault, check_mode, task_vars))
        finally:
            if not check_mode:
                self._execute_module(module_name="ansible.legacy.file", module_args={"path": saved["path"], "state": "absent"},
                                     task_vars=task_vars)

    def _keep(self, params, name, saved, etcdutl, vault, check_mode, task_vars):
        """The snapshot ``saved`` on the host made a backup on the controller: the result's fields. ``vault``: (the
        run's VaultLib, the (vault id, secret) to encrypt the PKI with), or None."""
        if not saved.get("cluster_id"):
            return dict(failed=True, msg="the etcd CA certificate %s that names the cluster could not be read" % params["ca_file"])
        directory = os.path.join(os.path.abspath(os.path.expanduser(params["dest_dir"])), saved["cluster_id"])
        removed = etcd_backup.backups_to_remove(
            self._backups(directory) + [{"name": name, "taken": time.time()}], params["keep"],
            params["max_age_days"] * 86400 if params["max_age_days"] else None, time.time())
        if check_mode:
            return dict(changed=True, backup=None, dir=directory, removed=removed)
        made = []
        try:
            for path in (os.path.dirname(directory), directory):
                if not os.path.isdir(path):
                    os.mkdir(path, 0o700)
            snapshot = os.path.join(directory, name + ".db")
            made.append(snapshot)
            host_file.copy_checked(self, saved["path"], saved["sha256"], snapshot, task_vars)
            status = etcdutl_tool.snapshot_status(etcdutl, snapshot)
            problems = etcd_backup.status_problems(status)
            if problems:
                raise ValueError("etcdutl does not take %s for a snapshot of a cluster: %s" % (snapshot, "; ".join(problems)))
            encrypted = vault is not None
            pki = os.path.join(directory, name + (".pki.tar.vault" if encrypted else ".pki.tar"))
            made.append(pki)
            self._archive_pki(params["certificates_dir"], etcd_backup.pki_files(params["external"]), pki, vault, task_vars)
            record = etcd_backup.backup_record(
                saved["cluster_id"], params["kubernetes_version"], self._task.delegate_to or task_vars.get("inventory_hostname"),
                time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.path.basename(snapshot), saved["sha256"],
                os.path.basename(pki), encrypted, status, params["external"])
            made.append(os.path.join(directory, name + ".json"))
            with private_file.replaced_whole(made[-1]) as out:
                out.write(json.dumps(record, indent=2, sort_keys=True).encode())
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            self._remove(made)
            return dict(failed=True, msg="the backup failed, and left nothing on the controller: %s" % exc)
        except BaseException:
            self._remove(made)  # the host stopped answering, the run was interrupted: no backup without its record
            raise
        for old in removed:
            for part in PARTS:
                if os.path.exists(os.path.join(directory, old + part)):
                    os.unlink(os.path.join(directory, old + part))
        return dict(changed=True, backup=record, dir=directory, removed=removed)

    @staticmethod
    def _remove(paths):
        for path in paths:
            if os.path.exists(path):
                os.unlink(path)

    @staticmethod
    def _backups(directory):
        """The cluster's backups on the controller, each ``{name, taken}``, by their records' names (the UTC time)."""
        found = []
        for entry in sorted(os.listdir(directory)) if os.path.isdir(directory) else ():
            try:
                taken = calendar.timegm(time.strptime(entry, "%Y%m%dT%H%M%SZ.json"))
            except ValueError:
                continue  # not a backup's record
            found.append({"name": entry[:-len(".json")], "taken": taken})
        return found

    def _archive_pki(self, certificates_dir, files, dest, vault, task_vars):
        """The PKI ``files`` a restore needs, read from the host into a private directory, archived into ``dest``
        (encrypted when ``vault`` is given); the private directory is removed."""
        work = tempfile.mkdtemp(prefix="kcp-pki-")  # mode 0700
        try:
            archive = io.BytesIO()
            with tarfile.open(fileobj=archive, mode="w") as tar:
                for index, relative in enumerate(files):
                    local = os.path.join(work, str(index))
                    os.close(os.open(local, os.O_CREAT | os.O_WRONLY, 0o600))
                    try:
                        host_file.copy_into(self, os.path.join(certificates_dir, relative), local, task_vars)
                    except host_file.Unreadable as exc:
                        raise ValueError(str(exc))
                    with open(local, "rb") as part:
                        data = part.read()
                    info = tarfile.TarInfo(relative)
                    info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
                    tar.addfile(info, io.BytesIO(data))
            data = archive.getvalue()
            if vault:
                vault_lib, (vault_id, secret) = vault
                data = vault_lib.encrypt(data, secret=secret, vault_id=vault_id)
            with private_file.replaced_whole(dest) as out:
                out.write(data)
        finally:
            shutil.rmtree(work, ignore_errors=True)
