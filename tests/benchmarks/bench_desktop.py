"""The desktop app under load, on the window's own code (qasync loop, offscreen Qt):

* **streaming**: the real agent runtime (started by the window's ``QtRuntimeLauncher``), the real
  local backend, and the scripted gateway in a process of its own streaming a Markdown answer at
  ``--rate`` chunks a second (``chunksPerSecond``) into a conversation shown in a ``ConversationView``.
  While it streams, a 10 ms ``QTimer`` heartbeat runs: its longest gap is the longest the window
  was frozen. Also: the chunks a second that reached the window, the frames drawn, and whether any
  chunk was lost (the text shown must equal the text sent).
* **memory**: a ``--messages``-message conversation (prompts and streamed answers with a tool row
  each) poured into the same state and view by a stand-in runtime in its own process over the real
  socket; the process's RSS when the conversation starts, at half and at the end.
* **start**: ``cowork``'s start (a new process: interpreter, imports, QApplication, the window) to
  the main window shown, median of ``--starts``.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_desktop`` (``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGETS = {
    "max_gap_ms": ("streaming: longest gap of a 10 ms heartbeat", "ms", "<=", 50.0),
    "chunks_per_s": ("streaming: text chunks/s that reached the conversation", "/s", None, None),
    "chunks_per_frame": ("streaming: chunks drawn per frame, mean", "", None, None),
    "frame_ms": ("streaming: time to draw a frame, mean", "ms", None, None),
    "chunks_lost": ("streaming: chunks lost", "", "<=", 0.0),
    "rss_start_mb": ("memory: RSS at the conversation's start", "MB", None, None),
    "rss_middle_mb": ("memory: RSS at half the messages", "MB", None, None),
    "rss_end_mb": ("memory: RSS at the end", "MB", None, None),
    "rss_growth_mb": ("memory: growth over the second half", "MB", "<=", 25.0),
    "start_to_shown_ms": ("app start to the main window shown, median", "ms", "<=", 1500.0),
}

HEARTBEAT_MS = 10
PARAGRAPH = (
    "The **agent** reads the file, then writes a `patch` for it. It keeps the tests green and the "
    "diff small, and it says what it changed.\n\n"
)
CODE = "```python\ndef step(n):\n    return n + 1\n```\n\n"


def _answer(chunks: int, size: int) -> str:
    unit = PARAGRAPH * 3 + CODE
    text = unit * (chunks * size // len(unit) + 1)
    return text[: chunks * size]


# --------------------------------------------------------------------------------------- streaming


async def _streaming(root: Path, backend: Any, seconds: float, rate: float) -> dict[str, float]:
    from PySide6.QtCore import QTimer

    from desktop.app.conversation_view import ConversationView
    from desktop.approval.queue import ApprovalQueue
    from desktop.conversation.items import AssistantMessage
    from desktop.conversation.session import ConversationSession
    from desktop.conversation.state import ConversationState
    from tests.desktop.supervision.live import StateWaiter, identity, launcher, runtime_env

    size = 4
    chunks = max(50, int(seconds * rate))
    text = _answer(chunks, size)
    script = root / "stream.json"
    script.write_text(json.dumps({"turns": [{"text": text, "chunkSize": size, "chunksPerSecond": rate}]}))
    gateway = subprocess.Popen(  # noqa: ASYNC220 - started once, before anything is timed
        [sys.executable, "-m", "agent_runtime.scripted_gateway", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert gateway.stdout is not None
        url = gateway.stdout.readline().split()[-1]
        env = runtime_env(backend, url, root / "runtime-data")
        state = ConversationState()
        view = ConversationView()
        view.resize(1000, 700)
        view.show()
        view.show_state(state)
        session = ConversationSession(
            state=state,
            launcher=launcher(env, root / "logs"),
            identity=identity(backend),
            folder=None,
            approvals=ApprovalQueue(),
        )
        waiter = StateWaiter(state)
        received = [0, 0.0, 0.0]  # chunks, first, last

        class Counter:
            """Every text_chunk adds or changes the streaming answer: one call each."""

            def _count(self, item: object) -> None:
                if isinstance(item, AssistantMessage):
                    now = time.perf_counter()
                    if not received[0]:
                        received[1] = now
                    received[0] += 1
                    received[2] = now

            item_added = item_changed = _count

            def items_reset(self) -> None: ...

            def status_changed(self) -> None: ...

            def banner_changed(self) -> None: ...

        state.subscribe(Counter())
        await session.ensure_started()
        ticks: list[float] = []
        heartbeat = QTimer()
        heartbeat.setInterval(HEARTBEAT_MS)
        heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
        heartbeat.start()
        frames, drawing = view.frames, view.drawing_s
        await session.send("Write the long answer")
        await waiter.until(lambda: state.status.task == "TASK_COMPLETED", timeout=seconds * 4 + 60)
        heartbeat.stop()
        frames, drawing = view.frames - frames, view.drawing_s - drawing
        view.flush()
        shown = "".join(item.text for item in state.items if isinstance(item, AssistantMessage))
        await session.close()
        view.close()
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
    count_, first, last = received
    during = [b - a for a, b in itertools.pairwise(ticks) if a >= first and b <= last + 0.1]
    return {
        "max_gap_ms": max(during, default=0.0) * 1e3,
        "chunks_per_s": count_ / max(last - first, 1e-9),
        "chunks_per_frame": count_ / max(frames, 1),
        "frame_ms": drawing / max(frames, 1) * 1e3,
        "chunks_lost": float(chunks - count_) if shown != text else 0.0,
    }


# ------------------------------------------------------------------------------------------ memory


async def _emit_conversation(name: str, turns: int) -> int:
    """The stand-in runtime: connects like the real one and pours out a conversation's events."""
    from agent_runtime.agent_host.session.rpc import Dispatcher, RpcConnection, connect_to_desktop
    from contracts.ipc.handshake import take_secret

    reader, writer, rest = await connect_to_desktop(name, take_secret(os.environ))
    connection = RpcConnection(reader, writer, Dispatcher(), initial=rest)
    serving = asyncio.ensure_future(connection.serve())
    words = PARAGRAPH.split(" ")
    for turn in range(turns):
        base = {"workspaceId": "ws", "sessionId": "sess", "taskId": f"t{turn}", "stepId": f"s{turn}"}

        async def say(kind: str, payload: dict[str, Any], base: dict[str, Any] = base) -> None:
            await connection.notify(
                "SessionEvent", {**base, "eventId": "e", "eventType": kind, "payload": payload}
            )

        await say("task_started", {"maxSteps": 40, "approvalMode": "always"})
        for word in words:
            await say("text_chunk", {"text": word + " "})
        await say(
            "tool_requested", {"toolName": "ReadFile", "toolCallId": f"c{turn}", "target": f"/p/f{turn}.py"}
        )
        await say(
            "tool_completed",
            {"toolName": "ReadFile", "toolCallId": f"c{turn}", "status": "succeeded", "latencyMs": 1},
        )
        await say("task_completed", {"stepCount": 1})
    await connection.notify("done", {})
    await serving
    return 0


