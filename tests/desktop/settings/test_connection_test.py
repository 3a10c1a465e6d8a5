"""Settings → Test connection: one small request to the gateway with the dialect, model and token
shown, and a precise answer — against the scripted gateway on loopback for the working case and small
real HTTP servers for a refused token, an unknown model and a gateway that cannot be reached."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from contracts.gateway_http import request_url
from desktop.settings.connection_test import Outcome, check_connection
from desktop.settings.dialog import SettingsDialog
from desktop.settings.store import SettingsStore
from tests.desktop.app.harness import eventually
from tests.desktop.support import Run

TOKEN = "sk-test-connection-1234"


@contextmanager
def answering(status: int, body: dict[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP server on loopback that answers every POST with ``status`` and ``body``; the
    requests it got (path, headers, JSON body)."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            seen.append(
                {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("endpoint", "dialect", "expected"),
    [
        ("https://api.anthropic.com", "anthropic", "https://api.anthropic.com/v1/messages"),
        ("https://api.openai.com/v1", "openai", "https://api.openai.com/v1/chat/completions"),
        ("http://localhost:4000", "openai", "http://localhost:4000/v1/chat/completions"),
        ("http://gw/v1/messages", "anthropic", "http://gw/v1/messages"),
    ],
)
def test_the_request_goes_where_the_runtime_sends_its_calls(
    endpoint: str, dialect: str, expected: str
) -> None:
    assert request_url(endpoint, dialect) == expected


def test_the_scripted_gateway_answers_ok_in_both_dialects() -> None:
    with ScriptedGatewayThread({"turns": [{"text": "OK"}], "repeatLastTurn": True}, token=TOKEN) as gateway:
        for dialect in ("anthropic", "openai"):
            result = asyncio.run(check_connection(gateway.url, dialect, "demo-model", TOKEN))
            assert result.outcome is Outcome.OK, result
        refused = asyncio.run(check_connection(gateway.url, "anthropic", "demo-model", "wrong"))
        assert refused.outcome is Outcome.UNAUTHORIZED
        assert refused.status == 401
        bodies = [request.body for request in gateway.requests]
        assert all(body["max_tokens"] == 1 and body["model"] == "demo-model" for body in bodies)


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_is_told_apart(status: int) -> None:
    error = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    with answering(status, error) as (url, seen):
        result = asyncio.run(check_connection(url, "anthropic", "claude-x", TOKEN))
    assert result.outcome is Outcome.UNAUTHORIZED
    assert (result.status, result.detail) == (status, "invalid x-api-key")
    [request] = seen
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == TOKEN


def test_an_unknown_model_is_told_apart() -> None:
    error = {"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error"}}
    with answering(404, error) as (url, seen):
        result = asyncio.run(check_connection(url + "/v1", "openai", "gpt-9", TOKEN))
    assert result.outcome is Outcome.UNKNOWN_MODEL
    assert result.detail == "The model `gpt-9` does not exist"
    assert seen[0]["path"] == "/v1/chat/completions"
    assert seen[0]["headers"]["authorization"] == f"Bearer {TOKEN}"


def test_a_gateway_that_names_the_model_in_a_400_is_about_the_model() -> None:
    with answering(400, {"error": {"message": "Invalid model name passed in model=foo"}}) as (url, _seen):
        result = asyncio.run(check_connection(url, "openai", "foo", None))
    assert result.outcome is Outcome.UNKNOWN_MODEL


def test_any_other_error_is_given_in_the_gateways_words() -> None:
    with answering(500, {"detail": "upstream provider is down"}) as (url, _seen):
        result = asyncio.run(check_connection(url, "openai", "gpt-4.1", None))
    assert result.outcome is Outcome.GATEWAY_ERROR
    assert (result.status, result.detail) == (500, "upstream provider is down")


def test_an_unreachable_gateway_says_why() -> None:
    result = asyncio.run(check_connection(f"http://127.0.0.1:{closed_port()}", "anthropic", "m", None))
    assert result.outcome is Outcome.UNREACHABLE
    assert "refused" in result.detail


def test_the_button_tests_what_the_form_shows_without_freezing_the_dialog(
    qtbot: QtBot, run: Run[None], store: SettingsStore
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread(
            {"turns": [{"text": "OK"}], "repeatLastTurn": True}, token=TOKEN
        ) as gateway:
            dialog = SettingsDialog(store, environ={})
            qtbot.addWidget(dialog)
            dialog.show()
            dialog.choose_preset("custom")
            form = dialog.gateway
            form.endpoint_edit.setText(gateway.url)
            form.model_edit.setText("demo-model")
            form.token_edit.setText("not-the-token")
            qtbot.mouseClick(form.test_button, Qt.MouseButton.LeftButton)
            assert form.testing
            assert not form.test_button.isEnabled()
            assert form.test_result.text() == "Testing the connection…"
            await eventually(lambda: not form.testing, what="the test's end")
            assert "did not accept the token (HTTP 401)" in form.test_result.text()

            form.token_edit.setText(TOKEN)
            qtbot.mouseClick(form.test_button, Qt.MouseButton.LeftButton)
            await eventually(lambda: not form.testing, what="the test's end")
            assert form.test_result.text().startswith("Connected:")
            assert form.test_button.isEnabled()

    run(scenario())


def test_closing_the_dialog_cancels_a_test_in_flight(
    qtbot: QtBot, run: Run[None], store: SettingsStore, qapp: QApplication
) -> None:
    # As in the app, whose main window stays: closing the dialog must not end the event loop.
    qapp.setQuitOnLastWindowClosed(False)

    async def scenario() -> None:
        # A gateway that takes the connection and never answers: the test is waiting when the dialog closes.
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(1)
            dialog = SettingsDialog(store, environ={})
            qtbot.addWidget(dialog)
            dialog.show()
            form = dialog.gateway
            form.endpoint_edit.setText(f"http://127.0.0.1:{silent.getsockname()[1]}")
            form.model_edit.setText("demo-model")
            form.start_test()
            test = form._test
            assert form.testing
            assert test is not None
            await asyncio.sleep(0.2)
            dialog.reject()
            assert not form.testing
            assert form.test_button.isEnabled()
            await eventually(lambda: test.done(), what="the abandoned test")
            assert test.cancelled()
            # The request is abandoned: the gateway sees its connection closed, and nothing is shown.
            connection, _address = silent.accept()
            with connection:
                connection.settimeout(10)
                received = b""
                while chunk := connection.recv(65536):
                    received += chunk
            assert received.startswith(b"POST /v1/messages")  # the dialect the form shows
            assert form.test_result.text() == "Testing the connection…"

    try:
        run(scenario())
    finally:
        qapp.setQuitOnLastWindowClosed(True)


def test_without_a_typed_token_the_environments_is_tested_as_the_runtime_would_use_it(
    qtbot: QtBot, run: Run[None], store: SettingsStore
) -> None:
    async def scenario() -> None:
        with ScriptedGatewayThread({"turns": [{"text": "OK"}]}, token=TOKEN) as gateway:
            dialog = SettingsDialog(store, environ={"LLM_GATEWAY_AUTH_TOKEN": TOKEN})
            qtbot.addWidget(dialog)
            dialog.show()
            form = dialog.gateway
            form.endpoint_edit.setText(gateway.url)
            form.model_edit.setText("demo-model")
            form.start_test()
            await eventually(lambda: not form.testing, what="the test's end")
            assert form.test_result.text().startswith("Connected:")

    run(scenario())


def test_an_incomplete_form_is_not_sent(qtbot: QtBot, store: SettingsStore) -> None:
    dialog = SettingsDialog(store, environ={})
    qtbot.addWidget(dialog)
    dialog.show()
    form = dialog.gateway
    form.endpoint_edit.setText("api.example.com")
    form.start_test()
    assert not form.testing
    assert "http:// or https://" in form.test_result.text()
    form.endpoint_edit.setText("https://api.example.com")
    form.model_edit.clear()
    form.start_test()
    assert not form.testing
    assert form.test_result.text() == "Enter the model to test first."
