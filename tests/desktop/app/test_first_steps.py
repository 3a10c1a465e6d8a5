"""The window before anything happened: what to do first, the logs folder when no file manager
opens it, and why Check for Runtime Updates is greyed out."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from desktop.app.folder_message import FolderPathDialog
from desktop.app.main_window import AboutInfo, MainWindow

ABOUT = AboutInfo(
    app_version="1.2.3", runtime_version="1.2.3 (from source)", qt_version="6", python_version="3"
)


def main_window(
    qtbot: QtBot, logs: Path, opened: list[QUrl] | None = None, answer: bool = True
) -> MainWindow:
    def open_url(url: QUrl) -> bool:
        if opened is not None:
            opened.append(url)
        return answer

    window = MainWindow(about=ABOUT, log_dir=logs, open_url=open_url)
    qtbot.addWidget(window)
    window.resize(1024, 640)
    with qtbot.waitExposed(window):
        window.show()
    return window


def test_the_empty_window_says_what_to_do_first(qtbot: QtBot, tmp_path: Path) -> None:
    window = main_window(qtbot, tmp_path / "logs")
    assert window.welcome.isVisible()
    assert not window.view.isVisible()
    text = " ".join(label.text() for label in window.welcome.step_labels)
    assert "Choose a project folder" in text
    assert "Set up a model" in text
    assert "Ask" in text
    opened: list[str] = []
    window.settings_opener = lambda: opened.append("settings")
    window.welcome.model_button.click()
    assert opened == ["settings"]
    assert window.welcome.folder_button.accessibleName() == "Choose a project folder"
    assert window.welcome.model_button.accessibleName() == "Set up a model in Settings"
    assert not window.welcome.model_state.isVisible()
    window.welcome.show_model("claude-sonnet-4-5 at https://api.anthropic.com")
    assert window.welcome.model_state.isVisible()
    assert window.welcome.model_state.text() == "Set up: claude-sonnet-4-5 at https://api.anthropic.com."
    assert window.welcome.model_button.text() == "Change the &Model…"


def test_the_logs_folder_opens_in_the_file_manager_when_one_answers(qtbot: QtBot, tmp_path: Path) -> None:
    opened: list[QUrl] = []
    window = main_window(qtbot, tmp_path / "logs", opened)
    window.logs_action.trigger()
    assert [url.toLocalFile() for url in opened] == [str(tmp_path / "logs")]
    assert window.logs_dialog is None


def test_without_a_file_manager_the_path_is_shown_to_copy(qtbot: QtBot, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    window = main_window(qtbot, logs, answer=False)
    window.logs_action.trigger()
    dialog = window.logs_dialog
    assert isinstance(dialog, FolderPathDialog)
    qtbot.waitUntil(dialog.isVisible)
    assert logs.is_dir()
    assert dialog.path_edit.text() == str(logs)
    assert dialog.path_edit.isReadOnly()
    assert dialog.path_edit.selectedText() == str(logs)  # selected, ready to copy by keyboard
    assert "No file manager" in dialog.message.text()
    dialog.copy_button.click()
    assert QApplication.clipboard().text() == str(logs)
    assert dialog.copy_button.accessibleName()


def test_a_greyed_out_update_check_says_why_and_about_says_it_too(qtbot: QtBot, tmp_path: Path) -> None:
    window = main_window(qtbot, tmp_path / "logs")
    window.updates_unavailable("running from source and COWORK_UPDATE_MANIFEST_URL is not set")
    action = window.check_updates_action
    assert not action.isEnabled()
    assert action.toolTip() == (
        "Runtime updates are off: running from source and COWORK_UPDATE_MANIFEST_URL is not set."
    )
    help_menu = window.menuBar().actions()[-1].menu()
    assert help_menu is not None
    assert help_menu.toolTipsVisible()
    window.about_action.trigger()
    about = next(widget for widget in QApplication.topLevelWidgets() if isinstance(widget, QMessageBox))
    assert "Runtime updates are off: running from source" in about.text()
    about.close()
