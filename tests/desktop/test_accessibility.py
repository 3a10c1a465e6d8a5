"""What a screen-reader or keyboard-only user needs of every window: each control a user can reach
has a name (what the platform's accessibility interface reports — its own name, a button's text, or
the label it is the buddy of), Tab reaches every enabled control of the main window and of Settings,
and the focused control is drawn with a visible frame."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends.null import Keyring as NoKeychain
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QMessageBox,
    QTabWidget,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop.app.conversation_view import ConversationView
from desktop.app.folder_message import FolderPathDialog
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.app.theme import STYLE_SHEET
from desktop.approval.dialog import ApprovalDialog
from desktop.approval.queue import ApprovalQueue
from desktop.conversation.banners import BannerAction
from desktop.conversation.state import ConversationState
from desktop.mcp.elicitation_dialog import ElicitationDialog
from desktop.mcp.elicitations import ElicitationQueue
from desktop.patch.dialog import PatchPreviewDialog
from desktop.settings.dialog import FirstRunDialog, SettingsDialog
from desktop.settings.store import SettingsStore
from tests.desktop.accessibility import controls, describe, nameless
from tests.desktop.approval.requests import request, write_request
from tests.desktop.conversation.events import chunk, event
from tests.desktop.mcp.requests import elicitation
from tests.desktop.patch.previews import workspace_preview

ABOUT = AboutInfo(app_version="1.0", runtime_version="1.0", qt_version="6", python_version="3.11")


@pytest.fixture(autouse=True)
def no_keychain() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(NoKeychain())
    yield
    keyring.set_keyring(previous)


def main_window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    """The window as a user meets it once the backend is up: a problem in the banner with its action,
    the composer ready."""
    window = MainWindow(about=ABOUT, log_dir=tmp_path / "logs")
    qtbot.addWidget(window)
    window.resize(1100, 800)
    window.show_problem("The backend is not reachable.", BannerAction.SETTINGS)
    window.composer.edit.setEnabled(True)
    window.show()
    qtbot.waitExposed(window)
    return window


def settings_dialog(qtbot: QtBot, tmp_path: Path) -> SettingsDialog:
    dialog = SettingsDialog(SettingsStore(tmp_path / "settings.json"), environ={})
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def test_every_control_of_the_main_window_has_a_name(qtbot: QtBot, tmp_path: Path) -> None:
    window = main_window(qtbot, tmp_path)
    assert len(controls(window)) >= 8  # the walk saw the window's controls, not an empty shell
    assert nameless(window) == []


def test_every_control_of_a_conversation_has_a_name(qtbot: QtBot, tmp_path: Path) -> None:
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    state = ConversationState()
    view.show_state(state, str(tmp_path))
    state.add_user_message("Run the tests", None)
    state.apply(chunk("I will run them.\n\n```python\nprint(1)\n```\n"))
    state.apply(event("tool_requested", {"toolName": "RunCommand", "toolCallId": "c1", "target": "pytest"}))
    state.add_notice("The conversation is ready.")
    view.show()
    view.flush()
    assert len(controls(view)) >= 2  # the answer's copy button, the tool row's header
    assert nameless(view) == []


def test_every_control_of_settings_and_first_run_has_a_name(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = settings_dialog(qtbot, tmp_path)
    assert nameless(dialog) == []
    dialog.tabs.setCurrentWidget(dialog.mcp_servers)
    assert nameless(dialog) == []
    first_run = FirstRunDialog(SettingsStore(tmp_path / "settings.json"))
    qtbot.addWidget(first_run)
    first_run.show()
    assert nameless(first_run) == []


def test_every_control_of_the_request_dialogs_and_the_patch_preview_has_a_name(
    qtbot: QtBot, tmp_path: Path
) -> None:
    approvals = ApprovalQueue()
    approval = ApprovalDialog(approvals, arm_delay_ms=0, session_label={"sess_1": "demo"}.get)
    qtbot.addWidget(approval)
    approvals.add("sess_1", request("appr_1"), received_at=time.monotonic())
    approvals.add("sess_1", write_request("appr_2"), received_at=time.monotonic())
    qtbot.waitUntil(approval.isVisible)
    assert nameless(approval) == []

    elicitations = ElicitationQueue()
    asking = ElicitationDialog(elicitations, arm_delay_ms=0)
    qtbot.addWidget(asking)
    elicitations.add("sess_1", elicitation(), received_at=time.monotonic())
    qtbot.waitUntil(asking.isVisible)
    assert nameless(asking) == []

    preview = PatchPreviewDialog(workspace_preview(tmp_path), tmp_path, open_url=lambda _url: True)
    qtbot.addWidget(preview)
    preview.show()
    assert nameless(preview) == []

    logs = FolderPathDialog(tmp_path / "logs")
    qtbot.addWidget(logs)
    logs.show()
    assert nameless(logs) == []


def test_the_window_s_message_boxes_name_their_buttons(qtbot: QtBot, tmp_path: Path) -> None:
    window = main_window(qtbot, tmp_path)
    window.show_about()
    boxes = [box for box in window.findChildren(QMessageBox) if box.isVisible()]
    assert boxes
    for box in boxes:
        assert nameless(box) == []


def tab_order(start: QWidget, qtbot: QtBot, limit: int = 200) -> list[QWidget]:
    """The widgets Tab moves the keyboard focus to from ``start``, once round."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start)
    visited: list[QWidget] = [start]
    for _ in range(limit):
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
        now = QApplication.focusWidget()
        assert now is not None, "Tab took the focus out of the window"
        if now is start:
            return visited
        visited.append(now)
    raise AssertionError(f"Tab never came back to {describe(start)}: {[describe(w) for w in visited[-5:]]}")


