"""Attachments through the whole app: the real window, runtime and backend and a scripted gateway that
records what it was sent. Send waits for text; an image and a file dropped in go with the prompt (the
image as image content, the file by path) and the image shows as a thumbnail, again when the
conversation is reopened after a restart (fetched from its artifact); a prompt over the
runtime's limit, or images for a model known not to read them, are refused before anything is sent."""

from __future__ import annotations

import base64
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from contracts.images import MAX_PROMPT_CHARS
from desktop.app.messages import UserView
from desktop.settings.store import AppSettings, SettingsStore
from tests.desktop.app.harness import (
    app_environment,
    current,
    eventually,
    running_app,
    type_and_send,
    workbench,
)
from tests.desktop.support import Run
from tests.integration.runtime.test_runtime_images import IMAGE
from tests.support.backend import Backend


def drop(window_edit: object, *paths: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    window_edit.insertFromMimeData(mime)  # type: ignore[attr-defined]


def test_an_image_and_a_file_go_with_the_prompt_and_the_image_shows_in_the_conversation(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    picture = workspace / "screen.png"
    picture.write_bytes(IMAGE)
    notes = workspace / "notes.txt"
    notes.write_text("hello\n")

    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "A grey square."}]}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                composer = window.composer
                assert not composer.send_button.isEnabled()  # nothing written yet
                QTest.keyClicks(composer.edit, "   ")
                assert not composer.send_button.isEnabled()  # whitespace is nothing
                composer.edit.clear()
                drop(composer.edit, picture, notes)
                assert [chip.label.text() for chip in composer.attachments_view.chips] == [
                    "screen.png",
                    "notes.txt",
                ]
                QTest.keyClicks(composer.edit, "What is this?")
                assert composer.send_button.isEnabled()
                QTest.keyClick(composer.edit, Qt.Key.Key_Return)
                await eventually(
                    lambda: current(window).state.status.task == "TASK_COMPLETED",
                    what="the task's end",
                    window=window,
                )
                body = gateway.requests[0].body
                window.view.flush()
                users = [w for w in window.view.widgets() if isinstance(w, UserView)]
                assert composer.attachments_view.chips == []
                [user] = users
                [thumbnail] = user.images.labels
                assert not thumbnail.pixmap().isNull()
                assert thumbnail.toolTip() == "screen.png"
            # Opened again after a restart: the image comes back from its artifact, not the history.
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                await eventually(lambda: workbench(window).sidebar.all(), what="the list", window=window)
                index = window.sidebar.index_of(workbench(window).sidebar.all()[0].session_id)
                window.sidebar.tree.clicked.emit(index)

                def reopened_thumbnail() -> bool:
                    window.view.flush()
                    shown = [w for w in window.view.widgets() if isinstance(w, UserView)]
                    labels = shown[0].images.labels if shown else []
                    return bool(labels) and labels[0].pixmap() is not None and not labels[0].pixmap().isNull()

                await eventually(
                    reopened_thumbnail, what="the image of the reopened conversation", window=window
                )

        content = body["messages"][0]["content"]
        assert content[0] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(IMAGE).decode()},
        }
        assert content[1]["text"] == f"What is this?\n\nAttached files:\n- {notes}"

    run(scenario())


def test_a_prompt_over_the_limit_is_refused_with_the_limit_and_given_back(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "never"}]}) as gateway:
            async with running_app(app_environment(home, backend, gateway.url), home / "logs") as window:
                window.new_conversation(str(workspace))
                text = "x" * (MAX_PROMPT_CHARS + 1)
                type_and_send(window, text)
                await eventually(
                    lambda: window.banner.isVisible() and "limit" in window.banner.text.text(),
                    what="the refusal",
                    window=window,
                )
                shown = window.banner.text.text()
                assert (
                    f"Your message is {MAX_PROMPT_CHARS + 1:,} characters; the limit is {MAX_PROMPT_CHARS:,}."
                    in (shown)
                )
                assert window.composer.edit.toPlainText() == text
                assert gateway.requests == []

    run(scenario())


def test_images_for_a_model_known_to_read_only_text_are_refused_before_sending(
    run: Run[None], backend: Backend, workspace: Path, home: Path, qtbot: QtBot
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "never"}]}) as gateway:
            env = app_environment(home, backend, gateway.url)
            # Ollama's preset model, llama3.1, reads text only.
            SettingsStore().save(
                AppSettings(preset="ollama", endpoint=gateway.url, api="openai", model="llama3.1"), None
            )
            async with running_app(env, home / "logs") as window:
                window.new_conversation(str(workspace))
                window.composer.attach_image(IMAGE)
                type_and_send(window, "What is this?")
                await eventually(
                    lambda: window.banner.isVisible() and "images" in window.banner.text.text(),
                    what="the refusal",
                    window=window,
                )
                assert "does not accept images" in window.banner.text.text()
                assert len(window.composer.attachments.images) == 1  # given back with the text
                assert window.composer.edit.toPlainText() == "What is this?"
                assert gateway.requests == []

    run(scenario())
