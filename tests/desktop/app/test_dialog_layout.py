"""No dialog collapses: each dialog of the app, opened over a 1024×640 main window — with an error
shown in the forms that have one — fits there and keeps its form laid out: every visible widget has a
positive size, none is squeezed below its minimum size hint, and no two widgets of one layout overlap."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import keyring
import pytest
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QDialog,
    QLayout,
    QMessageBox,
    QScrollBar,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop.app.compatible_runtime import CompatibleRuntimeDialog
from desktop.app.folder_message import FolderPathDialog
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.approval.dialog import ApprovalDialog
from desktop.approval.queue import ApprovalQueue
from desktop.dialog_size import keep_laid_out
from desktop.mcp.elicitation_dialog import ElicitationDialog
from desktop.mcp.elicitations import ElicitationQueue
from desktop.patch.dialog import PatchPreviewDialog
from desktop.settings.dialog import FirstRunDialog, SettingsDialog
from desktop.settings.store import SettingsStore
from desktop.updater.compatible import Incompatibility
from tests.desktop.approval.requests import request, write_request
from tests.desktop.mcp.requests import elicitation
from tests.desktop.patch.previews import workspace_preview
from tests.desktop.settings.conftest import MemoryKeyring

WINDOW_WIDTH, WINDOW_HEIGHT = 1024, 640
LONG_PROBLEM = (
    "The OS keychain could not store the token (the Secret Service is locked), so nothing was saved: "
    "Cowork never writes tokens to a file. Unlock or set up the keychain, or set LLM_GATEWAY_AUTH_TOKEN "
    "in the environment instead."
)


@pytest.fixture(autouse=True)
def memory_keychain() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    about = AboutInfo(
        app_version="1.0.0", runtime_version="1.0.0 (from source)", qt_version="6", python_version="3"
    )
    made = MainWindow(about=about, log_dir=tmp_path / "logs", open_url=lambda _url: False)
    qtbot.addWidget(made)
    made.resize(WINDOW_WIDTH, WINDOW_HEIGHT)
    with qtbot.waitExposed(made):
        made.show()
    return made


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    return SettingsStore(tmp_path / "config" / "settings.json")


def layout_problems(dialog: QWidget) -> list[str]:
    """What is collapsed, clipped or overlapping in ``dialog`` as it is laid out now."""
    QApplication.processEvents()
    problems: list[str] = []
    if dialog.width() > WINDOW_WIDTH or dialog.height() > WINDOW_HEIGHT:
        problems.append(f"the dialog is {dialog.width()}×{dialog.height()}, larger than the window")
    hint = dialog.minimumSizeHint()
    if dialog.width() < hint.width() or dialog.height() < hint.height():
        problems.append(f"the dialog is {dialog.size()} but needs {hint}")
    for widget in dialog.findChildren(QWidget):
        if not widget.isVisibleTo(dialog) or isinstance(widget, QScrollBar) or _scrolled(widget, dialog):
            continue
        name = f"{type(widget).__name__} {widget.objectName() or widget.accessibleName() or ''}".strip()
        if widget.width() <= 0 or widget.height() <= 0:
            problems.append(f"{name} has no room: {widget.size()}")
            continue
        minimum = widget.minimumSizeHint()
        if minimum.isValid() and widget.height() < min(minimum.height(), widget.maximumHeight()):
            problems.append(f"{name} is {widget.height()} px high, below its minimum {minimum.height()}")
    for layout in dialog.findChildren(QLayout):
        shown = [
            item.widget()
            for item in (layout.itemAt(index) for index in range(layout.count()))
            if item is not None and item.widget() is not None and item.widget().isVisibleTo(dialog)
        ]
        for first, second in itertools.combinations(shown, 2):
            if first.geometry().intersects(second.geometry()):
                problems.append(f"{type(first).__name__} and {type(second).__name__} overlap")
    return problems


def _scrolled(widget: QWidget, dialog: QWidget) -> bool:
    """Part of a scroll area (its content may be scrolled out of sight; its headers and bars are the
    area's own business), so not the dialog's layout to judge."""
    parent = widget.parentWidget()
    while parent is not None and parent is not dialog:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


def shown(qtbot: QtBot, dialog: QWidget) -> QWidget:
    qtbot.addWidget(dialog)
    if not dialog.isVisible():
        dialog.show()
    qtbot.waitUntil(dialog.isVisible)
    return dialog


OPENERS: dict[str, Callable[[QtBot, MainWindow, SettingsStore, Path], QWidget]] = {}


def opens(name: str) -> Callable[[Callable[..., QWidget]], Callable[..., QWidget]]:
    def register(opener: Callable[..., QWidget]) -> Callable[..., QWidget]:
        OPENERS[name] = opener
        return opener

    return register


@opens("first-run, with a keychain error")
def _first_run(qtbot: QtBot, window: MainWindow, store: SettingsStore, _tmp: Path) -> QWidget:
    dialog = FirstRunDialog(store, window)
    shown(qtbot, dialog)
    dialog.choose_preset("anthropic")
    dialog.show_problems({"token": LONG_PROBLEM})
    return dialog


@opens("settings, with every field wrong")
def _settings(qtbot: QtBot, window: MainWindow, store: SettingsStore, _tmp: Path) -> QWidget:
    dialog = SettingsDialog(store, window, environ={"LLM_GATEWAY_ENDPOINT": "http://x"})
    shown(qtbot, dialog)
    dialog.choose_preset("custom")
    dialog.gateway.endpoint_edit.setText("not a url")
    dialog.max_steps_edit.setText("zero")
    dialog.accept()  # refused: the problems show under the form
    assert dialog.isVisible()
    assert dialog.error_label.text()
    return dialog


@opens("approval, a command")
def _approval(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    queue = ApprovalQueue()
    dialog = ApprovalDialog(queue, window, arm_delay_ms=0)
    queue.add("sess_1", request("appr_1", description="Commands run with your permissions."), received_at=0.0)
    return shown(qtbot, dialog)


@opens("approval, a file write with its diff")
def _approval_write(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    queue = ApprovalQueue()
    dialog = ApprovalDialog(queue, window, arm_delay_ms=0)
    queue.add("sess_1", write_request("appr_w"), received_at=0.0)
    return shown(qtbot, dialog)


@opens("elicitation, with an invalid field")
def _elicitation(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    queue = ElicitationQueue()
    dialog = ElicitationDialog(queue, window, arm_delay_ms=0)
    queue.add("sess_1", elicitation(), received_at=0.0)
    shown(qtbot, dialog)
    qtbot.keyClicks(dialog.inputs["email"], "ada at example")
    assert dialog.status_label.text()
    return dialog


@opens("patch preview")
def _patch(qtbot: QtBot, window: MainWindow, _store: SettingsStore, tmp: Path) -> QWidget:
    root = tmp / "project"
    preview = workspace_preview(root)
    # As Review Changes shows it for the conversation on ``root``.
    window._show_preview(SimpleNamespace(folder=str(root)), preview)  # type: ignore[arg-type]
    assert isinstance(window.preview_dialog, PatchPreviewDialog)
    return shown(qtbot, window.preview_dialog)


@opens("about")
def _about(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    window.updates_unavailable("running from source and COWORK_UPDATE_MANIFEST_URL is not set")
    window.show_about()
    box = next(widget for widget in QApplication.topLevelWidgets() if isinstance(widget, QMessageBox))
    return shown(qtbot, box)


@opens("quit while a task runs")
def _quit(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    window._ask_before_closing()  # what closing the window asks while a task runs
    assert window.close_question is not None
    return shown(qtbot, window.close_question)


@opens("compatible runtime, with an update already running")
def _compatible(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    found = Incompatibility(runtime_version="1.0.0", supported=">=2.0,<3", runtime_incompatible=True)
    # The updater is only used once Download is pressed, which this test does not do.
    dialog = CompatibleRuntimeDialog(found, None, lambda _result: None, window)  # type: ignore[arg-type]
    keep_laid_out(dialog)  # as MainWindow.offer_compatible_runtime makes it
    shown(qtbot, dialog)
    dialog.status.setText("A runtime update is running; try again when it has finished. " * 3)
    return dialog


@opens("logs folder without a file manager")
def _logs(qtbot: QtBot, window: MainWindow, _store: SettingsStore, _tmp: Path) -> QWidget:
    window.open_logs()
    assert isinstance(window.logs_dialog, FolderPathDialog)
    return shown(qtbot, window.logs_dialog)


@pytest.mark.parametrize("name", list(OPENERS))
def test_the_dialog_stays_laid_out_over_a_small_window(
    qtbot: QtBot, window: MainWindow, store: SettingsStore, tmp_path: Path, name: str
) -> None:
    dialog = OPENERS[name](qtbot, window, store, tmp_path)
    try:
        assert layout_problems(dialog) == []
        if isinstance(dialog, QDialog):
            # Shrunk as far as it lets itself be, it is still laid out.
            dialog.resize(1, 1)
            assert dialog.width() >= dialog.minimumSizeHint().width() or dialog.minimumWidth() > 1
            assert layout_problems(dialog) == []
    finally:
        dialog.close()
