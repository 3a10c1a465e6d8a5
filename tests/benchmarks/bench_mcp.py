"""Benchmark of the MCP client (seed 003 §9) against the official SDK's streamable-HTTP server.

The server runs in a process of its own on loopback (so it does not share this interpreter's lock),
listing ``--tools`` tools that echo their input. Measures:

* connect + initialize + ``tools/list`` (every page) of a new ``McpSession``, then closed (median);
* one MCP tool call at the session level — ``call_tool`` and ``translate_result`` — against a built-in
  tool call through the real ``LocalToolRouter`` (ReadFile of a 4 KB file), one call at a time, and
  the difference (p50, p99). The router's own share for MCP tools is measured with the integration.

Run: ``.venv/bin/python -m tests.benchmarks.bench_mcp`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_runtime.tool_runtime import LocalToolRouter
from agent_runtime.tool_runtime.mcp.results import translate_result
from agent_runtime.tool_runtime.mcp.session import McpSession
from contracts.enums import ToolStatus
from contracts.ipc import eventloop
from contracts.tools import ToolRequest
from tests.benchmarks.figures import Targets, percentile, report
from tests.support.peers import REPO_ROOT

TARGETS: Targets = {
    "open_list_ms": ("connect + initialize + list every tool: median", "ms", None, None),
    "mcp_call_p50_ms": ("MCP tool call (session): p50", "ms", None, None),
    "mcp_call_p99_ms": ("MCP tool call (session): p99", "ms", None, None),
    "builtin_call_p50_ms": ("built-in ReadFile 4 KB via router: p50", "ms", None, None),
    "builtin_call_p99_ms": ("built-in ReadFile 4 KB via router: p99", "ms", None, None),
    "overhead_p50_ms": ("MCP over built-in: p50", "ms", None, None),
    "overhead_p99_ms": ("MCP over built-in: p99", "ms", None, None),
}


def start_server(tools: int, page_size: int) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_servers", "many", str(tools), str(page_size)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        server.kill()
        raise RuntimeError("the MCP benchmark server did not start")
    return server, url


def new_session(url: str) -> McpSession:
    return McpSession("bench", url, allow_insecure_loopback=True, call_timeout_s=30)


async def measure_open(url: str, runs: int, tools: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        session = new_session(url)
        started = time.perf_counter()
        await session.open()
        listed = await session.list_tools()
        samples.append(time.perf_counter() - started)
        await session.aclose()
        if len(listed) != tools:
            raise RuntimeError(f"listed {len(listed)} tools, not {tools}")
    return {"open_list_ms": statistics.median(samples) * 1e3}


async def measure_mcp_calls(url: str, calls: int) -> list[float]:
    session = new_session(url)
    await session.open()
    try:
        for _ in range(min(200, calls)):
            await session.call_tool("tool_000", {"text": "warm"})
        samples = []
        for index in range(calls):
            started = time.perf_counter()
            result = translate_result(await session.call_tool("tool_000", {"text": f"call {index}"}), None)
            samples.append(time.perf_counter() - started)
            if result.failed or result.output_text != f"call {index}":
                raise RuntimeError(f"the MCP call failed: {result.output_text}")
    finally:
        await session.aclose()
    return samples


async def measure_builtin_calls(calls: int) -> list[float]:
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory).resolve()
        path = workspace / "four-kb.txt"
        path.write_text("0123456789abcdef" * 256)
        router = LocalToolRouter(workspace_root=workspace)
        call = ToolRequest(
            tool_name="ReadFile",
            arguments={"path": str(path)},
            session_id="bench",
            task_id="bench",
            step_id="bench",
        )
        try:
            for _ in range(min(200, calls)):
                await router.execute(call)
            samples = []
            for _ in range(calls):
                started = time.perf_counter()
                result = await router.execute(call)
                samples.append(time.perf_counter() - started)
                if result.status is not ToolStatus.SUCCEEDED:
                    raise RuntimeError(f"ReadFile failed: {result.error}")
        finally:
            await router.aclose()
    return samples


async def measure(url: str, tools: int, runs: int, calls: int) -> dict[str, float]:
    figures = await measure_open(url, runs, tools)
    mcp = await measure_mcp_calls(url, calls)
    builtin = await measure_builtin_calls(calls)
    figures["mcp_call_p50_ms"] = statistics.median(mcp) * 1e3
    figures["mcp_call_p99_ms"] = percentile(mcp, 0.99) * 1e3
    figures["builtin_call_p50_ms"] = statistics.median(builtin) * 1e3
    figures["builtin_call_p99_ms"] = percentile(builtin, 0.99) * 1e3
    figures["overhead_p50_ms"] = figures["mcp_call_p50_ms"] - figures["builtin_call_p50_ms"]
    figures["overhead_p99_ms"] = figures["mcp_call_p99_ms"] - figures["builtin_call_p99_ms"]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=100, help="tools the server lists")
    parser.add_argument("--page-size", type=int, default=100, help="tools per tools/list page")
    parser.add_argument("--runs", type=int, default=30, help="connect + initialize + list runs")
    parser.add_argument("--calls", type=int, default=2000, help="sequential tool calls of each kind")
    args = parser.parse_args(argv)
    print(
        f"Cowork MCP client benchmark: {args.tools} tools ({args.page_size} a page), {args.runs} connects, "
        f"{args.calls} calls each"
    )
    server, url = start_server(args.tools, args.page_size)
    try:
        figures = eventloop.run(measure(url, args.tools, args.runs, args.calls))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