def reachable(root: QWidget) -> list[QWidget]:
    """The controls Tab must reach: enabled, shown, and accepting focus from the keyboard."""
    return [
        widget
        for widget in controls(root)
        if widget.isEnabled()
        and widget.isVisible()
        and widget.focusPolicy() & Qt.FocusPolicy.TabFocus
        and widget.focusProxy() is None
    ]


def test_tab_reaches_every_control_of_the_main_window(qtbot: QtBot, tmp_path: Path) -> None:
    window = main_window(qtbot, tmp_path)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    visited = tab_order(window.composer.edit, qtbot)
    missed = [describe(widget) for widget in reachable(window) if widget not in visited]
    assert missed == []
    assert window.banner.action_button in visited  # the banner's action is one Tab away, not mouse-only


def test_the_banner_is_operated_from_the_keyboard(qtbot: QtBot, tmp_path: Path) -> None:
    window = main_window(qtbot, tmp_path)
    acted: list[BannerAction] = []
    window.banner.acted.disconnect()
    window.banner.acted.connect(acted.append)
    window.banner.action_button.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.keyClick(window.banner.action_button, Qt.Key.Key_Space)
    assert acted == [BannerAction.SETTINGS]
    window.banner.close_button.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.keyClick(window.banner.close_button, Qt.Key.Key_Space)
    assert not window.banner.isVisible()


def test_tab_reaches_every_control_of_settings(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = settings_dialog(qtbot, tmp_path)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    visited = tab_order(dialog.preset_combo, qtbot)
    missed = [describe(widget) for widget in reachable(dialog) if widget not in visited]
    assert missed == []
    assert dialog.language_combo in visited


def test_the_focused_control_has_a_visible_frame() -> None:
    focus_rules = [rule for rule in STYLE_SHEET.split("}") if ":focus" in rule]
    assert focus_rules
    framed = " ".join(focus_rules)
    for control in ("QLineEdit", "QPlainTextEdit", "QAbstractItemView", "QComboBox", "QToolButton"):
        assert f"{control}:focus" in framed
    assert "palette(highlight)" in framed


def test_a_tab_widget_names_its_pages(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = settings_dialog(qtbot, tmp_path)
    tabs = dialog.findChild(QTabWidget)
    assert tabs is not None
    assert all(tabs.tabText(index).replace("&", "").strip() for index in range(tabs.count()))
