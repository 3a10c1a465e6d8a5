"""Every benchmark script still runs and prints a figure for each of its measures (tiny sizes; the
figures are not judged here — the scripts print them against their targets)."""

from __future__ import annotations

import importlib
import subprocess
import sys

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
