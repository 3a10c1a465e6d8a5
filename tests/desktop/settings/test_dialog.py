"""The settings and first-run dialogs, driven by keyboard and mouse against a real settings file and an
in-memory keychain; what they save is what cowork exec then resolves."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from desktop.launch.gateway import KEYRING_SERVICE, resolve_gateway
from desktop.settings.dialog import FirstRunDialog, SettingsDialog
from desktop.settings.store import AppSettings, SettingsStore
from tests.desktop.settings.conftest import MemoryKeyring

TOKEN = "sk-proj-typed-into-the-dialog-4242"


def settings_dialog(
    qtbot: QtBot, store: SettingsStore, environ: dict[str, str] | None = None
) -> SettingsDialog:
    dialog = SettingsDialog(store, environ=environ or {})
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def first_run(qtbot: QtBot, store: SettingsStore) -> FirstRunDialog:
    dialog = FirstRunDialog(store)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):  # laid out: arrow keys move between radio buttons by geometry
        dialog.show()
    return dialog


def test_a_preset_fills_the_fields_and_saving_reaches_cowork_exec(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    dialog = settings_dialog(qtbot, store)
    saved: list[object] = []
    dialog.saved.connect(saved.append)
    dialog.choose_preset("openai")
    assert dialog.gateway.endpoint_edit.text() == "https://api.openai.com/v1"
    assert dialog.gateway.api_combo.currentData() == "openai"
    assert dialog.gateway.model_edit.text() == "gpt-4.1"
    dialog.gateway.token_edit.setFocus()
    qtbot.keyClicks(dialog.gateway.token_edit, TOKEN)
    dialog.max_steps_edit.setText("60")
    dialog.approval_mode_combo.setCurrentIndex(dialog.approval_mode_combo.findData("always"))
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Save), Qt.MouseButton.LeftButton)

    assert dialog.result() == QDialog.DialogCode.Accepted
    expected = AppSettings(
        preset="openai",
        endpoint="https://api.openai.com/v1",
        api="openai",
        model="gpt-4.1",
        approval_mode="always",
        max_steps=60,
    )
    assert saved == [expected]
    assert store.load() == expected
    assert keychain.entries == {(KEYRING_SERVICE, "https://api.openai.com/v1"): TOKEN}
    assert TOKEN not in settings_file.read_text()
    gateway = resolve_gateway({}, settings_file=settings_file)
    assert (gateway.endpoint, gateway.api, gateway.model, gateway.token) == (
        "https://api.openai.com/v1",
        "openai",
        "gpt-4.1",
        TOKEN,
    )


def test_it_opens_with_what_was_saved_and_never_shows_the_token(
    qtbot: QtBot, store: SettingsStore, settings_file: Path
) -> None:
    store.save(
        AppSettings(
            preset="anthropic", endpoint="https://api.anthropic.com", model="claude-sonnet-4-5", max_steps=12
        ),
        TOKEN,
    )
    dialog = settings_dialog(qtbot, store)
    assert dialog.preset_combo.currentData() == "anthropic"
    assert dialog.gateway.endpoint_edit.text() == "https://api.anthropic.com"
    assert dialog.gateway.model_edit.text() == "claude-sonnet-4-5"
    assert dialog.max_steps_edit.text() == "12"
    assert dialog.gateway.token_edit.text() == ""
    assert dialog.gateway.token_edit.echoMode() == dialog.gateway.token_edit.EchoMode.Password
    assert dialog.gateway.token_edit.placeholderText() == "Saved in the OS keychain; type to replace it"
    assert dialog.gateway.remove_token_box.isVisibleTo(dialog)

    # Saving without touching the token keeps it.
    qtbot.keyClick(dialog.max_steps_edit, Qt.Key.Key_Return)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert store.token() == TOKEN


def test_remove_the_saved_token(qtbot: QtBot, store: SettingsStore, keychain: MemoryKeyring) -> None:
    store.save(
        AppSettings(preset="anthropic", endpoint="https://api.anthropic.com", model="claude-sonnet-4-5"),
        TOKEN,
    )
    dialog = settings_dialog(qtbot, store)
    dialog.gateway.remove_token_box.setFocus()
    qtbot.keyClick(dialog.gateway.remove_token_box, Qt.Key.Key_Space)
    assert not dialog.gateway.token_edit.isEnabled()
    dialog.accept()
    assert store.token() is None
    assert keychain.entries == {}


def test_bad_input_is_explained_all_at_once_and_nothing_is_saved_or_lost(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    dialog = settings_dialog(qtbot, store)
    dialog.choose_preset("custom")
    dialog.gateway.endpoint_edit.setText("api.example.com")
    dialog.gateway.token_edit.setText(TOKEN)
    dialog.max_steps_edit.setText("lots")
    dialog.backend_url_edit.setText("ftp://backend")
    dialog.max_steps_edit.setFocus()
    qtbot.keyClick(dialog.max_steps_edit, Qt.Key.Key_Return)

    assert dialog.isVisible()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.error_label.text().split("\n") == [
        "The endpoint must be an http:// or https:// URL, such as https://api.anthropic.com.",
        "Enter the model to call, such as claude-sonnet-4-5 or gpt-4.1.",
        "The backend URL must be an http:// or https:// URL, such as https://cowork.example.com. "
        "Leave it empty for the local backend on this computer.",
        "Max steps must be a whole number from 1 to 1000, or empty for the default (40).",
    ]
    assert dialog.error_label.isVisibleTo(dialog)
    assert dialog.focusWidget() is dialog.gateway.endpoint_edit
    assert not settings_file.exists()
    assert keychain.entries == {}
    # Everything typed is still there to fix.
    assert dialog.gateway.token_edit.text() == TOKEN
    assert dialog.max_steps_edit.text() == "lots"

    dialog.gateway.endpoint_edit.setText("http://localhost:4000")
    dialog.gateway.model_edit.setText("gpt-4o")
    dialog.backend_url_edit.setText("")
    dialog.max_steps_edit.setText("")
    dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert store.load().max_steps is None
    assert store.token() == TOKEN


def test_escape_cancels_without_saving(qtbot: QtBot, store: SettingsStore, settings_file: Path) -> None:
    dialog = settings_dialog(qtbot, store)
    dialog.choose_preset("ollama")
    qtbot.keyClick(dialog.preset_combo, Qt.Key.Key_Escape)
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert not settings_file.exists()


def test_a_keychain_failure_is_shown_and_nothing_is_saved(
    qtbot: QtBot, store: SettingsStore, settings_file: Path
) -> None:
    import keyring
    from keyring.backends import fail

    dialog = settings_dialog(qtbot, store)
    dialog.choose_preset("anthropic")
    keyring.set_keyring(fail.Keyring())
    dialog.gateway.token_edit.setText(TOKEN)
    dialog.accept()
    assert dialog.isVisible()
    assert "The OS keychain could not store the token" in dialog.error_label.text()
    assert dialog.focusWidget() is dialog.gateway.token_edit
    assert not settings_file.exists()


def test_a_backend_url_asks_for_its_token_and_keeps_it_in_the_keychain(
    qtbot: QtBot, store: SettingsStore, settings_file: Path
) -> None:
    dialog = settings_dialog(qtbot, store)
    dialog.choose_preset("demo")
    assert not dialog.backend_token_edit.isEnabled()
    qtbot.keyClicks(dialog.backend_url_edit, "https://cowork.example.com")
    assert dialog.backend_token_edit.isEnabled()
    dialog.backend_token_edit.setText("eyJ.backend.token")
    dialog.accept()
    assert store.load().backend_url == "https://cowork.example.com"
    assert store.backend_token() == "eyJ.backend.token"
    assert "eyJ.backend.token" not in settings_file.read_text()


def test_gateway_variables_in_the_environment_are_pointed_out(qtbot: QtBot, store: SettingsStore) -> None:
    dialog = settings_dialog(qtbot, store, environ={"LLM_GATEWAY_ENDPOINT": "http://x", "HOME": "/h"})
    assert dialog.environment_note.isVisibleTo(dialog)
    assert dialog.environment_note.text() == (
        "Set in the environment, and used instead of these settings: LLM_GATEWAY_ENDPOINT."
    )
    assert not settings_dialog(qtbot, store).environment_note.isVisibleTo(dialog)


def test_an_unreadable_settings_file_is_explained_and_replaced_on_save(
    qtbot: QtBot, store: SettingsStore, settings_file: Path
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text("{oops")
    dialog = settings_dialog(qtbot, store)
    assert "is not valid JSON" in dialog.notice_label.text()
    assert dialog.notice_label.isVisibleTo(dialog)
    dialog.choose_preset("demo")
    dialog.accept()
    assert store.load().is_demo
    assert any(".unreadable-" in path.name for path in settings_file.parent.iterdir())


def test_first_run_offers_every_preset_with_the_demo_model_labelled(
    qtbot: QtBot, store: SettingsStore
) -> None:
    dialog = first_run(qtbot, store)
    labels = [button.text() for button in dialog.preset_buttons.values()]
    assert labels == ["Anthropic", "OpenAI", "Ollama", "LiteLLM", "Offline demo model (not a real LLM)"]
    assert "NOT a real LLM" in dialog.preset_buttons["demo"].accessibleDescription()
    assert dialog.preset_buttons["anthropic"].isChecked()
    assert dialog.focusWidget() is dialog.preset_buttons["anthropic"]
    assert dialog.start_button.isDefault()


def test_first_run_with_the_demo_model_by_keyboard_alone(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    dialog = first_run(qtbot, store)
    saved: list[object] = []
    dialog.saved.connect(saved.append)
    for _ in range(4):  # Anthropic → OpenAI → Ollama → LiteLLM → demo
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Down)
    assert dialog.preset_buttons["demo"].isChecked()
    assert dialog.gateway.demo_note.isVisibleTo(dialog)
    assert not dialog.gateway.endpoint_edit.isVisibleTo(dialog)
    qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)

    assert dialog.result() == QDialog.DialogCode.Accepted
    assert store.is_configured()
    settings = store.load()
    assert settings.is_demo
    assert saved == [settings]
    assert keychain.entries == {}


def test_first_run_with_a_real_provider_needs_what_it_needs(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    dialog = first_run(qtbot, store)
    dialog.choose_preset("ollama")
    assert dialog.gateway.endpoint_edit.text() == "http://localhost:11434/v1"
    assert dialog.gateway.token_edit.placeholderText() == "Not needed"
    dialog.gateway.model_edit.clear()
    dialog.accept()
    assert dialog.isVisible()
    assert dialog.error_label.text() == "Enter the model to call, such as claude-sonnet-4-5 or gpt-4.1."
    assert dialog.focusWidget() is dialog.gateway.model_edit
    assert not store.is_configured()

    qtbot.keyClicks(dialog.gateway.model_edit, "qwen2.5-coder")
    qtbot.keyClick(dialog.gateway.model_edit, Qt.Key.Key_Return)
    assert dialog.result() == QDialog.DialogCode.Accepted
    gateway = resolve_gateway({}, settings_file=settings_file)
    assert (gateway.endpoint, gateway.api, gateway.model, gateway.token) == (
        "http://localhost:11434/v1",
        "openai",
        "qwen2.5-coder",
        None,
    )
    assert json.loads(settings_file.read_text())["gateway"]["preset"] == "ollama"


def test_not_now_leaves_nothing_configured(qtbot: QtBot, store: SettingsStore, settings_file: Path) -> None:
    dialog = first_run(qtbot, store)
    qtbot.mouseClick(dialog.later_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert not settings_file.exists()
