"""The app in German: the catalogue covers every text of the code and is compiled, every translation
keeps its placeholders and its keyboard mnemonic, the language chosen in Settings is kept for the next
start, and with German installed the window, its menus and Qt's standard buttons speak German."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import tomllib
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends.null import Keyring as NoKeychain
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from desktop import i18n
from desktop.app.language import CATALOGUE_DIR, AppLanguage, resolve_language
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.conversation.banners import task_failed_banner
from desktop.i18n import translate
from desktop.settings.dialog import SettingsDialog
from desktop.settings.store import SettingsError, SettingsStore

REPO = Path(__file__).resolve().parents[2]
GERMAN = CATALOGUE_DIR / "cowork_de.ts"
ABOUT = AboutInfo(app_version="1.0", runtime_version="1.0", qt_version="6", python_version="3.11")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
"""A ``str.format`` field with its format spec (``{count:,}``), kept as written in the translation."""


def messages(ts: Path) -> list[tuple[str, str, str]]:
    """(context, source, translation) of every message of a catalogue."""
    found = []
    for context in ElementTree.parse(ts).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            found.append((name, message.findtext("source") or "", message.findtext("translation") or ""))
    return found


@pytest.fixture(autouse=True)
def no_keychain() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(NoKeychain())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def german(qapp: QApplication) -> Iterator[AppLanguage]:
    language = AppLanguage(qapp)
    assert language.apply("de") == "de"
    yield language
    language.remove()


@pytest.mark.skipif(shutil.which("bash") is None, reason="scripts/ are bash scripts")
def test_the_german_catalogue_is_complete_and_compiled() -> None:
    """Fails when code has text the catalogue lacks or has dropped, a text has no translation, or the
    .qm was not compiled from the .ts: run scripts/translations and translate what it lists."""
    checked = subprocess.run(
        ["bash", "scripts/translations", "--check"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_translation_keeps_its_placeholders_and_mnemonic() -> None:
    found = messages(GERMAN)
    assert len(found) > 100
    for context, source, translation in found:
        where = f"{context}: {source!r} → {translation!r}"
        assert translation.strip(), where
        # .format() after translation: a placeholder lost or invented loses a value or raises KeyError.
        assert sorted(_PLACEHOLDER.findall(translation)) == sorted(_PLACEHOLDER.findall(source)), where
        mnemonics = len(re.findall(r"&(?!&)\w", source))
        assert len(re.findall(r"&(?!&)\w", translation)) == mnemonics, where


def test_the_language_follows_the_choice_then_the_system() -> None:
    assert resolve_language("de", ["en-US"]) == "de"
    assert resolve_language("en", ["de-DE"]) == "en"
    assert resolve_language("system", ["de-AT", "en-GB"]) == "de"
    assert resolve_language("system", ["fr-FR", "de_CH"]) == "de"
    assert resolve_language("system", ["fr-FR", "en-GB", "de-DE"]) == "en"
    assert resolve_language("system", ["ja-JP"]) == "en"  # no catalogue: the source text, English
    assert resolve_language("klingon", ["de-DE"]) == "de"  # a hand-edited file's unknown choice


def test_the_chosen_language_is_kept_beside_the_other_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "tasks": {"maxSteps": 12}, "ui": {"theme": "dark"}}))
    store = SettingsStore(path)
    assert store.language() == "system"
    store.save_language("de")
    assert store.language() == "de"
    saved = json.loads(path.read_text())
    assert saved["tasks"] == {"maxSteps": 12}
    assert saved["ui"] == {"theme": "dark", "language": "de"}
    with pytest.raises(SettingsError) as refused:
        store.save_language("fr")
    assert "language" in refused.value.problems
    path.write_text("{not json")
    assert store.language() == "system"  # the app starts whatever the file holds


def test_settings_saves_the_language_chosen_for_the_next_start(qtbot: QtBot, tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    dialog = SettingsDialog(store, environ={})
    qtbot.addWidget(dialog)
    assert dialog.language_combo.currentData() == "system"
    dialog.choose_preset("demo")
    dialog.language_combo.setCurrentIndex(dialog.language_combo.findData("de"))
    dialog.accept()
    assert store.language() == "de"
    again = SettingsDialog(store, environ={})
    qtbot.addWidget(again)
    assert again.language_combo.currentText() == "Deutsch"


def test_with_german_installed_the_window_speaks_german(
    qtbot: QtBot, tmp_path: Path, german: AppLanguage
) -> None:
    window = MainWindow(about=ABOUT, log_dir=tmp_path / "logs")
    qtbot.addWidget(window)
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus == ["&Datei", "&Unterhaltung", "&Hilfe"]
    assert window.composer.send_button.text() == "Senden"
    assert window.settings_action.text() == "&Einstellungen…"
    for menu in (action.menu() for action in window.menuBar().actions()):
        keys = [m.group(1).lower() for a in menu.actions() if (m := re.search(r"&(\w)", a.text()))]
        assert len(keys) == len(set(keys)), f"{menu.title()}: two entries share a keyboard mnemonic: {keys}"

    dialog = SettingsDialog(SettingsStore(tmp_path / "settings.json"), environ={})
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Einstellungen — Cowork"
    cancel = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert cancel is not None
    assert cancel.text().replace("&", "") == "Abbrechen"  # Qt's own catalogue, for its standard buttons
    assert translate("Status", "Step {n} of {total}").format(n=3, total=40) == "Schritt 3 von 40"
    # What the Qt-free conversation logic puts on screen follows the language too.
    banner = task_failed_banner("internal_error", None, step_count=2, max_steps=40)
    assert banner.text.startswith("Die Agent-Laufzeit ist auf einen internen Fehler gestoßen")
    assert banner.action_label == "Protokollordner öffnen"


def test_removing_the_translation_brings_back_the_source_text(qapp: QApplication, tmp_path: Path) -> None:
    language = AppLanguage(qapp)
    language.apply("de")
    language.remove()
    assert i18n.translate("MainWindow", "&File") == "&File"
    assert language.language == "en"
    assert language.apply("en", ["de-DE"]) == "en"
    assert i18n.translate("MainWindow", "&File") == "&File"


def test_a_missing_catalogue_leaves_the_app_in_english(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("desktop.app.language.CATALOGUE_DIR", tmp_path)
    language = AppLanguage(qapp)
    try:
        assert language.apply("de") == "en"
        assert i18n.translate("MainWindow", "&File") == "&File"
    finally:
        language.remove()


def test_the_compiled_catalogues_ship_with_the_package() -> None:
    """The wheel's package data and the installed app's spec take the .qm files."""
    with (REPO / "pyproject.toml").open("rb") as stream:
        package_data = tomllib.load(stream)["tool"]["setuptools"]["package-data"]["desktop"]
    shipped = (CATALOGUE_DIR / "cowork_de.qm").relative_to(REPO / "desktop").as_posix()
    assert any(fnmatch.fnmatch(shipped, pattern) for pattern in package_data)
    spec = (REPO / "installer" / "cowork.spec").read_text(encoding="utf-8")
    assert 'glob("cowork_*.qm")' in spec
    assert "qtbase_" in spec
    assert (CATALOGUE_DIR / "cowork_de.qm").stat().st_size > 1000
