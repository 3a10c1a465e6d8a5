"""``cowork exec`` end to end: the real program, as a user or a CI job runs it.

``cowork exec --json`` (its own process, as the console script starts it) against the scripted
gateway in a process of its own at zero latency, through a task of ``--steps`` steps that mix
``ReadFile``, ``WriteFile`` and ``RunCommand`` (``--approval-mode never --approve-all``: nothing waits
for a person). Bytecode is compiled first, as an installed program's would be. Two ways to reach the
backend:

* ``--user-path`` (the default): the path a user takes. Each round gets a fresh user data directory
  (platformdirs' XDG folders under a temporary home), kept across that round's ``--runs`` runs, and no
  backend configured: the first run finds none running and starts the embedded one, the later runs
  find it still up, as a user's next run would. Whatever backend the runs left behind is stopped at
  the end of the round.
* ``--configured-backend``: one local backend started beforehand and named through
  ``COWORK_BACKEND_URL``/``TOKEN``/``POLICY_KEYS``, as CI would.

``--packaged PATH`` runs the packaged ``cowork-cli`` (PATH: the program or the unpacked ``Cowork``
folder; an empty PATH builds or reuses the Linux package of this checkout, as ``bench_package`` does)
instead of the source install. Figures, medians over runs:

* **start → first LLM request**: from spawning ``cowork exec`` to the gateway receiving its first
  request (the gateway's own clock, the same wall clock as ours), the first run of each round and the
  later runs apart; and to cowork's first line (``session_started``: runtime up, session created);
* **per step**: step durations (one ``step_started`` to the next, from the runtime's own event
  timestamps) over every step of every run — the LLM call's HTTP round trip and the tool included;
  the same outside the LLM call; and per tool;
* **last response → exit**: from the final ``llm_request_completed`` event's timestamp to the exit
  of ``cowork exec`` (its status reaped);
* **peak RSS** of the runtime and of ``cowork exec`` itself: their ``VmHWM`` (Linux; elsewhere the
  largest RSS seen), polled every few milliseconds while they run.

Run: ``.venv/bin/python -m tests.benchmarks.bench_exec`` (``--help``).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

from tests.benchmarks.figures import Targets, report
from tests.headless.support import base_environment, cowork_command
from tests.support.backend import start_backend
from tests.support.peers import REPO_ROOT

TARGETS: Targets = {
    "first_start_to_llm_ms": (
        "first run (no backend running): process start to the first LLM request",
        "ms",
        "<=",
        250.0,
    ),
    "start_to_llm_ms": ("later runs (backend up): process start to the first LLM request", "ms", "<=", 250.0),
    "start_to_session_ms": ("  of which to session_started (runtime up, session created)", "ms", None, None),
    "step_ms": ("per step (step_started to the next), median step", "ms", "<=", 3.0),
    "step_outside_llm_ms": ("  of which outside the LLM call (tool, checkpoint, events)", "ms", None, None),
    "read_step_ms": ("  ReadFile steps", "ms", None, None),
    "write_step_ms": ("  WriteFile steps", "ms", None, None),
    "command_step_ms": ("  RunCommand steps", "ms", None, None),
    "exit_ms": ("last response (final llm_request_completed) to process exit", "ms", "<=", 30.0),
    "runtime_peak_rss_mb": ("peak RSS of the runtime process", "MB", "<=", 76.0),
    "exec_peak_rss_mb": ("peak RSS of the cowork exec process", "MB", None, None),
    "run_ms": ("whole run: process start to exit", "ms", None, None),
}

TOOLS = ("ReadFile", "WriteFile", "RunCommand")
FIGURE_OF_TOOL = {"ReadFile": "read_step_ms", "WriteFile": "write_step_ms", "RunCommand": "command_step_ms"}
MEDIANS = ("start_to_session_ms", "exit_ms", "run_ms", "runtime_peak_rss_mb", "exec_peak_rss_mb")


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


def _is_runtime(process: psutil.Process) -> bool:
    """cowork exec starts its runtime with ``--stdio``; nothing else it starts takes that flag."""
    command = process.cmdline()
    return "--stdio" in command or "agent_runtime" in command


class PeakMemory:
    """The largest resident sizes of ``cowork exec`` and of its runtime child, polled on a thread."""

    def __init__(
        self, parent: int, interval_s: float = 0.003, fork_servers: Sequence[psutil.Process] = ()
    ) -> None:
        self._parent = parent
        self._fork_servers = list(fork_servers)
        """A runtime forked by the fork server is that server's child, not exec's."""
        self._interval = interval_s
        self.exec_bytes = 0
        self.runtime_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        runtime: psutil.Process | None = None
        parent = psutil.Process(self._parent)
        while not self._stop.is_set():
            with contextlib.suppress(psutil.Error, OSError, ValueError):
                self.exec_bytes = max(self.exec_bytes, _high_water_mark(parent))
            try:
                if runtime is None:
                    runtime = next((c for c in parent.children() if _is_runtime(c)), None)
                if runtime is None:
                    forked = (c for server in self._fork_servers for c in server.children())
                    runtime = next(forked, None)
                if runtime is not None:
                    self.runtime_bytes = max(self.runtime_bytes, _high_water_mark(runtime))
            except (psutil.Error, OSError, ValueError):
                pass  # gone: the last reading stands
            time.sleep(self._interval)

    def stop(self) -> tuple[int, int]:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.exec_bytes, self.runtime_bytes


def _high_water_mark(process: psutil.Process) -> int:
    status = Path(f"/proc/{process.pid}/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0  # a zombie: no memory any more
    return int(process.memory_info().rss)


@contextlib.contextmanager
def _gateway(script: Path) -> Iterator[str]:
    gateway = subprocess.Popen(
        [sys.executable, "-m", "agent_runtime.scripted_gateway", "--script", str(script)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert gateway.stdout is not None
        yield gateway.stdout.readline().split()[-1]
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)


def _received(url: str) -> list[float]:
    with urllib.request.urlopen(f"{url}/_scripted/requests", timeout=10) as response:
        requests = json.load(response)["requests"]
    return sorted(float(r["receivedAt"]) for r in requests if r["method"] == "POST")


def _exchanges(url: str) -> list[tuple[float, float]]:
    """Each model request's arrival and the end of its answer, on the gateway's clock, in order (what
    ``bench_peers`` measures every agent by: response end to next request, last response to exit)."""
    with urllib.request.urlopen(f"{url}/_scripted/requests", timeout=10) as response:
        requests = json.load(response)["requests"]
    posts = [r for r in requests if r["method"] == "POST" and r["completedAt"] is not None]
    return sorted((float(r["receivedAt"]), float(r["completedAt"])) for r in posts)


@dataclass(frozen=True)
class Setup:
    command: list[str]
    environment: dict[str, str]
    workspace: Path


def _run(setup: Setup, root: Path, steps: int, run: int) -> dict[str, Any]:
    script = root / f"script_{run}.json"
    script.write_text(json.dumps({"turns": _turns(setup.workspace, steps, run)}))
    with _gateway(script) as url:
        command = [*setup.command, "--json", "-C", str(setup.workspace), "--endpoint", url]
        command += ["--approval-mode", "never", "--approve-all", "--max-steps", str(steps * 2)]
        servers = _fork_servers(setup.environment)
        started_wall = time.time()
        started = time.perf_counter()
        cowork = subprocess.Popen(
            [*command, "Read, write and run, step after step"],
            env=setup.environment,
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        memory = PeakMemory(cowork.pid, fork_servers=servers)
        exited: list[float] = []

        def reap() -> None:
            cowork.wait()
            exited.append(time.time())

        reaper = threading.Thread(target=reap, daemon=True)
        reaper.start()
        first_event: float | None = None
        events: list[dict[str, Any]] = []
        assert cowork.stdout is not None
        assert cowork.stderr is not None
        stderr_lines: list[str] = []
        errors = threading.Thread(target=lambda: stderr_lines.extend(cowork.stderr or ()), daemon=True)
        errors.start()
        for line in cowork.stdout:
            if first_event is None:
                first_event = time.perf_counter() - started
            events.append(json.loads(line))
        reaper.join(timeout=120)
        errors.join(timeout=10)
        ended = exited[0] - started_wall if exited else float("nan")
        exec_peak, runtime_peak = memory.stop()
        requests = _received(url)
        exchanges = _exchanges(url)
    kinds = [event["eventType"] for event in events]
    stderr = "".join(stderr_lines)
    assert cowork.returncode == 0, f"exit {cowork.returncode}: {stderr}"
    assert "task_completed" in kinds, kinds
    assert kinds[0] == "session_started", kinds[:3]
    assert first_event is not None
    assert requests, "the gateway received no request"
    starts = [_moment(event) for event in events if event["eventType"] == "step_started"]
    bounds = [*starts, *(_moment(e) for e in events if e["eventType"] == "task_completed")]
    tools = [e["payload"]["toolName"] for e in events if e["eventType"] == "tool_requested"]
    durations = [(end - begin) * 1e3 for begin, end in itertools.pairwise(bounds)]
    calls = list(
        zip(
            (_moment(e) for e in events if e["eventType"] == "llm_request_started"),
            (_moment(e) for e in events if e["eventType"] == "llm_request_completed"),
            strict=True,
        )
    )
    outside = [ms - (done - began) * 1e3 for ms, (began, done) in zip(durations, calls, strict=False)]
    return {
        "start_to_llm_ms": (requests[0] - started_wall) * 1e3,
        "start_to_session_ms": first_event * 1e3,
        "exit_ms": (exited[0] - calls[-1][1]) * 1e3 if exited else float("nan"),
        "run_ms": ended * 1e3,
        "runtime_peak_rss_mb": runtime_peak / 2**20,
        "exec_peak_rss_mb": exec_peak / 2**20,
        "steps": list(zip(tools, durations, strict=False)),
        "outside": outside,
        "started_at": started_wall,
        "exited_at": exited[0] if exited else float("nan"),
        "exchanges": exchanges,
        "tools": tools,
    }


def _user_environment(home: Path) -> dict[str, str]:
    """A user's environment with every per-user folder under ``home`` and nothing of Cowork's set:
    no backend (exec starts or reuses the embedded one), the runtime's data in its default place, the
    runtime's fork server as a user gets it (``COWORK_RUNTIME_FORK_SERVER=0`` in the calling
    environment turns it off, to compare)."""
    env = base_environment(home, None)
    if os.environ.get("COWORK_RUNTIME_FORK_SERVER") == "0":
        env["COWORK_RUNTIME_FORK_SERVER"] = "0"
    else:
        env.pop("COWORK_RUNTIME_FORK_SERVER", None)
    for variable in ("COWORK_RUNTIME_DATA_DIR", "COWORK_BACKEND_IDLE_TIMEOUT"):
        env.pop(variable, None)
    env.update(
        {
            "HOME": str(home),
            "XDG_STATE_HOME": str(home / "xdg-state"),
            "XDG_CACHE_HOME": str(home / "xdg-cache"),
        }
    )
    return env


def _fork_servers(env: Mapping[str, str]) -> list[psutil.Process]:
    """The runtime fork servers of ``env``'s user data directory (``desktop.launch.forked``)."""
    data = env.get("XDG_DATA_HOME", "")
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = process.info.get("cmdline") or []
        if data and "fork-server" in command and any(data in part for part in command):
            found.append(process)
    return found


