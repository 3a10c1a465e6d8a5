"""Benchmark of the Local Tool Runtime (seed 003), through the real ``LocalToolRouter``.

Measures:

* dispatch overhead: ReadFile of a 4 KB file through ``execute`` — validation, path resolution,
  the read and the result model — one call at a time (p50, p99);
* RunCommand ``true``: starting the shell, capturing, reaping (p50, p99);
* peak RSS growth of this process while RunCommand captures a command printing 1 GB.

Run: ``.venv/bin/python -m tests.benchmarks.bench_tools`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from agent_runtime.tool_runtime import LocalToolRouter
from contracts.enums import ToolStatus
from contracts.ipc import eventloop
from contracts.tools import ToolRequest
from tests.benchmarks.figures import Targets, percentile, report

TARGETS: Targets = {
    "read_p50_us": ("ReadFile 4 KB via router: p50", "µs", "<=", 200.0),
    "read_p99_us": ("ReadFile 4 KB via router: p99", "µs", None, None),
    "true_p50_ms": ("RunCommand `true`: p50", "ms", "<=", 15.0),
    "true_p99_ms": ("RunCommand `true`: p99", "ms", None, None),
    "capture_rss_mb": ("RunCommand capturing output: peak RSS growth", "MB", "<=", 50.0),
    "capture_mb_per_s": ("RunCommand capturing output: throughput", "MB/s", None, None),
}


def request(tool: str, **arguments: object) -> ToolRequest:
    return ToolRequest(
        tool_name=tool, arguments=arguments, session_id="bench", task_id="bench", step_id="bench"
    )


async def measure_read(router: LocalToolRouter, workspace: Path, calls: int) -> dict[str, float]:
    path = workspace / "four-kb.txt"
    path.write_text(("0123456789abcdef" * 4 + "\n") * 63 + "x" * four_kb_pad())
    call = request("ReadFile", path=str(path))
    for _ in range(min(500, calls)):
        await router.execute(call)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await router.execute(call)
        samples.append(time.perf_counter() - started)
        if result.status is not ToolStatus.SUCCEEDED:
            raise RuntimeError(f"ReadFile failed: {result.error}")
    return {"read_p50_us": statistics.median(samples) * 1e6, "read_p99_us": percentile(samples, 0.99) * 1e6}


def four_kb_pad() -> int:
    # 63 lines of 65 bytes plus this pad make exactly 4096 bytes.
    return 4096 - 63 * 65


async def measure_true(router: LocalToolRouter, calls: int) -> dict[str, float]:
    call = request("RunCommand", command="true")
    for _ in range(min(20, calls)):
        await router.execute(call)
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await router.execute(call)
        samples.append(time.perf_counter() - started)
        if result.status is not ToolStatus.SUCCEEDED:
            raise RuntimeError(f"RunCommand failed: {result.error}")
    return {"true_p50_ms": statistics.median(samples) * 1e3, "true_p99_ms": percentile(samples, 0.99) * 1e3}


async def measure_capture(router: LocalToolRouter, megabytes: int) -> dict[str, float]:
    process = psutil.Process()
    baseline = process.memory_info().rss
    peak = baseline
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.005):
            peak = max(peak, process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    size = megabytes * 1024 * 1024
    started = time.perf_counter()
    try:
        result = await router.execute(request("RunCommand", command=f"yes 0123456789abcdef | head -c {size}"))
    finally:
        elapsed = time.perf_counter() - started
        done.set()
        sampler.join(5)
    if result.status is not ToolStatus.SUCCEEDED:
        raise RuntimeError(f"RunCommand failed: {result.error}")
    router.release_artifacts(result.artifacts)
    return {"capture_rss_mb": (peak - baseline) / 1e6, "capture_mb_per_s": megabytes / elapsed}


async def measure(read_calls: int, command_calls: int, capture_mb: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory).resolve()
        router = LocalToolRouter(workspace_root=workspace)
        try:
            figures = await measure_read(router, workspace, read_calls)
            figures |= await measure_true(router, command_calls)
            figures |= await measure_capture(router, capture_mb)
        finally:
            await router.aclose()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--read-calls", type=int, default=5000, help="sequential ReadFile calls")
    parser.add_argument("--command-calls", type=int, default=300, help="sequential RunCommand `true` calls")
    parser.add_argument("--capture-mb", type=int, default=1024, help="megabytes the capture command prints")
    args = parser.parse_args(argv)
    print(
        f"Cowork tool runtime benchmark: {args.read_calls} reads, {args.command_calls} commands, "
        f"{args.capture_mb} MB captured"
    )
    figures = eventloop.run(measure(args.read_calls, args.command_calls, args.capture_mb))
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
