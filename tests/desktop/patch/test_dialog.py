"""The patch preview window: markers, highlighted diffs, open in editor, empty and odd previews."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QTextCharFormat
from pytestqt.qtbot import QtBot

from desktop.patch.dialog import NOT_TRACKED_NOTE, PatchPreviewDialog
from desktop.patch.highlight import status_colour
from desktop.patch.model import DISPLAY_MAX_LINES
from tests.desktop.patch.previews import CREATED_DIFF, workspace_preview


class Opener:
    """Stands in for QDesktopServices.openUrl: records what the system would be asked to open."""

    def __init__(self, result: bool = True) -> None:
        self.urls: list[QUrl] = []
        self.result = result

    def __call__(self, url: QUrl) -> bool:
        self.urls.append(url)
        return self.result


def make(qtbot: QtBot, preview: dict[str, object], root: Path | None, opener: Opener) -> PatchPreviewDialog:
    dialog = PatchPreviewDialog(preview, root, open_url=opener)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def rows(dialog: PatchPreviewDialog) -> list[tuple[str, str, str]]:
    items = [dialog.file_list.topLevelItem(i) for i in range(dialog.file_list.topLevelItemCount())]
    return [(item.text(0), item.text(1), item.text(2)) for item in items if item is not None]


def char_format(dialog: PatchPreviewDialog, prefix: str) -> QTextCharFormat:
    """The highlighting of the first line that starts with ``prefix``."""
    block = dialog.diff_view.document().begin()
    while block.isValid():
        if block.text().startswith(prefix):
            ranges = block.layout().formats()
            assert ranges, f"no highlighting on {prefix!r}"
            return QTextCharFormat(ranges[0].format)
        block = block.next()
    raise AssertionError(prefix)


def foreground(dialog: PatchPreviewDialog, prefix: str) -> QColor:
    return char_format(dialog, prefix).foreground().color()


def test_it_lists_created_modified_and_deleted_files_with_their_markers(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, Opener())
    assert rows(dialog) == [
        ("M", "src/app.py", "+1 −1"),
        ("A", "NOTES.md", "+2 −0"),
        ("D", "old.txt", "+0 −2"),
        ("M", "logo.png", ""),
    ]
    assert dialog.summary_label.text() == "4 files changed: 1 created, 2 modified, 1 deleted (+3 −3 lines)"
    created = dialog.file_list.topLevelItem(1)
    deleted = dialog.file_list.topLevelItem(2)
    assert created is not None
    assert deleted is not None
    assert created.toolTip(0) == "created"
    assert deleted.data(0, Qt.ItemDataRole.AccessibleTextRole) == "deleted"
    assert created.foreground(0).color() == QColor(status_colour("created", dark=False))
    assert deleted.foreground(0).color() == QColor(status_colour("deleted", dark=False))


def test_the_first_file_is_selected_and_its_diff_highlighted(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, Opener())
    assert dialog.focusWidget() is dialog.file_list
    assert dialog.file_label.text() == "src/app.py — modified — +1 −1 lines — 44 bytes"
    assert "+print('hello, world')" in dialog.diff_view.toPlainText()
    added, removed, hunk = (
        foreground(dialog, "+print"),
        foreground(dialog, "-print"),
        foreground(dialog, "@@"),
    )
    assert added.green() > added.red()
    assert removed.red() > removed.green()
    assert hunk.blue() > hunk.red()


def test_arrow_keys_choose_the_file_shown(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, Opener())
    qtbot.keyClick(dialog.file_list, Qt.Key.Key_Down)
    assert dialog.diff_view.toPlainText() == CREATED_DIFF.rstrip("\n")
    # A created file's "+--- ..." line is an added line, not a header.
    not_a_header = foreground(dialog, "+--- not a header")
    assert not_a_header.green() > not_a_header.red()
    qtbot.keyClick(dialog.file_list, Qt.Key.Key_Down)
    assert dialog.file_label.text() == "old.txt — deleted — +0 −2 lines"
    assert not dialog.open_button.isEnabled()


def test_open_in_editor_opens_the_file_in_the_workspace(qtbot: QtBot, tmp_path: Path) -> None:
    opener = Opener()
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, opener)
    dialog.file_list.setCurrentItem(dialog.file_list.topLevelItem(1))  # a Markdown file: opened everywhere
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    assert opener.urls == [QUrl.fromLocalFile(str(tmp_path / "NOTES.md"))]
    assert dialog.message_label.text() == ""


def test_enter_on_the_list_and_ctrl_o_open_the_selected_file(qtbot: QtBot, tmp_path: Path) -> None:
    opener = Opener()
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, opener)
    qtbot.keyClick(dialog.file_list, Qt.Key.Key_Down)
    qtbot.keyClick(dialog.file_list, Qt.Key.Key_Return)
    assert opener.urls == [QUrl.fromLocalFile(str(tmp_path / "NOTES.md"))]
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=2000)
    qtbot.keyClick(dialog.file_list, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert len(opener.urls) == 2
    assert dialog.isVisible()  # Enter did not close the dialog through a default button


def test_a_deleted_file_says_why_it_cannot_be_opened(qtbot: QtBot, tmp_path: Path) -> None:
    opener = Opener()
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, opener)
    dialog.file_list.setCurrentItem(dialog.file_list.topLevelItem(2))
    assert dialog.open_selected() is False
    assert opener.urls == []
    assert dialog.message_label.text() == "old.txt was deleted: there is no file to open."


def test_a_runnable_file_opens_its_folder_and_says_so(qtbot: QtBot, tmp_path: Path) -> None:
    (tmp_path / "install.command").write_text("rm -rf ~\n")
    preview = {
        "files": [
            {"path": str(tmp_path / "install.command"), "status": "created", "diff": "", "sizeBytes": 9}
        ]
    }
    opener = Opener()
    dialog = make(qtbot, preview, tmp_path, opener)
    assert dialog.open_selected() is True
    assert opener.urls == [QUrl.fromLocalFile(str(tmp_path))]
    assert "system would run this file" in dialog.message_label.text()


def test_when_no_application_opens_the_file_the_user_is_told(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, Opener(result=False))
    assert dialog.open_selected() is False
    assert (
        dialog.message_label.text()
        == f"No application on this computer opened {tmp_path / 'src' / 'app.py'}."
    )


def test_a_binary_file_shows_the_runtimes_summary_and_a_hint(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, Opener())
    dialog.file_list.setCurrentItem(dialog.file_list.topLevelItem(3))
    assert dialog.diff_view.toPlainText() == "Binary files a/logo.png and b/logo.png differ"
    assert char_format(dialog, "Binary files").fontItalic()  # a note, not a change
    assert dialog.message_label.text() == "No line-by-line diff for this file; open it to see it."
    assert dialog.open_button.isEnabled()


def test_a_huge_diff_is_cut_with_a_line_saying_so(qtbot: QtBot, tmp_path: Path) -> None:
    diff = "--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,20000 @@\n" + "".join(
        f"+line {n}\n" for n in range(20_000)
    )
    preview = {
        "files": [{"path": str(tmp_path / "big.txt"), "status": "created", "diff": diff, "sizeBytes": 1}]
    }
    dialog = make(qtbot, preview, tmp_path, Opener())
    shown = dialog.diff_view.toPlainText().split("\n")
    assert len(shown) == DISPLAY_MAX_LINES + 1
    assert shown[-1] == "… 10,003 more lines not shown here: open the file in the editor to see it all."
    assert rows(dialog) == [("A", "big.txt", "+20000 −0")]


def test_an_empty_preview_says_nothing_changed_yet(qtbot: QtBot) -> None:
    dialog = make(qtbot, {"files": []}, None, Opener())
    assert dialog.empty_label.isVisible()
    assert not dialog.splitter.isVisible()
    assert dialog.empty_label.text() == f"No files changed in this conversation yet.\n{NOT_TRACKED_NOTE}"
    assert not dialog.open_button.isEnabled()
    assert dialog.open_selected() is False


def test_a_malformed_preview_is_reported_not_raised(qtbot: QtBot) -> None:
    dialog = make(qtbot, {"unexpected": True}, None, Opener())
    assert dialog.empty_label.text() == "The changes cannot be shown: the patch preview has no list of files."


def test_a_new_preview_keeps_the_selected_file(qtbot: QtBot, tmp_path: Path) -> None:
    preview = workspace_preview(tmp_path)
    dialog = make(qtbot, preview, tmp_path, Opener())
    dialog.file_list.setCurrentItem(dialog.file_list.topLevelItem(1))
    files = preview["files"]
    assert isinstance(files, list)
    dialog.set_preview({"files": [files[2], files[1]]})
    assert rows(dialog)[1][1] == "NOTES.md"
    assert dialog.current_entry() is not None
    assert dialog.current_entry().display_path == "NOTES.md"  # type: ignore[union-attr]
    assert dialog.summary_label.text().startswith("2 files changed: 1 created, 1 deleted")


def test_escape_closes_it(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = make(qtbot, workspace_preview(tmp_path), tmp_path, Opener())
    qtbot.keyClick(dialog.file_list, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
