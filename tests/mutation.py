# -*- coding: utf-8 -*-
# Copyright: kubeadm.control_plane contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation run over the decision files (`make mutation`; not part of `make test`).

A decision file is a module under plugins/module_utils with its own unit test file, tests/unit/test_<name>.py
(the I/O adapters have none). Each mutant changes one thing in one file: a comparison operator, `and`/`or`,
a constant (numbers, booleans, strings that are not docstrings), an arithmetic operator, an `if`/`while`
condition negated, or a `not` dropped. It is then run against that file's own tests: a mutant is killed
when they fail (or run past the time limit), and survives when they pass.

Each mutant runs in a child forked from a process that has pytest and ansible already imported, with the
mutated module put in sys.modules before the tests import it, so a mutant costs a test run and no interpreter
start. The report gives the kill score per file and every survivor (line, what changed); `--skip-kind` leaves
out a kind of mutants (e.g. `--skip-kind string` for message wording).
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import select
import signal
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE_UTILS = os.path.join(ROOT, "plugins", "module_utils")
UNIT_TESTS = os.path.join(ROOT, "tests", "unit")
PACKAGE = "ansible_collections.kubeadm.control_plane.plugins.module_utils"
# A shared helper's rules are pinned by the tests of the decisions that use it as well as by its own.
ALSO_PINNED_BY = {"validation": ("spec", "snapshot_validation")}

COMPARE_SWAPS = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
BINOP_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
               ast.Div: ast.Mult, ast.Mod: ast.FloorDiv}
SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-",
           ast.Mult: "*", ast.FloorDiv: "//", ast.Div: "/", ast.Mod: "%", ast.And: "and", ast.Or: "or"}


def decision_files():
    """The module_utils files that have their own unit test file, by name."""
    names = []
    for entry in sorted(os.listdir(MODULE_UTILS)):
        name, ext = os.path.splitext(entry)
        if ext == ".py" and name != "__init__" and os.path.exists(os.path.join(UNIT_TESTS, "test_%s.py" % name)):
            names.append(name)
    return names


