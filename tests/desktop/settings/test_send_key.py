"""Settings' send key: chosen in the dialog, kept in the settings file, Enter by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from desktop.settings.dialog import SettingsDialog
from desktop.settings.store import AppSettings, SettingsError, SettingsStore
from tests.desktop.settings.conftest import MemoryKeyring


def test_the_dialog_saves_the_send_key_with_the_other_settings(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    store.save(AppSettings(preset="demo"), None)
    dialog = SettingsDialog(store, environ={})
    qtbot.addWidget(dialog)
    dialog.show()
    combo = dialog.send_key_box.combo
    assert combo.currentData() == "enter"
    assert combo.accessibleName() == "Key that sends a message"
    combo.setCurrentIndex(combo.findData("ctrl_enter"))
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Save), Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert store.send_key() == "ctrl_enter"
    assert json.loads(settings_file.read_text())["ui"]["sendKey"] == "ctrl_enter"
    assert store.load().is_demo  # the rest of the settings are untouched


def test_an_unknown_send_key_is_refused_and_a_hand_edited_one_ignored(
    store: SettingsStore, settings_file: Path
) -> None:
    with pytest.raises(SettingsError) as refused:
        store.save_send_key("space")
    assert "enter, ctrl_enter" in refused.value.problems["send_key"]
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps({"version": 1, "ui": {"sendKey": "space"}}))
    assert store.send_key() == "enter"
