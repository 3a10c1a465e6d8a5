"""The window's parts a desktop user expects: menus and shortcuts, Help → Open logs folder, About
with the app's and the runtime's versions, the composer's keys, the first-run dialog when nothing is
configured, and the OS's light or dark palette."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from desktop.app.bootstrap import runtime_version
from desktop.app.composer import PromptEdit
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.app.theme import STYLE_SHEET, follow_system_theme, is_dark
from desktop.settings.dialog import FirstRunDialog
from desktop.settings.store import SettingsStore
from tests.desktop.app.harness import app_environment, eventually, running_app
from tests.desktop.support import Run
from tests.support.backend import Backend

ABOUT = AboutInfo(
    app_version="9.8.7", runtime_version="9.8.7 (from source)", qt_version="6.x", python_version="3.11"
)


def window(qtbot: QtBot, tmp_path: Path, opened: list[QUrl] | None = None) -> MainWindow:
    shown = MainWindow(
        about=ABOUT,
        log_dir=tmp_path / "logs",
        open_url=lambda url: bool(opened.append(url)) if opened is not None else True,
    )
    qtbot.addWidget(shown)
    return shown


def test_menus_hold_the_expected_actions_and_shortcuts(qtbot: QtBot, tmp_path: Path) -> None:
    main = window(qtbot, tmp_path)
    menus = {
        menu.title().replace("&", ""): [a.text().replace("&", "") for a in menu.actions() if a.text()]
        for menu in (a.menu() for a in main.menuBar().actions())
    }
    assert menus["File"][:3] == ["New Conversation in a Folder…", "New General Chat", "Close Conversation"]
    assert "Settings…" in menus["File"]
    assert menus["Conversation"] == [
        "Send",
        "Stop",
        "Review Changes…",
        "Edit Last Prompt",
        "Retry Last Task",
        "Find Conversation",
    ]
    assert main.edit_last_action.shortcut() == QKeySequence("Ctrl+Shift+E")
    assert main.retry_action.shortcut() == QKeySequence("Ctrl+Shift+R")
    assert not main.retry_action.isEnabled()  # nothing to retry before the backend is up
    assert menus["Help"] == ["Open Logs Folder", "Check for Runtime Updates", "About Cowork"]
    assert not main.check_updates_action.isEnabled()  # no updater: from source, nothing configured
    assert main.new_action.shortcut() == QKeySequence(QKeySequence.StandardKey.New)
    assert main.send_action.shortcut() == QKeySequence("Ctrl+Return")
    assert main.stop_action.shortcut() == QKeySequence("Escape")
    # Before the backend is up nothing can be sent.
    assert not main.composer.send_button.isEnabled()
    assert not main.composer.edit.isEnabled()


def test_help_opens_the_logs_folder_and_about_names_the_versions(qtbot: QtBot, tmp_path: Path) -> None:
    opened: list[QUrl] = []
    main = window(qtbot, tmp_path, opened)
    main.logs_action.trigger()
    assert opened == [QUrl.fromLocalFile(str(tmp_path / "logs"))]
    assert (tmp_path / "logs").is_dir()
    main.about_action.trigger()
    box = next(child for child in main.findChildren(QMessageBox) if child.isVisible())
    assert "Cowork 9.8.7" in box.text()
    assert "Agent runtime: 9.8.7 (from source)" in box.text()
    assert runtime_version({"COWORK_RUNTIME_EXECUTABLE": "/opt/rt"}).startswith("/opt/rt")


def test_with_the_ctrl_enter_setting_ctrl_enter_sends_and_enter_starts_a_new_line(qtbot: QtBot) -> None:
    edit = PromptEdit()
    edit.set_send_key("ctrl_enter")
    qtbot.addWidget(edit)
    sent: list[bool] = []
    edit.submitted.connect(lambda: sent.append(True))
    qtbot.keyClicks(edit, "line one")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.keyClicks(edit, "line two")
    assert edit.toPlainText() == "line one\nline two"
    assert sent == []
    qtbot.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sent == [True]


def test_the_palette_decides_light_or_dark_and_the_style_sheet_follows(qtbot: QtBot) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    saved = app.palette()
    try:
        follow_system_theme(app)
        assert app.styleSheet() == STYLE_SHEET
        dark = QPalette()
        dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
        app.setPalette(dark)
        if app.styleHints().colorScheme() == Qt.ColorScheme.Unknown:
            assert is_dark(app)
    finally:
        app.setPalette(saved)
        app.setStyleSheet("")


def test_the_first_run_dialog_opens_when_no_model_is_configured(
    run: Run[None], backend: Backend, home: Path
) -> None:
    async def scenario() -> None:
        env = app_environment(home, backend, "http://127.0.0.1:9")
        SettingsStore().path.unlink()
        for name in ("LLM_GATEWAY_ENDPOINT", "LLM_GATEWAY_API", "LLM_GATEWAY_MODEL"):
            env.pop(name)
        async with running_app(env, home / "logs") as main:
            dialog = await eventually(
                lambda: next((d for d in main.findChildren(FirstRunDialog) if d.isVisible()), None),
                what="the first-run dialog",
            )
            dialog.choose_preset("demo")
            dialog.accept()
            assert SettingsStore().is_configured()
            assert SettingsStore().load().is_demo

    run(scenario())
