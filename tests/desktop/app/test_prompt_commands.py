"""Prompt commands and project instructions in the window: the real app, runtime and backend, and a
scripted gateway that records what it was sent. Typing ``/`` lists the commands; ``/name args`` is
sent expanded; an unknown command is refused with the known ones and nothing is sent; the
instruction files a conversation loaded are shown in it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.desktop.app.harness import (
    app_environment,
    current,
    eventually,
    notices,
    running_app,
    type_and_send,
)
from tests.desktop.support import Run
from tests.support.backend import Backend


def define_commands(workspace: Path) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "Cowork" / "commands"
    user.mkdir(parents=True)
    (user / "explain.md").write_text("Explain $ARGUMENTS to a newcomer.\n")
    (user / "review.md").write_text("the user's review, overridden by the project's\n")
    project = workspace / ".cowork" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text(
        "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS for bugs.\n"
    )


def last_prompt(gateway: Any) -> str:
    content = gateway.requests[-1].body["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(part["text"] for part in content)


def test_slash_lists_the_commands_and_a_chosen_one_is_sent_expanded(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    define_commands(workspace)
    (workspace / "AGENTS.md").write_text("Use tabs.\n")

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "Reviewed."}]}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                edit = window.composer.edit
                edit.setFocus()
                QTest.keyClicks(edit, "/")
                popup = edit.popup()
                await eventually(popup.isVisible, what="the command list", window=window)
                shown = [
                    edit.completer.completionModel().index(row, 0).data()
                    for row in range(edit.completer.completionCount())
                ]
                assert shown == ["/explain", "/review — Review a file for bugs"]
                QTest.keyClicks(edit, "re")
                assert edit.completer.completionCount() == 1
                QTest.keyClick(popup, Qt.Key.Key_Return)
                assert edit.toPlainText() == "/review "
                assert not popup.isVisible()
                QTest.keyClicks(edit, "src/app.py")
                QTest.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED", what="the task's end"
                )
                assert last_prompt(gateway) == "Review src/app.py for bugs."
                # The conversation says which instruction files its session loaded.
                assert current(window).state.instruction_files == [
                    {"path": str(workspace / "AGENTS.md"), "sizeBytes": 10, "truncated": False}
                ]
                window.view.flush()
                assert any(
                    f"Project instructions loaded: {workspace / 'AGENTS.md'}" in n.text.text()
                    for n in notices(window)
                )

    run(scenario())


def test_an_unknown_command_is_refused_with_the_known_ones_and_nothing_is_sent(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    define_commands(workspace)

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "never"}]}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "/reveiw app.py")
                await eventually(
                    lambda: window.banner.isVisible() and "/reveiw" in window.banner.text.text(),
                    what="the error",
                    window=window,
                )
                text = window.banner.text.text()
                assert "There is no command /reveiw. Known commands: /explain, /review." in text
                assert window.composer.edit.toPlainText() == "/reveiw app.py"  # given back to fix
                assert gateway.requests == []
                assert current(window).state.task_id is None

    run(scenario())
