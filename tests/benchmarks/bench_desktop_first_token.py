"""Send clicked → the first token drawn in the conversation view, on the window's own code.

The real agent runtime (started by the window's ``QtRuntimeLauncher``), the real local backend and
the scripted gateway in a process of its own, answering every request with a short streamed text
after ``delayMs`` (0, then ``--latency-ms``). A ``Composer`` and a ``ConversationView`` (offscreen Qt,
qasync loop) are wired as the main window wires them: the Send button's click takes the text and
starts ``ConversationSession.send``. The session is started first (the conversation is open); each
send is a task of one step, timed from the click (``QPushButton.click()``, delivered synchronously)
to the first ``Paint`` event of the answer's text viewport whose document holds the first token —
the moment Qt draws that frame into the window's backing store (offscreen: no screen, so not when a
monitor shows it). The first send of the session is reported apart: it also pays for what the
runtime loads lazily.

Where the time goes (medians, from the runtime's event timestamps and the gateway's record, one wall
clock on one machine): click → ``StartTask`` sent, → the LLM request at the gateway, → the first
``text_chunk`` event, → the answer's widget made (the desktop received it), → drawn.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_desktop_first_token``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from tests.benchmarks.figures import Targets, report

TARGETS: Targets = {
    "zero_first_token_ms": ("zero latency: Send → first token drawn, median", "ms", "<=", 50.0),
    "zero_first_send_ms": ("  the session's first send", "ms", None, None),
    "zero_to_request_ms": ("  of which Send → LLM request at the gateway", "ms", None, None),
    "zero_to_chunk_event_ms": ("  of which Send → first text_chunk event (runtime)", "ms", None, None),
    "zero_to_widget_ms": ("  of which Send → answer widget made (desktop)", "ms", None, None),
    "latency_first_token_ms": ("gateway latency: Send → first token drawn, median", "ms", "<=", 250.0),
    "latency_first_send_ms": ("  the session's first send", "ms", None, None),
}

ANSWER = "Here is the first token, and then the rest of the answer."
TOKEN = "Here"


def _moment(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()


async def _sends(root: Path, backend: Any, latency_ms: int, sends: int) -> dict[str, list[float]]:
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from desktop.app.composer import Composer
    from desktop.app.conversation_view import ConversationView
    from desktop.app.messages import AssistantView
    from desktop.approval.queue import ApprovalQueue
    from desktop.conversation.items import AssistantMessage, Item
    from desktop.conversation.session import ConversationSession
    from desktop.conversation.state import ConversationState
    from tests.desktop.supervision.live import StateWaiter, identity, launcher, runtime_env

    script = root / f"script_{latency_ms}.json"
    turn = {"text": ANSWER, "chunkSize": 6, "delayMs": latency_ms}
    script.write_text(json.dumps({"turns": [turn], "repeatLastTurn": True}))
    gateway = subprocess.Popen(  # noqa: ASYNC220 - started once, before anything is timed
        [sys.executable, "-m", "agent_runtime.scripted_gateway", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    samples: dict[str, list[float]] = {
        key: [] for key in ("drawn", "request", "chunk_event", "widget", "started_task")
    }
    try:
        assert gateway.stdout is not None
        url = gateway.stdout.readline().split()[-1]
        env = runtime_env(backend, url, root / f"runtime-data-{latency_ms}")
        state = ConversationState()
        window = QWidget()
        column = QVBoxLayout(window)
        view = ConversationView()
        composer = Composer()
        column.addWidget(view, 1)
        column.addWidget(composer)
        window.resize(1000, 800)
        window.show()
        view.show_state(state)
        session = ConversationSession(
            state=state,
            launcher=launcher(env, root / f"logs-{latency_ms}"),
            identity=identity(backend),
            folder=None,
            approvals=ApprovalQueue(),
        )
        waiter = StateWaiter(state)
        received: list[dict[str, Any]] = []
        apply = state.apply

        def record(event: Any) -> None:  # the raw events, for the runtime's own timestamps
            received.append(dict(event))
            apply(event)

        state.apply = record  # type: ignore[method-assign]
        clicked = [0.0]
        marks: dict[str, float] = {}
        current: list[Item | None] = [None]  # this send's answer
        sent: list[asyncio.Task[str]] = []

        class Painted(QObject):
            """Notes the first paint of the answer's text once its document holds the token."""

            def __init__(self, answer: AssistantView) -> None:
                super().__init__(answer)
                self.answer = answer

            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                if (
                    event.type() == QEvent.Type.Paint
                    and "drawn" not in marks
                    and self.answer.item is current[0]
                    and TOKEN in self.answer.plain_text()
                ):
                    marks["drawn"] = time.time()
                return False

        class Watch:
            def item_added(self, item: Item) -> None:
                if isinstance(item, AssistantMessage) and "widget" not in marks:
                    marks["widget"] = time.time()
                    current[0] = item
                    # The view observed the state first: the answer's widget exists now.
                    answer = next(w for w in view.widgets() if w.item is item)
                    assert isinstance(answer, AssistantView)
                    answer.browser.viewport().installEventFilter(Painted(answer))

            def item_changed(self, item: Item) -> None: ...

            def items_reset(self) -> None: ...

            def status_changed(self) -> None: ...

            def banner_changed(self) -> None: ...

        state.subscribe(Watch())

        def send() -> None:  # what MainWindow.send does with the composer's text
            message = composer.take_message()
            view.scroll_to_end()
            sent.append(asyncio.ensure_future(session.send(message.text)))

        composer.edit.submitted.connect(send)
        await session.ensure_started()
        for number in range(sends):
            marks.clear()
            current[0] = None
            composer.edit.setPlainText(f"Say something ({number})")
            clicked[0] = time.time()
            composer.send_button.click()
            task_id = await sent[-1]
            marks["started_task"] = time.time()
            await waiter.until(lambda: "drawn" in marks and not state.busy, timeout=60)
            for key in ("drawn", "widget", "started_task"):
                samples[key].append((marks[key] - clicked[0]) * 1e3)
            events = [e for e in received if e.get("taskId") == task_id]
            first_chunk = next(e for e in events if e["eventType"] == "text_chunk")
            samples["chunk_event"].append((_moment(first_chunk) - clicked[0]) * 1e3)
            samples["request"].append((await _last_request_at(url) - clicked[0]) * 1e3)
        await session.close()
        window.close()
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)
    return samples


