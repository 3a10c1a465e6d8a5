"""How long an administrator's ``cowork-backend policy revoke`` takes to pause a running session (issue
22: "a policy revoked mid-task pauses the session within 5 s").

The real local backend (``cowork-backend serve`` with a config directory, its default push interval
unless ``--push-interval``), a real runtime process per run over its socket, the scripted gateway
(whose answer takes longer than any run: the revocation always comes while the model is answering).
Each run starts a task, waits for its LLM request, runs ``policy revoke`` as a process and waits for
``session_paused``; then ``policy set`` restores a valid policy for the next run. Figures (median and
worst over ``--runs``):

* from the command's start to the pause — what the administrator sees (includes starting the CLI
  process, about half a second of Python imports);
* from the revocation written (the command's exit) to the pause — what the push costs: the server's
  poll interval, the message, the runtime abandoning the stream and checkpointing the pause;
* the same with the server's WebSockets off: the runtime polls ``GET /sessions/{id}/policy-status``
  every ``pollSeconds`` (3 s by default, the server's suggestion).

Run: ``.venv/bin/python -m tests.benchmarks.bench_policy_push`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGateway
from contracts.ipc import eventloop
from tests.benchmarks.figures import Targets, report
from tests.integration.runtime.harness import Backend, Runtime, runtime_environment, start_backend
from tests.support.peers import REPO_ROOT

TARGETS: Targets = {
    "ws_command_median_ms": ("WebSocket: policy revoke started → paused, median", "ms", "<=", 5000.0),
    "ws_command_max_ms": ("WebSocket: policy revoke started → paused, worst", "ms", "<=", 5000.0),
    "ws_written_median_ms": ("WebSocket: revocation written → paused, median", "ms", None, None),
    "ws_written_max_ms": ("WebSocket: revocation written → paused, worst", "ms", None, None),
    "poll_written_median_ms": ("polling: revocation written → paused, median", "ms", None, None),
    "poll_written_max_ms": ("polling: revocation written → paused, worst", "ms", None, None),
}

POLICY = '[[capabilities]]\nname = "File.Read"\n\n[[capabilities]]\nname = "LLM.Call"\n'


def _cli(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "backend.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=60,
        check=True,
    )


async def _measure(backend: Backend, config: Path, work: Path, runs: int) -> tuple[list[float], list[float]]:
    from_command: list[float] = []
    from_written: list[float] = []
    source = work / "policy.toml"
    source.write_text(POLICY)
    script = [{"delayMs": 60_000, "text": "never"}] * runs
    async with ScriptedGateway(script) as gateway:
        for run in range(runs):
            env = runtime_environment(backend, gateway.url, work / f"runtime-{run}")
            runtime = await Runtime.launch(env, label=f"runtime {run}")
            try:
                await runtime.create_session(backend, None)
                await runtime.start_task("Think")
                await runtime.event("llm_request_started", timeout=30)
                started = time.monotonic()
                await asyncio.to_thread(_cli, "policy", "revoke", "local", "--config-dir", str(config))
                written = time.monotonic()
                await runtime.event("session_paused", timeout=30)
                paused = time.monotonic()
                from_command.append((paused - started) * 1000)
                from_written.append((paused - written) * 1000)
                await asyncio.to_thread(
                    _cli, "policy", "set", "local", str(source), "--config-dir", str(config)
                )
            finally:
                await runtime.aclose()
    return from_command, from_written


def _one_backend(runs: int, push_interval: float, *, websockets: bool) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        config = work / "config"
        config.mkdir()
        extra = ["--push-interval", str(push_interval)] + ([] if websockets else ["--no-websockets"])
        with start_backend(work / "backend", config_dir=config, extra_args=extra) as backend:
            return eventloop.run(_measure(backend, config, work, runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7, help="revocations per transport (default 7)")
    parser.add_argument(
        "--push-interval", type=float, default=1.0, help="the server's poll interval (default 1, its own)"
    )
    parser.add_argument(
        "--poll-runs", type=int, default=3, help="revocations with WebSockets off (default 3)"
    )
    args = parser.parse_args(argv)
    command, written = _one_backend(args.runs, args.push_interval, websockets=True)
    _, polled = _one_backend(args.poll_runs, args.push_interval, websockets=False)
    figures = {
        "ws_command_median_ms": statistics.median(command),
        "ws_command_max_ms": max(command),
        "ws_written_median_ms": statistics.median(written),
        "ws_written_max_ms": max(written),
        "poll_written_median_ms": statistics.median(polled),
        "poll_written_max_ms": max(polled),
    }
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