async def _memory(messages: int) -> dict[str, float]:
    import psutil

    from contracts.ipc.handshake import SECRET_ENV
    from desktop.app.conversation_view import ConversationView
    from desktop.conversation.state import ConversationState
    from desktop.ipc import RuntimeServer

    process = psutil.Process()
    turns = max(2, messages // 2)  # a prompt and an answer each (plus a tool row)
    state = ConversationState()
    view = ConversationView()
    view.resize(1000, 700)
    view.show()
    view.show_state(state)
    server = RuntimeServer()
    producer = subprocess.Popen(  # noqa: ASYNC220 - the stand-in runtime, started once
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_desktop",
            "--emit-conversation",
            server.full_name,
            "--turns",
            str(turns),
        ],
        env={**os.environ, SECRET_ENV: server.child_environment()[SECRET_ENV]},
    )
    client = await server.accept(timeout=30)
    done = asyncio.get_running_loop().create_future()
    rss: dict[str, float] = {}
    counted = [0]

    def on_event(method: str, params: Any) -> None:
        if method == "done":
            done.set_result(None)
            return
        if params.get("eventType") == "task_started":
            state.add_user_message(f"Please read file {counted[0]}.", params.get("taskId"))
        state.apply(params)
        if params.get("eventType") == "task_completed":
            counted[0] += 1
            if counted[0] == 1:
                view.flush()
                rss["rss_start_mb"] = process.memory_info().rss / 1e6
            elif counted[0] == turns // 2:
                view.flush()
                rss["rss_middle_mb"] = process.memory_info().rss / 1e6

    client.notification.connect(on_event)
    async with asyncio.timeout(600):
        await done
    view.flush()
    await asyncio.sleep(0.1)
    rss["rss_end_mb"] = process.memory_info().rss / 1e6
    rss["rss_growth_mb"] = rss["rss_end_mb"] - rss["rss_middle_mb"]
    await client.close()
    producer.wait(timeout=30)
    view.close()
    return rss


# ------------------------------------------------------------------------------------------- start


def _start_to_shown(starts: int, backend: Any, root: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORK_", "LLM_GATEWAY_"))}
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        (root / "start" / variable).mkdir(parents=True, exist_ok=True)
        env[variable] = str(root / "start" / variable)
    env.update(
        {
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
            "COWORK_BACKEND_URL": backend.url,
            "COWORK_BACKEND_TOKEN": backend.token,
            "LLM_GATEWAY_ENDPOINT": "http://127.0.0.1:9",
            "LLM_GATEWAY_MODEL": "m",
        }
    )
    samples = []
    for _ in range(starts):
        started = time.time()
        probe = subprocess.run(
            [sys.executable, "-m", "tests.benchmarks.desktop_start_probe"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        shown = float(probe.stdout.strip().splitlines()[-1])
        samples.append((shown - started) * 1e3)
    return {"start_to_shown_ms": statistics.median(samples)}


# -------------------------------------------------------------------------------------------- main


def run(seconds: float, rate: float, messages: int, starts: int) -> dict[str, float]:
    import compileall

    import qasync
    from PySide6.QtWidgets import QApplication

    from tests.support.backend import start_backend
    from tests.support.peers import REPO_ROOT

    for package in ("desktop", "contracts", "agent_runtime"):
        compileall.compile_dir(REPO_ROOT / package, quiet=1)
    app = QApplication.instance() or QApplication([])
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch).resolve()
        with start_backend(root / "backend") as backend:
            with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
                figures |= runner.run(_streaming(root, backend, seconds, rate))
                figures |= runner.run(_memory(messages))
            figures |= _start_to_shown(starts, backend, root)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the answer streams")
    parser.add_argument("--rate", type=float, default=5000.0, help="text chunks a second from the gateway")
    parser.add_argument("--messages", type=int, default=10_000, help="messages in the memory run")
    parser.add_argument("--starts", type=int, default=5, help="app starts timed")
    parser.add_argument("--emit-conversation", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.emit_conversation:
        from contracts.ipc import eventloop

        return eventloop.run(_emit_conversation(args.emit_conversation, args.turns))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from tests.benchmarks.figures import report

    print(
        f"Cowork desktop benchmark: {args.seconds:g} s streamed at {args.rate:,.0f} chunks/s,"
        f" {args.messages:,} messages, {args.starts} starts"
    )
    print(report(run(args.seconds, args.rate, args.messages, args.starts), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
