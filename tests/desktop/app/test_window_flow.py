"""The window end to end: the real app with real runtime processes, the real local backend and a
scripted gateway. Type a prompt → the answer streams in → the approval dialog asks → approve → the
tool runs → the patch preview shows the diff → the conversation is in the sidebar with its history;
deny; cancel; a runtime killed mid-task is resumed; after a restart a past conversation continues."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.approval.dialog import ApprovalDialog
from desktop.patch.dialog import PatchPreviewDialog
from tests.desktop.app.harness import (
    app_environment,
    assistant_texts,
    current,
    eventually,
    notices,
    running_app,
    sidebar_titles,
    tool_rows,
    type_and_send,
    workbench,
)
from tests.desktop.supervision.live import held_command, tool_call
from tests.desktop.support import Run
from tests.support.backend import Backend


def approval_dialog(window: object) -> ApprovalDialog:
    dialog = getattr(window, "approval_dialog", None)
    assert isinstance(dialog, ApprovalDialog)
    return dialog


def test_a_prompt_streams_asks_approval_writes_and_shows_the_diff_and_the_history(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    answer = "I will add a **README** with a title."
    script = [
        {
            "text": answer,
            "chunkSize": 2,
            **tool_call("WriteFile", "w1", path=str(workspace / "README.md"), content="# Demo\n"),
        },
        {"text": "The README is written.", "chunkSize": 3},
    ]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Add a README to the project")
                # The answer streamed into the conversation …
                await eventually(
                    lambda: answer.replace("**", "") in " ".join(assistant_texts(window)),
                    what="the streamed answer",
                )
                # … and the write waits for the user.
                dialog = approval_dialog(window)
                await eventually(
                    lambda: dialog.isVisible() and dialog.approve_button.isEnabled(),
                    what="the armed approval dialog",
                )
                assert "WriteFile" in " ".join(tool_rows(window))
                assert "Waiting for your approval" in window.status.state_label.text()
                qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED", what="the task's end"
                )
                assert (workspace / "README.md").read_text() == "# Demo\n"
                assert assistant_texts(window)[-1] == "The README is written."
                [row] = tool_rows(window)
                assert row.startswith("✓  WriteFile")
                assert row.split("  ")[2].startswith("README.md · "), (
                    "a path in the project is shown relative to it"
                )
                # The patch preview, from the notice's link.
                review = next(n for n in notices(window) if "review" in n.text.text())
                review.action_triggered.emit("review_changes")
                preview = await eventually(lambda: window.preview_dialog, what="the patch preview")
                assert isinstance(preview, PatchPreviewDialog)
                await eventually(lambda: "+# Demo" in preview.diff_view.toPlainText(), what="the diff")
                # The conversation is in the sidebar, under its folder, titled by the prompt.
                await eventually(
                    lambda: (workspace.name, ["Add a README to the project"]) in sidebar_titles(window),
                    what="the conversation in the sidebar",
                )
                assert "tokens" in window.status.tokens_label.text()
                pid = current(window).runtime_pid
            assert pid is not None
        # Closing the window shut the runtime down.
        assert not _alive(pid)

    run(scenario())


def test_a_denied_action_is_not_run_and_the_task_goes_on(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    script = [
        tool_call("DeleteFile", "d1", path=str(workspace / "keep.txt")),
        {"text": "Understood, I left it alone."},
    ]
    (workspace / "keep.txt").write_text("precious\n")

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Delete keep.txt")
                dialog = approval_dialog(window)
                await eventually(lambda: dialog.isVisible() and dialog.armed, what="the armed dialog")
                qtbot.keyClicks(dialog.reason_edit, "I still need it")
                qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the end",
                    window=window,
                )
                [row] = tool_rows(window)
                sent = json.dumps(gateway.requests[-1].body)
        assert (workspace / "keep.txt").read_text() == "precious\n"
        assert row.startswith("⊘  DeleteFile")
        assert row.endswith("— You denied this")
        assert "I still need it" in sent

    run(scenario())


def test_esc_cancels_the_running_task(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    script = [{"text": "Thinking about it at length " * 20, "chunkSize": 8, "holdAfterChunks": 3}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Think")
                await eventually(lambda: assistant_texts(window), what="the first words")
                await eventually(window.composer.stop_button.isEnabled, what="Stop enabled")
                assert not window.composer.send_button.isEnabled()
                qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
                await eventually(
                    lambda: current(window).state.status.task == "TASK_CANCELLED", what="the cancel"
                )
                assert "Task cancelled." in [
                    n.text.text().replace('<i style="">', "").replace("</i>", "") for n in notices(window)
                ]
                assert not window.composer.stop_button.isEnabled()
                assert not window.composer.send_button.isEnabled()  # nothing written yet
                qtbot.keyClicks(window.composer.edit, "Think again")
                assert window.composer.send_button.isEnabled()
                gateway.release()

    run(scenario())


def test_a_runtime_killed_mid_task_is_resumed_and_the_user_is_told(
    run: Run[None], backend: Backend, workspace: Path, home: Path, tmp_path: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    script = [
        tool_call("RunCommand", "r1", command=held_command(started, go)),
        {"text": "Finished after all."},
    ]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Run the long job")
                dialog = approval_dialog(window)
                await eventually(
                    lambda: dialog.isVisible() and dialog.approve_button.isEnabled(), what="the dialog"
                )
                dialog.approve_button.click()
                await eventually(started.exists, what="the command to start")
                first = current(window).runtime_pid
                assert first is not None
                os.kill(first, signal.SIGKILL)
                await eventually(
                    lambda: "stopped unexpectedly" in window.banner.text.text(), what="the banner"
                )
                go.touch()
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    timeout=30,
                    what="the end",
                    window=window,
                )
                assert not window.banner.isVisible()
                assert any("resumed" in n.text.text() for n in notices(window))
                assert assistant_texts(window)[-1] == "Finished after all."
                assert current(window).runtime_pid not in (None, first)

    run(scenario())


def test_after_a_restart_a_past_conversation_continues_with_its_history(
    run: Run[None], backend: Backend, workspace: Path, home: Path
) -> None:
    script = [{"text": "The capital of France is Paris."}, {"text": "About 2.1 million people."}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "What is the capital of France?")
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED", what="the answer"
                )
            async with running_app(env, home / "logs") as window:
                title = "What is the capital of France?"
                await eventually(
                    lambda: any(title in titles for _, titles in sidebar_titles(window)), what="the list"
                )
                index = window.sidebar.index_of(workbench(window).sidebar.all()[0].session_id)
                window.sidebar.tree.clicked.emit(index)
                await eventually(
                    lambda: assistant_texts(window) == ["The capital of France is Paris."], what="the history"
                )
                type_and_send(window, "And its population?")
                await eventually(
                    lambda: len(assistant_texts(window)) == 2, timeout=30, what="the second answer"
                )
                sent = json.dumps(gateway.requests[-1].body)
                assert assistant_texts(window)[-1] == "About 2.1 million people."
        assert "What is the capital of France?" in sent
        assert "The capital of France is Paris." in sent

    run(scenario())


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_conversation_running_when_the_desktop_crashed_is_offered_and_resumed_at_the_next_start(
    run: Run[None], backend: Backend, workspace: Path, home: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    import psutil

    from tests.support.peers import REPO_ROOT

    started, go = tmp_path / "started", tmp_path / "go"
    script = [
        tool_call("RunCommand", "r1", command=held_command(started, go)),
        {"text": "Picked up where it stopped."},
    ]
    with ScriptedGatewayThread({"turns": script}) as gateway:
        env = app_environment(home, backend, gateway.url)
        config = {
            "env": env,
            "logs": str(home / "logs"),
            "folder": str(workspace),
            "prompt": "Run the long job",
            "started": str(started),
        }
        with subprocess.Popen(
            [sys.executable, "-m", "tests.desktop.app.crashing_app", json.dumps(config)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        ) as desktop:
            assert desktop.stdout is not None
            assert desktop.stdout.readline().strip() == "ready"
            runtimes = [
                p for p in psutil.Process(desktop.pid).children() if "agent_runtime" in " ".join(p.cmdline())
            ]
            desktop.kill()  # the desktop crashes: no Shutdown, the runtime keeps its checkpoint
            desktop.wait(timeout=10)
        psutil.wait_procs(runtimes, timeout=15)
        go.touch()

        async def scenario() -> None:
            async with running_app(env, home / "logs") as window:
                await eventually(
                    lambda: "Cowork closed while this conversation was running" in window.banner.text.text(),
                    what="the offer to resume",
                    window=window,
                )
                assert window.banner.action_button.text() == "Resume"
                window.banner.action_button.click()
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    timeout=30,
                    what="the resumed task",
                    window=window,
                )
                assert assistant_texts(window)[-1] == "Picked up where it stopped."
                assert any("result is unknown" in (row or "") for row in [r.output for r in _rows(window)]), (
                    "the interrupted call is said to be interrupted"
                )

        run(scenario())


def _rows(window: object) -> list:  # type: ignore[type-arg]
    from desktop.conversation.items import ToolCallRow

    return [item for item in current(window).state.items if isinstance(item, ToolCallRow)]  # type: ignore[arg-type]


def test_a_paused_session_says_why_and_resume_continues_the_task(
    run: Run[None], backend: Backend, workspace: Path, home: Path
) -> None:
    failing = [{"kind": "error", "status": 503, "message": "gateway overloaded"}] * 4
    script = [*failing, {"text": "Back on track."}]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Say something")
                await eventually(
                    lambda: window.banner.isVisible() and "Paused" in window.banner.text.text(),
                    what="the pause banner",
                    window=window,
                )
                assert window.banner.action_button.text() == "Resume"
                assert "Session paused" in window.status.state_label.text()
                window.banner.action_button.click()
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the end",
                    window=window,
                )
                assert assistant_texts(window) == ["Back on track."]
                assert not window.banner.isVisible()

    run(scenario())
