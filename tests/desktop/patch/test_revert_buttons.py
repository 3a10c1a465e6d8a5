"""The preview's Revert buttons on real widgets: the selected file or its last task, only after the
user confirms; off (with the runtime's reason) for a file that cannot be reverted; busy until the
revert ends; the request names the earlier session a past conversation's change belongs to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from desktop.patch.dialog import PatchPreviewDialog
from desktop.patch.model import RevertRequest
from tests.desktop.patch.previews import CREATED_DIFF, MODIFIED_DIFF


def preview(root: Path, *, session_id: str | None = None) -> dict[str, Any]:
    """Two tasks: task_1 changed app.py, task_2 changed it again and created NOTES.md; old.txt's
    revert is not available."""
    extra = {"sessionId": session_id} if session_id else {}
    return {
        "files": [
            {
                "path": str(root / "NOTES.md"),
                "status": "created",
                "diff": CREATED_DIFF,
                "sizeBytes": 24,
                "taskIds": ["task_2"],
                "revertible": True,
                **extra,
            },
            {
                "path": str(root / "old.txt"),
                "status": "modified",
                "diff": "Binary files a/old.txt and b/old.txt differ\n",
                "sizeBytes": 9_000_000,
                "taskIds": ["task_1"],
                "revertible": False,
                "revertNote": "Revert is not available for old.txt: the file was larger than 5 MB.",
                **extra,
            },
            {
                "path": str(root / "src" / "app.py"),
                "status": "modified",
                "diff": MODIFIED_DIFF,
                "sizeBytes": 44,
                "taskIds": ["task_1", "task_2"],
                "revertible": True,
                **extra,
            },
        ]
    }


def make(qtbot: QtBot, root: Path, asked: list[RevertRequest], **options: Any) -> PatchPreviewDialog:
    dialog = PatchPreviewDialog(preview(root, **options), root, revert=asked.append)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def select(dialog: PatchPreviewDialog, display_path: str) -> None:
    for index in range(dialog.file_list.topLevelItemCount()):
        item = dialog.file_list.topLevelItem(index)
        assert item is not None
        if item.text(1) == display_path:
            dialog.file_list.setCurrentItem(item)
            return
    raise AssertionError(f"{display_path} is not listed")


def confirmation(qtbot: QtBot, dialog: PatchPreviewDialog) -> QMessageBox:
    controls = dialog.revert_controls
    assert controls is not None
    qtbot.waitUntil(
        lambda: controls.confirmation is not None and controls.confirmation.isVisible(), timeout=2000
    )
    assert controls.confirmation is not None
    return controls.confirmation


def revert_button(box: QMessageBox) -> Any:
    (button,) = [b for b in box.buttons() if box.buttonRole(b) is QMessageBox.ButtonRole.DestructiveRole]
    return button


def test_revert_file_asks_first_then_sends_the_file_and_waits_for_the_end(
    qtbot: QtBot, tmp_path: Path
) -> None:
    asked: list[RevertRequest] = []
    dialog = make(qtbot, tmp_path, asked)
    controls = dialog.revert_controls
    assert controls is not None
    select(dialog, "src/app.py")
    assert controls.file_button.isEnabled()
    assert controls.file_button.accessibleName() == "Revert the selected file"
    qtbot.mouseClick(controls.file_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, dialog)
    assert "src/app.py" in box.text()
    assert asked == []  # nothing happens before the answer
    qtbot.mouseClick(revert_button(box), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=2000)
    (request,) = asked
    assert request.params("sess_now") == {
        "sessionId": "sess_now",
        "paths": [str(tmp_path / "src" / "app.py")],
    }
    assert dialog.message_label.text() == "Reverting…"
    assert not controls.file_button.isEnabled()
    assert not controls.task_button.isEnabled()
    dialog.revert_finished("Reverted: src/app.py.")
    assert dialog.message_label.text() == "Reverted: src/app.py."
    assert controls.file_button.isEnabled()


def test_cancel_and_escape_revert_nothing(qtbot: QtBot, tmp_path: Path) -> None:
    asked: list[RevertRequest] = []
    dialog = make(qtbot, tmp_path, asked)
    controls = dialog.revert_controls
    assert controls is not None
    select(dialog, "NOTES.md")
    qtbot.mouseClick(controls.file_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, dialog)
    cancel = box.button(QMessageBox.StandardButton.Cancel)
    assert cancel is not None
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: controls.confirmation is None, timeout=2000)
    controls.revert_task()
    box = confirmation(qtbot, dialog)
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: controls.confirmation is None, timeout=2000)
    assert asked == []
    assert controls.file_button.isEnabled()


def test_revert_task_names_every_file_of_the_last_task_and_sends_the_task(
    qtbot: QtBot, tmp_path: Path
) -> None:
    asked: list[RevertRequest] = []
    dialog = make(qtbot, tmp_path, asked)
    controls = dialog.revert_controls
    assert controls is not None
    select(dialog, "src/app.py")
    qtbot.mouseClick(controls.task_button, Qt.MouseButton.LeftButton)
    box = confirmation(qtbot, dialog)
    assert "NOTES.md" in box.text()
    assert "src/app.py" in box.text()
    assert "old.txt" not in box.text()
    qtbot.mouseClick(revert_button(box), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=2000)
    assert asked[0].params("sess_now") == {"sessionId": "sess_now", "taskId": "task_2"}


def test_a_file_that_cannot_be_reverted_has_the_buttons_off_and_says_why(
    qtbot: QtBot, tmp_path: Path
) -> None:
    asked: list[RevertRequest] = []
    dialog = make(qtbot, tmp_path, asked)
    controls = dialog.revert_controls
    assert controls is not None
    select(dialog, "old.txt")
    assert not controls.file_button.isEnabled()
    assert not controls.task_button.isEnabled()
    assert "larger than 5 MB" in controls.file_button.toolTip()
    controls.revert_file()
    assert controls.confirmation is None
    assert asked == []


def test_a_past_conversations_change_is_reverted_in_its_own_session(qtbot: QtBot, tmp_path: Path) -> None:
    asked: list[RevertRequest] = []
    dialog = make(qtbot, tmp_path, asked, session_id="sess_before")
    controls = dialog.revert_controls
    assert controls is not None
    select(dialog, "NOTES.md")
    qtbot.mouseClick(controls.file_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(revert_button(confirmation(qtbot, dialog)), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=2000)
    assert asked[0].params("sess_now")["changeSessionId"] == "sess_before"


def test_the_revert_buttons_are_reached_by_tab_and_absent_without_a_runtime_to_ask(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = make(qtbot, tmp_path, [])
    controls = dialog.revert_controls
    assert controls is not None
    qtbot.waitUntil(dialog.isActiveWindow, timeout=2000)
    select(dialog, "NOTES.md")
    dialog.diff_view.setFocus()
    for expected in (controls.file_button, controls.task_button, dialog.open_button):
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Tab)
        assert dialog.focusWidget() is expected
    plain = PatchPreviewDialog(preview(tmp_path), tmp_path)
    qtbot.addWidget(plain)
    assert plain.revert_controls is None
