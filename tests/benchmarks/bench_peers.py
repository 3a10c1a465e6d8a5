"""Cowork, Claude Code and OpenAI's Codex CLI side by side, measured from outside in one sitting.

Each agent runs the same task non-interactively against a zero-latency scripted model on loopback,
in its own API and tool vocabulary: ``--steps`` steps (19 tool steps cycling write a file → read it →
run ``echo step-N``, then a final text answer), approvals off, each round with a fresh home / data
directory kept across that round's ``--runs`` runs. The agents take turns round by round, so a change
in the machine's load falls on all of them.

* **Cowork**: ``cowork exec`` on the user path, exactly as ``bench_exec`` runs it (its functions,
  the scripted gateway ``agent_runtime.scripted_gateway`` in a process of its own, bytecode compiled
  first, ``--approval-mode never --approve-all``).
* **Claude Code** (``@anthropic-ai/claude-code``): ``claude -p PROMPT --permission-mode
  bypassPermissions`` with ``ANTHROPIC_BASE_URL`` at :mod:`tests.benchmarks.peer_gateway`'s Messages
  API, ``IS_SANDBOX=1`` (a root user may skip permissions only then) and its documented switches for
  non-essential traffic, telemetry, error reporting and the auto-updater off.
* **Codex** (``@openai/codex``): ``codex exec --skip-git-repo-check
  --dangerously-bypass-approvals-and-sandbox PROMPT`` with a ``config.toml`` under a fresh
  ``CODEX_HOME`` naming the peer gateway's Responses API as its model provider, analytics, the
  update check and the plugin sync (it reaches github.com and chatgpt.com at each start) off.

Both peers are installed from the npm registry (``npm install --prefix``) into
``~/.cache/cowork-bench/peers/<package>@<version>`` (``--peers-dir``) when missing, or taken from
``--claude PATH`` / ``--codex PATH``. Both npm packages are thin wrappers around a native program in
a platform package; the native program is what runs and is timed — Claude Code's postinstall copies
it over the wrapper's placeholder and Codex's ``codex.js`` only finds and starts it (on Node 20, as a
child it waits for), so going through the wrappers would add a Node start that users of the native
installers do not have.

Figures, per agent, medians: **start → first main-loop request** (from spawning the program to the
gateway receiving it; the first run of each round and the later runs apart); **response end → next
request**, the agent's own time per step seen from the gateway, over every step of every run and per
tool kind; **last response → exit** (the end of the final answer to the process reaped); **peak RSS**
of the agent's biggest process (its ``VmHWM``; for Cowork the runtime, which runs the steps) and of
its whole process tree (polled every few milliseconds: see :class:`TreeMemory`; for Cowork the peaks
of ``cowork exec`` and of its runtime added up, their shared pages counted twice), and for Cowork the
local backend and the runtime's fork server that stay up between runs. Then Cowork as a percentage
of the peers against the goals: start ≤ ½ of Claude Code's, per step ≤ 1/5 of the fastest peer's,
exit ≤ the faster peer's, RSS ≤ ½ of the leanest peer's.

Every peer run is checked in the gateway's record: ``steps - 1`` tool steps played, each tool result
back in the next request and holding what the step produced, the final answer played. A peer that
cannot be installed or run is reported as not measured; the exit status is non-zero only when Cowork
fails.

Run: ``.venv/bin/python -m tests.benchmarks.bench_peers`` (``--help``).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import functools
import itertools
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tests.benchmarks import bench_exec
from tests.benchmarks.figures import Targets, report
from tests.headless.support import cowork_command
from tests.support.peers import REPO_ROOT

PROMPT = "Read, write and run, step after step"
DEFAULT_PEERS_DIR = Path.home() / ".cache" / "cowork-bench" / "peers"
KIND_OF_TOOL = {"WriteFile": "write", "ReadFile": "read", "RunCommand": "command"}
REFERENCE = {
    "claude": "reference figures (2.1.197, measured earlier elsewhere):"
    " start 0.50–0.54 s, 22–35 ms/step, exit 0.03 s, 300 MB",
    "codex": "reference figures (0.169 native, measured earlier elsewhere):"
    " start 0.11–0.13 s, 54–59 ms/step, exit 0.03 s, 152 MB",
}


@dataclass(frozen=True)
class Peer:
    key: str
    name: str
    package: str
    default_version: str
    dialect: str


PEERS = (
    Peer("claude", "Claude Code", "@anthropic-ai/claude-code", "2.1.197", "anthropic"),
    Peer("codex", "Codex CLI", "@openai/codex", "0.169.0", "responses"),
)
AGENTS = {"cowork": "Cowork", **{peer.key: peer.name for peer in PEERS}}


def _agent_targets(key: str, name: str) -> Targets:
    return {
        f"{key}_first_start_ms": (f"{name}: first run, start → first main-loop request", "ms", None, None),
        f"{key}_start_ms": (f"{name}: later runs, start → first main-loop request", "ms", None, None),
        f"{key}_step_ms": (f"{name}: response end → next request, median step", "ms", None, None),
        f"{key}_write_step_ms": (f"{name}:   after a write", "ms", None, None),
        f"{key}_read_step_ms": (f"{name}:   after a read", "ms", None, None),
        f"{key}_command_step_ms": (f"{name}:   after a command", "ms", None, None),
        f"{key}_exit_ms": (f"{name}: last response → exit", "ms", None, None),
        f"{key}_rss_mb": (f"{name}: peak RSS, biggest process", "MB", None, None),
        f"{key}_tree_rss_mb": (f"{name}: peak RSS, process tree", "MB", None, None),
        f"{key}_daemons_rss_mb": (f"{name}: peak RSS, daemons kept running", "MB", None, None),
    }


TARGETS: Targets = {
    **{k: v for key, name in AGENTS.items() for k, v in _agent_targets(key, name).items()},
    "first_start_vs_claude_pct": ("Cowork first-run start as % of Claude Code's", "%", "<=", 50.0),
    "start_vs_claude_pct": ("Cowork later-run start as % of Claude Code's", "%", "<=", 50.0),
    "step_vs_fastest_pct": ("Cowork per step as % of the fastest peer's", "%", "<=", 20.0),
    "exit_vs_fastest_pct": ("Cowork exit as % of the faster peer's", "%", "<=", 100.0),
    "rss_vs_leanest_pct": ("Cowork peak RSS (runtime) as % of the leanest peer's", "%", "<=", 50.0),
}


class NotMeasured(Exception):
    """A peer that cannot be installed or run here; the message says why."""


# --- installing the peers ---------------------------------------------------------------------


def _npm(*args: str, timeout: float = 120) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise NotMeasured("npm is not installed")
    try:
        done = subprocess.run([npm, *args], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise NotMeasured(f"npm {args[0]} took longer than {timeout:.0f} s") from exc
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip() and "complete log" not in line]
        raise NotMeasured(f"npm {args[0]} failed: {' / '.join(lines[:2]) or 'no message'}")
    return done.stdout


def _arch_names() -> tuple[str, ...]:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return ("x64", "x86_64")
    if machine in ("aarch64", "arm64"):
        return ("arm64", "aarch64")
    return (machine,)


def native_program(peer: Peer, prefix: Path) -> list[str] | None:
    """The command that runs ``peer``'s native program in an npm prefix, or ``None`` if absent."""
    modules = prefix / "node_modules"
    if peer.key == "claude":
        found = sorted(modules.glob("@anthropic-ai/claude-code-*/claude"))
        fallback = [modules / "@anthropic-ai" / "claude-code" / "cli.js"]  # the JS releases
    else:
        found = sorted(modules.glob("@openai/codex*/vendor/*/bin/codex"))
        found += sorted(modules.glob("@openai/codex*/vendor/*/codex/codex"))  # older layout
        fallback = []
    arches = _arch_names()
    for program in found:
        where = str(program.relative_to(modules)).lower()
        if any(arch in where for arch in arches) and (sys.platform in where or "linux" not in where):
            return [str(program)]
    for script in fallback:
        if script.exists():
            node = shutil.which("node")
            return [node, str(script)] if node else None
    return None


