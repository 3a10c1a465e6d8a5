"""Revert from the window end to end (real app, real runtime processes, the local backend and a scripted
gateway): the agent creates one file and rewrites another; the preview's Revert file removes the
created one after the user confirms, and the conversation says so; after a restart the past
conversation, opened from the sidebar, still shows the other change and Revert task puts it back."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.main_window import MainWindow
from desktop.approval.dialog import ApprovalDialog
from desktop.patch.dialog import PatchPreviewDialog
from desktop.patch.revert import RevertControls
from tests.desktop.app.harness import (
    app_environment,
    current,
    eventually,
    notices,
    running_app,
    sidebar_titles,
    type_and_send,
    workbench,
)
from tests.desktop.supervision.live import tool_call
from tests.desktop.support import Run
from tests.support.backend import Backend


async def approve_all(window: MainWindow, qtbot: QtBot, count: int) -> None:
    dialog = window.approval_dialog
    assert isinstance(dialog, ApprovalDialog)
    for _ in range(count):
        await eventually(lambda: dialog.isVisible() and dialog.armed, what="the armed approval dialog")
        qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
        await eventually(lambda: not dialog.isVisible() or not dialog.armed, what="the answer taken")


async def open_preview(window: MainWindow) -> PatchPreviewDialog:
    previous = window.preview_dialog
    window.review_changes()
    dialog = await eventually(
        lambda: window.preview_dialog if window.preview_dialog is not previous else None,
        timeout=30,
        what="the patch preview",
        window=window,
    )
    assert isinstance(dialog, PatchPreviewDialog)
    return dialog


def select(dialog: PatchPreviewDialog, display_path: str) -> None:
    for index in range(dialog.file_list.topLevelItemCount()):
        item = dialog.file_list.topLevelItem(index)
        if item is not None and item.text(1) == display_path:
            dialog.file_list.setCurrentItem(item)
            return
    raise AssertionError(f"{display_path} is not in the preview")


async def confirm(qtbot: QtBot, controls: RevertControls) -> None:
    box = await eventually(lambda: controls.confirmation, what="the confirmation")
    (button,) = [b for b in box.buttons() if box.buttonRole(b) is QMessageBox.ButtonRole.DestructiveRole]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_revert_a_file_now_and_a_past_conversations_task_after_a_restart(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("first draft\n")
    readme = workspace / "README.md"
    script = [
        {
            "text": "Writing both.",
            **tool_call("WriteFile", "w1", path=str(readme), content="# Demo\n"),
        },
        tool_call("WriteFile", "w2", path=str(notes), content="second draft\n"),
        {"text": "Both are written."},
    ]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            env = app_environment(home, backend, gateway.url)
            async with running_app(env, home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Write the README and the notes")
                await approve_all(window, qtbot, 2)
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the task's end",
                    window=window,
                )
                assert readme.read_text() == "# Demo\n"
                dialog = await open_preview(window)
                controls = dialog.revert_controls
                assert controls is not None
                select(dialog, "README.md")
                qtbot.mouseClick(controls.file_button, Qt.MouseButton.LeftButton)
                await confirm(qtbot, controls)
                await eventually(lambda: not readme.exists(), what="the created file removed")
                await eventually(
                    lambda: "Reverted: README.md (removed)." in dialog.message_label.text(),
                    what="the dialog telling",
                    window=window,
                )
                assert [entry.display_path for entry in dialog.entries] == ["notes.txt"]
                assert any(
                    "Reverted the agent's changes: README.md (removed)." in n.text.text()
                    for n in notices(window)
                )
                assert notes.read_text() == "second draft\n"

            async with running_app(env, home / "logs") as window:
                title = "Write the README and the notes"
                await eventually(
                    lambda: any(title in titles for _, titles in sidebar_titles(window)), what="the list"
                )
                index = window.sidebar.index_of(workbench(window).sidebar.all()[0].session_id)
                window.sidebar.tree.clicked.emit(index)
                await eventually(window.review_action.isEnabled, what="Review Changes offered", window=window)
                dialog = await open_preview(window)
                await eventually(lambda: dialog.entries, what="the past conversation's changes")
                (entry,) = dialog.entries
                assert entry.display_path == "notes.txt"
                assert entry.revertible
                assert "+second draft" in entry.diff
                controls = dialog.revert_controls
                assert controls is not None
                select(dialog, "notes.txt")
                qtbot.mouseClick(controls.task_button, Qt.MouseButton.LeftButton)
                await confirm(qtbot, controls)
                await eventually(lambda: notes.read_text() == "first draft\n", what="the notes put back")
                await eventually(lambda: not dialog.entries, what="nothing left to review", window=window)

    run(scenario())
