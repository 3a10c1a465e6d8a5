"""The agent runtime program end to end (issue: session server and agent loop).

Against the real local backend and the scripted gateway at zero latency, over the runtime's real
socket:

* **start to ready**: from spawning ``python -m agent_runtime --connect NAME`` to its authenticated
  connection (it then reads requests; the handlers load on a thread meanwhile), and to the answer of
  its first request, medians of ``--starts`` launches. Bytecode is compiled first, as an installed
  program's would be;
* **per step**: ``--runs`` tasks of ``--steps`` steps, each one LLM call and one trivial tool
  (ReadFile of a small file), timed from ``StartTask`` to its ``task_completed`` event — checkpoint,
  events and the gateway's HTTP round trip included. The loop's own overhead is each step's time
  outside its LLM call (the gateway's HTTP round trip, one connection per call as seed 000 §6.1
  says), from the runtime's own event timestamps: the figure with the target is its median over
  every step of every task (the issue's "median over 50 steps"); its mean over the whole task (the
  task's end and history upload included) and the totals are those of the median task.

Checkpoint writes with a 1,000-message thread are measured by ``bench_checkpoint``.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from contracts.ipc import eventloop
from contracts.ipc.client_core import RpcCallError
from tests.benchmarks.figures import Targets, report
from tests.integration.runtime.harness import Backend, Runtime, runtime_environment, start_backend
from tests.support.peers import REPO_ROOT

TARGETS: Targets = {
    "start_to_ready_ms": ("process start to JSON-RPC ready (authenticated, serving)", "ms", "<=", 400.0),
    "start_to_answer_ms": ("process start to the first answer (handlers loaded)", "ms", None, None),
    "step_outside_llm_ms": ("loop overhead per step outside the LLM call, median step", "ms", "<=", 3.0),
    "mean_outside_llm_ms": ("  the same, mean over the task (median task)", "ms", None, None),
    "step_ms": ("StartTask to completion, per step (median task)", "ms", None, None),
    "llm_call_ms": ("per step inside the LLM call (HTTP to the gateway)", "ms", None, None),
}


def _moment(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()


async def _start_to_ready(backend: Backend, data_dir: Path, starts: int) -> dict[str, float]:
    ready, answer = [], []
    env = runtime_environment(backend, "http://127.0.0.1:9", data_dir)
    for _ in range(starts):
        started = time.perf_counter()
        # Launch returns once the runtime has connected and proved the secret: it is reading requests.
        runtime = await Runtime.launch(env, label="bench")
        ready.append((time.perf_counter() - started) * 1e3)
        # SESSION_NOT_FOUND is the expected answer: the handlers are loaded and answering.
        with contextlib.suppress(RpcCallError):
            await runtime.call("GetSessionState", {"sessionId": "sess_none"})
        answer.append((time.perf_counter() - started) * 1e3)
        await runtime.aclose()
    return {"start_to_ready_ms": statistics.median(ready), "start_to_answer_ms": statistics.median(answer)}


async def _task(
    backend: Backend, data_dir: Path, workspace: Path, steps: int, run: int
) -> tuple[dict[str, float], list[float]]:
    """The task's per-step figures, and each step's time outside its LLM call (seconds)."""
    target = workspace / "small.txt"
    # Each call differs (its ``limit``): the runaway guard stops a model repeating the same call.
    turns: list[dict[str, Any]] = [
        {
            "toolCalls": [
                {"id": f"c{run}_{i}", "name": "ReadFile", "arguments": {"path": str(target), "limit": i + 1}}
            ]
        }
        for i in range(steps - 1)
    ]
    turns.append({"text": "Done."})
    script = workspace.parent / f"script_{run}.json"
    script.write_text(json.dumps({"turns": turns}))
    # The gateway in a process of its own, as a real one would be: it must not share this process's
    # CPU with the client that receives (and validates) every event.
    gateway = subprocess.Popen(  # noqa: ASYNC220 - started once, before anything is timed
        [sys.executable, "-m", "agent_runtime.scripted_gateway", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert gateway.stdout is not None
        url = gateway.stdout.readline().split()[-1]
        runtime = await Runtime.launch(runtime_environment(backend, url, data_dir), label="bench")
        try:
            await runtime.create_session(backend, workspace)
            # maxSteps above the task's length: the 80 % warning must not fire mid-measurement.
            started = time.perf_counter()
            await runtime.start_task(
                "Read the file again and again", task_id=f"task_{run}", maxSteps=steps * 2
            )
            end = await runtime.task_end(f"task_{run}", timeout=120)
            elapsed = time.perf_counter() - started
            assert end["eventType"] == "task_completed", end
            moments = {
                kind: [_moment(e) for e in runtime.events if e["eventType"] == kind]
                for kind in ("step_started", "llm_request_started", "llm_request_completed", "task_completed")
            }
            in_llm_each = [
                done - began
                for began, done in zip(
                    moments["llm_request_started"], moments["llm_request_completed"], strict=True
                )
            ]
            in_llm = sum(in_llm_each)
            # A step runs from its step_started to the next one's (the last one: to task_completed).
            bounds = moments["step_started"] + moments["task_completed"]
            outside = [
                end - begin - llm for begin, end, llm in zip(bounds, bounds[1:], in_llm_each, strict=False)
            ]
            await runtime.shutdown()
            await runtime.wait_exit(timeout=30)
        finally:
            await runtime.aclose()
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
    figures = {
        "step_ms": elapsed / steps * 1e3,
        "llm_call_ms": in_llm / steps * 1e3,
        "mean_outside_llm_ms": (elapsed - in_llm) / steps * 1e3,
    }
    return figures, outside


async def measure(starts: int, steps: int, runs: int) -> dict[str, float]:
    compileall.compile_dir(REPO_ROOT / "agent_runtime", quiet=1)
    compileall.compile_dir(REPO_ROOT / "contracts", quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch).resolve()
        workspace = root / "project"
        workspace.mkdir()
        (workspace / "small.txt").write_text("hello\n" * 10)
        with start_backend(root / "backend") as backend:
            figures = await _start_to_ready(backend, root / "data", starts)
            tasks = [await _task(backend, root / "data", workspace, steps, run) for run in range(runs)]
    middle = sorted((task for task, _ in tasks), key=lambda task: task["step_ms"])[len(tasks) // 2]
    every_step = [seconds for _, outside in tasks for seconds in outside]
    return figures | middle | {"step_outside_llm_ms": statistics.median(every_step) * 1e3}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=10, help="process launches timed")
    parser.add_argument("--steps", type=int, default=50, help="steps per task")
    parser.add_argument("--runs", type=int, default=5, help="tasks timed (the median task is shown)")
    args = parser.parse_args(argv)
    print(f"Cowork runtime benchmark: {args.starts} starts, {args.runs} tasks of {args.steps} steps")
    print(report(eventloop.run(measure(args.starts, args.steps, args.runs)), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