def docstring_nodes(tree):
    """The Constant nodes that are docstrings: mutating them changes nothing that runs."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def annotation_nodes(tree):
    """Nodes inside annotations and `from __future__` imports: not run."""
    found = set()
    for node in ast.walk(tree):
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if annotation is not None:
                found.update(id(sub) for sub in ast.walk(annotation))
    return found


def mutations_of(node):
    """(kind, description, apply) for each way of mutating this one node; apply changes the node in place."""
    found = []
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            swap = COMPARE_SWAPS.get(type(op))
            if swap:
                def apply(n, index=index, swap=swap):
                    n.ops[index] = swap()
                found.append(("comparison", "%s -> %s" % (SYMBOLS[type(op)], SYMBOLS[swap]), apply))
    elif isinstance(node, ast.BoolOp):
        swap = ast.Or if isinstance(node.op, ast.And) else ast.And

        def apply(n, swap=swap):
            n.op = swap()
        found.append(("boolean", "%s -> %s" % (SYMBOLS[type(node.op)], SYMBOLS[swap]), apply))
    elif isinstance(node, ast.BinOp) and type(node.op) in BINOP_SWAPS:
        swap = BINOP_SWAPS[type(node.op)]

        def apply(n, swap=swap):
            n.op = swap()
        found.append(("arithmetic", "%s -> %s" % (SYMBOLS[type(node.op)], SYMBOLS[swap]), apply))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        found.append(("branch", "not dropped", None))
    elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
        def apply(n):
            n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)
        found.append(("branch", "condition negated", apply))
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            def apply(n):
                n.value = not n.value
            found.append(("constant", "%r -> %r" % (value, not value), apply))
        elif isinstance(value, (int, float)):
            replacement = value + 1

            def apply(n, replacement=replacement):
                n.value = replacement
            found.append(("constant", "%r -> %r" % (value, replacement), apply))
        elif isinstance(value, str) and value:
            def apply(n):
                n.value = "XX" + n.value + "XX"
            found.append(("string", "%r -> 'XX...XX'" % (value[:40],), apply))
    return found


class DropNot(ast.NodeTransformer):
    """Replaces the one `not x` node whose id is given by `x`."""

    def __init__(self, target):
        self.target = target

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return node.operand if node is self.target else node


def mutants(source):
    """Every mutant of `source`: (kind, line, description, code object)."""
    tree = ast.parse(source)
    skipped = docstring_nodes(tree) | annotation_nodes(tree)
    points = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            skipped.update(id(sub) for sub in ast.walk(node))
            continue
        for position, (kind, description, _apply) in enumerate(mutations_of(node)):
            points.append((node, position, kind, description))
    nodes = list(ast.walk(tree))
    for node, position, kind, description in points:
        index = nodes.index(node)
        copied = copy.deepcopy(tree)
        target = list(ast.walk(copied))[index]
        apply = mutations_of(target)[position][2]
        if apply is None:
            copied = DropNot(target).visit(copied)
        else:
            apply(target)
        ast.fix_missing_locations(copied)
        yield kind, node.lineno, description, compile(copied, "<mutant>", "exec")


def run_tests(name, code, timeout):
    """Runs tests/unit/test_<name>.py (and those of ALSO_PINNED_BY) in a forked child with `code` as the module
    (None: unchanged).

    Returns "survived", "killed" or "timeout"."""
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            if code is not None:
                package = __import__(PACKAGE, fromlist=["_"])
                module = types.ModuleType("%s.%s" % (PACKAGE, name))
                module.__file__ = os.path.join(MODULE_UTILS, name + ".py")
                sys.modules[module.__name__] = module
                exec(code, module.__dict__)  # pylint: disable=exec-used
                setattr(package, name, module)
            import pytest  # pylint: disable=import-outside-toplevel
            tests = [os.path.join(UNIT_TESTS, "test_%s.py" % test) for test in (name,) + ALSO_PINNED_BY.get(name, ())]
            status = pytest.main(tests + ["-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                                          "-m", "not etcd and not sandbox and not ansible"])
        except BaseException:  # pylint: disable=broad-exception-caught
            status = 1
        os._exit(0 if status == 0 else 1)  # pylint: disable=protected-access
    deadline = time.monotonic() + timeout
    while True:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        select.select([], [], [], 0.01)


def mutate_file(name, skip_kinds, timeout, out):
    """Runs every mutant of one file; returns (killed, total, survivors)."""
    with open(os.path.join(MODULE_UTILS, name + ".py"), encoding="utf-8") as handle:
        source = handle.read()
    if run_tests(name, None, timeout * 10) != "survived":
        out.write("%s: its own tests fail without any mutation; skipped\n" % name)
        return 0, 0, []
    killed, total, survivors = 0, 0, []
    lines = source.splitlines()
    for kind, line, description, code in mutants(source):
        if kind in skip_kinds:
            continue
        total += 1
        if run_tests(name, code, timeout) == "survived":
            survivors.append((line, kind, description, lines[line - 1].strip()))
        else:
            killed += 1
    return killed, total, survivors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="decision files by name (default: all), e.g. planner etcd_quorum")
    parser.add_argument("--skip-kind", action="append", default=[],
                        choices=["comparison", "boolean", "arithmetic", "branch", "constant", "string"],
                        help="leave out mutants of this kind (repeatable)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a mutant's test run may take")
    args = parser.parse_args(argv)
    names = args.files or decision_files()
    unknown = sorted(set(names) - set(decision_files()))
    if unknown:
        parser.error("not a decision file with its own tests: %s" % ", ".join(unknown))
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the unit tests need none of the installed plugins
    sys.path.insert(0, os.path.join(ROOT, ".collections"))
    sys.path.insert(0, UNIT_TESTS)
    # Imported once here so that every forked child starts with them loaded.
    import pytest  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    import ansible.module_utils.basic  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    out = sys.stdout
    rows = []
    for name in names:
        started = time.monotonic()
        killed, total, survivors = mutate_file(name, set(args.skip_kind), args.timeout, out)
        rows.append((name, killed, total))
        score = 100.0 * killed / total if total else 100.0
        out.write("== %s.py: %d/%d killed (%.1f %%) in %.0f s\n" % (name, killed, total, score, time.monotonic() - started))
        for line, kind, description, text in survivors:
            out.write("   survived %s.py:%d [%s] %s    | %s\n" % (name, line, kind, description, text[:90]))
        out.flush()
    killed = sum(row[1] for row in rows)
    total = sum(row[2] for row in rows)
    out.write("\nkill score per file\n")
    for name, k, t in rows:
        out.write("  %-18s %4d/%-4d %5.1f %%\n" % (name, k, t, 100.0 * k / t if t else 100.0))
    out.write("  %-18s %4d/%-4d %5.1f %%\n" % ("all", killed, total, 100.0 * killed / total if total else 100.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