def choose_version(peer: Peer, wanted: str | None, peers_dir: Path) -> str:
    """The version asked for; else the issue's if npm still has it (or it is installed), else the
    newest."""
    if wanted:
        return wanted
    if native_program(peer, peers_dir / f"{peer.package}@{peer.default_version}") is not None:
        return peer.default_version
    versions = json.loads(_npm("view", peer.package, "versions", "--json") or "[]")
    if peer.default_version in (versions if isinstance(versions, list) else [versions]):
        return peer.default_version
    return str(_npm("view", peer.package, "version").strip())


def install(peer: Peer, version: str, peers_dir: Path) -> list[str]:
    """``peer``'s native program at ``version``, installed from npm into ``peers_dir`` if missing."""
    prefix = peers_dir / f"{peer.package}@{version}"
    program = native_program(peer, prefix)
    if program is None:
        fresh = not prefix.exists()
        prefix.mkdir(parents=True, exist_ok=True)
        print(f"installing {peer.package}@{version} into {prefix} ...", flush=True)
        try:
            arguments = ["--prefix", str(prefix), "--no-audit", "--no-fund", f"{peer.package}@{version}"]
            _npm("install", *arguments, timeout=900)
        except NotMeasured:
            if fresh:
                shutil.rmtree(prefix, ignore_errors=True)
            raise
        program = native_program(peer, prefix)
    if program is None:
        raise NotMeasured(f"{peer.package}@{version} has no native program for this platform in {prefix}")
    return program


