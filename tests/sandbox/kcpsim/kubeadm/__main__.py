# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``kubeadm`` command line (the sandbox's emulation): ``main(argv)`` parses and dispatches.

Flags are written ``--name=value`` or ``--name value``; list flags take commas or repeat. Errors are printed
to stderr with kubeadm's ``--v=5`` hint, never as a Python traceback (``--v=5`` adds one, as kubeadm adds a
stack trace); the exit status is kubeadm's.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback

import yaml

from kcpsim import version as kcpsim_version
from kcpsim.kubeadm import (bootstraptoken, cmd_certs, cmd_config, cmd_init, cmd_join, cmd_reset, cmd_token, cmd_upgrade,
                            config, images)
from kcpsim.kubeadm.context import Context, KubeadmError, describe

LIST_FLAGS = ("ignore-preflight-errors", "skip-phases", "discovery-token-ca-cert-hash", "groups", "usages",
              "apiserver-cert-extra-sans")


class _Parser(argparse.ArgumentParser):
    """Usage errors become KubeadmError (exit 1), as cobra reports them."""

    def error(self, message):
        if "invalid choice:" in message:
            word = message.split("invalid choice:", 1)[1].split("(")[0].strip().strip("'")
            raise KubeadmError('unknown command "%s" for "%s"' % (word, self.prog))
        raise KubeadmError(message.replace("unrecognized arguments", "unknown flag"))

    def exit(self, status=0, message=None):
        if message:
            raise KubeadmError(message.strip(), exit_code=status or 1)
        raise SystemExit(status)


def _flag(parser, name, short=None, kind=str, default=None, help_text=""):
    names = ["--" + name] + (["-" + short] if short else [])
    if kind is bool:
        parser.add_argument(*names, dest=name, action="store_true", default=None, help=help_text)
    elif name in LIST_FLAGS:
        parser.add_argument(*names, dest=name, action="append", default=default, help=help_text)
    else:
        parser.add_argument(*names, dest=name, type=kind, default=default, help=help_text)


def _common(parser):
    parser.add_argument("--v", "-v", dest="v", type=int, default=None, help="log level (5 adds stack traces)")
    parser.add_argument("--rootfs", dest="rootfs", default=None, help=argparse.SUPPRESS)


def _init_flags(parser):
    for name in ("config", "apiserver-advertise-address", "control-plane-endpoint", "kubernetes-version",
                 "node-name", "pod-network-cidr", "service-cidr", "service-dns-domain", "cert-dir", "cri-socket",
                 "token", "token-ttl", "certificate-key", "image-repository", "feature-gates", "patches",
                 "ignore-preflight-errors", "skip-phases", "apiserver-cert-extra-sans"):
        _flag(parser, name)
    _flag(parser, "apiserver-bind-port", kind=int)
    for name in ("upload-certs", "skip-certificate-key-print", "skip-token-print", "dry-run"):
        _flag(parser, name, kind=bool)
    _common(parser)


