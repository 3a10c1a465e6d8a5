"""The window when the LLM gateway fails and the user fixes Settings: the pause banner names the
gateway's URL and offers Open Settings beside Resume; saving other gateway settings says that the
open conversation still runs on the previous ones; Resume then goes on with the new gateway."""

from __future__ import annotations

import socket
from pathlib import Path

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.conversation.banners import pause_banner
from desktop.settings.dialog import SettingsDialog
from tests.desktop.app.harness import (
    app_environment,
    assistant_texts,
    current,
    eventually,
    notices,
    running_app,
    type_and_send,
)
from tests.desktop.support import Run
from tests.support.backend import Backend


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def settings_dialog() -> SettingsDialog | None:
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, SettingsDialog) and widget.isVisible():
            return widget
    return None


def test_the_banners_settings_button_opens_settings(qtbot: QtBot, tmp_path: Path) -> None:
    about = AboutInfo(app_version="1", runtime_version="1", qt_version="6", python_version="3")
    window = MainWindow(about=about, log_dir=tmp_path)
    qtbot.addWidget(window)
    opened: list[bool] = []
    window.settings_opener = lambda: opened.append(True)
    error = {"code": "INTERNAL_ERROR", "message": "x", "details": {"reason": "ConnectError"}}
    window.banner.show_banner(pause_banner("llm_unreachable", "x", error=error, endpoint="http://gw"))
    window.show()
    assert window.banner.action_button.text() == "Resume"
    assert window.banner.more_button.isVisible()
    assert window.banner.more_button.text() == "Open Settings"
    window.banner.more_button.click()
    assert opened == [True]


def test_a_conversation_paused_on_an_unreachable_gateway_resumes_on_the_gateway_settings_name_now(
    run: Run[None], backend: Backend, workspace: Path, home: Path
) -> None:
    unreachable = f"http://127.0.0.1:{closed_port()}"

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "Hello from the fixed gateway."}]}) as fixed:
            env = app_environment(home, backend, unreachable)
            for name in ("LLM_GATEWAY_ENDPOINT", "LLM_GATEWAY_API", "LLM_GATEWAY_MODEL"):
                env.pop(name)  # what Settings say decides, as for a user who set no variables
            async with running_app(env, home / "logs") as window:
                window.new_conversation(str(workspace))
                type_and_send(window, "Say hello")
                await eventually(
                    lambda: window.banner.isVisible() and "Paused" in window.banner.text.text(),
                    what="the pause banner",
                    window=window,
                )
                text = window.banner.text.text()
                assert text.count(unreachable) == 1, text
                assert "connection refused" in text, text
                window.banner.more_button.click()
                dialog = await eventually(settings_dialog, what="the Settings dialog")
                dialog.gateway.endpoint_edit.setText(fixed.url)
                dialog.accept()
                await eventually(
                    lambda: any("previous gateway settings" in n.text.text() for n in notices(window)),
                    what="the note that the conversation still runs on the previous settings",
                    window=window,
                )
                window.banner.action_button.click()  # Resume
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    timeout=30,
                    what="the resumed task's end",
                    window=window,
                )
                assert assistant_texts(window) == ["Hello from the fixed gateway."]
                assert len(fixed.requests) == 1

    run(scenario())