def program_version(command: list[str], home: Path) -> str:
    """The program's own version line, asked with a throwaway home (a first start writes there)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home)}
    try:
        done = subprocess.run(
            [*command, "--version"], capture_output=True, text=True, timeout=60, check=False, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotMeasured(f"{command[-1]} does not start: {exc}") from exc
    if done.returncode != 0:
        raise NotMeasured(f"{command[-1]} --version failed: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


# --- running a peer ---------------------------------------------------------------------------


class TreeMemory:
    """Peak resident memory of a process tree, polled on a thread: the biggest process's high-water
    mark, and the largest total of the tree seen at one poll — every process's private pages (a shell
    a tool step runs for a few milliseconds counts when a poll finds it) plus the file-backed pages of
    the process with the most, once: a helper that is the same program (Codex runs ``apply_patch`` as
    a copy of itself) shares those pages rather than doubling them. (Exact proportional sizes, from
    ``smaps_rollup``, take milliseconds a read for a big process: too slow to poll.)"""

    def __init__(self, root: int, interval_s: float = 0.003) -> None:
        self._root = root
        self._interval = interval_s
        self.biggest_bytes = 0
        self.tree_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            private = shared = 0
            for pid in _tree(self._root):
                memory = _memory(pid)
                private += memory.private
                shared = max(shared, memory.file)
                self.biggest_bytes = max(self.biggest_bytes, memory.high)
            self.tree_bytes = max(self.tree_bytes, private + shared)
            time.sleep(self._interval)

    def stop(self) -> tuple[int, int]:
        """(biggest process, tree) peaks. The tree held at least the biggest process at its peak,
        which its high-water mark catches between polls."""
        self._stop.set()
        self._thread.join(timeout=5)
        return self.biggest_bytes, max(self.tree_bytes, self.biggest_bytes)


def _tree(root: int) -> list[int]:
    """``root`` and its descendants. Linux lists each thread's children in /proc, a few small reads
    per process instead of psutil's scan of every process on the machine — cheap enough for every
    poll."""
    if not Path(f"/proc/{root}/task").exists():
        with contextlib.suppress(psutil.Error):
            return [root, *(child.pid for child in psutil.Process(root).children(recursive=True))]
        return []
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    pending.extend(int(child) for child in (task / "children").read_text().split())
    return found


@dataclass(frozen=True)
class Memory:
    """A process's memory in bytes: resident now, its high-water mark, and the resident pages split
    into private (anonymous and shared-memory) and file-backed (the program and its libraries)."""

    resident: int = 0
    high: int = 0
    private: int = 0
    file: int = 0


def _memory(pid: int) -> Memory:
    """The process's memory now; all zeros once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        try:
            resident = int(psutil.Process(pid).memory_info().rss)
        except psutil.Error:
            return Memory()
        return Memory(resident, resident, resident, 0)  # no /proc: no split either
    values = dict.fromkeys(("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"), 0)
    for line in status.splitlines():
        name, _, rest = line.partition(":")
        if name in values:
            values[name] = int(rest.split()[0]) * 1024
    private = values["RssAnon"] + values["RssShmem"]
    return Memory(values["VmRSS"], values["VmHWM"], private, values["RssFile"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def peer_gateway(dialect: str, steps: int, workspace: Path, run: int, port: int) -> Iterator[str]:
    """The scripted peer model in a process of its own (so the memory polling here cannot delay its
    answers), stopped on exit."""
    command = [sys.executable, "-m", "tests.benchmarks.peer_gateway", "--dialect", dialect]
    command += ["--steps", str(steps), "--workspace", str(workspace), "--run", str(run), "--port", str(port)]
    gateway = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert gateway.stdout is not None
        line = gateway.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer gateway did not start: {' '.join(command)}")
        yield line.split()[-1]
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
        if gateway.stdout is not None:
            gateway.stdout.close()


def gateway_record(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/_peer/requests", timeout=10) as response:
        return list(json.load(response)["requests"])


@dataclass(frozen=True)
class PeerSetup:
    peer: Peer
    command: list[str]
    home: Path
    workspace: Path
    port: int

    def arguments(self) -> list[str]:
        if self.peer.key == "claude":
            return ["-p", PROMPT, "--permission-mode", "bypassPermissions"]
        return ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", PROMPT]

    def environment(self) -> dict[str, str]:
        """A user's environment with the home under ``home`` and only the variables the peer reads
        for its endpoint, key and switches: nothing of the calling shell leaks in."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TERM": "dumb",
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
        }
        url = f"http://127.0.0.1:{self.port}"
        if self.peer.key == "claude":
            env.update(
                {
                    "ANTHROPIC_BASE_URL": url,
                    "ANTHROPIC_API_KEY": "sk-ant-scripted-benchmark",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_TELEMETRY": "1",
                    "DISABLE_ERROR_REPORTING": "1",
                    "DISABLE_AUTOUPDATER": "1",
                    "IS_SANDBOX": "1",
                }
            )
        else:
            env.update(
                {
                    "CODEX_HOME": str(self.home / ".codex"),
                    "PEER_GATEWAY_API_KEY": "sk-scripted-benchmark",
                    "CODEX_MANAGED_BY_NPM": "1",  # what the npm wrapper tells the native program
                }
            )
        return env

    def prepare(self) -> None:
        """The peer's user configuration: Codex's model provider (written once per round, as a user
        configures it once)."""
        self.home.mkdir(parents=True, exist_ok=True)
        if self.peer.key == "codex":
            codex_home = self.home / ".codex"
            codex_home.mkdir(exist_ok=True)
            (codex_home / "config.toml").write_text(
                'model = "gpt-5.5"\n'
                'model_provider = "peer"\n'
                "check_for_update_on_startup = false\n\n"
                "[model_providers.peer]\n"
                'name = "Scripted peer gateway"\n'
                f'base_url = "http://127.0.0.1:{self.port}/v1"\n'
                'wire_api = "responses"\n'
                'env_key = "PEER_GATEWAY_API_KEY"\n\n'
                "[analytics]\nenabled = false\n\n"
                # Its plugin sync reaches out to github.com (git ls-remote) and chatgpt.com at every
                # start: non-essential traffic, as Claude Code's switched-off traffic is.
                "[features]\nplugins = false\n"
            )


def run_peer(setup: PeerSetup, steps: int, run: int) -> dict[str, Any]:
    """One run of a peer through the task; its figures and the gateway's record."""
    with peer_gateway(setup.peer.dialect, steps, setup.workspace, run, setup.port) as url:
        started = time.time()
        process = subprocess.Popen(
            [*setup.command, *setup.arguments()],
            env=setup.environment(),
            cwd=setup.workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        memory = TreeMemory(process.pid)
        output: dict[str, bytes] = {}

        def drain(name: str, stream: Any) -> None:
            output[name] = stream.read()

        readers = [
            threading.Thread(target=drain, args=(name, stream), daemon=True)
            for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
        ]
        for reader in readers:
            reader.start()
        try:
            process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        exited = time.time()
        for reader in readers:
            reader.join(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        biggest, tree = memory.stop()
        record = gateway_record(url)
    problem = check_record(record, steps)
    if process.returncode != 0 or problem:
        stderr = output.get("stderr", b"").decode(errors="replace").strip()[-600:]
        why = problem or f"exit status {process.returncode}"
        raise NotMeasured(f"{setup.peer.name} run {run}: {why}; stderr: {stderr or '(empty)'}")
    main = [r for r in record if r["kind"] == "main"]
    gaps = [
        (previous["played"], (current["receivedAt"] - previous["completedAt"]) * 1e3)
        for previous, current in itertools.pairwise(main)
    ]
    return {
        "start_ms": (main[0]["receivedAt"] - started) * 1e3,
        "gaps": gaps,
        "exit_ms": (exited - main[-1]["completedAt"]) * 1e3,
        "rss_mb": biggest / 2**20,
        "tree_rss_mb": tree / 2**20,
        "side": [
            f"{r['method']} {r['path']}" + (f" ({r['model']})" if r["model"] else "")
            for r in record
            if r["kind"] != "main"
        ],
    }


def check_record(record: list[dict[str, Any]], steps: int) -> str | None:
    """Why the record does not show the whole task played, or ``None`` when it does: each step once
    and in order, each tool result back and right, the final answer last."""
    main = [r for r in record if r["kind"] == "main"]
    played = [r["turn"] for r in main]
    if played != list(range(steps)):
        return f"main-loop turns played {played}, expected 0..{steps - 1}"
    wrong = [r["turn"] - 1 for r in main[1:] if not r["lastResultOk"]]
    if wrong:
        bad = main[wrong[0] + 1]["lastResult"]
        return f"tool results of steps {wrong} not as expected (first: {bad!r})"
    if main[-1]["played"] != "final":
        return "the final answer was not played"
    return None


# --- rounds and figures -----------------------------------------------------------------------


def figures_of(rounds: list[list[dict[str, Any]]]) -> dict[str, float]:
    """Medians over the runs of every round: the first run's start apart (it sets up the fresh home),
    every other figure over all runs."""
    results = [result for measured in rounds for result in measured]
    figures = {"first_start_ms": statistics.median(measured[0]["start_ms"] for measured in rounds)}
    later = [result["start_ms"] for measured in rounds for result in measured[1:]]
    if later:
        figures["start_ms"] = statistics.median(later)
    gaps = [(kind, ms) for r in results for kind, ms in r["gaps"]]
    figures["step_ms"] = statistics.median(ms for _, ms in gaps)
    for kind in ("write", "read", "command"):
        of_kind = [ms for name, ms in gaps if name == kind]
        if of_kind:
            figures[f"{kind}_step_ms"] = statistics.median(of_kind)
    for key in ("exit_ms", "rss_mb", "tree_rss_mb", "daemons_rss_mb"):
        if all(key in r for r in results):
            figures[key] = statistics.median(r[key] for r in results)
    return figures


def peer_round(peer: Peer, command: list[str], steps: int, runs: int, root: Path) -> list[dict[str, Any]]:
    """One round of a peer: a fresh home and project, ``runs`` runs in them."""
    workspace = root / "project"
    workspace.mkdir(parents=True)
    setup = PeerSetup(peer, command, root / "home", workspace, _free_port())
    setup.prepare()
    return [run_peer(setup, steps, run) for run in range(runs)]


def _cowork_run(setup: bench_exec.Setup, root: Path, steps: int, run: int) -> dict[str, Any]:
    """One ``cowork exec`` run by ``bench_exec``, with the figures taken as for the peers: at the
    gateway, the runtime's own event timestamps not used."""
    result = bench_exec._run(setup, root, steps, run)
    exchanges = result["exchanges"]
    if len(exchanges) != steps:
        raise RuntimeError(f"cowork exec made {len(exchanges)} model requests for {steps} steps")
    kinds = [KIND_OF_TOOL.get(tool, tool) for tool in result["tools"]]
    gaps = [
        (kind, (current[0] - previous[1]) * 1e3)
        for kind, previous, current in zip(kinds, exchanges, exchanges[1:], strict=False)
    ]
    return {
        "start_ms": (exchanges[0][0] - result["started_at"]) * 1e3,
        "gaps": gaps,
        "exit_ms": (result["exited_at"] - exchanges[-1][1]) * 1e3,
        "rss_mb": result["runtime_peak_rss_mb"],
        "tree_rss_mb": result["runtime_peak_rss_mb"] + result["exec_peak_rss_mb"],
    }


def cowork_round(command: list[str], steps: int, runs: int, root: Path) -> list[dict[str, Any]]:
    """One round of ``cowork exec`` on the user path, as ``bench_exec`` runs it: a fresh user data
    directory, the first run starting the local backend, the later ones finding it up."""
    workspace = bench_exec._workspace(root)
    home = root / "home"
    setup = bench_exec.Setup(command, bench_exec._user_environment(home), workspace)
    try:
        measured = [_cowork_run(setup, root, steps, run) for run in range(runs)]
        # The backend and the runtime's fork server the first run started, still up for the next
        # run: memory a user's machine holds for Cowork besides the two processes of a run.
        daemons = sum(_memory(pid).high for pid in bench_exec._backend_pids(home))
        return [{**result, "daemons_rss_mb": daemons / 2**20} for result in measured]
    finally:
        bench_exec._stop_backends(home)


def comparisons(figures: dict[str, float]) -> dict[str, float]:
    """Cowork's figures as percentages of the peers', as the goals put them."""
    out: dict[str, float] = {}

    def pct(key: str, peer: float | None) -> float | None:
        return figures[f"cowork_{key}"] / peer * 100 if peer and f"cowork_{key}" in figures else None

    def best(key: str) -> float | None:
        values = [figures[f"{p.key}_{key}"] for p in PEERS if f"{p.key}_{key}" in figures]
        return min(values) if values else None

    wanted = {
        "first_start_vs_claude_pct": pct("first_start_ms", figures.get("claude_first_start_ms")),
        "start_vs_claude_pct": pct("start_ms", figures.get("claude_start_ms")),
        "step_vs_fastest_pct": pct("step_ms", best("step_ms")),
        "exit_vs_fastest_pct": pct("exit_ms", best("exit_ms")),
        "rss_vs_leanest_pct": pct("rss_mb", best("rss_mb")),
    }
    out.update({key: value for key, value in wanted.items() if value is not None})
    return out


def side_by_side(figures: dict[str, float], shown: list[str]) -> str:
    """One row per measure, one column per agent measured."""
    rows = [
        ("first run: start → first request", "first_start_ms", "ms"),
        ("later runs: start → first request", "start_ms", "ms"),
        ("response end → next request", "step_ms", "ms"),
        ("  after a write", "write_step_ms", "ms"),
        ("  after a read", "read_step_ms", "ms"),
        ("  after a command", "command_step_ms", "ms"),
        ("last response → exit", "exit_ms", "ms"),
        ("peak RSS, biggest process", "rss_mb", "MB"),
        ("peak RSS, process tree", "tree_rss_mb", "MB"),
        ("  + daemons kept running", "daemons_rss_mb", "MB"),
    ]
    width = max(len(label) for label, _, _ in rows) + 2
    head = f"{'median':<{width}}" + "".join(f"{AGENTS[key]:>14}" for key in shown)
    lines = [head, "-" * len(head)]
    for label, key, unit in rows:
        cells = []
        for agent in shown:
            value = figures.get(f"{agent}_{key}")
            cells.append(f"{value:>11,.1f} {unit}" if value is not None else f"{'—':>14}")
        lines.append(f"{label:<{width}}" + "".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=20, help="steps per task (the last one answers)")
    parser.add_argument("--runs", type=int, default=5, help="runs per round of each agent (default 5)")
    parser.add_argument("--rounds", type=int, default=1, help="fresh home / data directories, one per round")
    parser.add_argument(
        "--peers-dir", type=Path, default=DEFAULT_PEERS_DIR, help="where npm installs the peers"
    )
    parser.add_argument(
        "--claude-version", help="@anthropic-ai/claude-code version (default 2.1.197, else newest)"
    )
    parser.add_argument("--codex-version", help="@openai/codex version (default 0.169.0, else newest)")
    parser.add_argument("--claude", metavar="PATH", help="an installed claude program instead of npm's")
    parser.add_argument("--codex", metavar="PATH", help="an installed codex program instead of npm's")
    parser.add_argument(
        "--only",
        choices=("cowork", *(p.key for p in PEERS)),
        action="append",
        help="measure only these (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.rounds < 1 or args.steps < 2:
        parser.error("--runs and --rounds must be at least 1, --steps at least 2")
    chosen = args.only or list(AGENTS)
    print(
        f"peer benchmark: {args.rounds} round(s) of {args.runs} runs of {args.steps} steps each;"
        f" load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}",
        flush=True,
    )
    args.peers_dir.mkdir(parents=True, exist_ok=True)
    notes: dict[str, str] = {}
    rounds: dict[str, Callable[[Path], list[dict[str, Any]]]] = {}
    if "cowork" in chosen:
        for package in ("agent_runtime", "contracts", "desktop", "backend"):
            compileall.compile_dir(REPO_ROOT / package, quiet=1)
        command = cowork_command()
        notes["cowork"] = f"cowork exec from this checkout ({' '.join(command)})"
        rounds["cowork"] = functools.partial(cowork_round, command, args.steps, args.runs)
    # Homes outside /tmp: Codex refuses to set up its helper programs under a temporary folder, which a
    # user's home never is.
    with tempfile.TemporaryDirectory(dir=args.peers_dir.parent, prefix="runs-") as scratch:
        base = Path(scratch).resolve()
        for peer in PEERS:
            if peer.key not in chosen:
                continue
            given = getattr(args, peer.key)
            try:
                if given:
                    command = [given]
                else:
                    version = choose_version(peer, getattr(args, f"{peer.key}_version"), args.peers_dir)
                    command = install(peer, version, args.peers_dir)
                identity = program_version(command, base / f"{peer.key}_version")
            except NotMeasured as exc:
                notes[peer.key] = f"not measured: {exc}"
                continue
            notes[peer.key] = f"{identity} ({command[-1]})"
            rounds[peer.key] = functools.partial(peer_round, peer, command, args.steps, args.runs)
        measured: dict[str, list[list[dict[str, Any]]]] = {key: [] for key in rounds}
        # Round by round, each agent in turn: a change of the machine's load hits them all alike.
        for index in range(args.rounds):
            for key in list(rounds):
                try:
                    measured[key].append(rounds[key](base / f"{key}_{index}"))
                except NotMeasured as exc:
                    notes[key] = f"not measured: {exc}"
                    del rounds[key], measured[key]
                except (AssertionError, RuntimeError, OSError, subprocess.SubprocessError) as exc:
                    notes[key] = f"FAILED: {exc!s:.2000}"
                    del rounds[key], measured[key]
    figures: dict[str, float] = {}
    for key, done in measured.items():
        figures.update({f"{key}_{name}": value for name, value in figures_of(done).items()})
        if key != "cowork":
            side = [
                request for measured_round in done for result in measured_round for request in result["side"]
            ]
            notes[key] += f"; side requests: {len(side)} ({', '.join(sorted(set(side))) or 'none'})"
            notes[key] += f"; {REFERENCE[key]}"
    shown = list(measured)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    for key, note in notes.items():
        print(f"{AGENTS[key]}: {note}")
    if shown:
        print()
        print(side_by_side(figures, shown))
    figures.update(comparisons(figures))
    print()
    print(report(figures, TARGETS))
    return 0 if "cowork" not in chosen or "cowork" in shown else 1


if __name__ == "__main__":
    sys.exit(main())