def _build_parser():
    root = _Parser(prog="kubeadm", description="kubeadm (sandbox emulation): easily bootstrap a secure "
                                               "Kubernetes cluster")
    commands = root.add_subparsers(dest="command", parser_class=_Parser)

    version = commands.add_parser("version", help="print the version of kubeadm")
    _flag(version, "output", short="o")
    _common(version)

    init = commands.add_parser("init", help="run this command in order to set up the Kubernetes control plane")
    init_sub = init.add_subparsers(dest="init_command", parser_class=_Parser)
    phase = init_sub.add_parser("phase", help="use this command to invoke single phase of the init workflow")
    phase.add_argument("phase_name", help="the phase, e.g. upload-certs, certs, kubeconfig")
    phase.add_argument("phase_sub", nargs="?", default=None, help="a sub-phase or 'all'")
    _init_flags(phase)
    _flag(phase, "kubeconfig")
    _init_flags(init)

    join = commands.add_parser("join", help="run this on any machine you wish to join an existing cluster")
    join.add_argument("endpoint", nargs="?", default=None)
    for name in ("config", "token", "discovery-token", "discovery-file", "tls-bootstrap-token", "certificate-key",
                 "apiserver-advertise-address", "node-name", "cri-socket", "patches", "ignore-preflight-errors",
                 "skip-phases", "discovery-token-ca-cert-hash"):
        _flag(join, name)
    _flag(join, "apiserver-bind-port", kind=int)
    for name in ("control-plane", "discovery-token-unsafe-skip-ca-verification", "dry-run"):
        _flag(join, name, kind=bool)
    _common(join)

    reset = commands.add_parser("reset", help="performs a best effort revert of changes made by init or join")
    _flag(reset, "force", short="f", kind=bool)
    for name in ("config", "cert-dir", "kubeconfig", "cri-socket", "ignore-preflight-errors", "skip-phases"):
        _flag(reset, name)
    _flag(reset, "cleanup-tmp-dir", kind=bool)
    _flag(reset, "dry-run", kind=bool)
    _common(reset)

    token = commands.add_parser("token", help="manage bootstrap tokens")
    token_sub = token.add_subparsers(dest="token_command", parser_class=_Parser)
    create = token_sub.add_parser("create", help="create bootstrap tokens on the server")
    create.add_argument("token_arg", metavar="token", nargs="?", default=None)
    for name in ("kubeconfig", "ttl", "description", "certificate-key", "config", "groups", "usages"):
        _flag(create, name)
    _flag(create, "print-join-command", kind=bool)
    _common(create)
    token_list = token_sub.add_parser("list", help="list bootstrap tokens on the server")
    _flag(token_list, "kubeconfig")
    _common(token_list)
    token_delete = token_sub.add_parser("delete", help="delete bootstrap tokens on the server")
    token_delete.add_argument("tokens", nargs="*")
    _flag(token_delete, "kubeconfig")
    _common(token_delete)
    token_generate = token_sub.add_parser("generate", help="generate and print a bootstrap token")
    _common(token_generate)

    certs = commands.add_parser("certs", help="commands related to handling kubernetes certificates")
    certs_sub = certs.add_subparsers(dest="certs_command", parser_class=_Parser)
    _common(certs_sub.add_parser("certificate-key", help="generate certificate keys"))
    check = certs_sub.add_parser("check-expiration", help="check certificates expiration for a Kubernetes cluster")
    for name in ("config", "cert-dir", "kubeconfig"):
        _flag(check, name)
    _flag(check, "output", short="o")
    _common(check)
    renew = certs_sub.add_parser("renew", help="renew certificates for a Kubernetes cluster")
    renew.add_argument("name", help="all, or one certificate name (as check-expiration lists them)")
    for name in ("config", "cert-dir", "kubeconfig"):
        _flag(renew, name)
    _common(renew)

    config_cmd = commands.add_parser("config", help="manage configuration for a kubeadm cluster")
    config_sub = config_cmd.add_subparsers(dest="config_command", parser_class=_Parser)
    images_cmd = config_sub.add_parser("images", help="interact with container images used by kubeadm")
    images_sub = images_cmd.add_subparsers(dest="images_command", parser_class=_Parser)
    images_list = images_sub.add_parser("list", help="print a list of images kubeadm will use")
    for name in ("config", "kubernetes-version", "image-repository", "feature-gates"):
        _flag(images_list, name)
    _common(images_list)
    validate = config_sub.add_parser(
        "validate", help="read a file containing the kubeadm configuration API and report any validation problems")
    _flag(validate, "config")
    migrate = config_sub.add_parser(
        "migrate", help="read an older version of the kubeadm configuration API types from a file, and output the "
                        "similar config object for the newer version")
    for name in ("old-config", "new-config"):
        _flag(migrate, name)
    for sub in (validate, migrate):
        _flag(sub, "allow-experimental-api", kind=bool)
        _common(sub)
    _flag(validate, "allow-deprecated-api", kind=bool)

    upgrade = commands.add_parser("upgrade", help="upgrade your cluster smoothly to a newer version with this command")
    upgrade_sub = upgrade.add_subparsers(dest="upgrade_command", parser_class=_Parser)
    plan = upgrade_sub.add_parser("plan", help="check which versions are available to upgrade to")
    plan.add_argument("version", nargs="?", default=None)
    apply = upgrade_sub.add_parser("apply", help="upgrade your Kubernetes cluster to the specified version")
    apply.add_argument("version", nargs="?", default=None)
    node = upgrade_sub.add_parser("node", help="upgrade commands for a node in the cluster")
    for sub in (plan, apply, node):
        for name in ("config", "kubeconfig", "ignore-preflight-errors", "patches", "skip-phases"):
            _flag(sub, name)
        _flag(sub, "dry-run", kind=bool)
        _common(sub)
    for sub in (plan, apply):
        for name in ("allow-experimental-upgrades", "allow-release-candidate-upgrades"):
            _flag(sub, name, kind=bool)
    for name in ("yes", "force"):
        _flag(apply, name, short=name[0], kind=bool)
    for sub in (apply, node):
        for name in ("etcd-upgrade", "certificate-renewal"):
            sub.add_argument("--" + name, dest=name, default=None, type=_bool_value, nargs="?", const=True)
    return root


def _bool_value(text):
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError('invalid argument "%s": strconv.ParseBool: parsing "%s": invalid syntax'
                                     % (text, text))


_POSITIONALS = ("command", "init_command", "token_command", "certs_command", "config_command", "images_command",
                "upgrade_command", "phase_name", "phase_sub", "endpoint", "token_arg", "tokens", "name", "version", "v",
                "rootfs")


def _flags_of(namespace):
    """The flags that were given (None means "not on the command line"), list flags split at commas."""
    flags = {}
    for key, value in vars(namespace).items():
        if value is None or key in _POSITIONALS:
            continue
        if key in LIST_FLAGS:
            value = [part for item in value for part in item.split(",") if part]
            if key == "apiserver-cert-extra-sans":
                value = ",".join(value)
        flags[key] = value
    return flags


