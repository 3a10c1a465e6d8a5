"""The conversation view on its own (offscreen Qt, this process), with code blocks highlighted:

* **open**: a ``--messages``-message conversation (prompts; answers of Markdown with a fenced
  Python block each; a tool call and its result every other turn) as ``session_history`` wire
  messages, opened as the window opens one: ``ConversationState.load_history``, then
  ``ConversationView.show_state`` — timed to the end of the first full paint of the viewport (code
  shown plain), and on to every shown code block highlighted; medians of ``--runs``.
* **streaming**: an answer of prose and code blocks fed to the state at ``--rate`` chunks a second
  for ``--seconds`` (each chunk a ``SessionEvent`` applied as the window applies it), the view
  drawing at most once a frame and highlighting each code block when it closes. While it streams a
  10 ms ``QTimer`` heartbeat runs: its longest gap is the longest the window was frozen. (The
  end-to-end figure with the real runtime and gateway is ``bench_desktop``'s.)
* **highlight**: highlighting one closed 200-line Python block, from its closing fence to its
  colours (median), and the longest single step of it the event loop waited for.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_conversation_view``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from typing import Any

from tests.benchmarks.figures import Targets, report

TARGETS: Targets = {
    "open_ms": ("open: history → first paint of the conversation, median", "ms", "<=", 1000.0),
    "open_parse_ms": ("  of which building the items from the history", "ms", None, None),
    "open_widgets": ("  item widgets made", "", None, None),
    "open_coloured_ms": ("open: history → every code block shown highlighted, median", "ms", None, None),
    "max_gap_ms": ("streaming: longest gap of a 10 ms heartbeat", "ms", "<=", 50.0),
    "chunks_per_s": ("streaming: chunks/s applied", "/s", None, None),
    "frame_ms": ("streaming: time to draw a frame, mean", "ms", None, None),
    "code_blocks": ("streaming: code blocks highlighted", "", None, None),
    "highlight_ms": ("highlight: a closed 200-line Python block, to its colours, median", "ms", None, None),
    "highlight_step_ms": ("  longest the window waited on it at one go", "ms", None, None),
}

HEARTBEAT_MS = 10
PROSE = (
    "The **agent** reads the file, then writes a `patch` for it. It keeps the tests green and the "
    "diff small, and it says what it changed.\n\n"
)
BLOCK = (
    "```python\n"
    "def step(state: dict[str, int], n: int) -> int:\n"
    '    """One step of the loop."""\n'
    "    total = 0\n"
    "    for key, value in sorted(state.items()):\n"
    "        if value > n:  # only the large ones\n"
    "            total += value * 2\n"
    "    return total\n"
    "```\n\n"
)


def _history(messages: int) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    turn = 0
    while len(wire) < messages:
        task = f"task_{turn}"
        wire.append(
            {"role": "user", "content": f"Please change file {turn}.", "taskId": task, "sessionId": "s"}
        )
        answer: dict[str, Any] = {
            "role": "assistant",
            "content": PROSE + BLOCK + PROSE,
            "taskId": task,
            "stepId": f"st{turn}",
        }
        if turn % 2 == 0:
            call = {"toolName": "ReadFile", "toolCallId": f"c{turn}", "arguments": {"path": f"/p/f{turn}.py"}}
            answer["toolCalls"] = [call]
            wire.append(answer)
            wire.append(
                {"role": "tool", "toolCallId": f"c{turn}", "toolStatus": "succeeded", "content": "x = 1\n"}
            )
        else:
            wire.append(answer)
        turn += 1
    return wire[:messages]


def _open(messages: int, runs: int) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from desktop.app.conversation_view import ConversationView
    from desktop.app.messages import AssistantView
    from desktop.conversation.state import ConversationState

    history = _history(messages)
    view = ConversationView()
    view.resize(1000, 700)
    view.show()
    QApplication.processEvents()
    totals, parses, coloured, widgets = [], [], [], 0
    for _ in range(runs):
        started = time.perf_counter()
        state = ConversationState()
        state.load_history(history)
        parsed = time.perf_counter()
        view.show_state(state)
        for _ in range(3):  # the widgets are shown and laid out over a few posted events
            QApplication.processEvents()
        view.viewport().repaint()
        totals.append(time.perf_counter() - started)
        parses.append(parsed - started)
        blocks = [b for w in view.widgets() if isinstance(w, AssistantView) for b in w.code_blocks()]
        while not all(block.highlighted for block in blocks):
            QApplication.processEvents()
        coloured.append(time.perf_counter() - started)
        widgets = view.widget_count
        view.show_state(None)
        QApplication.processEvents()
    view.close()
    return {
        "open_ms": statistics.median(totals) * 1e3,
        "open_parse_ms": statistics.median(parses) * 1e3,
        "open_coloured_ms": statistics.median(coloured) * 1e3,
        "open_widgets": float(widgets),
    }


def _streaming(seconds: float, rate: float) -> dict[str, float]:
    from PySide6.QtCore import QEventLoop, QTimer

    from desktop.app.conversation_view import ConversationView
    from desktop.app.messages import AssistantView
    from desktop.conversation.state import ConversationState

    unit = PROSE * 2 + BLOCK
    size = 4
    total = int(seconds * rate)
    text = (unit * (total * size // len(unit) + 1))[: total * size]
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    state = ConversationState()
    view = ConversationView()
    view.resize(1000, 700)
    view.show()
    view.show_state(state)
    base = {"workspaceId": "ws", "sessionId": "s", "taskId": "t", "stepId": "st", "eventId": "e"}
    ticks: list[float] = []
    sent = [0]
    loop = QEventLoop()
    started = time.perf_counter()

    def produce() -> None:
        due = min(len(chunks), int((time.perf_counter() - started) * rate) + 1)
        for index in range(sent[0], due):
            state.apply({**base, "eventType": "text_chunk", "payload": {"text": chunks[index]}})
        sent[0] = due
        if due >= len(chunks):
            producer.stop()
            loop.quit()

    producer = QTimer()
    producer.setInterval(1)
    producer.timeout.connect(produce)
    heartbeat = QTimer()
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    frames, drawing = view.frames, view.drawing_s
    heartbeat.start()
    producer.start()
    loop.exec()
    ended = time.perf_counter()
    view.flush()
    heartbeat.stop()
    frames, drawing = view.frames - frames, view.drawing_s - drawing
    [answer] = [w for w in view.widgets() if isinstance(w, AssistantView)]
    blocks = sum(1 for block in answer.code_blocks() if block.highlighted)
    view.close()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    return {
        "max_gap_ms": max(gaps, default=0.0) * 1e3,
        "chunks_per_s": len(chunks) / max(ended - started, 1e-9),
        "frame_ms": drawing / max(frames, 1) * 1e3,
        "code_blocks": float(blocks),
    }


def _highlight(runs: int) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from desktop.app.code_blocks import CodeBlockView

    body = BLOCK.split("\n", 1)[1].rsplit("```", 1)[0]
    code = body * (200 // body.count("\n") + 1)
    samples, steps = [], [0.0]
    for _ in range(runs):
        block = CodeBlockView()
        started = time.perf_counter()
        block.show_code(code, "python", final=True)
        steps.append(time.perf_counter() - started)
        while not block.highlighted:
            step = time.perf_counter()
            QApplication.processEvents()
            steps.append(time.perf_counter() - step)
        samples.append(time.perf_counter() - started)
        block.deleteLater()
    return {"highlight_ms": statistics.median(samples) * 1e3, "highlight_step_ms": max(steps) * 1e3}


def run(messages: int, runs: int, seconds: float, rate: float) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    figures = _highlight(max(3, runs))  # first: loads Pygments' lexer and style once
    figures |= _open(messages, runs)
    figures |= _streaming(seconds, rate)
    app.processEvents()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=2000, help="messages in the opened conversation")
    parser.add_argument("--runs", type=int, default=7, help="times it is opened (and blocks highlighted)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the answer streams")
    parser.add_argument("--rate", type=float, default=5000.0, help="text chunks a second")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    print(
        f"Cowork conversation view benchmark: {args.messages:,} messages opened {args.runs} times,"
        f" {args.seconds:g} s streamed at {args.rate:,.0f} chunks/s"
    )
    print(report(run(args.messages, args.runs, args.seconds, args.rate), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
