"""Every benchmark script still runs and prints a figure for each of its measures (tiny sizes; the
figures are not judged here — the scripts print them against their targets)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.peers import REPO_ROOT

TINY_RUNS = {
    "bench_ipc": ["--calls", "50", "--notifications", "500"],
    "bench_tools": ["--read-calls", "20", "--command-calls", "5", "--capture-mb", "4"],
    # The official MCP SDK's server in a process of its own, on loopback.
    "bench_mcp": ["--tools", "10", "--runs", "2", "--calls", "20"],
    # One copy of the standard library instead of the ≥ 20,000 files of the real run.
    "bench_search_tools": ["--copies", "1", "--runs", "1", "--edit-calls", "5"],
    "bench_llm": ["--chunks", "300", "--runs", "1", "--calls", "2"],
    # The scripted gateway over TLS in a process of its own, a new and a kept connection.
    "bench_llm_connection": ["--steps", "2", "--runs", "1", "--gap-ms", "0"],
    "bench_policy": ["--iterations", "200"],
    "bench_thread": ["--messages", "60", "--iterations", "20"],
    # The local store in this process and moto's server in a thread.
    "bench_workspace_search": [
        "--uploads",
        "3",
        "--messages",
        "4",
        "--sessions",
        "3",
        "--aws-sessions",
        "2",
        "--searches",
        "8",
    ],
    "bench_backend": [
        "--clients",
        "4",
        "--sessions",
        "40",
        "--uploads",
        "12",
        "--gets",
        "20",
        "--size",
        "2048",
    ],
    # The real local backend process, with 8 producers instead of 100.
    "bench_audit": ["--producers", "8", "--events", "80", "--batches", "8", "--batch", "10"],
    # The real local backend processes (three) and runtime processes, the scripted gateway in its own.
    "bench_observability": ["--hook-steps", "100", "--rounds", "1", "--steps", "4", "--runs", "1"],
    "bench_checkpoint": ["--messages", "40", "--writes", "5", "--events", "200"],
    "bench_step_journal": ["--messages", "40", "--steps", "5"],
    # The real local backend and runtime processes, with the scripted gateway in this process.
    "bench_session_runtime": ["--steps", "6", "--messages", "40", "--writes", "3", "--runs", "1"],
    "bench_routing": [
        *("--prepare-calls", "50", "--execute-calls", "20", "--write-calls", "5"),
        *("--preview-files", "3", "--preview-runs", "1"),
    ],
    # Starts the real local backend and runtime processes.
    "bench_runtime": ["--starts", "1", "--steps", "5", "--runs", "1", "--mixed-runs", "1"],
    # Runs the real cowork exec program twice (a first run starts the local backend, the second reuses
    # it), with the runtime processes.
    "bench_exec": ["--steps", "4", "--runs", "2"],
    # Starts the frozen runtime from the linux-x86_64 bundle (built first if it is not cached).
    "bench_bundle": ["--starts", "2"],
    # Starts the packaged desktop app from the Linux tarball (built first if it is not cached).
    "bench_package": ["--starts", "1"],
    # The real local backend (twice: with and without WebSockets), runtime processes and the CLI.
    "bench_policy_push": ["--runs", "1", "--poll-runs", "1", "--push-interval", "0.25"],
    # Downloads a file over loopback HTTP through the updater's verifier, and runs sha256sum.
    "bench_update_verify": ["--size-mb", "8", "--runs", "1"],
    # The desktop's window code offscreen, with the real local backend and runtime processes.
    "bench_desktop": ["--seconds", "0.5", "--messages", "200", "--starts", "1"],
    # The composer and conversation view offscreen, with the real local backend and runtime processes.
    "bench_desktop_first_token": ["--sends", "1", "--latency-ms", "50"],
}


def _not_ready(script: str) -> str | None:
    """Why ``script`` cannot run here. bench_bundle needs the frozen bundle, bench_package the Linux
    desktop package: built here if not cached yet (once per change of their sources; tests/build and
    tests/installer use the same ones)."""
    if script not in ("bench_bundle", "bench_package"):
        return None
    from tests.build.bundle import cannot_build, linux_bundle
    from tests.installer.package import linux_package

    reason = cannot_build()
    if reason is None and script == "bench_bundle":
        linux_bundle()
    elif reason is None:
        linux_package()
    return reason


@pytest.mark.parametrize("script", sorted(TINY_RUNS))
def test_the_benchmark_prints_a_figure_for_every_measure(script: str) -> None:
    reason = _not_ready(script)
    if reason is not None:
        pytest.skip(reason)
    module = f"tests.benchmarks.{script}"
    result = subprocess.run(
        [sys.executable, "-m", module, *TINY_RUNS[script]],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # The script's own error, not just its exit status, when it fails.
    assert result.returncode == 0, result.stderr[-4000:]
    for label, _, _, _ in importlib.import_module(module).TARGETS.values():
        assert label in result.stdout


def _post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["Content-Type"], response.read()


def _events(stream: bytes) -> list[Any]:
    return [json.loads(line[6:]) for line in stream.decode().splitlines() if line.startswith("data: ")]


def test_the_peer_gateways_play_the_task_in_each_api_and_record_it(tmp_path: Path) -> None:
    """bench_peers' scripted models for Claude Code (Messages API) and Codex (Responses API), each in
    its own process on loopback as the benchmark runs them (CI has no peers to drive them)."""
    from tests.benchmarks.bench_peers import check_record, gateway_record, peer_gateway

    claude_tools = [{"name": name, "input_schema": {"type": "object"}} for name in ("Bash", "Read", "Write")]
    prompt = [{"role": "user", "content": "go"}]
    with peer_gateway("anthropic", 3, tmp_path, 1, 0) as url:
        # A side request (no tools: a title prompt) does not consume the script.
        kind, body = _post(f"{url}/v1/messages", {"model": "haiku", "max_tokens": 32, "messages": prompt})
        assert kind == "application/json"
        assert json.loads(body)["content"][0]["type"] == "text"
        first = {"model": "opus", "stream": True, "tools": claude_tools, "messages": prompt}
        kind, stream = _post(f"{url}/v1/messages", first)
        assert kind == "text/event-stream"
        events = _events(stream)
        started = [e["content_block"] for e in events if e["type"] == "content_block_start"]
        assert started == [{"type": "tool_use", "id": "toolu_peer_000", "name": "Write", "input": {}}]
        deltas = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
        written = tmp_path / "peer_1_step_0.txt"
        assert json.loads("".join(deltas)) == {"file_path": str(written), "content": "step 0 content\n"}
        # The tool result comes back in the next request: the write step is done, the read is next.
        result = {"type": "tool_result", "tool_use_id": "toolu_peer_000", "content": "File created"}
        second = {**first, "messages": [*prompt, {"role": "user", "content": [result]}]}
        events = _events(_post(f"{url}/v1/messages", second)[1])
        names = [e["content_block"]["name"] for e in events if e["type"] == "content_block_start"]
        assert names == ["Read"]
        _, counted = _post(f"{url}/v1/messages/count_tokens", first)
        assert json.loads(counted)["input_tokens"] > 0
        record = gateway_record(url)
    played = [(r["kind"], r["turn"]) for r in record]
    assert played == [("side", None), ("main", 0), ("main", 1), ("side", None)]
    assert record[2]["lastResultOk"] is True
    assert all(r["completedAt"] >= r["receivedAt"] for r in record)

    codex_tools = [
        {"type": "function", "name": "exec_command", "parameters": {}},
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
    ]
    with peer_gateway("responses", 3, tmp_path, 2, 0) as url:
        request: dict[str, Any] = {"model": "gpt", "stream": True, "tools": codex_tools, "input": []}
        items: list[Any] = []
        for output in (None, "Success. Updated the following files", "Output:\nstep 0 content\n"):
            if output is not None:
                call = items[-1]
                answer = {"type": f"{call['type']}_output", "call_id": call["call_id"], "output": output}
                request["input"] = [*request["input"], call, answer]
            events = _events(_post(f"{url}/v1/responses", request)[1])
            assert events[-1]["type"] == "response.completed"
            items.append(next(e["item"] for e in events if e["type"] == "response.output_item.done"))
        record = gateway_record(url)
    patch, read, final = items
    assert (patch["type"], patch["name"]) == ("custom_tool_call", "apply_patch")
    assert f"*** Add File: {tmp_path / 'peer_2_step_0.txt'}" in patch["input"]
    assert read["name"] == "exec_command"
    assert json.loads(read["arguments"]) == {"cmd": f"cat {tmp_path / 'peer_2_step_0.txt'}"}
    assert (final["type"], final["content"][0]["text"]) == ("message", "Done.")
    # Both tool steps came back right and the answer was played: the run counts.
    assert check_record(record, 3) is None
    # A read that did not return the file's content does not.
    record[2]["lastResultOk"] = False
    assert "tool results of steps [1]" in (check_record(record, 3) or "")


def test_the_peer_benchmark_measures_cowork_from_the_gateway() -> None:
    """bench_peers' Cowork column: the real cowork exec through bench_exec, its figures taken at the
    gateway like the peers' (the peers themselves are not installed in CI)."""
    from tests.benchmarks.bench_peers import TARGETS

    tiny = ["--only", "cowork", "--steps", "4", "--runs", "2"]
    result = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.bench_peers", *tiny],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    for key, (label, _, _, _) in TARGETS.items():
        if key.startswith("cowork_"):
            assert label in result.stdout
