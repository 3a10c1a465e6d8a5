"""Mutation testing of the guards: how many small wrong changes to a guard its own tests catch.

Usage (from the repository root; ``scripts/mutation`` runs this with the project's venv)::

    scripts/mutation                                    # every guard file, every mutant, --min 90
    scripts/mutation --file agent_runtime/agent_host/policy/paths.py
    scripts/mutation --sample 100 --seed 1              # 100 random mutants per file, reproducible
    scripts/mutation --file contracts/urls.py --list    # the mutants only, nothing is run
    scripts/mutation --jobs 2 --timeout 60 --min 90

The guard files and the tests that pin each one are in ``scripts/mutation-targets.toml``; the mutants
that cannot change behaviour are in ``scripts/mutation-equivalent.toml``, each with its reason, and are
left out of the score. The output lists each surviving mutant as ``file:line [function] before ->
after``, sorted, then one score per file; the exit status is 1 when any file scores under ``--min``
(2 when the tests fail before any mutation, so there is nothing to measure). A line ending in
``# pragma: no mutate`` is not mutated.

Why a mutator of our own rather than mutmut or cosmic-ray: mutmut 3 copies the tree into
``mutants/``, first runs the whole test suite to map tests to functions (minutes, and the Qt and
loopback-server tests have nothing to say about the guards) and needs ``fork`` (no Windows);
cosmic-ray needs a session database and a config per module, and both rewrite the source file in
place, which other test runs in the same checkout would import half-way. This one mutates the syntax
tree of one module in memory and runs only that module's mapped tests, in a child interpreter
(``pytest -x -q -p no:cacheprovider``) whose import system serves the mutated source under the real
module name and path. Nothing is ever written into the working tree, so no mutant can be left behind
(there is nothing to restore, and a guard file with uncommitted edits can be measured as it stands:
its mutants are made from one snapshot of it) and runs can go in parallel (``--jobs``). The price:
a mutant is seen only by the test process itself, not by child processes the tests start — which is
why the mapped tests call the guards in-process.

A mutant's key in the equivalent list is file + enclosing function + the changed source line(s)
before and after (whitespace collapsed), so entries survive edits elsewhere in the file.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import importlib.machinery
import importlib.util
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS = REPO / "scripts" / "mutation-targets.toml"
EQUIVALENT = REPO / "scripts" / "mutation-equivalent.toml"
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider"]
_PRAGMA = "# pragma: no mutate"

_COMPARE_SWAP: dict[type[ast.cmpop], tuple[type[ast.cmpop], str, str]] = {
    ast.Lt: (ast.LtE, r"<", "<="),
    ast.LtE: (ast.Lt, r"<=", "<"),
    ast.Gt: (ast.GtE, r">", ">="),
    ast.GtE: (ast.Gt, r">=", ">"),
    ast.Eq: (ast.NotEq, r"==", "!="),
    ast.NotEq: (ast.Eq, r"!=", "=="),
    ast.In: (ast.NotIn, r"\bin\b", "not in"),
    ast.NotIn: (ast.In, r"\bnot\s+in\b", "in"),
    ast.Is: (ast.IsNot, r"\bis\b", "is not"),
    ast.IsNot: (ast.Is, r"\bis\s+not\b", "is"),
}
_BINOP_SWAP: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: (r"\+", "-"),
    ast.Sub: (r"-", "+"),
    ast.BitOr: (r"\|", "&"),
    ast.BitAnd: (r"&", "|"),
}
Key = tuple[str, str, str, str]
"""An equivalent-list key: file, enclosing function, changed line(s) before and after."""
_CALL_SWAP = {"any": "all", "all": "any", "min": "max", "max": "min"}


# ---------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    path: str  # relative to the repository, with /
    line: int
    col: int
    operator: str
    function: str
    before: str  # the changed line(s), whitespace collapsed
    after: str
    start: int  # byte offsets of the replaced span in the source
    end: int
    replacement: bytes

    def key(self) -> Key:
        return (self.path, self.function, self.before, self.after)

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement + source[self.end :]

    def describe(self) -> str:
        return f"{self.path}:{self.line} [{self.function}] {self.operator}: `{self.before}` -> `{self.after}`"


def _collapse(text: str) -> str:
    return " ".join(text.split())


class _Collector(ast.NodeVisitor):
    """Walks a module in source order and records each mutation as a byte span and its replacement."""

    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.line_start = [0]
        for line in self.lines:
            self.line_start.append(self.line_start[-1] + len(line))
        self.scope: list[str] = []
        self.mutants: list[Mutant] = []
        self._skip: set[int] = set()  # ids of nodes not to mutate (docstrings, annotations, …)

    # -- positions

    def _offset(self, line: int, col: int) -> int:
        return self.line_start[line - 1] + col

    def _span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self._offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self._offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def _add(self, node: ast.AST, operator: str, start: int, end: int, replacement: str) -> None:
        first = node.lineno  # type: ignore[attr-defined]
        last = node.end_lineno  # type: ignore[attr-defined]
        if any(_PRAGMA in self.lines[n - 1].decode("utf-8", "replace") for n in range(first, last + 1)):
            return
        # The changed lines: from the start of the span's first line to the end of its last line.
        line_first = self.source.count(b"\n", 0, start)
        line_last = self.source.count(b"\n", 0, end)
        lo = self.line_start[line_first]
        hi = self.line_start[min(line_last + 1, len(self.lines))]
        new = replacement.encode("utf-8")
        before = self.source[lo:hi].decode("utf-8")
        after = (self.source[lo:start] + new + self.source[end:hi]).decode("utf-8")
        if before == after:
            return
        self.mutants.append(
            Mutant(
                path=self.path,
                line=line_first + 1,
                col=start - lo,
                operator=operator,
                function=".".join(self.scope) or "<module>",
                before=_collapse(before),
                after=_collapse(after),
                start=start,
                end=end,
                replacement=new,
            )
        )

    def _gap_swap(
        self, node: ast.AST, left: ast.AST, right: ast.AST, pattern: str, new: str, op: str
    ) -> None:
        """Replaces the operator written between ``left`` and ``right`` (parentheses may sit around it)."""
        gap_start = self._offset(left.end_lineno, left.end_col_offset)  # type: ignore[attr-defined]
        gap_end = self._offset(right.lineno, right.col_offset)  # type: ignore[attr-defined]
        gap = self.source[gap_start:gap_end].decode("utf-8")
        found = re.search(pattern, gap)
        if found is None or "#" in gap:
            return
        self._add(node, op, gap_start + found.start(), gap_start + found.end(), new)

    # -- scopes and things never mutated

    def _skip_docstring(self, body: list[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self._skip.add(id(body[0]))

    def visit_Module(self, node: ast.Module) -> None:
        self._skip_docstring(node.body)
        self.generic_visit(node)

    def _visit_scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self._skip_docstring(node.body)
        self.scope.append(node.name)
        # Decorators, annotations and base classes describe the code to tools and types; mutating
        # them gives mutants that only mypy or the class machinery would notice.
        for child in ast.iter_child_nodes(node):
            if child in node.decorator_list or child is getattr(node, "returns", None):
                continue
            if isinstance(node, ast.ClassDef) and (child in node.bases or child in node.keywords):
                continue
            if isinstance(child, ast.arguments):
                for default in [*child.defaults, *(d for d in child.kw_defaults if d is not None)]:
                    self.visit(default)
                continue
            self.visit(child)
        self.scope.pop()

    visit_FunctionDef = _visit_scope
    visit_AsyncFunctionDef = _visit_scope
    visit_ClassDef = _visit_scope

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        if names & {"__all__", "__slots__"}:
            return
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        # f-strings compose messages; their parts' positions are unreliable before Python 3.12.
        return

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        self._negate(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def _negate(self, test: ast.expr) -> None:
        # Comparisons, `not` and `and`/`or` have mutants of their own; others get negated whole.
        if isinstance(test, ast.Compare | ast.BoolOp) or (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        ):
            return
        start, end = self._span(test)
        text = self.source[start:end].decode("utf-8")
        self._add(test, "negate condition", start, end, f"not ({text})")

    # -- expressions

    def visit_Compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        for index, op in enumerate(node.ops):
            swap = _COMPARE_SWAP.get(type(op))
            if swap is not None:
                _, pattern, new = swap
                self._gap_swap(node, operands[index], operands[index + 1], pattern, new, "comparison")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for left, right in zip(node.values, node.values[1:], strict=False):
            self._gap_swap(node, left, right, rf"\b{old}\b", new, "boolean operator")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = _BINOP_SWAP.get(type(node.op))
        if swap is not None:
            self._gap_swap(node, node.left, node.right, swap[0], swap[1], "arithmetic")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            start, _ = self._span(node)
            operand_start = self._offset(node.operand.lineno, node.operand.col_offset)
            self._add(node, "drop not", start, operand_start, "")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in _CALL_SWAP:
            start, end = self._span(node.func)
            self._add(node, "swap call", start, end, _CALL_SWAP[node.func.id])
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self._skip:
            return
        start, end = self._span(node)
        value = node.value
        if isinstance(value, bool):
            self._add(node, "constant", start, end, repr(not value))
        elif isinstance(value, int):
            self._add(node, "constant", start, end, repr(value + 1))
            self._add(node, "constant", start, end, repr(value - 1))
        elif isinstance(value, str):
            text = self.source[start:end].decode("utf-8")
            if "\n" in text or text.startswith(("'''", '"""')) or not text.endswith(("'", '"')):
                return  # multi-line strings are prose; implicit concatenations have no single span
            self._add(node, "string", start, end, repr(f"XX{value}XX") if value else "'XX'")

    # -- statements

    def visit_Expr(self, node: ast.Expr) -> None:
        if id(node) in self._skip:
            return
        if isinstance(node.value, ast.Call | ast.Await):
            start, end = self._span(node)
            self._add(node, "drop call", start, end, "pass")
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        start, end = self._span(node)
        self._add(node, "drop raise", start, end, "pass")
        # The exception's message is data for the caller; its mutants are the constants inside.
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            start, end = self._span(node)
            self._add(node, "return None", start, end, "return None")
        self.generic_visit(node)

    def visit_Continue(self, node: ast.Continue) -> None:
        start, end = self._span(node)
        self._add(node, "loop control", start, end, "break")

    def visit_Break(self, node: ast.Break) -> None:
        start, end = self._span(node)
        self._add(node, "loop control", start, end, "continue")