def _version(ctx, output):
    info = kcpsim_version.info(str(ctx.version))
    client = {"major": info["major"], "minor": info["minor"], "gitVersion": info["gitVersion"],
              "gitCommit": info["gitCommit"], "gitTreeState": info["gitTreeState"], "buildDate": info["buildDate"],
              "goVersion": info["goVersion"], "compiler": info["compiler"], "platform": info["platform"]}
    if output == "short":
        ctx.out(info["gitVersion"])
    elif output == "json":
        ctx.out(json.dumps({"clientVersion": client}, indent=2))
    elif output == "yaml":
        ctx.stdout.write(yaml.safe_dump({"clientVersion": client}, sort_keys=True, default_flow_style=False))
    elif output in (None, ""):
        fields = ", ".join('%s:"%s"' % (k[0].upper() + k[1:], v) for k, v in client.items())
        ctx.out("kubeadm version: &version.Info{%s}" % fields)
    else:
        raise KubeadmError('invalid output format: %s' % output)
    return 0


def _images_list(ctx, flags):
    docs = cmd_init.read_config_file(ctx, flags.get("config"))
    cluster = dict((docs.get("ClusterConfiguration") if docs else None) or {})
    if flags.get("kubernetes-version"):
        cluster["kubernetesVersion"] = flags["kubernetes-version"]
    if flags.get("image-repository"):
        cluster["imageRepository"] = flags["image-repository"]
    cluster = config.default_cluster(cluster, ctx.version)
    try:
        config.cluster_version(cluster)
    except ValueError as exc:
        raise KubeadmError(str(exc))
    warning = images.etcd_version_warning(cluster, ctx.release)
    if warning:
        ctx.warn(warning)
    for image in images.all_images(cluster, ctx.release):
        ctx.out(image)
    return 0


def dispatch(ctx, args):
    flags = _flags_of(args)
    command = args.command
    if command == "version":
        return _version(ctx, args.output)
    if command == "init":
        if args.init_command == "phase":
            only = args.phase_name + ("/" + args.phase_sub if args.phase_sub else "")
            if args.phase_name == "upload-certs":
                return cmd_init.run_upload_certs(ctx, flags)
            return cmd_init.run(ctx, flags, only=only)
        return cmd_init.run(ctx, flags)
    if command == "join":
        return cmd_join.run(ctx, flags, args.endpoint)
    if command == "reset":
        return cmd_reset.run(ctx, flags)
    if command == "token":
        if args.token_command == "create":
            return cmd_token.create(ctx, flags, args.token_arg)
        if args.token_command == "list":
            return cmd_token.list_tokens(ctx, flags)
        if args.token_command == "delete":
            return cmd_token.delete(ctx, flags, args.tokens)
        if args.token_command == "generate":
            ctx.out(bootstraptoken.generate())
            return 0
        raise KubeadmError('missing subcommand; "token" is not meant to be run on its own')
    if command == "certs":
        if args.certs_command == "certificate-key":
            return cmd_certs.certificate_key(ctx, flags)
        if args.certs_command == "check-expiration":
            return cmd_certs.check_expiration(ctx, flags)
        if args.certs_command == "renew":
            return cmd_certs.renew(ctx, flags, args.name)
        raise KubeadmError('missing subcommand; "certs" is not meant to be run on its own')
    if command == "config":
        if args.config_command == "images" and args.images_command == "list":
            return _images_list(ctx, flags)
        if args.config_command == "validate":
            return cmd_config.validate(ctx, flags)
        if args.config_command == "migrate":
            return cmd_config.migrate(ctx, flags)
        raise KubeadmError('missing subcommand; "config" is not meant to be run on its own')
    if command == "upgrade":
        if args.upgrade_command in ("plan", "apply", "node"):
            return cmd_upgrade.run(ctx, args.upgrade_command, flags, getattr(args, "version", None))
        raise KubeadmError('missing subcommand; "upgrade" is not meant to be run on its own')
    raise KubeadmError("missing subcommand: use one of init, join, reset, token, certs, config, upgrade, version")


def main(argv=None, ctx=None):
    """Run kubeadm with ``argv`` (without the program name); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = any(a in ("--v=5", "-v=5") or a.startswith("--v=") and a[4:].isdigit() and int(a[4:]) >= 5
                  for a in argv)
    try:
        ctx = ctx or Context()
        args = _build_parser().parse_args(argv)
        return dispatch(ctx, args)
    except KubeadmError as exc:
        _fail(ctx, exc.message, verbose)
        return exc.exit_code
    except KeyboardInterrupt:
        _fail(ctx, "interrupted", verbose)
        return 1
    except Exception as exc:  # noqa: BLE001 - the user sees an error line, never a traceback (unless --v=5)
        _fail(ctx, "unexpected error: %s" % describe(exc), verbose)
        return 1


def _fail(ctx, message, verbose):
    stream = ctx.stderr if ctx is not None else sys.stderr
    if verbose:
        stream.write(traceback.format_exc())
    stream.write("%s\nTo see the stack trace of this error execute with --v=5 or higher\n" % message)
    stream.flush()


if __name__ == "__main__":
    sys.exit(main())
