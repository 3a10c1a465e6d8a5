"""``cowork exec`` end to end: the real program, as a user or a CI job runs it.

``cowork exec --json`` (its own process, as the console script starts it) against the real local
backend (configured through ``COWORK_BACKEND_URL``/``TOKEN``/``POLICY_KEYS``, as CI would) and the
scripted gateway in a process of its own at zero latency, through a task of ``--steps`` steps that mix
``ReadFile``, ``WriteFile`` and ``RunCommand`` (``--approval-mode never --approve-all``: nothing waits
for a person). Medians of ``--runs`` runs:

* **start to first LLM request**: from spawning ``cowork exec`` to the arrival of its first
  ``llm_request_started`` line — its own start, the backend and gateway checks, the runtime's start,
  ``CreateSession`` (the backend's policy bundle) and ``StartTask`` included; and, without a target,
  to its first line (``session_started``: the runtime is up and the session created). Bytecode is
  compiled first, as an installed program's would be;
* **per step**: the median of step durations (one ``step_started`` to the next, from the runtime's own
  event timestamps) over every step of every run — the LLM call's HTTP round trip and the tool
  included; without a target, the same outside the LLM call (``llm_request_started`` to
  ``_completed``), and per tool;
* **peak RSS of the runtime**: its ``VmHWM`` (Linux; elsewhere its largest RSS seen), polled every few
  milliseconds while it runs.
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

from tests.benchmarks.figures import Targets, report
from tests.headless.support import base_environment, cowork_command
from tests.support.backend import Backend, start_backend
from tests.support.peers import REPO_ROOT

TARGETS: Targets = {
    "start_to_llm_ms": ("process start to the first llm_request_started", "ms", "<=", 400.0),
    "start_to_session_ms": ("  of which to session_started (runtime up, session created)", "ms", None, None),
    "step_ms": ("per step (step_started to the next), median step", "ms", "<=", 3.0),
    "step_outside_llm_ms": ("  of which outside the LLM call (tool, checkpoint, events)", "ms", None, None),
    "read_step_ms": ("  ReadFile steps", "ms", None, None),
    "write_step_ms": ("  WriteFile steps", "ms", None, None),
    "command_step_ms": ("  RunCommand steps", "ms", None, None),
    "runtime_peak_rss_mb": ("peak RSS of the runtime process", "MB", "<=", 100.0),
    "run_ms": ("whole run: process start to exit", "ms", None, None),
}

TOOLS = ("ReadFile", "WriteFile", "RunCommand")
FIGURE_OF_TOOL = {"ReadFile": "read_step_ms", "WriteFile": "write_step_ms", "RunCommand": "command_step_ms"}


def _moment(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()


def _turns(workspace: Path, steps: int, run: int) -> list[dict[str, Any]]:
    """``steps - 1`` tool steps cycling through the three tools, then the final answer. Each call
    differs: the runaway guard stops a model that repeats the same call."""
    turns: list[dict[str, Any]] = []
    for i in range(steps - 1):
        tool = TOOLS[i % len(TOOLS)]
        if tool == "ReadFile":
            arguments: dict[str, Any] = {"path": str(workspace / "small.txt"), "limit": i + 1}
        elif tool == "WriteFile":
            arguments = {"path": str(workspace / f"out_{run}_{i}.txt"), "content": f"step {i}\n"}
        else:
            arguments = {"command": f"echo step-{i}"}
        turns.append({"toolCalls": [{"id": f"c{run}_{i}", "name": tool, "arguments": arguments}]})
    turns.append({"text": "Done."})
    return turns


class PeakMemory:
    """The largest resident size of the first ``agent_runtime`` child of ``parent``, polled on a thread."""

    def __init__(self, parent: int, interval_s: float = 0.003) -> None:
        self._parent = parent
        self._interval = interval_s
        self.peak_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        runtime = None
        while not self._stop.is_set():
            try:
                if runtime is None:
                    runtime = next(
                        (
                            child
                            for child in psutil.Process(self._parent).children()
                            if "agent_runtime" in child.cmdline()
                        ),
                        None,
                    )
                if runtime is not None:
                    self.peak_bytes = max(self.peak_bytes, _high_water_mark(runtime))
            except (psutil.Error, OSError):
                if runtime is not None:
                    return  # it exited: the last reading stands
            time.sleep(self._interval)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.peak_bytes


def _high_water_mark(process: psutil.Process) -> int:
    status = Path(f"/proc/{process.pid}/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return int(process.memory_info().rss)


def _run(backend: Backend, root: Path, workspace: Path, steps: int, run: int) -> dict[str, Any]:
    script = root / f"script_{run}.json"
    script.write_text(json.dumps({"turns": _turns(workspace, steps, run)}))
    gateway = subprocess.Popen(
        [sys.executable, "-m", "agent_runtime.scripted_gateway", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert gateway.stdout is not None
        url = gateway.stdout.readline().split()[-1]
        env = base_environment(root / f"run_{run}", backend)
        command = [*cowork_command(), "--json", "-C", str(workspace), "--endpoint", url]
        command += ["--approval-mode", "never", "--approve-all", "--max-steps", str(steps * 2)]
        started = time.perf_counter()
        cowork = subprocess.Popen(
            [*command, "Read, write and run, step after step"],
            env=env,
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        memory = PeakMemory(cowork.pid)
        first_llm: float | None = None
        first_event: float | None = None
        events: list[dict[str, Any]] = []
        assert cowork.stdout is not None
        for line in cowork.stdout:
            event = json.loads(line)
            if first_event is None:
                first_event = time.perf_counter() - started
            if first_llm is None and event["eventType"] == "llm_request_started":
                first_llm = time.perf_counter() - started
            events.append(event)
        _, stderr = cowork.communicate(timeout=120)
        ended = time.perf_counter() - started
        peak = memory.stop()
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
    kinds = [event["eventType"] for event in events]
    assert cowork.returncode == 0, f"exit {cowork.returncode}: {stderr}"
    assert "task_completed" in kinds, kinds
    assert kinds[0] == "session_started", kinds[:3]
    assert first_llm is not None
    assert first_event is not None
    starts = [_moment(event) for event in events if event["eventType"] == "step_started"]
    bounds = [*starts, *(_moment(e) for e in events if e["eventType"] == "task_completed")]
    tools = [e["payload"]["toolName"] for e in events if e["eventType"] == "tool_requested"]
    durations = [(end - begin) * 1e3 for begin, end in itertools.pairwise(bounds)]
    calls = zip(
        (_moment(e) for e in events if e["eventType"] == "llm_request_started"),
        (_moment(e) for e in events if e["eventType"] == "llm_request_completed"),
        strict=True,
    )
    outside = [ms - (done - began) * 1e3 for ms, (began, done) in zip(durations, calls, strict=False)]
    return {
        "start_to_llm_ms": first_llm * 1e3,
        "start_to_session_ms": first_event * 1e3,
        "run_ms": ended * 1e3,
        "runtime_peak_rss_mb": peak / 2**20,
        "steps": list(zip(tools, durations, strict=False)),
        "outside": outside,
    }


def measure(steps: int, runs: int) -> dict[str, float]:
    for package in ("agent_runtime", "contracts", "desktop"):
        compileall.compile_dir(REPO_ROOT / package, quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch).resolve()
        workspace = root / "project"
        workspace.mkdir()
        (workspace / "small.txt").write_text("hello\n" * 10)
        with start_backend(root / "backend") as backend:
            results = [_run(backend, root, workspace, steps, run) for run in range(runs)]
    figures = {
        key: statistics.median(result[key] for result in results)
        for key in ("start_to_llm_ms", "start_to_session_ms", "run_ms", "runtime_peak_rss_mb")
    }
    every_step = [(tool, ms) for result in results for tool, ms in result["steps"]]
    figures["step_ms"] = statistics.median(ms for _, ms in every_step)
    figures["step_outside_llm_ms"] = statistics.median(ms for result in results for ms in result["outside"])
    for tool, key in FIGURE_OF_TOOL.items():
        of_tool = [ms for name, ms in every_step if name == tool]
        if of_tool:
            figures[key] = statistics.median(of_tool)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=20, help="steps per task (the last one answers)")
    parser.add_argument("--runs", type=int, default=5, help="runs of cowork exec (medians are shown)")
    args = parser.parse_args(argv)
    print(f"cowork exec benchmark: {args.runs} runs of {args.steps} steps")
    print(report(measure(args.steps, args.runs), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
