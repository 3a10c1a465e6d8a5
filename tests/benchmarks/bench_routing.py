"""Benchmark of the host's tool routing (``agent_host.routing.ToolDispatch``) over the real tool runtime.

Measures:

* ``prepare`` of a ReadFile with a relative path: resolution (realpath), facts, rewritten call (p50, p99);
* what ``execute`` adds to the router's own ReadFile of a 4 KB file: the re-resolution before the run
  and the request model (p50 of dispatch minus p50 of the router alone);
* a WriteFile through ``execute``, the patch original, the write and the diff upload (p50);
* ``patch_preview`` of a session that changed N files of about 10 KB each (median of runs).

Run: ``.venv/bin/python -m tests.benchmarks.bench_routing`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agent_runtime.agent_host.routing import ToolDispatch
from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ToolStatus
from contracts.tools import ToolCall, ToolRequest
from tests.agent_runtime.agent_host.routing.support import FakeUploader
from tests.benchmarks.figures import Targets, percentile, report

TARGETS: Targets = {
    "prepare_p50_us": ("prepare ReadFile (relative path): p50", "µs", "<=", 50.0),
    "prepare_p99_us": ("prepare ReadFile (relative path): p99", "µs", None, None),
    "overhead_p50_us": ("execute ReadFile 4 KB: added over the router, p50", "µs", "<=", 200.0),
    "write_p50_ms": ("execute WriteFile + original + diff upload: p50", "ms", "<=", 5.0),
    "preview_ms": ("patch_preview, --preview-files changed 10 KB files", "ms", "<=", 250.0),
}

IDS = {"session_id": "bench", "task_id": "bench", "step_id": "bench"}


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(tool_call_id="call", tool_name=name, arguments=arguments)


def measure_prepare(dispatch: ToolDispatch, calls: int) -> dict[str, float]:
    request = call("ReadFile", path="src/module.py")
    for _ in range(min(500, calls)):
        dispatch.prepare(request, **IDS)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        dispatch.prepare(request, **IDS)
        samples.append(time.perf_counter() - started)
    return {
        "prepare_p50_us": statistics.median(samples) * 1e6,
        "prepare_p99_us": percentile(samples, 0.99) * 1e6,
    }


async def measure_overhead(
    dispatch: ToolDispatch, router: LocalToolRouter, workspace: Path, calls: int
) -> dict[str, float]:
    path = workspace / "src" / "module.py"
    prepared = dispatch.prepare(call("ReadFile", path=str(path)), **IDS)
    direct = ToolRequest(tool_name="ReadFile", arguments={"path": str(path)}, **IDS)
    via_dispatch, via_router = [], []
    for round_ in range(calls + min(200, calls)):
        started = time.perf_counter()
        result = await dispatch.execute(prepared, workspace_id="ws", scope=None, **IDS)
        middle = time.perf_counter()
        await router.execute(direct)
        ended = time.perf_counter()
        if result.status is not ToolStatus.SUCCEEDED:
            raise RuntimeError(f"ReadFile failed: {result.error}")
        if round_ >= min(200, calls):
            via_dispatch.append(middle - started)
            via_router.append(ended - middle)
    overhead = statistics.median(via_dispatch) - statistics.median(via_router)
    return {"overhead_p50_us": overhead * 1e6}


async def measure_write(dispatch: ToolDispatch, calls: int) -> dict[str, float]:
    samples = []
    for index in range(calls):
        prepared = dispatch.prepare(
            call("WriteFile", path=f"out/{index % 50}.txt", content=f"{index}\n" * 50), **IDS
        )
        started = time.perf_counter()
        result = await dispatch.execute(prepared, workspace_id="ws", scope=None, **IDS)
        samples.append(time.perf_counter() - started)
        if result.status is not ToolStatus.SUCCEEDED:
            raise RuntimeError(f"WriteFile failed: {result.error}")
    return {"write_p50_ms": statistics.median(samples) * 1e3}


async def measure_preview(
    router: LocalToolRouter, workspace: Path, files: int, runs: int
) -> dict[str, float]:
    dispatch = ToolDispatch(router, workspace_roots=[str(workspace)], uploader=None)
    text = "".join(f"line {n} of a module that the agent edits\n" for n in range(250))  # ~10 KB
    for index in range(files):
        (workspace / "tree" / f"{index}.py").write_text(text)
    for index in range(files):
        changed = text.replace("line 100 ", "LINE 100 ").replace("line 200 ", "LINE 200 ")
        prepared = dispatch.prepare(call("WriteFile", path=f"tree/{index}.py", content=changed), **IDS)
        await dispatch.execute(prepared, workspace_id="ws", scope=None, **IDS)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        preview = dispatch.patch_preview()
        samples.append(time.perf_counter() - started)
        if len(preview.files) != files:
            raise RuntimeError(f"expected {files} files in the preview, got {len(preview.files)}")
    return {"preview_ms": statistics.median(samples) * 1e3}


async def main_async(args: argparse.Namespace) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="cowork-bench-routing-") as temp:
        workspace = Path(temp).resolve() / "project"
        (workspace / "src").mkdir(parents=True)
        (workspace / "tree").mkdir()
        (workspace / "src" / "module.py").write_text("x = 1\n" * 680)  # about 4 KB
        router = LocalToolRouter(workspace_root=workspace, spool_dir=Path(temp) / "spool")
        try:
            dispatch = ToolDispatch(router, workspace_roots=[str(workspace)], uploader=FakeUploader())
            figures = measure_prepare(dispatch, args.prepare_calls)
            figures |= await measure_overhead(dispatch, router, workspace, args.execute_calls)
            figures |= await measure_write(dispatch, args.write_calls)
            figures |= await measure_preview(router, workspace, args.preview_files, args.preview_runs)
        finally:
            await router.aclose()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prepare-calls", type=int, default=20_000)
    parser.add_argument("--execute-calls", type=int, default=2_000)
    parser.add_argument("--write-calls", type=int, default=300)
    parser.add_argument("--preview-files", type=int, default=100)
    parser.add_argument("--preview-runs", type=int, default=9)
    args = parser.parse_args(argv)
    figures = asyncio.run(main_async(args))
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
