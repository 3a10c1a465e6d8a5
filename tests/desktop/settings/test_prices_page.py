"""Settings → Prices: the default prices are listed, a changed or added model's price is saved to the
settings file with the rest, a removed model has no price after, and a bad figure is refused on the
page saying which cell is wrong, with nothing saved."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QTableWidgetItem
from pytestqt.qtbot import QtBot

from desktop.conversation.pricing import DEFAULT_PRICES, ModelPrice
from desktop.settings.dialog import SettingsDialog
from desktop.settings.prices_view import CACHE_READ, INPUT, MODEL, OUTPUT, PricesPage
from desktop.settings.store import AppSettings, SettingsStore
from tests.desktop.settings.conftest import MemoryKeyring


def open_dialog(qtbot: QtBot, store: SettingsStore) -> SettingsDialog:
    store.save(
        AppSettings(preset="ollama", endpoint="http://localhost:11434/v1", api="openai", model="llama3.1"),
        None,
    )
    dialog = SettingsDialog(store, environ={})
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def row_of(page: PricesPage, model: str) -> int:
    for row in range(page.table.rowCount()):
        item = page.table.item(row, MODEL)
        if item is not None and item.text() == model:
            return row
    raise AssertionError(f"{model} is not listed")


def set_cell(page: PricesPage, row: int, column: int, text: str) -> None:
    page.table.setItem(row, column, QTableWidgetItem(text))


def save(qtbot: QtBot, dialog: SettingsDialog) -> None:
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Save), Qt.MouseButton.LeftButton)


def test_prices_are_listed_edited_added_removed_and_saved(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    dialog = open_dialog(qtbot, store)
    page = dialog.prices_page
    assert dialog.tabs.tabText(dialog.tabs.indexOf(page)) == "&Prices"
    assert page.table.rowCount() == len(DEFAULT_PRICES)
    set_cell(page, row_of(page, "gpt-4.1"), INPUT, "1.75")
    page.table.selectRow(row_of(page, "gpt-4o-mini"))
    qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    new = page.table.rowCount() - 1
    set_cell(page, new, MODEL, "my-finetune")
    set_cell(page, new, INPUT, "$0.5")
    set_cell(page, new, OUTPUT, "2")
    set_cell(page, new, CACHE_READ, "")
    save(qtbot, dialog)

    assert dialog.result() == QDialog.DialogCode.Accepted
    prices = store.prices()
    assert prices.price_of("gpt-4.1") == ModelPrice(1.75, 8.0, 0.5, None)
    assert prices.price_of("my-finetune") == ModelPrice(0.5, 2.0, None, None)
    assert prices.price_of("gpt-4o-mini") is None, "a removed model has an unknown price"
    saved = json.loads(settings_file.read_text())
    assert saved["prices"]["my-finetune"] == {"input": 0.5, "output": 2.0}
    assert saved["gateway"]["model"] == "llama3.1", "the rest of the settings are kept"


def test_a_bad_figure_is_refused_on_the_page_and_nothing_is_saved(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, keychain: MemoryKeyring
) -> None:
    dialog = open_dialog(qtbot, store)
    page = dialog.prices_page
    before = settings_file.read_text()
    set_cell(page, row_of(page, "gpt-4.1"), OUTPUT, "eight")
    save(qtbot, dialog)

    assert dialog.isVisible()
    assert dialog.tabs.currentWidget() is page
    assert page.error_label.isVisible()
    assert page.error_label.text() == "The output price of gpt-4.1 is not a number: eight"
    assert settings_file.read_text() == before
    qtbot.mouseClick(page.defaults_button, Qt.MouseButton.LeftButton)
    assert not page.error_label.isVisible()
    save(qtbot, dialog)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert store.prices().prices == DEFAULT_PRICES


def test_without_a_saved_table_the_defaults_apply(store: SettingsStore, settings_file: Path) -> None:
    assert store.prices().prices == DEFAULT_PRICES
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(json.dumps({"version": 1, "prices": {"m": {"input": "x"}}}))
    assert store.prices().prices == DEFAULT_PRICES, "an unusable table falls back to the defaults"