def mutants_of(path: str, source: bytes | None = None) -> list[Mutant]:
    """Every mutant of ``path`` (relative to the repository), in source order."""
    if source is None:
        source = (REPO / path).read_bytes()
    collector = _Collector(path, source)
    collector.visit(ast.parse(source, filename=path))
    found = sorted(collector.mutants, key=lambda m: (m.start, m.end, m.operator, m.replacement))
    valid: list[Mutant] = []
    for mutant in found:
        try:
            ast.parse(mutant.apply(source))
        except SyntaxError:
            continue  # e.g. a constant inside a pattern that only literals may fill
        valid.append(mutant)
    return valid


# ---------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Equivalent:
    path: str
    function: str
    before: str
    after: str
    reason: str

    def key(self) -> Key:
        return (self.path, self.function, self.before, self.after)


def load_targets() -> dict[str, list[str]]:
    with TARGETS.open("rb") as handle:
        data = tomllib.load(handle)
    targets: dict[str, list[str]] = {}
    for path, entry in data["targets"].items():
        targets[path] = list(entry["tests"])
    return targets


def load_scopes() -> dict[str, frozenset[str]]:
    """The guard files whose target names ``functions``: only mutants inside those (top-level
    functions or classes) count, for a file that is a guard only in part (``contracts/release.py``:
    its verification, not its document models)."""
    with TARGETS.open("rb") as handle:
        data = tomllib.load(handle)
    return {
        path: frozenset(entry["functions"]) for path, entry in data["targets"].items() if "functions" in entry
    }


