# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd_restore on the controller, in one task delegated to the host the cluster comes back on: the backup is
verified here, the host read, the restore decided (module_utils/etcd_restore.py), the restored data directory made
here with etcdutl in a private directory, copied to the host and put in place by the module there. The
documentation is in plugins/modules/etcd_restore.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import glob
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from urllib.parse import urlsplit

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.vault import VaultLib, is_encrypted
from ansible.plugins.action import ActionBase
from ansible_collections.kubeadm.control_plane.plugins.module_utils import etcd_restore
from ansible_collections.kubeadm.control_plane.plugins.plugin_utils import etcdutl as etcdutl_tool

MODULE = "kubeadm.control_plane.etcd_restore"
WORK_PREFIX = ".restore-"  # the private work directory's, beside the backups (a backup's files are named by time)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validated = ArgumentSpecValidator(etcd_restore.ARGUMENT_SPEC).validate(dict(self._task.args))
        if validated.error_messages:
            return dict(result, failed=True, msg="invalid arguments: " + "; ".join(validated.error_messages))
        params = validated.validated_parameters
        try:
            etcdutl = etcdutl_tool.find(params["etcdutl"], "it verifies and restores the snapshot")
        except ValueError as exc:
            return dict(result, failed=True, msg=str(exc))
        # private (0700), beside the backups (as protected, and room for a copy of the snapshot): the snapshot is
        # checked and restored from one copy, which no retention or other run changes meanwhile
        backups = os.path.dirname(os.path.abspath(params["backup"]))
        for stale in glob.glob(os.path.join(backups, WORK_PREFIX + "*")):
            shutil.rmtree(stale, ignore_errors=True)  # what a killed run left: a snapshot's copy, restored data
        try:
            work = tempfile.mkdtemp(prefix=WORK_PREFIX, dir=backups)
        except OSError as exc:
            return dict(result, failed=True, msg="backup %s refused, nothing was touched: %s" % (params["backup"], exc))
        try:
            return dict(result, **self._restore(params, etcdutl, work, task_vars))
        finally:
            shutil.rmtree(work, ignore_errors=True)
            if self._connection._shell.tmpdir:
                self._remove_tmp_path(self._connection._shell.tmpdir)

    def _restore(self, params, etcdutl, work, task_vars):
        """The task's result: the backup verified, the host read, the restore decided and, unless it is not to be
        made (or in check mode), made."""
        try:
            record, snapshot = self._verified(params["backup"], etcdutl, work)
        except ValueError as exc:
            return dict(failed=True, msg="backup %s refused, nothing was touched: %s" % (params["backup"], exc))
        name = etcd_restore.backup_name(params["backup"])
        read = self._execute_module(module_name=MODULE, module_args=dict(params), task_vars=task_vars)
        if read.get("failed"):
            return dict(failed=True, msg="the host could not be read: %s" % read.get("msg"))
        host = dict(read["host"], manifest=bool(read["host"]["manifest"]))
        new_host = params["new_host"]
        decision, reason = etcd_restore.restore_decision(record, name, host, params["answered"], params["quorum"], params["force"],
                                                         params["members"], params["holders"], new_host, params["asked"])
        if decision == etcd_restore.REFUSE:
            return dict(failed=True, msg="restore refused, nothing was touched: %s" % reason)
        if decision == etcd_restore.RESTORED:
            here = read["host"]["record"]
            restored = self._restored(record, name, reason, None)
            return dict(changed=False, restored=restored, kept=here.get("kept"), restored_at=here.get("started"),
                        **self._new_host_result(restored, here.get("new_host"), here.get("data_dir")))
        made_new = etcd_restore.as_new_host(host, name, new_host)
        pki = None
        if made_new:
            flags = etcd_restore.new_host_flags(new_host["name"], new_host["address"], params["data_dir"])
            try:
                pki = self._verified_pki(params["backup"], record, work)
            except ValueError as exc:
                return dict(failed=True, msg="backup %s refused, nothing was touched: its PKI archive %s" % (params["backup"], exc))
        else:
            flags = etcd_restore.manifest_flags(read["host"]["manifest"])
        try:
            bump = self._bumps(etcdutl)
            token = "restored-%s-%s" % (flags.get("name"), time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
            arguments = etcd_restore.member_restore_arguments(flags, token, bump)
        except (KeyError, ValueError, TypeError) as exc:
            return dict(failed=True, msg="restore refused, nothing was touched: %s" % exc)
        restored = self._restored(record, name, reason, bump)
        warnings = [] if bump else [
            "etcdutl cannot bump the revision (--bump-revision: etcd 3.5.13 and 3.6): the restored revisions are older than "
            "what watchers saw; restart the kubelets and every controller that watches the API"]
        data_dir = flags.get("data-dir") or params["data_dir"]
        if self._play_context.check_mode:
            return dict(changed=True, restored=restored, kept=None, restored_at=None, warnings=warnings, **self._new_host_result(restored, made_new, data_dir))
        address = urlsplit(flags.get("advertise-client-urls", "").split(",")[0]).hostname or "127.0.0.1"
        try:
            archive = self._restored_archive(etcdutl, snapshot, arguments, work)
            tmpdir = self._make_tmp_path()
            staged = self._connection._shell.join_path(tmpdir, "restored.tar")
            self._transfer_file(archive, staged)
            staged_pki = None
            if pki:
                staged_pki = self._connection._shell.join_path(tmpdir, "pki.tar")
                self._transfer_file(pki, staged_pki)
            self._fixup_perms2([tmpdir, staged] + ([staged_pki] if staged_pki else []))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            return dict(failed=True, msg="the restore stopped before the host was changed: %s" % exc)
        # the host's record as this run read it: the host refuses to go on when another run changed it since
        done = self._execute_module(module_name=MODULE, task_vars=task_vars, module_args=dict(
            params, staged={"archive": staged, "pki": staged_pki, "backup": name, "data_dir": data_dir, "address": address,
                            "expected": read["host"]["record"]}))
        if done.get("failed"):
            return dict(failed=True, msg=done.get("msg"), restored=restored)
        return dict(changed=True, restored=restored, kept=done["kept"], restored_at=done["started"], warnings=warnings,
                    **self._new_host_result(restored, made_new, data_dir))

    @staticmethod
    def _restored(record, name, reason, bump):
        taken = calendar.timegm(time.strptime(record["taken"], "%Y-%m-%dT%H:%M:%SZ"))
        return {"backup": name, "revision": record["etcd"]["revision"], "taken": record["taken"], "bumped": bump,
                "lost": etcd_restore.what_is_lost(record, time.time(), taken), "reason": reason}

    def _new_host_result(self, restored, new_host, data_dir):
        """What the run says of the restore, whether it is (was) made on the host as a new host, and the kubeadm init
        preflight errors the init that follows there ignores: the data directory the restore filled."""
        return {"said": etcd_restore.restore_said(restored, self._task.delegate_to if new_host else None),
                "new_host": bool(new_host),
                "ignore_preflight_errors": [etcd_restore.data_dir_preflight_check(data_dir)] if new_host and data_dir else []}

    def _verified_pki(self, path, record, work):
        """The path, in ``work``, of the backup's PKI archive decrypted (with the run's vault secrets when it is
        encrypted) once it holds the PKI of the backup's cluster; ValueError saying why not."""
        source = os.path.join(os.path.dirname(path), os.path.basename(record["pki"]))
        try:
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise ValueError("cannot be read: %s" % exc)
        if is_encrypted(data):
            try:
                data = VaultLib(self._loader._vault.secrets or []).decrypt(data)
            except AnsibleError:
                vault_id = data.split(b"\n", 1)[0].split(b";")[3:4]
                raise ValueError("is encrypted with Ansible Vault%s and this run has no secret that opens it (give it with "
                                 "--vault-id, or an AWX Vault credential)" % (" (vault id %s)" % vault_id[0].decode() if vault_id else ""))
        elif record.get("pki_encrypted"):
            raise ValueError("is not encrypted, and the record says it was: it is not the archive the backup made")
        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                files = {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}
        except tarfile.TarError as exc:
            raise ValueError("is not a tar archive: %s" % exc)
        problems = etcd_restore.pki_problems(files, record["cluster_id"])
        if problems:
            raise ValueError("; ".join(problems))
        archive = os.path.join(work, "pki.tar")
        with os.fdopen(os.open(archive, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out, \
                tarfile.open(fileobj=out, mode="w") as tar:
            for name in sorted(files):
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(files[name]), 0o600
                tar.addfile(info, io.BytesIO(files[name]))
        return archive

    @staticmethod
    def _verified(path, etcdutl, work):
        """(the backup's record, the path of its snapshot's copy in ``work``) once the copy is the snapshot the record
        describes; ValueError saying why not."""
        try:
            with open(path, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError) as exc:
            raise ValueError("its record cannot be read: %s" % exc)
        if not isinstance(record, dict) or not isinstance(record.get("snapshot"), str):
            raise ValueError("it is not a backup's record (no snapshot named)")
        copy = os.path.join(work, "snapshot.db")
        digest = hashlib.sha256()
        try:
            with open(os.path.join(os.path.dirname(path), os.path.basename(record["snapshot"])), "rb") as source, \
                    os.fdopen(os.open(copy, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out:
                for block in iter(lambda: source.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
        except OSError as exc:
            raise ValueError("its snapshot cannot be read: %s" % exc)
        try:
            status = etcdutl_tool.snapshot_status(etcdutl, copy)
        except ValueError:
            status = None  # verification_problems says etcdutl does not read it as a snapshot
        problems = etcd_restore.verification_problems(record, digest.hexdigest(), status)
        if problems:
            raise ValueError("; ".join(problems))
        return record, copy

    @staticmethod
    def _bumps(etcdutl):
        """Whether this etcdutl can bump the revision of what it restores (--bump-revision)."""
        done = subprocess.run([etcdutl, "snapshot", "restore", "--help"], capture_output=True, text=True, timeout=60, check=False)
        return "--bump-revision" in done.stdout + done.stderr

    @staticmethod
    def _restored_archive(etcdutl, snapshot, arguments, work):
        """The data directory etcdutl restores ``snapshot`` into, made in ``work`` and archived there (a tar)."""
        data = os.path.join(work, "data")
        done = subprocess.run([etcdutl, "snapshot", "restore", snapshot, "--data-dir", data] + arguments,
                              capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0:
            raise ValueError("etcdutl snapshot restore failed: %s" % (done.stderr.strip() or done.stdout.strip()))
        archive = os.path.join(work, "restored.tar")
        with os.fdopen(os.open(archive, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out, \
                tarfile.open(fileobj=out, mode="w") as tar:
            for entry in sorted(os.listdir(data)):
                tar.add(os.path.join(data, entry), arcname=entry)
        return archive
