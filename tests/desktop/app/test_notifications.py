"""OS notifications from the real window, with a recorder in place of the system's service: a task
that needs an approval and then finishes while the user is in another application notifies twice;
with Cowork's windows in front, or the setting off, nothing is shown; the setting is kept in the
settings file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtDBus import QDBusConnection
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.main_window import MainWindow
from desktop.app.notifications import (
    DBusBackend,
    FirstThatShows,
    TrayBackend,
    set_windows_app_id,
    system_backend,
)
from desktop.approval.dialog import ApprovalDialog
from desktop.conversation.notify import Notification, NotificationKind
from desktop.settings.store import SettingsStore
from tests.desktop.app.harness import app_environment, current, eventually, running_app, type_and_send
from tests.desktop.supervision.live import tool_call
from tests.desktop.support import Run
from tests.support.backend import Backend


class Recorder:
    def __init__(self) -> None:
        self.shown: list[Notification] = []

    def show(self, notification: Notification) -> bool:
        self.shown.append(notification)
        return True


async def run_task(window: MainWindow, qtbot: QtBot, prompt: str) -> None:
    type_and_send(window, prompt)
    dialog = window.approval_dialog
    assert isinstance(dialog, ApprovalDialog)
    await eventually(lambda: dialog.isVisible() and dialog.armed, what="the approval", window=window)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    await eventually(
        lambda: current(window).state.status.task == "TASK_COMPLETED", what="the end", window=window
    )


def test_a_task_in_the_background_notifies_of_its_approval_and_its_end_unless_turned_off(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    script = [
        tool_call("WriteFile", "w1", path=str(workspace / "a.txt"), content="a\n"),
        {"text": "Written."},
        tool_call("WriteFile", "w2", path=str(workspace / "b.txt"), content="b\n"),
        {"text": "Written again."},
    ]

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": script}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                recorder = Recorder()
                window.notifier.backend = recorder
                window.notifier.toggle_action.setChecked(True)
                window.new_conversation(str(workspace))
                # The user is in another application (offscreen there is none to switch to).
                window.notifier.user_is_here = lambda: False
                await run_task(window, qtbot, "Write a")
                await eventually(lambda: len(recorder.shown) == 2, what="two notifications", window=window)
                approval, done = recorder.shown
                assert approval.title == "Approval needed"
                assert approval.body.startswith(f"{workspace.name}: ")
                assert "a.txt" in approval.body  # the action, as the approval dialog sums it up
                assert (done.title, done.body) == ("Task finished", f"{workspace.name}: done.")
                assert approval.session_id == current(window).session_id

                # Turned off from the File menu: nothing more, and the choice is kept.
                assert window.notifier.toggle_action in window.menuBar().actions()[0].menu().actions()
                window.notifier.toggle_action.trigger()
                assert SettingsStore().notifications() is False
                await run_task(window, qtbot, "Write b")
                assert len(recorder.shown) == 2
                window.notifier.toggle_action.trigger()
                assert SettingsStore().notifications() is True

    run(scenario())


def test_nothing_is_shown_while_the_window_is_in_front(
    run: Run[None], backend: Backend, workspace: Path, home: Path
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "Hello."}]}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                recorder = Recorder()
                window.notifier.backend = recorder
                window.notifier.toggle_action.setChecked(True)
                window.new_conversation(str(workspace))
                window.activateWindow()
                await eventually(window.isActiveWindow, what="the window in front")
                type_and_send(window, "Hi")
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the end",
                    window=window,
                )
                assert recorder.shown == []

    run(scenario())


def test_the_setting_is_on_by_default_and_kept_in_the_ui_section(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    assert store.notifications() is True
    store.save_notifications(False)
    assert store.notifications() is False
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved["ui"]["notifications"] is False


def test_the_windows_app_id_is_set_only_on_windows_and_the_tray_says_when_it_cannot_show() -> None:
    assert set_windows_app_id(platform="linux") is False
    assert set_windows_app_id(platform="darwin") is False
    # Offscreen there is no tray: the message is not taken (the conversation still has it all).
    assert (
        TrayBackend().show(Notification(NotificationKind.TASK_COMPLETED, "Task finished", "x", None))
        is TrayBackend.available()
    )


@pytest.fixture
def session_bus() -> Iterator[str]:
    """A private session bus (``dbus-daemon``), skipped where the machine has none."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        pytest.skip("no dbus-daemon on this machine")
    bus = subprocess.Popen(
        [daemon, "--session", "--print-address", "--nofork"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().strip()
    try:
        if not address:
            pytest.skip("dbus-daemon did not start")
        yield address
    finally:
        bus.kill()
        bus.wait()
        bus.stdout.close()


def test_the_freedesktop_service_is_called_on_a_real_session_bus(qtbot: QtBot, session_bus: str) -> None:
    connection = QDBusConnection.connectToBus(session_bus, "cowork-notifications-test")
    assert connection.isConnected()
    nobody = DBusBackend(connection)
    done = Notification(NotificationKind.TASK_COMPLETED, "Task finished", "shop: done.", "sess_1")
    assert nobody.show(done) is False  # no service yet: the tray is tried next
    server = subprocess.Popen(
        [sys.executable, "-u", str(Path(__file__).with_name("notification_server.py")), session_bus],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "READY"
        assert DBusBackend(connection).show(done) is True
        called = json.loads(server.stdout.readline())
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()
    assert called == {
        "appName": "Cowork",
        "replacesId": 0,
        "icon": "cowork",
        "summary": "Task finished",
        "body": "shop: done.",
        "actions": [],
        "timeout": -1,
    }


def test_the_linux_backend_falls_back_to_the_tray() -> None:
    assert isinstance(system_backend("linux"), FirstThatShows)
    assert isinstance(system_backend("darwin"), TrayBackend)
    assert isinstance(system_backend("win32"), TrayBackend)