def load_equivalents() -> list[Equivalent]:
    if not EQUIVALENT.exists():
        return []
    with EQUIVALENT.open("rb") as handle:
        data = tomllib.load(handle)
    entries = []
    for item in data.get("equivalent", []):
        if not str(item.get("reason", "")).strip():
            raise SystemExit(f"{EQUIVALENT.name}: an entry for {item.get('file')} has no reason")
        entries.append(
            Equivalent(
                path=item["file"],
                function=item["function"],
                before=_collapse(item["before"]),
                after=_collapse(item["after"]),
                reason=item["reason"],
            )
        )
    return entries


def module_name(path: str) -> str:
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# ---------------------------------------------------------------- running one mutant


def _child(module: str, original: str, mutant_file: str, pytest_args: list[str]) -> int:
    """In the child interpreter: serve the mutated source as ``module``, then run pytest."""
    sys.path.insert(0, str(REPO))
    sys.dont_write_bytecode = True
    source = Path(mutant_file).read_bytes() if mutant_file else None

    class MutantLoader(importlib.machinery.SourceFileLoader):
        def get_data(self, path: str) -> bytes:
            if source is not None and os.path.normcase(path) == os.path.normcase(original):
                return source
            return super().get_data(path)

        def path_stats(self, path: str) -> dict[str, float]:
            raise OSError("never read or write the bytecode cache of a mutant")

    class MutantFinder:
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> object:
            if name != module:
                return None
            loader = MutantLoader(name, original)
            locations = [os.path.dirname(original)] if original.endswith("__init__.py") else None
            return importlib.util.spec_from_file_location(
                name, original, loader=loader, submodule_search_locations=locations
            )

    if source is not None:
        sys.meta_path.insert(0, MutantFinder)  # type: ignore[arg-type]
    import pytest

    return int(pytest.main(pytest_args))


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant | None
    status: str  # "killed", "survived", "timeout"
    seconds: float