def _backend_pids(home: Path) -> set[int]:
    """The embedded backends serving from ``home``'s user data directory: the state file's, and any
    process whose command line names that directory (one still starting has no state file yet)."""
    data = home / "xdg-data"
    found = set()
    with contextlib.suppress(OSError, ValueError, KeyError):
        found.add(int(json.loads((data / "Cowork" / "backend" / "backend.json").read_text())["pid"]))
    for process in psutil.process_iter(["cmdline"]):
        command = process.info.get("cmdline") or []
        serves = "serve" in command or "fork-server" in command  # the backend, the runtime's fork server
        if serves and any(str(data) in part for part in command):
            found.add(process.pid)
    return found


def _stop_backends(home: Path) -> None:
    for pid in _backend_pids(home):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).wait(timeout=15)


def _packaged_command(path: str, scratch: Path) -> list[str]:
    if not path:
        from tests.installer.package import linux_package, unpack_package

        path = str(unpack_package(linux_package(), scratch / "package"))
    program = Path(path)
    if program.is_dir():
        program = program / "cowork-cli"
    if not program.exists():
        raise SystemExit(f"bench_exec: no packaged cowork-cli at {program}")
    return [str(program), "exec"]


def _workspace(root: Path) -> Path:
    workspace = root / "project"
    workspace.mkdir(parents=True)
    (workspace / "small.txt").write_text("hello\n" * 10)
    return workspace


