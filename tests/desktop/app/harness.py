"""Running the real desktop app in the test process: :class:`DesktopApp` with its window, its
workbench, real runtime processes, the real local backend and a scripted gateway; waits that wake on
every turn of the event loop's timers (bounded, never a fixed sleep)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from desktop.app.bootstrap import DesktopApp, OpenRequest, UpdaterSetup
from desktop.app.main_window import MainWindow
from desktop.app.messages import AssistantView, NoticeView, ToolRowView
from desktop.conversation.session import ConversationSession
from desktop.conversation.workbench import Workbench
from desktop.settings.store import AppSettings, SettingsStore
from tests.support.backend import Backend

__all__ = ["app_environment", "assistant_texts", "eventually", "running_app", "tool_rows"]

T = TypeVar("T")


def app_environment(
    home: Path, backend: Backend, gateway_url: str, *, approval_mode: str = "always"
) -> dict[str, str]:
    """The app's environment: this process's (with ``home``'s folders), the test backend and gateway;
    the gateway and ``approval_mode`` saved in Settings as a user would (no first-run dialog)."""
    SettingsStore().save(
        AppSettings(
            preset="custom",
            endpoint=gateway_url,
            api="anthropic",
            model="demo-model",
            approval_mode=approval_mode,
        ),
        None,
    )
    env = dict(os.environ)
    env.update(
        {
            "COWORK_BACKEND_URL": backend.url,
            "COWORK_BACKEND_TOKEN": backend.token,
            "COWORK_POLICY_KEYS": json.dumps(backend.policy_keys),
            "LLM_GATEWAY_ENDPOINT": gateway_url,
            "LLM_GATEWAY_API": "anthropic",
            "LLM_GATEWAY_MODEL": "demo-model",
            "COWORK_RUNTIME_DATA_DIR": str(home / "runtime-data"),
            "COWORK_APPROVAL_TIMEOUT_S": "60",
            "COWORK_LLM_RETRY_BASE_S": "0.01",
        }
    )
    return env


async def eventually(
    check: Callable[[], T | None], *, timeout: float = 20.0, what: str = "", window: MainWindow | None = None
) -> T:
    """``check()``'s first truthy value, re-checked every few milliseconds of the event loop; bounded.
    With ``window``, a timeout says what the window showed."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what or 'result'} within {timeout:g} s{_shown(window)}")
        await asyncio.sleep(0.01)


def _shown(window: MainWindow | None) -> str:
    if window is None:
        return ""
    window.view.flush()
    return (
        f"; status {window.status.state_label.text()!r}, banner"
        f" {window.banner.text.text() if window.banner.isVisible() else None!r}, items"
        f" {[type(w).__name__ for w in window.view.widgets()]}, tools {tool_rows(window)}"
    )


@contextlib.asynccontextmanager
async def running_app(
    env: dict[str, str],
    logs: Path,
    *,
    updater_setup: UpdaterSetup | None = None,
    opening: OpenRequest | None = None,
) -> AsyncIterator[MainWindow]:
    """The app running until the block ends; then its window is closed and its shutdown awaited."""
    app = DesktopApp(env, logs, updater_setup=updater_setup, opening=opening)
    task = asyncio.ensure_future(app.run())
    try:
        window = await eventually(
            lambda: app.window if app.window is not None and app.window.workbench is not None else None,
            what="the window with its workbench",
        )
        yield window
    finally:
        if app.window is not None:
            app.window.close()
            if app.window.close_question is not None and app.window.close_question.isVisible():
                assert app.window.stop_and_quit_button is not None
                app.window.stop_and_quit_button.click()  # a task still ran: stop it and quit
        async with asyncio.timeout(60):
            await task
        QApplication.processEvents()


def workbench(window: MainWindow) -> Workbench:
    assert window.workbench is not None
    return window.workbench


def current(window: MainWindow) -> ConversationSession:
    session = workbench(window).current
    assert session is not None
    return session


def assistant_texts(window: MainWindow) -> list[str]:
    window.view.flush()
    return [w.plain_text() for w in window.view.widgets() if isinstance(w, AssistantView)]


def tool_rows(window: MainWindow) -> list[str]:
    window.view.flush()
    return [w.header.text() for w in window.view.widgets() if isinstance(w, ToolRowView)]


def notices(window: MainWindow) -> list[NoticeView]:
    return [w for w in window.view.widgets() if isinstance(w, NoticeView)]


def type_and_send(window: MainWindow, text: str) -> None:
    """What a user does: type into the composer, press Ctrl+Enter."""
    edit = window.composer.edit
    edit.setFocus()
    edit.setPlainText(text)
    QTest.keyClick(edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def sidebar_titles(window: MainWindow) -> list[tuple[str, list[str]]]:
    return window.sidebar.titles()


def last_request(gateway: Any) -> dict[str, Any]:
    body: dict[str, Any] = gateway.requests[-1].body
    return body