def _run(
    mutant: Mutant | None, path: str, source: bytes, tests: list[str], timeout: float, workdir: Path
) -> Outcome:
    mutant_file = ""
    if mutant is not None:
        kind = mutant.operator.replace(" ", "_")
        target = workdir / f"mutant-{mutant.start}-{mutant.end}-{kind}-{len(mutant.replacement)}.py"
        target.write_bytes(mutant.apply(source))
        mutant_file = str(target)
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        module_name(path),
        str(REPO / path),
        mutant_file,
        "--",
        *PYTEST_ARGS,
        *tests,
    ]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", QT_QPA_PLATFORM="offscreen")
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        code = process.wait(timeout=timeout)
        status = "survived" if code == 0 else "killed"
    except subprocess.TimeoutExpired:
        _kill_group(process)
        status = "timeout"
    finally:
        if process.poll() is None:
            _kill_group(process)
        if mutant_file:
            Path(mutant_file).unlink(missing_ok=True)
    return Outcome(mutant, status, time.monotonic() - started)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


# ---------------------------------------------------------------- the run


def _select(mutants: list[Mutant], sample: int | None, seed: int) -> list[Mutant]:
    if sample is None or sample >= len(mutants):
        return mutants
    chosen = random.Random(seed).sample(range(len(mutants)), sample)
    return [mutants[i] for i in sorted(chosen)]


