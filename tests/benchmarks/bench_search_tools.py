"""Benchmark of Grep, Glob and EditFile through the real ``LocalToolRouter``, against ``grep -rE``.

The tree: the interpreter's own standard library (without site-packages, caches, the static library
and compiled modules) copied ``--copies`` times into a temp folder — by default enough copies for at
least 20,000 files and 200 MB. Measures (median of ``--runs``, warm page cache):

* ``grep -rE`` of a regular expression over the tree, its output read through a pipe (GNU grep stops
  at the first match per file when writing to /dev/null, which would not be the same work);
* Cowork's Grep of the same expression ('lines' mode), and the ratio of the two (target ≤ 2×);
* Grep again with the policy's File.Read paths applied per entry (one blocked folder in the tree, so
  the walk asks the real enforcer about the entries around it);
* Glob ``**/*.py`` over the tree (target ≤ 300 ms);
* EditFile of one line in a 1 MB file, fsyncs included (p50 ≤ 20 ms).

Run: ``.venv/bin/python -m tests.benchmarks.bench_search_tools`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from agent_runtime.agent_host.policy import PolicyEnforcer
from agent_runtime.agent_host.routing import PolicyReadScope
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ApprovalMode, OsFamily, ToolStatus
from contracts.ipc import eventloop
from contracts.tools import ReadScope, ToolRequest, ToolResult
from tests.benchmarks.figures import Targets, percentile, report

TARGETS: Targets = {
    "files": ("tree: files", "", ">=", 20_000.0),
    "megabytes": ("tree: size", "MB", ">=", 200.0),
    "grep_s": ("grep -rE over the tree", "s", None, None),
    "cowork_grep_s": ("Cowork Grep over the tree", "s", None, None),
    "grep_ratio": ("Cowork Grep / grep -rE", "×", "<=", 2.0),
    "scoped_grep_s": ("Cowork Grep with the policy's read paths", "s", None, None),
    "glob_ms": ("Glob **/*.py over the tree", "ms", "<=", 300.0),
    "edit_p50_ms": ("EditFile on a 1 MB file: p50", "ms", "<=", 20.0),
    "edit_p99_ms": ("EditFile on a 1 MB file: p99", "ms", None, None),
}

PATTERN = r"[A-Za-z_]+Error\(.*(message|msg)"
_SKIPPED = ("site-packages", "__pycache__", "lib-dynload")


def source_files(stdlib: Path) -> list[Path]:
    files = []
    for directory, subdirectories, names in os.walk(stdlib):
        subdirectories[:] = [d for d in subdirectories if d not in _SKIPPED and not d.startswith("config-")]
        files.extend(Path(directory) / name for name in names)
    return [f for f in files if f.is_file() and not f.is_symlink()]


def build_tree(target: Path, copies: int | None, *, min_files: int, min_mb: float) -> tuple[int, int]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = source_files(stdlib)
    size = sum(f.stat().st_size for f in files)
    if copies is None:
        copies = max(math.ceil(min_files / len(files)), math.ceil(min_mb * 1e6 / size))
    for index in range(copies):
        for source in files:
            destination = target / f"copy{index}" / source.relative_to(stdlib)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
    return len(files) * copies, size * copies


def request(tool: str, **arguments: object) -> ToolRequest:
    return ToolRequest(
        tool_name=tool, arguments=arguments, session_id="bench", task_id="bench", step_id="bench"
    )


def succeeded(result: ToolResult) -> ToolResult:
    if result.status is not ToolStatus.SUCCEEDED:
        raise RuntimeError(f"{result.tool_name} failed: {result.error}")
    return result


def time_grep(tree: Path, runs: int) -> float:
    samples = []
    for _ in range(runs + 1):  # the first run warms the page cache
        started = time.perf_counter()
        subprocess.run(["grep", "-rE", PATTERN, str(tree)], stdout=subprocess.PIPE, check=False)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples[1:])


def read_scope(tree: Path) -> ReadScope:
    bundle = {
        "sessionId": "bench",
        "capabilities": [
            {"name": "File.Read", "allowedPaths": [str(tree)], "blockedPaths": [str(tree / "copy0" / "json")]}
        ],
        "approvalRules": [],
        "llmPolicy": {
            "allowedModels": ["m"],
            "maxInputTokens": 1000,
            "maxOutputTokens": 1000,
            "maxSessionTokens": 1000,
        },
        "expiresAt": "2999-01-01T00:00:00Z",
        "schemaVersion": "1.0",
        "version": "bench",
    }
    family = {"win32": OsFamily.WINDOWS, "darwin": OsFamily.MACOS}.get(sys.platform, OsFamily.LINUX)
    now = datetime.now(UTC)
    enforcer = PolicyEnforcer.load(bundle, session_id="bench", now=now, os_family=family)
    return PolicyReadScope(
        enforcer,
        approval_mode=ApprovalMode.ON_RISKY_ACTIONS,
        now=now,
        workspace_roots=(str(tree),),
        searched=str(tree),
    )


async def time_tool(
    router: LocalToolRouter, call: ToolRequest, runs: int, scope: ReadScope | None = None
) -> float:
    samples = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        succeeded(await router.execute(call, read_scope=scope))
        samples.append(time.perf_counter() - started)
    return statistics.median(samples[1:])


async def measure_edit(router: LocalToolRouter, workspace: Path, calls: int) -> dict[str, float]:
    target = workspace / "one-mb.py"
    line = "value = compute(alpha, beta, gamma)  # a line of ordinary source code\n"
    lines = [line] * (1024 * 1024 // len(line))
    lines[len(lines) // 2] = "MARKER = 'before'\n"
    target.write_text("".join(lines))
    succeeded(await router.execute(request("ReadFile", path=str(target), limit=1)))
    samples = []
    states = ("'before'", "'after!'")
    for index in range(calls):
        old, new = states[index % 2], states[(index + 1) % 2]
        started = time.perf_counter()
        succeeded(await router.execute(request("EditFile", path=str(target), oldString=old, newString=new)))
        samples.append(time.perf_counter() - started)
    return {
        "edit_p50_ms": statistics.median(samples) * 1e3,
        "edit_p99_ms": percentile(samples, 0.99) * 1e3,
    }


async def measure(copies: int | None, runs: int, edit_calls: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory).resolve()
        tree = base / "tree"
        tree.mkdir()
        files, size = build_tree(tree, copies, min_files=20_000, min_mb=200)
        figures = {"files": float(files), "megabytes": size / 1e6}
        figures["grep_s"] = time_grep(tree, runs)
        router = LocalToolRouter(workspace_root=base)
        try:
            grep = request("Grep", pattern=PATTERN, path=str(tree))
            figures["cowork_grep_s"] = await time_tool(router, grep, runs)
            figures["grep_ratio"] = figures["cowork_grep_s"] / figures["grep_s"]
            figures["scoped_grep_s"] = await time_tool(router, grep, runs, read_scope(tree))
            glob = request("Glob", pattern="**/*.py", path=str(tree))
            figures["glob_ms"] = await time_tool(router, glob, runs) * 1e3
            figures |= await measure_edit(router, base, edit_calls)
        finally:
            await router.aclose()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--copies", type=int, default=None, help="copies of the stdlib (default: ≥ 20,000 files and 200 MB)"
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each search (after one warm-up)")
    parser.add_argument("--edit-calls", type=int, default=200, help="sequential EditFile calls")
    args = parser.parse_args(argv)
    print(f"Cowork search tools benchmark: pattern {PATTERN!r}, {args.runs} runs, {args.edit_calls} edits")
    figures = eventloop.run(measure(args.copies, args.runs, args.edit_calls))
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