async def _last_request_at(url: str) -> float:
    async with httpx.AsyncClient(timeout=10) as http:
        requests = (await http.get(url + "/_scripted/requests")).json()["requests"]
    arrived: float = requests[-1]["receivedAt"]
    return arrived


def run(sends: int, latency_ms: int) -> dict[str, float]:
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
        with (
            start_backend(root / "backend") as backend,
            asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner,
        ):
            for prefix, delay in (("zero", 0), ("latency", latency_ms)):
                samples = runner.run(_sends(root, backend, delay, sends + 1))
                figures[f"{prefix}_first_send_ms"] = samples["drawn"][0]
                figures[f"{prefix}_first_token_ms"] = statistics.median(samples["drawn"][1:])
                if prefix == "zero":
                    for key in ("request", "chunk_event", "widget"):
                        figures[f"zero_to_{key}_ms"] = statistics.median(samples[key][1:])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sends", type=int, default=10, help="sends timed per latency (after the first)")
    parser.add_argument("--latency-ms", type=int, default=200, help="the gateway's delay before answering")
    args = parser.parse_args(argv)
    if args.sends < 1 or args.latency_ms < 0:
        parser.error("--sends must be at least 1 and --latency-ms not negative")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    print(
        f"Cowork desktop first-token benchmark: {args.sends} sends at 0 and {args.latency_ms} ms of"
        " gateway latency"
    )
    print(report(run(args.sends, args.latency_ms), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
