"""Settings → Appearance: System, Light or Dark, shown at once, kept on Save (and at the next start),
undone on Cancel."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from desktop.app.theme import AppTheme, follow_system_theme, is_dark
from desktop.settings.dialog import SettingsDialog
from desktop.settings.store import SettingsStore


def window_lightness(app: QApplication) -> int:
    return int(app.palette().window().color().lightness())


@pytest.fixture
def theme(qapp: QApplication) -> Iterator[AppTheme]:
    chosen = AppTheme(qapp)
    system_lightness = window_lightness(qapp)
    yield chosen
    chosen.apply("system")  # the other tests see the platform's appearance again
    assert window_lightness(qapp) == system_lightness


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    return SettingsStore(tmp_path / "Cowork" / "settings.json")


def test_dark_and_light_are_applied_and_system_restores_the_platforms(
    qapp: QApplication, theme: AppTheme
) -> None:
    system = window_lightness(qapp)
    theme.apply("dark")
    assert window_lightness(qapp) < 100
    assert is_dark(qapp)
    theme.apply("light")
    assert window_lightness(qapp) > 180
    assert not is_dark(qapp)
    theme.apply("system")
    assert window_lightness(qapp) == system
    assert theme.apply("purple") == "system"  # an unknown value from a hand-edited file


def settings_dialog(qtbot: QtBot, store: SettingsStore, theme: AppTheme) -> SettingsDialog:
    dialog = SettingsDialog(store, environ={}, apply_theme=theme.apply)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.choose_preset("ollama")  # a complete gateway, so Save succeeds
    return dialog


def test_a_theme_chosen_in_settings_shows_at_once_and_is_kept_on_save(
    qtbot: QtBot, qapp: QApplication, store: SettingsStore, theme: AppTheme
) -> None:
    dialog = settings_dialog(qtbot, store, theme)
    assert dialog.theme_combo.currentData() == "system"
    assert dialog.theme_combo.accessibleName() == "Theme"
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    assert is_dark(qapp)  # before Save: the user sees what they chose
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert not dialog.isVisible()
    assert store.theme() == "dark"
    assert json.loads(store.path.read_text())["ui"]["theme"] == "dark"
    assert is_dark(qapp)

    # The next start reads it back.
    restarted = follow_system_theme(qapp, store.theme())
    assert restarted.choice == "dark"


def test_cancel_puts_the_previous_theme_back(
    qtbot: QtBot, qapp: QApplication, store: SettingsStore, theme: AppTheme
) -> None:
    dialog = settings_dialog(qtbot, store, theme)
    system = window_lightness(qapp)
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    assert is_dark(qapp)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    assert theme.choice == "system"
    assert window_lightness(qapp) == system
    assert store.theme() == "system"


def test_an_unreadable_theme_in_the_file_starts_with_the_system_theme(store: SettingsStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text(json.dumps({"ui": {"theme": 7}}))
    assert store.theme() == "system"
    store.path.write_text("{not json")
    assert store.theme() == "system"
