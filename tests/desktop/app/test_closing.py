"""Closing the window while a task runs: the window asks first. Cancel keeps it open and the task
running; "Stop the task and quit" cancels the task, lets the running command end, shuts the runtime
down in order and quits — and the next start has nothing to resume, because nothing crashed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psutil
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.bootstrap import DesktopApp, journal_path
from tests.desktop.app.harness import app_environment, current, eventually, running_app, type_and_send
from tests.desktop.app.test_window_flow import approval_dialog
from tests.desktop.supervision.live import held_command, tool_call
from tests.desktop.support import Run
from tests.support.backend import Backend


def test_closing_during_a_task_asks_then_stops_it_shuts_down_in_order_and_quits(
    run: Run[None], backend: Backend, workspace: Path, home: Path, tmp_path: Path, qtbot: QtBot
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    script = [tool_call("RunCommand", "r1", command=held_command(started, go)), {"text": "Never asked."}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url)
            app = DesktopApp(env, home / "logs")
            quit_ = asyncio.ensure_future(app.run())
            try:
                window = await eventually(
                    lambda: app.window if app.window is not None and app.window.workbench else None,
                    what="the window",
                )
                window.new_conversation(str(workspace))
                type_and_send(window, "Run the long job")
                dialog = approval_dialog(window)
                await eventually(lambda: dialog.isVisible() and dialog.armed, what="the approval dialog")
                dialog.approve_button.click()
                await eventually(started.exists, what="the command to start")
                session = current(window)
                runtime = session.runtime_pid
                assert runtime is not None
                # Closing asks; Cancel keeps everything as it was.
                window.close()
                assert window.isVisible(), "the window asks before it closes"
                question = await eventually(
                    lambda: (
                        window.close_question
                        if window.close_question and window.close_question.isVisible()
                        else None
                    ),
                    what="the question",
                )
                assert "still running" in question.text()
                assert window.isVisible()
                question.button(question.StandardButton.Cancel).click()
                await eventually(lambda: not question.isVisible(), what="the question to close")
                assert window.isVisible()
                assert not quit_.done()
                assert session.state.busy
                assert psutil.pid_exists(runtime)
                # Closing again and stopping: the task is cancelled, the window stays and says why.
                window.close()
                await eventually(
                    lambda: window.close_question is not None and window.close_question.isVisible(),
                    what="the question again",
                )
                assert window.stop_and_quit_button is not None
                window.stop_and_quit_button.click()
                await eventually(
                    lambda: "Stopping the running task" in window.banner.text.text(), what="the note"
                )
                assert window.isVisible()
                assert not quit_.done()
                go.touch()  # the command ends; the step with it
                async with asyncio.timeout(60):
                    assert await quit_ == 0
            finally:
                go.touch()
                if not quit_.done() and app.window is not None:
                    app.window.shut_down()
                    quit_.cancel()
            assert session.state.status.task == "TASK_CANCELLED"
            assert not _alive(runtime), "the runtime (and its command) ended with the app"
            assert json.loads(journal_path().read_text())["sessions"] == [], "it ended in order"
            # The next start offers nothing to resume.
            async with running_app(env, home / "logs") as again:
                await eventually(lambda: again.workbench is not None, what="the workbench")
                assert again.workbench is not None
                assert await again.workbench.restore_interrupted() == 0
                assert "Cowork closed while" not in again.banner.text.text()

    run(scenario())


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