def _score_file(
    path: str, tests: list[str], args: argparse.Namespace, equivalents: dict[Key, Equivalent]
) -> tuple[float, int, int, int, list[Mutant], set[Key]]:
    """(score, killed, counted, equivalent, survivors, equivalent keys met) for one guard file."""
    workdir = Path(args.workdir)
    # The source as it was when the mutants were made: an edit during the run must not shift them.
    source = (REPO / path).read_bytes()
    every = mutants_of(path, source)
    scope = load_scopes().get(path)
    if scope is not None:
        every = [m for m in every if m.function.split(".")[0] in scope]
    met = {m.key() for m in every if m.key() in equivalents}
    counted = [m for m in every if m.key() not in equivalents]
    chosen = _select(counted, args.sample, args.seed)
    baseline = _run(None, path, source, tests, args.baseline_timeout, workdir)
    if baseline.status != "survived":
        print(f"{path}: its tests fail (or time out) without any mutation: {' '.join(tests)}", flush=True)
        raise SystemExit(2)
    timeout = args.timeout if args.timeout else max(10.0, baseline.seconds * 4)
    print(
        f"== {path}: {len(chosen)} of {len(every)} mutants ({len(every) - len(counted)} equivalent), "
        f"tests {baseline.seconds:.1f}s, timeout {timeout:.0f}s",
        flush=True,
    )
    outcomes: list[Outcome] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(_run, m, path, source, tests, timeout, workdir) for m in chosen]
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            outcomes.append(future.result())
            if args.progress and done % 25 == 0:
                print(f"   {done}/{len(chosen)}", flush=True)
    survivors = sorted(
        (o.mutant for o in outcomes if o.status == "survived" and o.mutant is not None),
        key=lambda m: (m.start, m.end, m.operator, m.replacement),
    )
    killed = len(chosen) - len(survivors)
    score = 100.0 * killed / len(chosen) if chosen else 100.0
    return score, killed, len(chosen), len(every) - len(counted), survivors, met


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        module, original, mutant_file = argv[1:4]
        return _child(module, original, mutant_file, argv[5:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--file", action="append", default=[], help="a guard file (repeatable); default all")
    parser.add_argument("--sample", type=int, help="at most N mutants per file, chosen with --seed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min", type=float, default=90.0, help="fail when a file scores under this (%%)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default 4x the unmutated run)")
    parser.add_argument("--baseline-timeout", type=float, default=600.0, help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at the same time")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    parser.add_argument("--progress", action="store_true", help="report every 25 mutants")
    args = parser.parse_args(argv)

    targets = load_targets()
    files = [Path(f).as_posix().removeprefix("./") for f in args.file] or sorted(targets)
    unknown = [f for f in files if f not in targets]
    if unknown:
        parser.error(f"not a guard file in {TARGETS.name}: {', '.join(unknown)}")
    for path in files:
        missing = [test for test in targets[path] if not (REPO / test).exists()]
        if missing:
            parser.error(f"{TARGETS.name}: {path}: no such test path {', '.join(missing)}")
    equivalents = {e.key(): e for e in load_equivalents()}

    if args.list:
        for path in files:
            for mutant in mutants_of(path):
                mark = "  (equivalent)" if mutant.key() in equivalents else ""
                print(mutant.describe() + mark)
        return 0

    rows: list[tuple[str, float, int, int, int]] = []
    all_met: set[Key] = set()
    # The mutated sources live outside the working tree, for the child interpreters to read.
    with tempfile.TemporaryDirectory(prefix="cowork-mutation-") as workdir:
        args.workdir = workdir
        for path in files:
            score, killed, counted, equivalent, survivors, met = _score_file(
                path, targets[path], args, equivalents
            )
            all_met |= met
            for mutant in survivors:
                print("SURVIVED " + mutant.describe(), flush=True)
            rows.append((path, score, killed, counted, equivalent))
    stale = [e for key, e in sorted(equivalents.items()) if e.path in files and key not in all_met]
    for entry in stale:
        print(
            f"note: an equivalent entry matches no mutant (stale?): "
            f"{entry.path} [{entry.function}] `{entry.before}`"
        )
    print()
    print(f"{'file':<60} {'score':>7} {'killed':>7} {'mutants':>8} {'equiv.':>7}")
    for path, score, killed, counted, equivalent in rows:
        print(f"{path:<60} {score:6.1f}% {killed:>7} {counted:>8} {equivalent:>7}")
    sampled = f", sample {args.sample} per file, seed {args.seed}" if args.sample else ", every mutant"
    print(f"(threshold {args.min:g}%{sampled})")
    failing = [path for path, score, *_ in rows if score < args.min]
    if failing:
        print(f"under {args.min:g}%: {', '.join(failing)}")
        return 1
    return 0


def iter_targets() -> Iterator[str]:
    """The guard files, for tests of this script's configuration."""
    yield from sorted(load_targets())


if __name__ == "__main__":
    sys.exit(main())
