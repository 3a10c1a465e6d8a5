"""Without a usable OS keychain the first-run dialog says so before a token is typed, and names the
environment variable the token can come from instead."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backends import fail, null
from pytestqt.qtbot import QtBot

from desktop.settings.dialog import FirstRunDialog, SettingsDialog
from desktop.settings.keychain import keychain_status
from desktop.settings.store import SettingsStore


@pytest.fixture(params=[fail.Keyring, null.Keyring], ids=["fail", "null"])
def no_keychain(request: pytest.FixtureRequest) -> Iterator[str]:
    previous = keyring.get_keyring()
    keyring.set_keyring(request.param())
    try:
        yield request.param.__module__
    finally:
        keyring.set_keyring(previous)


def test_the_first_run_dialog_says_there_is_no_keychain_before_a_token_is_typed(
    qtbot: QtBot, store: SettingsStore, no_keychain: str
) -> None:
    dialog = FirstRunDialog(store)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()
    form = dialog.gateway
    dialog.choose_preset("anthropic")  # needs an API key
    assert form.keychain_note.isVisible()
    text = form.keychain_note.text()
    assert "No usable OS keychain" in text
    assert no_keychain in text
    assert "LLM_GATEWAY_AUTH_TOKEN" in text
    assert not form.token_edit.isEnabled()  # nothing typed there could be kept
    assert "LLM_GATEWAY_AUTH_TOKEN" in form.token_edit.placeholderText()

    dialog.choose_preset("ollama")  # no token needed: nothing to warn about
    assert not form.keychain_note.isVisible()


def test_the_settings_dialog_says_so_too(qtbot: QtBot, store: SettingsStore, no_keychain: str) -> None:
    dialog = SettingsDialog(store, environ={})
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.choose_preset("openai")
    assert dialog.gateway.keychain_note.isVisible()


def test_a_working_keychain_needs_no_notice(qtbot: QtBot, store: SettingsStore) -> None:
    assert keychain_status().usable  # the tests' in-memory keychain
    dialog = FirstRunDialog(store)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.choose_preset("anthropic")
    assert not dialog.gateway.keychain_note.isVisible()
    assert dialog.gateway.token_edit.isEnabled()


def test_a_broken_keyring_configuration_counts_as_no_keychain(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("keyring config names a backend that does not exist")

    monkeypatch.setattr(keyring, "get_keyring", broken)
    status = keychain_status()
    assert not status.usable
    assert "does not exist" in status.backend