def measure(
    steps: int, runs: int, *, rounds: int = 1, user_path: bool = True, packaged: str | None = None
) -> dict[str, float]:
    for package in ("agent_runtime", "contracts", "desktop", "backend"):
        compileall.compile_dir(REPO_ROOT / package, quiet=1)
    results: list[dict[str, Any]] = []
    firsts: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch).resolve()
        command = _packaged_command(packaged, base) if packaged is not None else cowork_command()
        for round_index in range(rounds):
            root = base / f"round_{round_index}"
            workspace = _workspace(root)
            if user_path:
                home = root / "home"
                setup = Setup(command, _user_environment(home), workspace)
                try:
                    measured = [_run(setup, root, steps, run) for run in range(runs)]
                finally:
                    _stop_backends(home)
            else:
                with start_backend(root / "backend") as backend:
                    env = base_environment(root / "client", backend)
                    measured = [_run(Setup(command, env, workspace), root, steps, run) for run in range(runs)]
            firsts.append(measured[0]["start_to_llm_ms"])
            results += measured[1:] if user_path else measured
            if user_path:
                results.append({**measured[0], "start_to_llm_ms": None, "start_to_session_ms": None})
    figures: dict[str, float] = {}
    if user_path:
        figures["first_start_to_llm_ms"] = statistics.median(firsts)
    later = [r["start_to_llm_ms"] for r in results if r["start_to_llm_ms"] is not None]
    if later:
        figures["start_to_llm_ms"] = statistics.median(later)
    for key in MEDIANS:
        values = [r[key] for r in results if r[key] is not None]
        if values:
            figures[key] = statistics.median(values)
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
    parser.add_argument("--runs", type=int, default=5, help="runs of cowork exec per round (default 5)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="user path: fresh user data directories, one per round"
    )
    path = parser.add_mutually_exclusive_group()
    path.add_argument("--user-path", dest="user_path", action="store_true", default=True)
    path.add_argument("--configured-backend", dest="user_path", action="store_false")
    parser.add_argument(
        "--packaged",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="run the packaged cowork-cli (PATH: the program or the Cowork folder; none: build or reuse"
        " this checkout's Linux package)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.rounds < 1:
        parser.error("--runs and --rounds must be at least 1")
    where = "user path (fresh data directory, no backend running)" if args.user_path else "configured backend"
    program = "packaged cowork-cli" if args.packaged is not None else "source install"
    print(
        f"cowork exec benchmark: {args.rounds} round(s) of {args.runs} runs of {args.steps} steps;"
        f" {where}; {program}; load {os.getloadavg()[0]:.2f}"
    )
    figures = measure(
        args.steps, args.runs, rounds=args.rounds, user_path=args.user_path, packaged=args.packaged
    )
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
