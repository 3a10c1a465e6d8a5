"""A cancelled answer survives a restart of the app: the real window, runtime and local backend, and
the scripted gateway holding its answer half-way so the user can cancel it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.main_window import MainWindow
from desktop.app.messages import AssistantView
from tests.desktop.app.harness import (
    app_environment,
    assistant_texts,
    current,
    eventually,
    running_app,
    type_and_send,
    workbench,
)
from tests.desktop.support import Run
from tests.support.backend import Backend


def answers(window: MainWindow) -> list[AssistantView]:
    return [w for w in window.view.widgets() if isinstance(w, AssistantView)]


def test_a_cancelled_answer_is_shown_marked_cancelled_after_a_restart(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    script = [{"text": "Thinking about it at length " * 20, "chunkSize": 8, "holdAfterChunks": 3}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Think")
                await eventually(lambda: assistant_texts(window), what="the first words")
                await eventually(window.composer.stop_button.isEnabled, what="Stop enabled")
                QTest.keyClick(window.composer.edit, Qt.Key.Key_Escape)
                session = current(window)
                await eventually(lambda: session.state.status.task == "TASK_CANCELLED", what="the cancel")
                window.view.flush()
                [answer] = answers(window)
                partial = answer.plain_text()
                assert partial.startswith("Thinking about")
                assert answer.cancelled_label.isVisibleTo(answer)
                session_id = session.session_id
                assert session_id is not None
                gateway.release()
            async with running_app(env, home / "logs") as window:
                bench = workbench(window)
                await eventually(lambda: bench.sidebar.find(session_id), what="the stored conversation")
                await bench.open(session_id)
                await eventually(lambda: answers(window), what="the conversation drawn", window=window)
                [answer] = answers(window)
                assert answer.plain_text() == partial
                assert answer.cancelled_label.isVisibleTo(answer)

    run(scenario())
